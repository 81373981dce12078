"""Mending checkpoints a crash left between two writes (``numaplane.agent.repair``)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.agent.repair import (
    drop_unrecorded_devices,
    repair_torn_cpu_state,
    repair_torn_memory_state,
)
from numaplane.cpuset import CPUSet
from numaplane.node.cpumanager.state import InMemoryState
from numaplane.node.devicemanager.state import DeviceAllocation
from numaplane.node.devicemanager.state import InMemoryState as DeviceMemoryState
from numaplane.node.memorymanager.accounting import reserve
from numaplane.node.memorymanager.machine_state import default_machine_state
from numaplane.node.memorymanager.state import Block, NUMANodeMap, machine_states_equal
from numaplane.node.memorymanager.state import InMemoryState as MemoryMemoryState
from numaplane.topology.discover import load_machine
from tests.agent.agent_fixtures import STATIC_MEMORY, kubelet_config

MACHINE = load_machine("sockets=1,numa-per-socket=2,cores-per-numa=2,threads-per-core=1")
GI = 1 << 30

# -- torn CPU checkpoints ------------------------------------------------------------------


@dataclass(frozen=True)
class TornCase:
    name: str
    assignments: dict[str, dict[str, str]]
    default: str
    recorded: frozenset[str]
    repaired: bool
    after_default: str
    after_pods: frozenset[str]


TORN_CASES = (
    TornCase(
        "consistent", {"a": {"c": "2"}}, "0-1,3", frozenset("a"), False, "0-1,3", frozenset("a")
    ),
    TornCase(
        "crash inside an admission: CPU in both",
        {"a": {"c": "2"}, "b": {"c": "3"}},
        "0-1,3",
        frozenset("a"),
        True,
        "0-1,3",
        frozenset("a"),
    ),
    TornCase(
        "crash inside a release: CPU in neither",
        {"a": {"c": "2"}},
        "0-1",
        frozenset("a"),
        True,
        "0-1,3",
        frozenset("a"),
    ),
    TornCase(
        "a CPU the machine lacks is left alone",
        {"a": {"c": "9"}},
        "0",
        frozenset("a"),
        False,
        "0",
        frozenset("a"),
    ),
    TornCase("empty pool is left alone", {}, "", frozenset(), False, "", frozenset()),
)


@pytest.mark.parametrize("case", TORN_CASES, ids=lambda c: c.name)
def test_repair_torn_cpu_state(case: TornCase) -> None:
    state = InMemoryState(
        {u: {n: CPUSet.parse(c) for n, c in cs.items()} for u, cs in case.assignments.items()},
        CPUSet.parse(case.default),
    )
    machine = MACHINE
    assert (
        repair_torn_cpu_state(state, set(case.recorded), machine, kubelet_config()) is case.repaired
    )
    assert state.get_default_cpu_set() == CPUSet.parse(case.after_default)
    assert frozenset(state.get_cpu_assignments()) == case.after_pods


# -- torn memory checkpoints ---------------------------------------------------------------

RESERVED = {0: {"memory": GI}, 1: {}}


def _block(node: int, gib: int) -> Block:
    return Block((node,), "memory", gib * GI)


def _machine_state(blocks: tuple[Block, ...], reserved: dict[int, dict[str, int]]) -> NUMANodeMap:
    """The default state with ``blocks`` taken from it, as allocations leave it."""
    state: NUMANodeMap = default_machine_state(MACHINE, reserved)
    for block in blocks:
        state = reserve(state, block.numa_affinity, block.type, block.size)
    return state


@dataclass(frozen=True)
class TornMemoryCase:
    name: str
    assignments: dict[str, tuple[Block, ...]]
    reserved_blocks: tuple[Block, ...]
    recorded: frozenset[str]
    repaired: bool
    after_pods: frozenset[str]
    after_blocks: tuple[Block, ...] | None
    """The blocks the machine state holds afterwards (``None``: left as it was)."""
    reservation: tuple[tuple[int, dict[str, int]], ...] = tuple(RESERVED.items())


A, B = _block(0, 2), _block(1, 3)

TORN_MEMORY_CASES = (
    TornMemoryCase("consistent", {"a": (A,)}, (A,), frozenset("a"), False, frozenset("a"), None),
    TornMemoryCase(
        "crash inside an admission: memory taken, no blocks",
        {"a": (A,)},
        (A, B),
        frozenset("a"),
        True,
        frozenset("a"),
        (A,),
    ),
    TornMemoryCase(
        "crash before the pod records: blocks of an unrecorded pod",
        {"a": (A,), "b": (B,)},
        (A, B),
        frozenset("a"),
        True,
        frozenset("a"),
        (A,),
    ),
    TornMemoryCase(
        "crash inside a release: blocks kept, memory given back",
        {"a": (A,), "b": (B,)},
        (A,),
        frozenset("a"),
        True,
        frozenset("a"),
        (A,),
    ),
    TornMemoryCase(
        "another reservation is left for the policy",
        {"a": (A,)},
        (A, B),
        frozenset("a"),
        False,
        frozenset("a"),
        None,
        ((0, {"memory": 2 * GI}), (1, {})),
    ),
    TornMemoryCase(
        "a block on a node the machine lacks is left alone",
        {"a": (_block(7, 1),)},
        (A,),
        frozenset("a"),
        False,
        frozenset("a"),
        None,
    ),
    TornMemoryCase(
        "recorded blocks that overcommit are left alone",
        {"a": (_block(0, 100),)},
        (A,),
        frozenset("a"),
        False,
        frozenset("a"),
        None,
    ),
)


@pytest.mark.parametrize("case", TORN_MEMORY_CASES, ids=lambda c: c.name)
def test_repair_torn_memory_state(case: TornMemoryCase) -> None:
    stored = _machine_state(case.reserved_blocks, dict(case.reservation))
    state = MemoryMemoryState(
        stored, {uid: {"main": blocks} for uid, blocks in case.assignments.items()}
    )
    config = kubelet_config(**STATIC_MEMORY)
    assert repair_torn_memory_state(state, set(case.recorded), MACHINE, config) is case.repaired
    assert frozenset(state.get_memory_assignments()) == case.after_pods
    after = stored if case.after_blocks is None else _machine_state(case.after_blocks, RESERVED)
    assert machine_states_equal(state.get_machine_state(), after)
    assert dict(state.get_machine_state()) == dict(after)


def test_memory_repair_leaves_a_first_start_and_a_bad_reservation_alone() -> None:
    empty = MemoryMemoryState()
    config = kubelet_config(**STATIC_MEMORY)
    assert repair_torn_memory_state(empty, set(), MACHINE, config) is False
    assert empty.get_machine_state() == {}
    torn = MemoryMemoryState(_machine_state((A,), RESERVED), {})
    # reservedMemory names a node the machine lacks: building the node reports that.
    bad = kubelet_config(
        **{**STATIC_MEMORY, "reservedMemory": [{"numaNode": 5, "limits": {"memory": "1Gi"}}]}
    )
    assert repair_torn_memory_state(torn, set(), MACHINE, bad) is False
    assert dict(torn.get_machine_state()) == dict(_machine_state((A,), RESERVED))


# -- devices -------------------------------------------------------------------------------


def test_device_entries_of_unrecorded_pods_are_dropped() -> None:
    state = DeviceMemoryState()
    for uid in ("a", "b"):
        state.set_allocation(uid, "main", "example.com/dev", DeviceAllocation.of({0: [f"d-{uid}"]}))
    assert drop_unrecorded_devices(state, {"a"}) is True
    assert state.pod_uids() == frozenset({"a"})
    assert state.allocated_devices() == {"example.com/dev": frozenset({"d-a"})}
    assert drop_unrecorded_devices(state, {"a"}) is False
