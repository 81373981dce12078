"""The static policy beyond the vectors: reservation, metrics, reuse and hint corner cases."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from numaplane.api.pod import Container, Pod, ResourceRequirements
from numaplane.api.quantity import Quantity
from numaplane.node.cpumanager.errors import SMTAlignmentError
from numaplane.node.cpumanager.metrics import (
    EXCLUSIVE_CPU_ALLOCATION_COUNT,
    PINNING_ERRORS_TOTAL,
    PINNING_REQUESTS_TOTAL,
    SHARED_POOL_SIZE_MILLICORES,
)
from numaplane.node.cpumanager.policy_none import NonePolicy
from numaplane.node.cpumanager.policy_static import StaticPolicy
from numaplane.node.cpumanager.state import InMemoryState
from numaplane.node.errors import ConfigurationError, NodeError, admit_result_of
from numaplane.node.requests import guaranteed_cpus
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.node.topologymanager.metrics import ALIGNED_COMPUTE_RESOURCES
from numaplane.topology.cpuset import CPUSet
from tests.node.cpumanager.topos import DUAL_SOCKET_HT, DUAL_SOCKET_MULTI_NUMA_HT


def gu(name: str, cpu: str, restart_policy: str | None = None) -> Container:
    """A Guaranteed-shaped container."""
    res = {"cpu": cpu, "memory": "1G"}
    return Container.of(name, res, res, restart_policy)


@dataclass(frozen=True)
class GuaranteedCase:
    name: str
    request: str
    limit: str
    want: int


GUARANTEED_CASES = [
    GuaranteedCase("whole cpus", "2", "2", 2),
    GuaranteedCase("millis that are whole", "3000m", "3000m", 3),
    GuaranteedCase("fractional", "1500m", "1500m", 0),
    GuaranteedCase("burstable", "1", "2", 0),
]


@pytest.mark.parametrize("case", GUARANTEED_CASES, ids=lambda c: c.name)
def test_guaranteed_cpus(case: GuaranteedCase) -> None:
    c = Container.of(
        "c", {"cpu": case.request, "memory": "1G"}, {"cpu": case.limit, "memory": "1G"}
    )
    assert guaranteed_cpus(Pod.of("p", [c]), c) == case.want


def test_reserved_cpus_are_packed_and_their_cores_are_physical() -> None:
    policy = StaticPolicy(DUAL_SOCKET_HT, 2)
    assert policy.reserved_cpus == CPUSet([0, 6])
    policy = StaticPolicy(DUAL_SOCKET_HT, 1, CPUSet([1]))
    assert policy.reserved_physical_cpus == CPUSet([1, 7])


def test_too_many_reserved_cpus() -> None:
    with pytest.raises(ConfigurationError, match=r"size of  did not equal 13"):
        StaticPolicy(DUAL_SOCKET_HT, 13)


def test_smt_alignment_error_reason_and_metrics() -> None:
    policy = StaticPolicy(DUAL_SOCKET_HT, 0, options={"full-pcpus-only": "true"})
    state = InMemoryState()
    policy.start(state)
    c = gu("c", "3")
    with pytest.raises(SMTAlignmentError) as info:
        policy.allocate(state, Pod.of("p", [c]), c)
    assert info.value == SMTAlignmentError(3, 2)
    assert admit_result_of(info.value) == (
        "SMTAlignmentError",
        "SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2",
    )
    ok = gu("ok", "4")
    policy.allocate(state, Pod.of("p", [ok]), ok)
    value = policy.metrics.registry.get_sample_value
    assert value(PINNING_REQUESTS_TOTAL) == 2
    assert value(PINNING_ERRORS_TOTAL) == 1
    # prometheus_client names every counter sample "<name>_total".
    aligned = {"scope": "container", "boundary": "physical_cpu"}
    assert value(ALIGNED_COMPUTE_RESOURCES + "_total", aligned) == 1
    assert value(EXCLUSIVE_CPU_ALLOCATION_COUNT) == 4
    assert value(SHARED_POOL_SIZE_MILLICORES) == 8000


def test_plain_allocation_errors_are_unexpected() -> None:
    policy = StaticPolicy(DUAL_SOCKET_HT, 0)
    state = InMemoryState()
    policy.start(state)
    c = gu("c", "13")
    with pytest.raises(NodeError) as info:
        policy.allocate(state, Pod.of("p", [c]), c)
    assert admit_result_of(info.value) == (
        "UnexpectedAdmissionError",
        "Allocate failed due to not enough cpus available to satisfy request: "
        "requested=13, available=12, which is unexpected",
    )


class OneHint:
    """An affinity store with one hint."""

    def __init__(self, *numa: int) -> None:
        self.hint = TopologyHint(BitMask(*numa), True)

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        return self.hint


def test_affinity_is_honoured_then_spills_over() -> None:
    policy = StaticPolicy(DUAL_SOCKET_MULTI_NUMA_HT, 0, affinity=OneHint(3))
    state = InMemoryState()
    policy.start(state)
    c = gu("c", "10")
    policy.allocate(state, Pod.of("p", [c]), c)
    got = state.get_cpu_set("p", "c")
    assert got is not None
    assert DUAL_SOCKET_MULTI_NUMA_HT.details.cpus_in_numa_nodes(3) <= got


def test_init_container_cpus_are_reused_and_hinted() -> None:
    policy = StaticPolicy(DUAL_SOCKET_HT, 0)
    state = InMemoryState()
    policy.start(state)
    init, app = gu("init", "2"), gu("app", "2")
    pod = Pod.of("p", [app], [init])
    policy.allocate(state, pod, init)
    init_cpus = state.get_cpu_set("p", "init")
    assert init_cpus == CPUSet([0, 6])
    hints = policy.get_topology_hints(state, pod, app)
    assert hints is not None
    # The reusable CPUs sit on NUMA 0, so every hint must include NUMA 0.
    assert all(h.numa_affinity is not None and 0 in h.numa_affinity for h in hints["cpu"] or ())
    policy.allocate(state, pod, app)
    assert state.get_cpu_set("p", "app") == init_cpus
    policy.remove_container(state, "p", "init")
    assert state.get_default_cpu_set() == CPUSet.parse("1-5,7-11")


def test_regenerated_hints_for_existing_assignment() -> None:
    policy = StaticPolicy(DUAL_SOCKET_HT, 0)
    state = InMemoryState({"p": {"c": CPUSet([3, 9])}}, CPUSet.parse("0-2,4-8,10-11"))
    c = gu("c", "2")
    hints = policy.get_topology_hints(state, Pod.of("p", [c]), c)
    assert hints == {"cpu": [TopologyHint(BitMask(1), True), TopologyHint(BitMask(0, 1), False)]}
    wrong = gu("c", "4")
    assert policy.get_topology_hints(state, Pod.of("p", [wrong]), wrong) == {"cpu": []}
    assert policy.get_pod_topology_hints(state, Pod.of("p", [wrong])) == {"cpu": []}


def test_no_hints_for_shared_pool_containers() -> None:
    policy = StaticPolicy(DUAL_SOCKET_HT, 0)
    state = InMemoryState()
    c = gu("c", "500m")
    assert policy.get_topology_hints(state, Pod.of("p", [c]), c) is None
    assert policy.get_pod_topology_hints(state, Pod.of("p", [c])) is None


def test_strict_reservation_keeps_reserved_out_of_the_pool() -> None:
    policy = StaticPolicy(DUAL_SOCKET_HT, 2, options={"strict-cpu-reservation": "true"})
    state = InMemoryState()
    policy.start(state)
    assert state.get_default_cpu_set() == CPUSet.parse("1-5,7-11")
    assert policy.get_allocatable_cpus(state) == CPUSet.parse("1-5,7-11")


def test_none_policy() -> None:
    with pytest.raises(ConfigurationError, match=r"options=map\[a:b\]"):
        NonePolicy({"a": "b"})
    policy = NonePolicy()
    state = InMemoryState()
    c = gu("c", "2")
    policy.start(state)
    policy.allocate(state, Pod.of("p", [c]), c)
    assert state.get_cpu_assignments() == {}
    assert policy.get_topology_hints(state, Pod.of("p", [c]), c) is None
    assert policy.get_allocatable_cpus(state) == CPUSet()


def test_pod_level_resources_stay_shared() -> None:
    c = gu("c", "2")
    res = ResourceRequirements({"cpu": Quantity.parse("2")}, {"cpu": Quantity.parse("2")})
    pod = replace(Pod.of("p", [c]), resources=res)
    policy = StaticPolicy(DUAL_SOCKET_HT, 0)
    state = InMemoryState()
    policy.start(state)
    policy.allocate(state, pod, c)
    assert state.get_cpu_assignments() == {}
    assert policy.metrics.registry.get_sample_value(PINNING_REQUESTS_TOTAL) == 0
    assert policy.get_pod_topology_hints(state, pod) is None
