"""Laws of the static memory policy under random allocate/remove sequences.

Two laws: whatever hint the Topology Manager hands over, no node's free or reserved memory
(or hugepages) goes below zero and free + reserved stays the allocatable amount; and when every
hint is one the policy itself offered, removing every container restores the initial state.

The second law needs the restriction: like upstream, ``Allocate`` accepts a single-node hint on
a node that already serves a cross-NUMA group (only multi-node hints are checked against the
groups), and releasing the group's block afterwards takes memory back from the wrong node.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from numaplane.api.pod import Container, Pod
from numaplane.node.memorymanager.errors import MemoryManagerError
from numaplane.node.memorymanager.policy_static import StaticPolicy
from numaplane.node.memorymanager.state import InMemoryState, NUMANodeMap
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from tests.node.memorymanager.helpers import (
    GB,
    MB,
    SettableAffinity,
    guaranteed,
    machine,
    started_policy,
)

NODES = 3

ContainerSpec = tuple[int, int, bool]
PodSpec = tuple[list[ContainerSpec], list[ContainerSpec], int | None, bool]

sizes = st.sampled_from([256 * MB, 512 * MB, GB, 2 * GB])
hugepages = st.sampled_from([0, GB, 2 * GB])
container_specs = st.tuples(sizes, hugepages, st.booleans())
# The third field picks a hint: None = the empty hint, n = a mask (see the tests for how).
pod_specs = st.tuples(
    st.lists(container_specs, min_size=1, max_size=3),
    st.lists(container_specs, max_size=2),
    st.one_of(st.none(), st.integers(0, 2**NODES - 1)),
    st.booleans(),
)
steps = st.lists(st.one_of(pod_specs, st.integers(0, 10)), max_size=12)


def _check_non_negative(state: NUMANodeMap) -> None:
    for node in state.values():
        assert node.number_of_assignments >= 0
        for table in node.memory_map.values():
            assert table.free >= 0
            assert table.reserved >= 0
            assert table.free + table.reserved == table.allocatable


def _pod(uid: str, spec: PodSpec) -> Pod:
    apps, inits, _, _ = spec

    def container(prefix: str, i: int, c: ContainerSpec) -> Container:
        sidecar = c[2] and prefix == "init"
        return guaranteed(f"{prefix}{i}", c[0], c[1], "Always" if sidecar else None)

    return Pod.of(
        uid,
        containers=[container("app", i, c) for i, c in enumerate(apps)],
        init_containers=[container("init", i, c) for i, c in enumerate(inits)],
        qos="Guaranteed",
    )


def _any_mask(choice: int | None, preferred: bool) -> TopologyHint:
    if choice is None or choice == 0:
        return TopologyHint(None, preferred)
    return TopologyHint(BitMask.from_int(choice), preferred)


def _offered(
    policy: StaticPolicy, state: InMemoryState, pod: Pod, c: Container, choice: int | None
) -> TopologyHint:
    hints = policy.get_topology_hints(state, pod, c) or {}
    offered = hints.get("memory") or []
    if choice is None or not offered:
        return TopologyHint(None, False)
    return offered[choice % len(offered)]


def _run(plan: list[PodSpec | int], policy_offered_hints: bool) -> None:
    affinity = SettableAffinity()
    policy, state, _ = started_policy(machine(NODES, 4 * GB, hugepages_1g=2), affinity=affinity)
    initial = state.get_machine_state()
    pods: list[Pod] = []
    for index, step in enumerate(plan):
        if isinstance(step, int):
            if pods:
                victim = pods.pop(step % len(pods))
                for c in victim.all_containers():
                    policy.remove_container(state, victim.uid, c.name)
        else:
            p = _pod(f"pod{index}", step)
            pods.append(p)
            for c in p.all_containers():
                if policy_offered_hints:
                    affinity.hint = _offered(policy, state, p, c, step[2])
                else:
                    affinity.hint = _any_mask(step[2], step[3])
                try:
                    policy.allocate(state, p, c)
                except MemoryManagerError:
                    break
        _check_non_negative(state.get_machine_state())
    for p in pods:
        for c in p.all_containers():
            policy.remove_container(state, p.uid, c.name)
    _check_non_negative(state.get_machine_state())
    assert state.get_memory_assignments() == {}
    if policy_offered_hints:
        assert state.get_machine_state() == initial


@settings(max_examples=150, deadline=None)
@given(steps)
def test_no_hint_overdraws_any_node(plan: list[PodSpec | int]) -> None:
    _run(plan, policy_offered_hints=False)


@settings(max_examples=150, deadline=None)
@given(steps)
def test_removal_restores_the_start_when_hints_come_from_the_policy(
    plan: list[PodSpec | int],
) -> None:
    _run(plan, policy_offered_hints=True)
