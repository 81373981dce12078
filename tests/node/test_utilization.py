"""NUMA utilization from the managers, and prefer-most-allocated-numa-node through ``Node``."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import pytest

from numaplane.api.kubeletconfig import KubeletConfiguration, kubelet_config_from_dict
from numaplane.api.pod import Container, Pod
from numaplane.node.admission import Node
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.node.topologymanager.policy_options import PolicyOptionError
from numaplane.node.utilization import ManagersUtilization, cpu_scores, memory_scores, percent
from numaplane.topology.discover import load_machine
from numaplane.topology.model import Machine

GIB = 1 << 30
MIB = 1 << 20
OPTION = "prefer-most-allocated-numa-node"
#: dual-socket-ht: NUMA 0 holds the even CPUs 0-10, NUMA 1 the odd CPUs 1-11; 64Gi each.
MACHINE = "dual-socket-ht"
#: Two CPUs of NUMA 0 are reserved: 4 allocatable there, 6 on NUMA 1.
RESERVED_CPUS = "0,2"
#: The memory reservation sits on NUMA 0 (system reserved 1Gi + hard eviction 100Mi).
NODE0_MEMORY = 64 * GIB - 1124 * MIB
NODE1_MEMORY = 64 * GIB


def _config(
    option: bool, cpu_policy: str = "static", memory_policy: str = "Static", gate: bool = True
) -> KubeletConfiguration:
    raw: dict[str, Any] = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "cpuManagerPolicy": cpu_policy,
        "systemReserved": {"memory": "1Gi", "cpu": "2"},
        "evictionHard": {"memory.available": "100Mi"},
        "memoryManagerPolicy": memory_policy,
        "topologyManagerPolicy": "single-numa-node",
        "featureGates": {"TopologyManagerPolicyAlphaOptions": gate},
    }
    if cpu_policy == "static":
        raw["reservedSystemCPUs"] = RESERVED_CPUS
    if memory_policy == "Static":
        raw["reservedMemory"] = [{"numaNode": 0, "limits": {"memory": "1124Mi"}}]
    if option:
        raw["topologyManagerPolicyOptions"] = {OPTION: "true"}
    return kubelet_config_from_dict(raw)


def _node(option: bool, machine: Machine | None = None, **kwargs: Any) -> Node:
    return Node(machine or load_machine(MACHINE), _config(option, **kwargs))


def _pod(uid: str, cpu: str, memory: str, init: tuple[str, str] | None = None) -> Pod:
    resources = {"cpu": cpu, "memory": memory}
    inits = []
    if init is not None:
        init_resources = {"cpu": init[0], "memory": init[1]}
        inits = [Container.of("init", requests=init_resources, limits=init_resources)]
    return Pod.of(
        uid,
        containers=[Container.of("app", requests=resources, limits=resources)],
        init_containers=inits,
    )


def _numa_of(node: Node, pod: Pod) -> TopologyHint | None:
    admission = node.admit(pod)
    assert admission.admitted, admission.message
    return admission.containers[-1].affinity


ZERO = {0: Fraction(0), 1: Fraction(0)}
ON_NUMA0 = TopologyHint(BitMask(0), True)
ON_NUMA1 = TopologyHint(BitMask(1), True)


# -- the adapter ------------------------------------------------------------------------------


def test_percent_is_exact_and_zero_without_allocatable() -> None:
    assert percent(1, 3) == Fraction(100, 3)
    assert percent(5, 0) == 0


def test_empty_node_scores_zero_everywhere() -> None:
    node = _node(True)
    utilization = ManagersUtilization(node.cpu_manager, node.memory_manager)
    assert utilization.cpu_scores() == ZERO
    assert utilization.memory_scores() == ZERO


def test_scores_follow_allocations_and_releases() -> None:
    node = _node(False)
    # Five CPUs only fit on NUMA 1 (4 allocatable on NUMA 0).
    assert _numa_of(node, _pod("a", "5", "2Gi")) == ON_NUMA1
    assert cpu_scores(node.cpu_manager) == {0: Fraction(0), 1: Fraction(5 * 100, 6)}
    assert memory_scores(node.memory_manager) == {
        0: Fraction(0),
        1: Fraction(2 * GIB * 100, NODE1_MEMORY),
    }
    assert _numa_of(node, _pod("b", "1", "3Gi")) == ON_NUMA0
    # Reserved CPUs are out of both sides: 1 of NUMA 0's 4 allocatable CPUs.
    assert cpu_scores(node.cpu_manager) == {0: Fraction(25), 1: Fraction(500, 6)}
    # NUMA 0's allocatable memory leaves out the reservation on that node.
    assert memory_scores(node.memory_manager) == {
        0: Fraction(3 * GIB * 100, NODE0_MEMORY),
        1: Fraction(2 * GIB * 100, NODE1_MEMORY),
    }
    node.release("a")
    assert cpu_scores(node.cpu_manager) == {0: Fraction(25), 1: Fraction(0)}
    assert memory_scores(node.memory_manager) == {
        0: Fraction(3 * GIB * 100, NODE0_MEMORY),
        1: Fraction(0),
    }


def test_shared_pool_containers_do_not_count() -> None:
    node = _node(False)
    # A fractional CPU request runs on the shared pool: no exclusive CPU.
    assert node.admit(_pod("a", "500m", "1Gi")).admitted
    assert cpu_scores(node.cpu_manager) == ZERO


def test_cpus_reused_by_an_app_container_count_once() -> None:
    node = _node(False)
    assert node.admit(_pod("a", "2", "1Gi", init=("2", "1Gi"))).admitted
    held = node.cpu_manager.exclusive_assignments()["a"]
    distinct = set().union(*(set(cpus) for cpus in held.values()))
    assert sum(len(cpus) for cpus in held.values()) > len(distinct)
    assert cpu_scores(node.cpu_manager) == {0: percent(len(distinct), 4), 1: Fraction(0)}


def test_unavailable_signals() -> None:
    node = _node(True, cpu_policy="none", memory_policy="None")
    assert cpu_scores(node.cpu_manager) is None
    assert memory_scores(node.memory_manager) is None


def test_hugepages_are_not_memory_utilization() -> None:
    machine = load_machine("sockets=2,cores-per-socket=4,hugepages-1Gi-per-numa=4")
    node = _node(False, machine)
    pod = Pod.of(
        "h",
        containers=[
            Container.of(
                "app",
                requests={"cpu": "1", "memory": "1Gi", "hugepages-1Gi": "3Gi"},
                limits={"cpu": "1", "memory": "1Gi", "hugepages-1Gi": "3Gi"},
            )
        ],
    )
    assert node.admit(pod).admitted
    state = node.memory_manager.state.get_machine_state()[0].memory_map
    assert state["hugepages-1Gi"].reserved == 3 * GIB
    assert memory_scores(node.memory_manager) == {
        0: percent(GIB, state["memory"].allocatable),
        1: Fraction(0),
    }


# -- end to end through Node ------------------------------------------------------------------


@dataclass(frozen=True)
class EndToEndCase:
    """Pods admitted in order, then a probe pod; where the probe goes with and without."""

    name: str
    first: tuple[Pod, ...]
    probe: Pod
    with_option: TopologyHint
    without: TopologyHint
    decided_by: str
    cpu_policy: str = "static"
    memory_policy: str = "Static"


E2E_CASES = (
    EndToEndCase(
        "cpu and memory agree on the busy node",
        (_pod("a", "5", "1Gi"),),
        _pod("probe", "1", "1Gi"),
        ON_NUMA1,
        ON_NUMA0,
        "agree",
    ),
    EndToEndCase(
        "cpu alone (memory manager None)",
        (_pod("a", "5", "1Gi"),),
        _pod("probe", "1", "1Gi"),
        ON_NUMA1,
        ON_NUMA0,
        "cpu",
        memory_policy="None",
    ),
    EndToEndCase(
        "memory alone (cpu manager none)",
        (_pod("a", "1", "63Gi"),),
        _pod("probe", "1", "1Gi"),
        ON_NUMA1,
        ON_NUMA0,
        "memory",
        cpu_policy="none",
    ),
    EndToEndCase(
        "disagreement keeps the default",
        # c: nothing allocated yet, so NUMA 0; 1 CPU and 30Gi. a: 5 CPUs only fit on NUMA 1.
        (_pod("c", "1", "30Gi"), _pod("a", "5", "1Gi")),
        _pod("probe", "1", "1Gi"),
        ON_NUMA0,
        ON_NUMA0,
        "disagree",
    ),
    EndToEndCase(
        "nothing allocated: neither decides",
        (),
        _pod("probe", "1", "1Gi"),
        ON_NUMA0,
        ON_NUMA0,
        "neither",
    ),
)


@pytest.mark.parametrize("case", E2E_CASES, ids=lambda c: c.name)
def test_end_to_end(case: EndToEndCase) -> None:
    for option, want in ((True, case.with_option), (False, case.without)):
        node = _node(option, cpu_policy=case.cpu_policy, memory_policy=case.memory_policy)
        for pod in case.first:
            assert node.admit(pod).admitted
        admission = node.admit(case.probe)
        assert admission.admitted, admission.message
        (placement,) = admission.containers
        assert placement.affinity == want
        if case.memory_policy == "Static":
            assert placement.memory_numa_nodes == tuple(want.numa_affinity or ())
        if case.cpu_policy == "static":
            assert (
                placement.exclusive_cpus.sorted()[0] % 2
                == (want.numa_affinity or BitMask()).bits[0]
            )
        (decision,) = admission.topology.explanation.decisions
        if option:
            assert decision.tie_break is not None
            assert decision.tie_break.outcome == case.decided_by
            assert admission.to_json()["explanation"]["decisions"][0]["tie_break"]["chosen"] == (
                decision.tie_break.chosen
            )
        else:
            assert decision.tie_break is None
            assert "tie_break" not in admission.to_json()["explanation"]["decisions"][0]


def test_option_needs_the_alpha_gate() -> None:
    with pytest.raises(PolicyOptionError, match="alpha-level options not enabled"):
        Node(load_machine(MACHINE), _config(True, gate=False))
