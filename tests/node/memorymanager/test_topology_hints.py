"""Tests of hint generation and request arithmetic of the static memory policy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pytest

from numaplane.node.memorymanager.accounting import reserve
from numaplane.node.memorymanager.machine_state import default_machine_state
from numaplane.node.memorymanager.memory_hint_sets import memory_hint_sets
from numaplane.node.memorymanager.state import Block, NUMANodeMap
from numaplane.node.memorymanager.topology_hints import (
    find_best_hint,
    regenerate_hints,
    violates_numa_allocation,
)
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.testing import upstream_hints
from tests.node.memorymanager.helpers import GB, MB, hint, machine

FOUR = default_machine_state(machine(4, 2 * GB), {n: {"memory": 512 * MB} for n in range(4)})


def _masks(hints: Sequence[TopologyHint]) -> list[tuple[tuple[int, ...], bool]]:
    return [(h.numa_affinity.bits if h.numa_affinity else (), h.preferred) for h in hints]


def _grouped() -> NUMANodeMap:
    # Nodes 0 and 1 already serve one cross-NUMA block; node 2 serves a single-node block.
    state = reserve(FOUR, (0, 1), "memory", 2 * GB)
    return reserve(state, (2,), "memory", 512 * MB)


@dataclass(frozen=True)
class HintsCase:
    name: str
    state: NUMANodeMap
    requests: Mapping[str, int]
    expected: list[tuple[tuple[int, ...], bool]]


HINTS_CASES = [
    HintsCase(
        "small request: singles preferred, wider masks listed too",
        FOUR,
        {"memory": GB},
        [((0,), True), ((1,), True), ((2,), True), ((3,), True)]
        + [((a, b), False) for a in range(4) for b in range(a + 1, 4)]
        + [((0, 1, 2), False), ((0, 1, 3), False), ((0, 2, 3), False), ((1, 2, 3), False)]
        + [((0, 1, 2, 3), False)],
    ),
    HintsCase(
        "grouped nodes: only their own group, and no single use",
        _grouped(),
        {"memory": GB},
        [((2,), True), ((3,), True), ((0, 1), False)],
    ),
    HintsCase(
        "request bigger than any node: preferred is the narrowest width with capacity",
        FOUR,
        {"memory": 2 * GB},
        [((a, b), True) for a in range(4) for b in range(a + 1, 4)]
        + [((0, 1, 2), False), ((0, 1, 3), False), ((0, 2, 3), False), ((1, 2, 3), False)]
        + [((0, 1, 2, 3), False)],
    ),
]


@pytest.mark.parametrize("case", HINTS_CASES, ids=lambda c: c.name)
def test_calculate_hints(case: HintsCase) -> None:
    hints = memory_hint_sets(case.state, case.requests)
    assert _masks(hints["memory"]) == case.expected
    listed = upstream_hints.calculate_memory_hints(case.state, case.requests)
    assert _masks(listed["memory"]) == case.expected


def test_no_fitting_mask_gives_an_empty_map() -> None:
    assert memory_hint_sets(FOUR, {"memory": 100 * GB, "hugepages-1Gi": GB}) == {}


def test_reusable_memory_counts_on_its_exact_mask_only() -> None:
    full = reserve(FOUR, (0,), "memory", 1536 * MB)
    without = memory_hint_sets(full, {"memory": GB})
    assert ((0,), True) not in _masks(without["memory"])

    def reusable(mask: BitMask, resource: str) -> int:
        return GB if mask == BitMask(0) and resource == "memory" else 0

    with_reuse = memory_hint_sets(full, {"memory": GB}, reusable, [BitMask(0)])
    assert _masks(with_reuse["memory"])[0] == ((0,), True)


@dataclass(frozen=True)
class RegenerateCase:
    name: str
    blocks: tuple[Block, ...]
    requests: Mapping[str, int]
    expected: dict[str, list[TopologyHint]] | None


REGENERATE_CASES = [
    RegenerateCase(
        "blocks match",
        (Block((0, 1), "memory", GB),),
        {"memory": GB},
        {"memory": [hint(0, 1, preferred=True)]},
    ),
    RegenerateCase("size differs", (Block((0,), "memory", 0),), {"memory": GB}, None),
    RegenerateCase("type not requested", (Block((0,), "hugepages-2Mi", GB),), {"memory": GB}, None),
    RegenerateCase("count differs", (), {"memory": GB}, None),
]


@pytest.mark.parametrize("case", REGENERATE_CASES, ids=lambda c: c.name)
def test_regenerate_hints(case: RegenerateCase) -> None:
    assert regenerate_hints(case.blocks, case.requests) == case.expected


def test_find_best_hint_prefers_preferred_then_narrower_then_first() -> None:
    assert find_best_hint(None) is None
    assert upstream_hints.find_best_hint([]) is None
    hints = [hint(0, 1), hint(2, preferred=True), hint(1, preferred=True), hint(3)]
    assert upstream_hints.find_best_hint(hints) == hint(1, preferred=True)
    assert upstream_hints.find_best_hint([hint(0, 1), hint(2, 3)]) == hint(0, 1)


def test_violation_only_concerns_cross_numa_masks_over_used_nodes() -> None:
    state = _grouped()
    assert not violates_numa_allocation(state, BitMask(2))
    assert not violates_numa_allocation(state, BitMask(0, 1))
    assert violates_numa_allocation(state, BitMask(2, 3))
    assert violates_numa_allocation(state, BitMask(0, 1, 3))
    assert not violates_numa_allocation(FOUR, BitMask(2, 3))
