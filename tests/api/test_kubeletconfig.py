"""KubeletConfiguration: defaults, the kubelet's checks with upstream wording, derived values."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.api.kubeletconfig import (
    KubeletConfigError,
    KubeletConfiguration,
    kubelet_config_from_dict,
    load_kubelet_config,
)
from numaplane.api.quantity import Quantity
from numaplane.errors import InputError
from numaplane.topology.cpuset import CPUSet

DATA = Path(__file__).parent / "data" / "kubelet"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEADER = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}


def config(**fields: Any) -> KubeletConfiguration:
    return kubelet_config_from_dict({**HEADER, **fields}, "kubelet.yaml")


# -- defaults ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class DefaultCase:
    name: str
    attribute: str
    expected: object


DEFAULT_CASES = [
    DefaultCase("cpu manager policy", "cpu_manager_policy", "none"),
    DefaultCase("cpu manager options", "cpu_manager_policy_options", {}),
    DefaultCase("cpu reconcile period", "cpu_manager_reconcile_period", timedelta(seconds=10)),
    DefaultCase("reserved system cpus", "reserved_system_cpus", CPUSet()),
    DefaultCase("kube reserved", "kube_reserved", {}),
    DefaultCase("system reserved", "system_reserved", {}),
    DefaultCase("memory manager policy", "memory_manager_policy", "None"),
    DefaultCase("reserved memory", "reserved_memory", ()),
    DefaultCase("topology manager policy", "topology_manager_policy", "none"),
    DefaultCase("topology manager scope", "topology_manager_scope", "container"),
    DefaultCase("topology manager options", "topology_manager_policy_options", {}),
    DefaultCase("merge default eviction", "merge_default_eviction_settings", False),
]


@pytest.mark.parametrize("case", DEFAULT_CASES, ids=lambda c: c.name)
def test_an_empty_configuration_takes_upstream_defaults(case: DefaultCase) -> None:
    loaded = load_kubelet_config(DATA / "minimal.yaml")
    assert getattr(loaded, case.attribute) == case.expected
    assert getattr(KubeletConfiguration.default(), case.attribute) == case.expected


def test_default_eviction_hard_is_upstreams_linux_set() -> None:
    eviction = KubeletConfiguration.default().eviction_hard
    assert set(eviction) == {
        "memory.available",
        "nodefs.available",
        "nodefs.inodesFree",
        "imagefs.available",
        "imagefs.inodesFree",
    }
    assert eviction["memory.available"].quantity == Quantity.parse("100Mi")


def test_default_gates_are_upstreams() -> None:
    gates = KubeletConfiguration.default().feature_gates
    assert gates.enabled("TopologyManagerPolicyBetaOptions")
    assert not gates.enabled("TopologyManagerPolicyAlphaOptions")
    assert not gates.enabled("CPUManagerPolicyAlphaOptions")


def test_the_loaded_default_equals_the_built_default() -> None:
    assert load_kubelet_config(DATA / "minimal.yaml") == KubeletConfiguration.default()


@dataclass(frozen=True)
class ZeroCase:
    name: str
    fields: Mapping[str, Any]
    attribute: str
    expected: object


ZERO_CASES = [
    ZeroCase("empty policy", {"cpuManagerPolicy": ""}, "cpu_manager_policy", "none"),
    ZeroCase("null policy", {"memoryManagerPolicy": None}, "memory_manager_policy", "None"),
    ZeroCase("empty scope", {"topologyManagerScope": ""}, "topology_manager_scope", "container"),
    ZeroCase(
        "zero period",
        {"cpuManagerReconcilePeriod": "0s"},
        "cpu_manager_reconcile_period",
        timedelta(seconds=10),
    ),
    ZeroCase(
        "period",
        {"cpuManagerReconcilePeriod": "1m30s"},
        "cpu_manager_reconcile_period",
        timedelta(seconds=90),
    ),
]


@pytest.mark.parametrize("case", ZERO_CASES, ids=lambda c: c.name)
def test_zero_values_default_like_upstream(case: ZeroCase) -> None:
    assert getattr(config(**case.fields), case.attribute) == case.expected


# -- errors ------------------------------------------------------------------------------------

STATIC_MEMORY = {"memoryManagerPolicy": "Static"}


@dataclass(frozen=True)
class ErrorCase:
    name: str
    fields: Mapping[str, Any]
    field: str
    reason: str


ERROR_CASES = [
    ErrorCase(
        "wrong api version",
        {"apiVersion": "kubelet.config.k8s.io/v1"},
        "apiVersion",
        'no kind "KubeletConfiguration" is registered for version "kubelet.config.k8s.io/v1"',
    ),
    ErrorCase(
        "wrong kind",
        {"kind": "KubeProxyConfiguration"},
        "kind",
        'no kind "KubeProxyConfiguration" is registered for version '
        '"kubelet.config.k8s.io/v1beta1"',
    ),
    ErrorCase(
        "number for a string map",
        {"kubeReserved": {"cpu": 1}},
        "kubeReserved.cpu",
        "Input should be a valid string",
    ),
    ErrorCase(
        "string for a gate",
        {"featureGates": {"MemoryQoS": "true"}},
        "featureGates.MemoryQoS",
        "Input should be a valid boolean",
    ),
    ErrorCase(
        "reservation without node",
        {"reservedMemory": [{"limits": {"memory": "1Gi"}}]},
        "reservedMemory[0].numaNode",
        "Field required",
    ),
    ErrorCase(
        "unknown gate",
        {"featureGates": {"NoSuchGate": True}},
        "featureGates.NoSuchGate",
        "unrecognized feature gate: NoSuchGate",
    ),
    ErrorCase(
        "removed gate",
        {"featureGates": {"CPUManager": True}},
        "featureGates.CPUManager",
        "unrecognized feature gate: CPUManager",
    ),
    ErrorCase(
        "locked gate",
        {"featureGates": {"MemoryManager": False}},
        "featureGates.MemoryManager",
        "cannot set feature gate MemoryManager to false, feature is locked to true",
    ),
    ErrorCase(
        "topology policy",
        {"topologyManagerPolicy": "strict"},
        "topologyManagerPolicy",
        'invalid configuration: topologyManagerPolicy (--topology-manager-policy) "strict" must '
        'be one of: ["none" "best-effort" "restricted" "single-numa-node"]',
    ),
    ErrorCase(
        "topology scope",
        {"topologyManagerScope": "node"},
        "topologyManagerScope",
        'invalid configuration: topologyManagerScope (--topology-manager-scope) "node" must be '
        'one of: "container", or "pod"',
    ),
    ErrorCase(
        "reserved cpus with a reserved cgroup",
        {"reservedSystemCPUs": "0", "systemReservedCgroup": "/system.slice"},
        "reservedSystemCPUs",
        "invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with "
        "systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup "
        "(--kube-reserved-cgroup)",
    ),
    ErrorCase(
        "reserved memory type",
        {"reservedMemory": [{"numaNode": 0, "limits": {"cpu": "1"}}]},
        "reservedMemory[0].limits.cpu",
        'invalid configuration: the limit type "cpu" for NUMA node 0 is not supported, only '
        "[memory hugepages-<HugePageSize>] is accepted",
    ),
    ErrorCase(
        "reserved memory zero",
        {"reservedMemory": [{"numaNode": 1, "limits": {"memory": "0"}}]},
        "reservedMemory[0].limits.memory",
        "invalid configuration: reserved memory may not be zero for NUMA node 1 and resource "
        '"memory"',
    ),
    ErrorCase(
        "reserved memory duplicate",
        {
            "reservedMemory": [
                {"numaNode": 0, "limits": {"memory": "1Gi"}},
                {"numaNode": 0, "limits": {"memory": "1Gi"}},
            ]
        },
        "reservedMemory[1].limits.memory",
        "invalid configuration: the reserved memory has a duplicate value for NUMA node 0 and "
        'resource "memory"',
    ),
    ErrorCase(
        "topology options without their gate",
        {
            "featureGates": {"TopologyManagerPolicyOptions": False},
            "topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"},
        },
        "topologyManagerPolicyOptions",
        "topology manager policy options map[prefer-closest-numa-nodes:true] require feature "
        'gates "TopologyManagerPolicyOptions" enabled',
    ),
    ErrorCase(
        "unreservable resource",
        {"systemReserved": {"nvidia.com/gpu": "1"}},
        "systemReserved.nvidia.com/gpu",
        '--system-reserved value failed to parse: cannot reserve "nvidia.com/gpu" resource',
    ),
    ErrorCase(
        "negative reservation",
        {"kubeReserved": {"memory": "-1Gi"}},
        "kubeReserved.memory",
        '--kube-reserved value failed to parse: resource quantity for "memory" cannot be '
        "negative: -1Gi",
    ),
    ErrorCase(
        "unknown eviction signal",
        {"evictionHard": {"memory.free": "1Gi"}},
        "evictionHard.memory.free",
        "unsupported eviction signal memory.free",
    ),
    ErrorCase(
        "zero eviction threshold",
        {"evictionHard": {"memory.available": "0"}},
        "evictionHard.memory.available",
        "eviction threshold memory.available must be positive: 0",
    ),
    ErrorCase(
        "bad reconcile period",
        {"cpuManagerReconcilePeriod": "10"},
        "cpuManagerReconcilePeriod",
        'time: missing unit in duration "10"',
    ),
    ErrorCase(
        "unknown cpu policy",
        {"cpuManagerPolicy": "Static"},
        "cpuManagerPolicy",
        'unknown policy: "Static"',
    ),
    ErrorCase(
        "static cpu without reservation",
        {"cpuManagerPolicy": "static"},
        "cpuManagerPolicy",
        "[cpumanager] unable to determine reserved CPU resources for static policy",
    ),
    ErrorCase(
        "static cpu with a zero reservation",
        {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "0"}},
        "cpuManagerPolicy",
        "[cpumanager] unable to determine reserved CPU resources for static policy",
    ),
    ErrorCase(
        "unknown memory policy",
        {"memoryManagerPolicy": "static"},
        "memoryManagerPolicy",
        'unknown policy: "static"',
    ),
    ErrorCase(
        "static memory with no reserved memory",
        STATIC_MEMORY,
        "reservedMemory",
        'the total amount "0" of type "memory" is not equal to the value "100Mi" determined by '
        "Node Allocatable feature",
    ),
    ErrorCase(
        "static memory sums",
        {
            **STATIC_MEMORY,
            "kubeReserved": {"memory": "1Gi"},
            "reservedMemory": [
                {"numaNode": 0, "limits": {"memory": "512Mi"}},
                {"numaNode": 1, "limits": {"memory": "512Mi"}},
            ],
        },
        "reservedMemory",
        'the total amount "1Gi" of type "memory" is not equal to the value "1124Mi" determined '
        "by Node Allocatable feature",
    ),
    ErrorCase(
        "static memory with hugepages reserved",
        {
            **STATIC_MEMORY,
            "reservedMemory": [
                {"numaNode": 0, "limits": {"memory": "100Mi", "hugepages-1Gi": "1Gi"}}
            ],
        },
        "reservedMemory",
        'the total amount "1Gi" of type "hugepages-1Gi" is not equal to the value "0" determined '
        "by Node Allocatable feature",
    ),
    ErrorCase(
        "static memory with nothing to reserve",
        {**STATIC_MEMORY, "evictionHard": {"memory.available": "0%"}},
        "reservedMemory",
        "[memorymanager] you should specify the system reserved memory",
    ),
    ErrorCase(
        "static memory with a fractional byte",
        {
            **STATIC_MEMORY,
            "evictionHard": {"memory.available": "1500m"},
            "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1500m"}}],
        },
        "reservedMemory[0].limits.memory",
        "could not covert a variable of type Quantity to int64",
    ),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=lambda c: c.name)
def test_the_kubelets_checks_fail_with_its_words(case: ErrorCase) -> None:
    with pytest.raises(KubeletConfigError) as caught:
        config(**case.fields)
    assert caught.value.field == case.field
    assert caught.value.reason == case.reason
    assert str(caught.value) == f"kubelet.yaml: {case.field}: {case.reason}"
    assert "\n" not in str(caught.value)
    assert isinstance(caught.value, InputError)


def test_a_bad_reserved_cpu_list_names_the_list() -> None:
    with pytest.raises(KubeletConfigError) as caught:
        config(reservedSystemCPUs="0-x")
    assert caught.value.field == "reservedSystemCPUs"
    assert caught.value.reason.startswith(
        "invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) 0-x, error: "
    )


def test_a_bad_quantity_quotes_the_grammar() -> None:
    with pytest.raises(KubeletConfigError) as caught:
        config(kubeReserved={"cpu": "lots"})
    assert caught.value.reason.startswith(
        '--kube-reserved value failed to parse: failed to parse quantity "lots" for "cpu" '
        "resource: quantities must match the regular expression"
    )


# -- what is accepted --------------------------------------------------------------------------


def test_reserved_cpus_override_the_cpu_reservations() -> None:
    loaded = config(
        cpuManagerPolicy="static",
        reservedSystemCPUs="0,4",
        kubeReserved={"cpu": "not parsed: dropped by the override", "memory": "1Gi"},
        systemReserved={"cpu": "7"},
    )
    assert loaded.reserved_system_cpus == CPUSet.parse("0,4")
    assert "cpu" not in loaded.kube_reserved
    assert loaded.system_reserved["cpu"] == Quantity.parse("2")
    assert loaded.reserved_cpu_count() == 2


def test_unknown_fields_are_ignored_and_options_kept() -> None:
    loaded = load_kubelet_config(DATA / "full.yaml")
    assert loaded.cpu_manager_policy_options == {
        "full-pcpus-only": "true",
        "distribute-cpus-across-numa": "true",
    }
    assert loaded.topology_manager_policy == "restricted"
    assert loaded.topology_manager_scope == "pod"
    assert loaded.topology_manager_policy_options == {"prefer-closest-numa-nodes": "true"}
    assert loaded.feature_gates.enabled("CPUManagerPolicyAlphaOptions")
    assert loaded.reserved_system_cpus == CPUSet.parse("0-1,8-9")
    assert loaded.reserved_memory_per_node() == {0: {"memory": 1 << 30}, 1: {"memory": 612 << 20}}
    assert loaded.source == str(DATA / "full.yaml")


def test_options_are_not_judged_here() -> None:
    # Option names and maturity are the node layer's to check: any string map loads.
    loaded = config(
        topologyManagerPolicyOptions={"no-such-option": "x"},
        cpuManagerPolicyOptions={"also-unknown": "y"},
    )
    assert loaded.topology_manager_policy_options == {"no-such-option": "x"}


def test_percentage_memory_eviction_defers_the_static_memory_sums() -> None:
    loaded = load_kubelet_config(DATA / "static-memory-percent-eviction.yaml")
    capacity = {"memory": Quantity.parse("20Gi")}
    # 5% is a float32 upstream (0.0500000007...), so the result is 16 bytes over 1Gi there too.
    assert loaded.node_allocatable_reservation(capacity) == {"memory": Quantity.parse("1073741840")}
    with pytest.raises(KubeletConfigError) as caught:
        loaded.node_allocatable_reservation()
    assert caught.value.field == "evictionHard.memory.available"


@dataclass(frozen=True)
class EvictionCase:
    name: str
    fields: Mapping[str, Any]
    signals: frozenset[str]


EVICTION_CASES = [
    EvictionCase(
        "given replaces defaults",
        {"evictionHard": {"memory.available": "1Gi"}},
        frozenset({"memory.available"}),
    ),
    EvictionCase(
        "merge keeps defaults",
        {"evictionHard": {"pid.available": "10%"}, "mergeDefaultEvictionSettings": True},
        frozenset(
            {
                "memory.available",
                "nodefs.available",
                "nodefs.inodesFree",
                "imagefs.available",
                "imagefs.inodesFree",
                "pid.available",
            }
        ),
    ),
    EvictionCase("empty map has none", {"evictionHard": {}}, frozenset()),
    EvictionCase("0% is ignored", {"evictionHard": {"memory.available": "0%"}}, frozenset()),
]


@pytest.mark.parametrize("case", EVICTION_CASES, ids=lambda c: c.name)
def test_eviction_hard_defaulting(case: EvictionCase) -> None:
    assert set(config(**case.fields).eviction_hard) == case.signals


# -- derived values ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CPUCountCase:
    name: str
    fields: Mapping[str, Any]
    expected: int


CPU_COUNT_CASES = [
    CPUCountCase("none", {}, 0),
    CPUCountCase("whole", {"kubeReserved": {"cpu": "1"}, "systemReserved": {"cpu": "1"}}, 2),
    CPUCountCase("rounds up", {"kubeReserved": {"cpu": "500m"}, "systemReserved": {"cpu": "1"}}, 2),
    CPUCountCase("one milli", {"systemReserved": {"cpu": "1m"}}, 1),
    CPUCountCase("explicit set", {"reservedSystemCPUs": "0-2,7"}, 4),
]


@pytest.mark.parametrize("case", CPU_COUNT_CASES, ids=lambda c: c.name)
def test_reserved_cpu_count(case: CPUCountCase) -> None:
    assert config(**case.fields).reserved_cpu_count() == case.expected


@dataclass(frozen=True)
class AllocatableCase:
    name: str
    fields: Mapping[str, Any]
    capacity: Mapping[str, str] | None
    expected: Mapping[str, str]


ALLOCATABLE_CASES = [
    AllocatableCase("defaults", {}, None, {"memory": "100Mi"}),
    AllocatableCase(
        "sums",
        {"kubeReserved": {"memory": "1Gi", "cpu": "500m"}, "systemReserved": {"cpu": "250m"}},
        None,
        {"memory": "1124Mi", "cpu": "750m"},
    ),
    AllocatableCase(
        "percent nodefs resolved",
        {"evictionHard": {"nodefs.available": "10%"}},
        {"ephemeral-storage": "100Gi", "memory": "8Gi"},
        {"ephemeral-storage": "10737418400"},
    ),
    AllocatableCase(
        "capacity filters",
        {"kubeReserved": {"cpu": "1", "pid": "100"}},
        {"memory": "8Gi"},
        {"memory": "100Mi"},
    ),
    AllocatableCase(
        "pid is not allocatable", {"systemReserved": {"pid": "100"}}, None, {"memory": "100Mi"}
    ),
    AllocatableCase(
        "format of the first non-zero addend",
        {"systemReserved": {"memory": "1000M"}, "kubeReserved": {"memory": "24Mi"}},
        None,
        {"memory": "1130023424"},
    ),
]


@pytest.mark.parametrize("case", ALLOCATABLE_CASES, ids=lambda c: c.name)
def test_node_allocatable_reservation(case: AllocatableCase) -> None:
    capacity = (
        {name: Quantity.parse(text) for name, text in case.capacity.items()}
        if case.capacity is not None
        else None
    )
    reservation = config(**case.fields).node_allocatable_reservation(capacity)
    assert {name: str(amount) for name, amount in reservation.items()} == case.expected


@given(
    st.integers(min_value=0, max_value=1 << 40),
    st.integers(min_value=0, max_value=1 << 40),
    st.integers(min_value=1, max_value=1 << 30),
)
def test_memory_reservation_is_the_sum_of_its_parts(kube: int, system: int, evict: int) -> None:
    loaded = config(
        kubeReserved={"memory": str(kube)},
        systemReserved={"memory": str(system)},
        evictionHard={"memory.available": str(evict)},
    )
    assert loaded.node_allocatable_reservation()["memory"].value() == kube + system + evict


# -- files -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["kubelet-best-effort", "kubelet-single-numa-node", "kubelet-static-cpu"]
)
def test_the_examples_load(name: str) -> None:
    loaded = load_kubelet_config(EXAMPLES / f"{name}.yaml")
    assert loaded.cpu_manager_policy == "static"
    assert loaded.reserved_cpu_count() > 0


def test_the_pod_scope_example() -> None:
    loaded = load_kubelet_config(EXAMPLES / "kubelet-static-cpu.yaml")
    assert (loaded.topology_manager_policy, loaded.topology_manager_scope) == (
        "single-numa-node",
        "pod",
    )
    assert loaded.memory_manager_policy == "Static"
    assert sum(node["memory"] for node in loaded.reserved_memory_per_node().values()) == (
        loaded.node_allocatable_reservation()["memory"].value()
    )


def test_json_is_read_too(tmp_path: Path) -> None:
    path = tmp_path / "kubelet.json"
    path.write_text(json.dumps({**HEADER, "topologyManagerPolicy": "single-numa-node"}))
    assert load_kubelet_config(path).topology_manager_policy == "single-numa-node"


@dataclass(frozen=True)
class FileCase:
    name: str
    file: str
    reason_start: str


FILE_CASES = [
    FileCase("bad yaml", "bad-yaml.yaml", "not valid YAML: expected ',' or '}'"),
    FileCase("a list", "list.yaml", "expected a KubeletConfiguration mapping, got list"),
    FileCase("missing", "no-such-file.yaml", "cannot read the file: No such file or directory"),
]


@pytest.mark.parametrize("case", FILE_CASES, ids=lambda c: c.name)
def test_unusable_files_fail_in_one_line(case: FileCase) -> None:
    with pytest.raises(KubeletConfigError) as caught:
        load_kubelet_config(DATA / case.file)
    assert caught.value.source == str(DATA / case.file)
    assert caught.value.reason.startswith(case.reason_start)
    assert "\n" not in str(caught.value)


def test_an_empty_document_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("")
    with pytest.raises(KubeletConfigError, match="the document is empty"):
        load_kubelet_config(path)
