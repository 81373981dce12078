"""Tests of the memory manager state: JSON names, the group-sum comparison, the backend."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.node.memorymanager.state import (
    Block,
    InMemoryState,
    MemoryTable,
    NUMANodeState,
    machine_states_equal,
)
from numaplane.testing.upstream_fixtures import (
    assignments_from_json,
    assignments_to_json,
    machine_state_from_json,
    machine_state_to_json,
)

CHECKPOINT_JSON = {
    "0": {
        "numberOfAssignments": 1,
        "memoryMap": {
            "memory": {
                "total": 2048,
                "systemReserved": 512,
                "allocatable": 1536,
                "reserved": 512,
                "free": 1024,
            }
        },
        "cells": [0],
    }
}


def test_machine_state_json_round_trip_keeps_names_and_values() -> None:
    state = machine_state_from_json(CHECKPOINT_JSON)
    assert state[0].memory_map["memory"] == MemoryTable(2048, 512, 1536, 512, 1024)
    assert machine_state_to_json(state) == CHECKPOINT_JSON


def test_assignments_json_round_trip() -> None:
    data = {"pod": {"c": [{"numaAffinity": [0, 1], "type": "memory", "size": 512}]}}
    parsed = assignments_from_json(data)
    assert parsed["pod"]["c"] == (Block((0, 1), "memory", 512),)
    assert assignments_to_json(parsed) == data


def test_null_cells_and_maps_read_as_empty() -> None:
    state = machine_state_from_json({"3": {"numberOfAssignments": 0, "memoryMap": None}})
    assert state[3] == NUMANodeState(0, {}, ())


def _pair(free0: int, free1: int, cells: tuple[int, ...] = (0, 1)) -> dict[int, NUMANodeState]:
    def node(free: int) -> NUMANodeState:
        table = MemoryTable(100, 0, 100, 100 - free, free)
        return NUMANodeState(1, {"memory": table}, cells)

    return {0: node(free0), 1: node(free1)}


@dataclass(frozen=True)
class EqualCase:
    name: str
    first: dict[int, NUMANodeState]
    second: dict[int, NUMANodeState]
    equal: bool


EQUAL_CASES = [
    EqualCase("same split", _pair(10, 90), _pair(10, 90), True),
    EqualCase("other split inside the group", _pair(10, 90), _pair(50, 50), True),
    EqualCase("different group sums", _pair(10, 90), _pair(10, 80), False),
    EqualCase(
        "split differs across single-node groups", _pair(10, 90, (0,)), _pair(50, 50, (0,)), False
    ),
    EqualCase("missing node", _pair(10, 90), {0: _pair(10, 90)[0]}, False),
]


@pytest.mark.parametrize("case", EQUAL_CASES, ids=lambda c: c.name)
def test_machine_states_equal_compares_free_and_reserved_per_group(case: EqualCase) -> None:
    assert machine_states_equal(case.first, case.second) is case.equal


def test_in_memory_state_delete_drops_empty_pods_and_returns_snapshots() -> None:
    state = InMemoryState()
    state.set_memory_blocks("pod", "a", [Block((0,), "memory", 1)])
    state.set_memory_blocks("pod", "b", [Block((0,), "memory", 2)])
    snapshot = state.get_memory_assignments()
    state.delete("pod", "a")
    assert state.get_memory_blocks("pod", "a") is None
    assert "a" in snapshot["pod"]
    state.delete("pod", "b")
    assert state.get_memory_assignments() == {}
    state.delete("unknown", "x")
    state.set_machine_state(_pair(1, 2))
    state.clear_state()
    assert state.get_machine_state() == {}
