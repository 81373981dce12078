"""The memory manager's fast paths give the answers of their plain definitions.

- the stale-state cleanup before hints releases exactly the containers no active pod names;
- ``memory_hint_sets`` (cached rules, single nodes tested inline) lists what upstream's
  ``calculate_memory_hints`` lists, also for states the cache has seen with other values;
- ``reserve_blocks`` / ``release_blocks`` equal ``reserve`` / ``release`` applied in turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from numaplane.api.pod import Pod
from numaplane.api.quantity import Quantity
from numaplane.node.memorymanager.accounting import release, release_blocks, reserve, reserve_blocks
from numaplane.node.memorymanager.errors import MemoryManagerError
from numaplane.node.memorymanager.manager import MemoryManager
from numaplane.node.memorymanager.memory_hint_sets import memory_hint_sets
from numaplane.node.memorymanager.reserved import MemoryReservation
from numaplane.node.memorymanager.state import Block, MemoryTable, NUMANodeState
from numaplane.node.stale_state import active_containers
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.testing.upstream_hints import calculate_memory_hints
from tests.node.memorymanager.helpers import GB, MB, SettableAffinity, guaranteed, hint, machine

_RESERVED = [MemoryReservation(n, {"memory": Quantity.parse("512Mi")}) for n in (0, 1, 2)]


@dataclass
class _Node:
    """A manager plus the active pods it is told about."""

    manager: MemoryManager
    affinity: SettableAffinity
    active: list[Pod] = field(default_factory=list)


def _node() -> _Node:
    affinity = SettableAffinity()
    active: list[Pod] = []
    manager = MemoryManager.create(
        "Static",
        machine(3, 4 * GB),
        affinity,
        node_allocatable_reservation={"memory": Quantity.parse("1536Mi")},
        reserved_memory=_RESERVED,
        active_pods=lambda: active_containers(active),
    )
    manager.start()
    return _Node(manager, affinity, active)


def _pod(uid: str, names: tuple[str, ...], sizes: tuple[int, ...]) -> Pod:
    containers = tuple(guaranteed(n, s * 256 * MB) for n, s in zip(names, sizes, strict=True))
    return Pod.of(uid, containers=containers, qos="Guaranteed")


@dataclass(frozen=True)
class _Op:
    """One step: ``kind`` and the arguments it reads."""

    kind: str
    uid: str = "a"
    names: tuple[str, ...] = ("x",)
    index: int = 0
    size: int = 1


_UIDS = st.sampled_from(["a", "b", "c", "d"])
_NAME = st.sampled_from(["x", "y", "z"])
_NAMES = st.lists(_NAME, min_size=1, max_size=3, unique=True).map(tuple)
_OPS = st.one_of(
    # admit: a new pod object (maybe reusing a uid), hints then allocation on node ``index``
    st.builds(_Op, st.just("admit"), _UIDS, _NAMES, st.integers(0, 2), st.integers(1, 4)),
    st.builds(_Op, st.just("remove"), _UIDS, _NAME.map(lambda n: (n,))),
    # leave the active list (stale); be replaced by another object with fewer containers;
    # gain a twin (a duplicate uid)
    st.builds(_Op, st.sampled_from(["forget", "shrink", "twin"]), index=st.integers(0, 5)),
    st.builds(_Op, st.just("hints"), _UIDS),
    # a write that does not go through the manager
    st.builds(_Op, st.just("outside"), _UIDS, st.sampled_from([("x",), ("w",)])),
)


def _apply(node: _Node, op: _Op) -> str:
    manager = node.manager
    try:
        if op.kind == "admit":
            pod = _pod(op.uid, op.names, (op.size,) * len(op.names))
            node.active.append(pod)
            node.affinity.hint = hint(op.index, preferred=True)
            for container in pod.containers:
                manager.get_topology_hints(pod, container)
                manager.allocate(pod, container)
        elif op.kind == "remove":
            manager.remove_container(op.uid, op.names[0])
        elif op.kind in ("forget", "shrink", "twin") and node.active:
            index = op.index % len(node.active)
            old = node.active[index]
            other = _pod(old.uid, (old.containers[-1].name,), (1,))
            if op.kind == "forget":
                del node.active[index]
            elif op.kind == "shrink":
                node.active[index] = other
            else:
                node.active.append(other)
        elif op.kind == "hints":
            probe = _pod(op.uid + "-probe", ("x",), (1,))
            manager.get_topology_hints(probe, probe.containers[0])
        elif op.kind == "outside":
            manager._state.set_memory_blocks(op.uid, op.names[0], ())
    except MemoryManagerError as err:
        return str(err)
    return ""


@settings(max_examples=150, deadline=None)
@given(st.lists(_OPS, max_size=25))
def test_stale_cleanup_releases_exactly_what_no_active_pod_names(ops: list[_Op]) -> None:
    node = _node()
    for op in ops:
        before = node.manager.state.get_memory_assignments()
        _apply(node, op)
        if op.kind != "hints":
            continue
        active = active_containers(node.active)
        kept = {
            (uid, name)
            for uid, containers in before.items()
            for name in containers
            if name in active.get(uid, frozenset())
        }
        after = node.manager.state.get_memory_assignments()
        assert {(uid, name) for uid, containers in after.items() for name in containers} == kept


def test_a_pod_leaving_is_released_at_the_next_hints() -> None:
    node = _node()
    p = _pod("p", ("x",), (1,))
    node.active.append(p)
    node.affinity.hint = hint(0, preferred=True)
    node.manager.allocate(p, p.containers[0])
    q = _pod("q", ("x",), (1,))
    node.manager.get_topology_hints(q, q.containers[0])
    assert node.manager.get_memory("p", "x") is not None
    node.active.clear()
    node.manager.get_topology_hints(q, q.containers[0])
    assert node.manager.get_memory("p", "x") is None


# -- hints -----------------------------------------------------------------------------------

_RESOURCES = ("memory", "hugepages-1Gi")


@st.composite
def _machine_states(draw: st.DrawFn) -> dict[int, NUMANodeState]:
    count = draw(st.integers(1, 5))
    ids = sorted(draw(st.sets(st.integers(0, 7), min_size=count, max_size=count)))
    state: dict[int, NUMANodeState] = {}
    for node_id in ids:
        tables = {}
        for resource in _RESOURCES:
            if draw(st.booleans()) or resource == "memory":
                alloc = draw(st.integers(0, 8))
                free = draw(st.integers(0, alloc))
                tables[resource] = MemoryTable(alloc, 0, alloc, alloc - free, free)
        assignments = draw(st.integers(0, 2))
        cells: tuple[int, ...] = (node_id,)
        if assignments and draw(st.booleans()):
            cells = tuple(sorted(draw(st.sets(st.sampled_from(ids), min_size=1, max_size=3))))
        state[node_id] = NUMANodeState(assignments, tables, cells)
    return state


_REQUESTS = st.dictionaries(st.sampled_from(_RESOURCES), st.integers(0, 10), min_size=1)


def _listed(hints: dict[str, list[TopologyHint]] | object) -> dict[str, list[TopologyHint]]:
    assert isinstance(hints, dict)
    return {resource: list(found) for resource, found in hints.items()}


@settings(max_examples=300, deadline=None)
@given(_machine_states(), _REQUESTS, st.dictionaries(st.integers(1, 255), st.integers(0, 4)))
def test_memory_hint_sets_lists_the_definition(
    machine_state: dict[int, NUMANodeState], requests: dict[str, int], bonus: dict[int, int]
) -> None:
    assert _listed(memory_hint_sets(machine_state, requests)) == calculate_memory_hints(
        machine_state, requests
    )

    # With init-container memory to reuse on some masks.
    def reusable(mask: BitMask, resource: str) -> int:
        return bonus.get(mask.value, 0)

    masks = [BitMask.from_int(m) for m in bonus]
    assert _listed(
        memory_hint_sets(machine_state, requests, reusable, masks)
    ) == calculate_memory_hints(machine_state, requests, reusable)


def test_cached_hints_follow_the_free_memory_of_unused_nodes() -> None:
    def state(free: int) -> dict[int, NUMANodeState]:
        return {
            n: NUMANodeState(0, {"memory": MemoryTable(4, 0, 4, 4 - free, free)}, (n,))
            for n in (0, 1)
        }

    # The same capacity, the same (no) single-node hints: only the pair's free memory differs.
    requests = {"memory": 5}
    assert _listed(memory_hint_sets(state(3), requests)) == calculate_memory_hints(
        state(3), requests
    )
    assert (
        _listed(memory_hint_sets(state(2), requests))
        == calculate_memory_hints(state(2), requests)
        == {}
    )


# -- accounting ------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    _machine_states(),
    st.lists(st.tuples(st.sampled_from(_RESOURCES), st.integers(0, 12)), max_size=3),
    st.data(),
)
def test_batched_reserve_and_release_equal_one_at_a_time(
    machine_state: dict[int, NUMANodeState],
    sizes: list[tuple[str, int]],
    data: st.DataObject,
) -> None:
    ids = sorted(machine_state)
    nodes = tuple(sorted(data.draw(st.sets(st.sampled_from([*ids, 9]), min_size=1))))
    one_by_one = dict(machine_state)
    for resource, size in sizes:
        one_by_one = reserve(one_by_one, nodes, resource, size)
    assert reserve_blocks(machine_state, nodes, sizes) == one_by_one
    _same_key_order(reserve_blocks(machine_state, nodes, sizes), one_by_one)

    blocks = [
        Block(tuple(sorted(data.draw(st.sets(st.sampled_from([*ids, 9]), min_size=1)))), r, s)
        for r, s in data.draw(
            st.lists(st.tuples(st.sampled_from(_RESOURCES), st.integers(0, 12)), max_size=4)
        )
    ]
    released = dict(one_by_one)
    for block in blocks:
        released = release(released, block)
    assert release_blocks(one_by_one, blocks) == released
    _same_key_order(release_blocks(one_by_one, blocks), released)


def _same_key_order(first: dict[int, NUMANodeState], second: dict[int, NUMANodeState]) -> None:
    # The checkpoint writes tables in map order: the batch must keep it.
    assert list(first) == list(second)
    for node_id, node in first.items():
        assert list(node.memory_map) == list(second[node_id].memory_map)


def test_a_container_the_pod_does_not_name_is_stale() -> None:
    # A container with memory the pod object does not name (a write from outside).
    node = _node()
    p = _pod("p", ("x",), (1,))
    node.active.append(p)
    node.affinity.hint = hint(1, preferred=True)
    node.manager.allocate(p, p.containers[0])
    node.manager._state.set_memory_blocks("p", "ghost", ())
    q = _pod("q", ("x",), (1,))
    node.manager.get_topology_hints(q, q.containers[0])
    assert node.manager.get_memory("p", "ghost") is None
    assert node.manager.get_memory("p", "x") is not None
