"""Laws of the static memory policy under random allocate/remove sequences."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from numaplane.api.pod import Container, Pod
from numaplane.node.memorymanager.errors import MemoryManagerError
from numaplane.node.memorymanager.state import NUMANodeMap
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from tests.node.memorymanager.helpers import GB, MB, guaranteed, machine, started_policy

NODES = 3

sizes = st.sampled_from([256 * MB, 512 * MB, GB, 2 * GB])
hugepages = st.sampled_from([0, GB, 2 * GB])
masks = st.one_of(
    st.none(),
    st.sets(st.integers(0, NODES - 1), min_size=1).map(lambda s: BitMask(*s)),
)
container_specs = st.tuples(sizes, hugepages, st.booleans())
pod_specs = st.tuples(
    st.lists(container_specs, min_size=1, max_size=3),
    st.lists(container_specs, max_size=2),
    masks,
    st.booleans(),
)
steps = st.lists(st.one_of(pod_specs, st.integers(0, 10)), max_size=12)


def _check_non_negative(state: NUMANodeMap) -> None:
    for node in state.values():
        for table in node.memory_map.values():
            assert table.free >= 0
            assert table.reserved >= 0
            assert table.free + table.reserved == table.allocatable
        assert node.number_of_assignments >= 0


def _pod(
    index: int,
    spec: tuple[list[tuple[int, int, bool]], list[tuple[int, int, bool]], BitMask | None, bool],
) -> Pod:
    apps, inits, _, _ = spec

    def container(prefix: str, i: int, c: tuple[int, int, bool]) -> Container:
        return guaranteed(
            f"{prefix}{i}", c[0], c[1], "Always" if c[2] and prefix == "init" else None
        )

    return Pod.of(
        f"pod{index}",
        containers=[container("app", i, c) for i, c in enumerate(apps)],
        init_containers=[container("init", i, c) for i, c in enumerate(inits)],
        qos="Guaranteed",
    )


@settings(max_examples=150, deadline=None)
@given(steps)
def test_random_allocations_never_overdraw_and_removal_restores_the_start(
    plan: list[object],
) -> None:
    policy, state, affinity = started_policy(machine(NODES, 4 * GB, hugepages_1g=2))
    initial = state.get_machine_state()
    pods: list[Pod] = []
    for step in plan:
        if isinstance(step, int):
            if pods:
                victim = pods.pop(step % len(pods))
                for c in victim.all_containers():
                    policy.remove_container(state, victim.uid, c.name)
        else:
            assert isinstance(step, tuple)
            p = _pod(len(pods) + 100 * len(plan), step)
            mask, preferred = step[2], step[3]
            affinity.hint = TopologyHint(mask, preferred)
            pods.append(p)
            for c in p.all_containers():
                try:
                    policy.allocate(state, p, c)
                except MemoryManagerError:
                    break
        _check_non_negative(state.get_machine_state())
    for p in pods:
        for c in p.all_containers():
            policy.remove_container(state, p.uid, c.name)
    assert state.get_memory_assignments() == {}
    assert state.get_machine_state() == initial
