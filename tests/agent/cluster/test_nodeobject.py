"""``node_object``: capacity, allocatable, conditions, addresses and labels as the kubelet
writes them, table-driven over presets and configurations."""

from __future__ import annotations

import platform
import struct
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from numaplane.agent.cluster.nodeobject import (
    KUBELET_VERSION,
    NodeSystemInfo,
    condition_transitions,
    format_quantity,
    node_object,
)
from numaplane.api.kubeletconfig import kubelet_config_from_dict
from numaplane.api.quantity import Quantity
from numaplane.node.admission import Node
from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.source import InMemoryDeviceSource
from numaplane.topology.presets import PRESETS
from numaplane.topology.synthetic import parse_synthetic

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
SYSTEM = NodeSystemInfo(
    machine_id="m", system_uuid="u", boot_id="b", kernel_version="6.1.0", architecture="arm64"
)
GIB = 1 << 30
MIB = 1 << 20


@dataclass(frozen=True)
class Case:
    name: str
    machine: str
    config: dict[str, Any] = field(default_factory=dict)
    cpu_allocatable: str = ""
    memory_capacity: str = ""
    memory_allocatable: str = ""
    extra: dict[str, tuple[str, str]] = field(default_factory=dict)  # name: (cap, alloc)


CASES = [
    Case(
        "defaults: only the eviction threshold comes off memory",
        "preset:dual-socket-ht",
        cpu_allocatable="12",
        memory_capacity="128Gi",
        memory_allocatable="130972Mi",  # 128Gi - 100Mi
    ),
    Case(
        "static cpu, reserved cpus and memory",
        "preset:dual-socket-multi-numa",
        {
            "cpuManagerPolicy": "static",
            "reservedSystemCPUs": "0,1",
            "systemReserved": {"memory": "1Gi"},
            "kubeReserved": {"memory": "512Mi"},
        },
        cpu_allocatable="78",
        memory_capacity="256Gi",
        memory_allocatable=f"{256 * 1024 - 1024 - 512 - 100}Mi",
    ),
    Case(
        "fractional kube-reserved cpu",
        "preset:single-socket-ht",
        {"kubeReserved": {"cpu": "500m"}},
        cpu_allocatable="7500m",
        memory_capacity="64Gi",
        memory_allocatable=f"{64 * 1024 - 100}Mi",
    ),
    Case(
        "hugepages leave memory allocatable",
        "sockets=2,cores-per-numa=2,memory-per-numa=8Gi,hugepages-2Mi-per-numa=256,"
        "hugepages-1Gi-per-numa=1",
        cpu_allocatable="4",
        memory_capacity="16Gi",
        memory_allocatable=f"{16 * 1024 - 100 - 2 * 512 - 2 * 1024}Mi",
        extra={"hugepages-2Mi": ("1Gi", "1Gi"), "hugepages-1Gi": ("2Gi", "2Gi")},
    ),
]


def _machine(spec: str) -> Any:
    if spec.startswith("preset:"):
        return PRESETS[spec.removeprefix("preset:")].build()
    return parse_synthetic(spec)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_capacity_and_allocatable(case: Case) -> None:
    machine = _machine(case.machine)
    node = Node(machine, kubelet_config_from_dict(case.config))
    obj = node_object("n1", node, now=NOW, system=SYSTEM)
    capacity, allocatable = obj["status"]["capacity"], obj["status"]["allocatable"]
    assert capacity["cpu"] == str(len(machine.all_cpu_ids))
    assert Quantity.parse(capacity["memory"]).value() == machine.memory_bytes
    assert capacity["memory"] == case.memory_capacity
    assert allocatable["cpu"] == case.cpu_allocatable
    assert allocatable["memory"] == case.memory_allocatable
    assert capacity["pods"] == allocatable["pods"] == "110"
    for name, (cap, alloc) in case.extra.items():
        assert (capacity[name], allocatable[name]) == (cap, alloc)
    # The same numbers as the node engine's, only formatted.
    for name, q in node.allocatable().items():
        assert Quantity.parse(allocatable[name]) == q


def test_device_resources_count_healthy_devices() -> None:
    machine = PRESETS["dual-socket-ht"].build()
    source = InMemoryDeviceSource(
        "example.com/gpu", [Device("a", (0,)), Device("b", (1,)), Device("c", (1,), False)]
    )
    node = Node(machine, kubelet_config_from_dict({}), device_sources=[source])
    status = node_object("n1", node, now=NOW, system=SYSTEM)["status"]
    assert status["capacity"]["example.com/gpu"] == "3"
    assert status["allocatable"]["example.com/gpu"] == "2"


