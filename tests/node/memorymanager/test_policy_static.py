"""Tests of the static memory policy beyond the vectors: allocation paths, removal, pod
scope, metrics and the reuse bookkeeping."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.api.pod import Pod, ResourceRequirements
from numaplane.api.quantity import Quantity
from numaplane.node.memorymanager.errors import MemoryAllocationError, ReservedMemoryError
from numaplane.node.memorymanager.policy_static import StaticPolicy
from numaplane.node.memorymanager.state import Block, InMemoryState
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.testing.upstream_fixtures import machine_from_cadvisor
from tests.node.memorymanager.helpers import (
    GB,
    MB,
    SettableAffinity,
    guaranteed,
    hint,
    machine,
    pod,
    started_policy,
)


def test_new_requires_some_reserved_memory() -> None:
    with pytest.raises(ReservedMemoryError, match="you should specify the system reserved memory"):
        StaticPolicy(machine(2, GB), {0: {}, 1: {"hugepages-1Gi": GB}}, SettableAffinity())
    assert (
        StaticPolicy(machine(2, GB), {0: {}, 1: {"memory": 1}}, SettableAffinity()).name == "Static"
    )


@dataclass(frozen=True)
class AllocateCase:
    name: str
    nodes: int
    node_memory: int
    tm_hint: TopologyHint
    memory: int
    error: str | None
    blocks_on: tuple[int, ...] = ()


ALLOCATE_CASES = [
    AllocateCase("fits on one node by default", 2, 2 * GB, hint(), GB, None, (0,)),
    AllocateCase(
        "spans two nodes when none has enough", 4, GB, hint(preferred=True), GB, None, (0, 1)
    ),
    AllocateCase(
        "extends a subset hint to its best superset",
        4,
        GB,
        hint(2, preferred=True),
        GB,
        None,
        (0, 2),
    ),
    AllocateCase(
        "no superset of the hint fits",
        2,
        GB,
        hint(1),
        2 * GB,
        "[memorymanager] failed to find NUMA nodes to extend the current topology hint",
    ),
    AllocateCase(
        "no room anywhere",
        1,
        GB,
        hint(),
        4 * GB,
        "[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough "
        "memory is available",
    ),
]


@pytest.mark.parametrize("case", ALLOCATE_CASES, ids=lambda c: c.name)
def test_allocate(case: AllocateCase) -> None:
    policy, state, affinity = started_policy(machine(case.nodes, case.node_memory))
    affinity.hint = case.tm_hint
    p = pod("p", guaranteed("c", case.memory))
    if case.error is not None:
        with pytest.raises(MemoryAllocationError) as info:
            policy.allocate(state, p, p.containers[0])
        assert str(info.value) == case.error
        assert state.get_memory_assignments() == {}
        assert _sample(policy, "pinning_errors_total") == 1
        return
    policy.allocate(state, p, p.containers[0])
    assert state.get_memory_blocks("p", "c") == (Block(case.blocks_on, "memory", case.memory),)
    machine_state = state.get_machine_state()
    for node in case.blocks_on:
        assert machine_state[node].cells == case.blocks_on
    reserved = sum(machine_state[n].memory_map["memory"].reserved for n in case.blocks_on)
    assert reserved == case.memory
    assert _sample(policy, "pinning_requests_total") == 1
    assert _sample(policy, "pinning_errors_total") == 0


def test_extension_must_stay_preferred_when_the_hint_was() -> None:
    # Node 0 could hold the request alone (so only single nodes are preferred) but is partly
    # used; the only superset of {1} that fits is {1,2}, which is not preferred.
    m = machine_from_cadvisor(
        {
            "topology": [
                {"id": 0, "memory": 1536 * MB},
                {"id": 1, "memory": GB},
                {"id": 2, "memory": GB},
            ]
        }
    )
    policy, state, affinity = started_policy(m)
    first = pod("x", guaranteed("c", 512 * MB))
    affinity.hint = hint(0)
    policy.allocate(state, first, first.containers[0])
    affinity.hint = hint(1, preferred=True)
    p = pod("p", guaranteed("c", GB))
    with pytest.raises(MemoryAllocationError) as info:
        policy.allocate(state, p, p.containers[0])
    assert str(info.value) == "[memorymanager] failed to find the extended preferred hint"
    affinity.hint = hint(1)
    policy.allocate(state, p, p.containers[0])
    assert state.get_memory_blocks("p", "c") == (Block((1, 2), "memory", GB),)


def test_allocate_is_idempotent_and_skips_non_guaranteed_pods() -> None:
    policy, state, _ = started_policy(machine(1, 4 * GB))
    p = pod("p", guaranteed("c", GB))
    policy.allocate(state, p, p.containers[0])
    before = state.get_machine_state()
    policy.allocate(state, p, p.containers[0])
    assert state.get_machine_state() == before
    burstable = Pod.of("b", containers=[guaranteed("c", GB)], qos="Burstable")
    policy.allocate(state, burstable, burstable.containers[0])
    assert state.get_memory_blocks("b", "c") is None
    assert _sample(policy, "pinning_requests_total") == 2


def test_pods_with_pod_level_resources_are_left_alone() -> None:
    policy, state, _ = started_policy(machine(1, 4 * GB))
    p = pod("p", guaranteed("c", GB))
    pod_level = Pod(
        name="p",
        uid="p",
        containers=p.containers,
        status_qos_class=p.status_qos_class,
        resources=ResourceRequirements({"memory": Quantity.parse("1Gi")}, {}),
    )
    assert policy.get_topology_hints(state, pod_level, p.containers[0]) is None
    policy.allocate(state, pod_level, p.containers[0])
    assert state.get_memory_assignments() == {}


@dataclass(frozen=True)
class RemoveCase:
    name: str
    nodes: tuple[int, ...]


@pytest.mark.parametrize(
    "case",
    [RemoveCase("single node", (0,)), RemoveCase("cross NUMA", (0, 1))],
    ids=lambda c: c.name,
)
def test_remove_container_restores_the_default_state(case: RemoveCase) -> None:
    policy, state, affinity = started_policy(machine(2, GB, hugepages_1g=0))
    initial = state.get_machine_state()
    affinity.hint = hint(*case.nodes)
    p = pod("p", guaranteed("c", 256 * MB * len(case.nodes)))
    policy.allocate(state, p, p.containers[0])
    assert state.get_machine_state() != initial
    policy.remove_container(state, "p", "c")
    policy.remove_container(state, "p", "c")
    assert state.get_machine_state() == initial
    assert state.get_memory_assignments() == {}


def test_pod_scope_hints_use_peak_requests_and_stored_blocks() -> None:
    policy, state, _ = started_policy(machine(2, 2 * GB))
    p = pod("p", guaranteed("app", GB), init=(guaranteed("init", 1536 * MB),))
    hints = policy.get_pod_topology_hints(state, p)
    assert hints is not None
    assert hints["memory"] == [hint(0, preferred=True), hint(1, preferred=True), hint(0, 1)]
    state.set_memory_blocks("p", "init", [Block((1,), "memory", 1536 * MB)])
    assert policy.get_pod_topology_hints(state, p) == {"memory": [hint(1, preferred=True)]}
    assert policy.get_pod_topology_hints(state, Pod.of("x", qos="BestEffort")) is None


def test_reuse_bookkeeping_keeps_only_the_current_pod() -> None:
    policy, state, _ = started_policy(machine(1, 8 * GB))
    first = pod("a", guaranteed("app", GB), init=(guaranteed("init", 2 * GB),))
    policy.allocate(state, first, first.init_containers[0])
    assert policy.reusable_memory == {"a": {BitMask(0): {"memory": 2 * GB}}}
    policy.allocate(state, first, first.containers[0])
    assert policy.reusable_memory == {"a": {BitMask(0): {"memory": GB}}}
    assert state.get_memory_blocks("a", "init") == (Block((0,), "memory", GB),)
    other = pod("b", guaranteed("app", GB))
    policy.allocate(state, other, other.containers[0])
    assert policy.reusable_memory == {}


def test_allocatable_memory_lists_nodes_with_capacity() -> None:
    policy, state, _ = started_policy(machine(2, 2 * GB, hugepages_1g=1))
    assert policy.get_allocatable_memory(state) == (
        Block((0,), "hugepages-1Gi", GB),
        Block((0,), "memory", 512 * MB),
        Block((1,), "hugepages-1Gi", GB),
        Block((1,), "memory", 512 * MB),
    )
    assert policy.get_allocatable_memory(InMemoryState()) == ()


def _sample(policy: StaticPolicy, counter: str) -> float | None:
    return policy.metrics.registry.get_sample_value(f"kubelet_memory_manager_{counter}")