def test_ephemeral_storage_subtracts_the_nodefs_threshold() -> None:
    node = Node(PRESETS["single-socket-ht"].build(), kubelet_config_from_dict({}))
    status = node_object("n1", node, now=NOW, system=SYSTEM, ephemeral_storage_bytes=100 * GIB)[
        "status"
    ]
    assert status["capacity"]["ephemeral-storage"] == "100Gi"
    # nodefs.available defaults to 10%, held as a float32 and truncated, as the kubelet does.
    ten_percent = struct.unpack("f", struct.pack("f", 0.1))[0]
    expected = 100 * GIB - int(float(100 * GIB) * ten_percent)
    assert status["allocatable"]["ephemeral-storage"] == str(expected)


def test_conditions_metadata_and_info() -> None:
    node = Node(PRESETS["single-socket-ht"].build(), kubelet_config_from_dict({}))
    obj = node_object(
        "n1",
        node,
        now=NOW,
        system=SYSTEM,
        labels={"numaplane.io/simulated": "true"},
        kubelet_port=10250,
        address="127.0.0.2",
    )
    conditions = obj["status"]["conditions"]
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in conditions] == [
        (
            "MemoryPressure",
            "False",
            "KubeletHasSufficientMemory",
            "kubelet has sufficient memory available",
        ),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ]
    assert {c["lastHeartbeatTime"] for c in conditions} == {"2026-01-02T03:04:05Z"}
    assert obj["metadata"]["labels"] == {
        "beta.kubernetes.io/arch": "arm64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "arm64",
        "kubernetes.io/hostname": "n1",
        "kubernetes.io/os": "linux",
        "numaplane.io/simulated": "true",
    }
    assert obj["status"]["addresses"] == [
        {"type": "InternalIP", "address": "127.0.0.2"},
        {"type": "Hostname", "address": "n1"},
    ]
    assert obj["status"]["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 10250}}
    info = obj["status"]["nodeInfo"]
    assert info["kubeletVersion"] == KUBELET_VERSION
    assert (info["architecture"], info["operatingSystem"], info["kernelVersion"]) == (
        "arm64",
        "linux",
        "6.1.0",
    )


def test_not_ready() -> None:
    node = Node(PRESETS["single-socket-ht"].build(), kubelet_config_from_dict({}))
    obj = node_object("n1", node, now=NOW, system=SYSTEM, ready=False, not_ready_message="x")
    ready = obj["status"]["conditions"][-1]
    assert (ready["status"], ready["reason"], ready["message"]) == ("False", "KubeletNotReady", "x")


def test_transition_times_kept_while_status_holds() -> None:
    node = Node(PRESETS["single-socket-ht"].build(), kubelet_config_from_dict({}))
    first = node_object("n1", node, now=NOW, system=SYSTEM)["status"]["conditions"]
    later = datetime(2026, 1, 2, 3, 5, 0, tzinfo=UTC)
    second = node_object("n1", node, now=later, system=SYSTEM, ready=False)["status"]["conditions"]
    merged = condition_transitions(second, first)
    by_type = {c["type"]: c for c in merged}
    assert by_type["MemoryPressure"]["lastTransitionTime"] == "2026-01-02T03:04:05Z"
    assert by_type["MemoryPressure"]["lastHeartbeatTime"] == "2026-01-02T03:05:00Z"
    assert by_type["Ready"]["lastTransitionTime"] == "2026-01-02T03:05:00Z"


@dataclass(frozen=True)
class FormatCase:
    name: str
    resource: str
    value: int
    text: str


FORMATS = [
    FormatCase("memory in Ki as cAdvisor", "memory", 65849992 * 1024, "65849992Ki"),
    FormatCase("memory not a whole Ki", "memory", 1025, "1025"),
    FormatCase("hugepages", "hugepages-2Mi", 512 * MIB, "512Mi"),
    FormatCase("cpu", "cpu", 64, "64"),
    FormatCase("decimal device count", "example.com/gpu", 1000, "1k"),
]


@pytest.mark.parametrize("case", FORMATS, ids=lambda c: c.name)
def test_quantity_formats(case: FormatCase) -> None:
    assert format_quantity(case.resource, Quantity.parse(case.value)) == case.text


def test_host_facts() -> None:
    info = NodeSystemInfo.host()
    assert info.kernel_version == platform.release()
    assert info.operating_system == "linux"
    # Go's GOARCH names, never Python's (x86_64 is amd64 to Kubernetes).
    assert info.architecture not in ("x86_64", "aarch64")
    assert NodeSystemInfo.host() is info
