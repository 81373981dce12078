"""The static memory policy's hints as a rule (``StructuredHints``), not a list of masks.

Upstream's ``calculateHints`` (written the upstream way in ``numaplane.testing.upstream_hints``)
as a rule. Multi-node masks over nodes nothing is allocated on form
one ``Family`` (allocatable and free memory reach every request); every other hint is checked
one by one as an extra: single nodes, the node groups existing multi-node blocks use, and the
masks this pod's init containers left reusable memory on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from numaplane.cpuset import set_bits
from numaplane.node.memorymanager.state import NUMANodeMap
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.node.topologymanager.hint_rules import (
    Family,
    RuleMemo,
    Threshold,
    mask_of,
    min_width_meeting,
)
from numaplane.node.topologymanager.hint_sets import StructuredHints

ReusableLookup = Callable[[BitMask, str], int]
"""(mask, resource) -> bytes this pod's init containers left reusable on exactly that mask."""


def groups_equal(first: Iterable[int], second: Iterable[int]) -> bool:
    """Whether two NUMA groups hold the same nodes (upstream ``areGroupsEqual``)."""
    return sorted(first) == sorted(second)


def respects_grouping(machine_state: NUMANodeMap, bits: Sequence[int]) -> bool:
    """Whether a mask may be used given the groups nodes are already allocated in."""
    if len(bits) == 1:
        # A node already in a multi-node group cannot serve single-node blocks.
        node = machine_state.get(bits[0])
        return node is None or len(node.cells) <= 1
    for node_id in bits:
        node = machine_state.get(node_id)
        if node is None or node.number_of_assignments <= 0:
            continue
        if len(node.cells) == 1 or not groups_equal(node.cells, bits):
            return False
    return True


def memory_hint_sets(
    machine_state: NUMANodeMap,
    requests: Mapping[str, int],
    reusable: ReusableLookup | None = None,
    reusable_masks: Iterable[BitMask] = (),
) -> dict[str, StructuredHints]:
    """Upstream ``calculateHints`` as rules: one shared rule per requested resource, ``{}`` when no
    mask qualifies. ``reusable_masks`` must name every mask ``reusable`` may be non-zero on."""
    node_ids = tuple(sorted(machine_state))
    items = tuple(requests.items())
    # Per node, per requested resource (in request order): allocatable and free bytes, a
    # missing table counting 0. One pass also tests each node alone, the common hint.
    allocatable: list[tuple[int, ...]] = []
    free: list[tuple[int, ...]] = []
    unused = 0
    unused_free: list[tuple[int, ...]] = []
    extras: set[int] = set()
    others: set[int] = set()  # masks that need the general test
    for node_id in node_ids:
        node = machine_state[node_id]
        tables = node.memory_map
        alloc_row: list[int] = []
        free_row: list[int] = []
        fits = True
        for resource, size in items:
            table = tables.get(resource)
            if table is None:
                alloc_row.append(0)
                free_row.append(0)
                fits = fits and size <= 0
            else:
                alloc_row.append(table.allocatable)
                free_row.append(table.free)
                fits = fits and table.allocatable >= size and table.free >= size
        allocatable.append(tuple(alloc_row))
        free.append(tuple(free_row))
        in_range = 0 <= node_id < 64
        if node.number_of_assignments <= 0:
            if in_range:
                unused |= 1 << node_id
                unused_free.append(free[-1])
        elif len(node.cells) > 1:
            others.add(mask_of(node.cells))
        if not in_range:
            continue
        if reusable is not None:
            others.add(1 << node_id)
        elif fits and len(node.cells) <= 1:
            # Alone: enough allocatable and free memory, and not in a multi-node group.
            extras.add(1 << node_id)
    others.update(m.value for m in reusable_masks)
    others -= extras
    if others:
        universe = mask_of(node_ids)
        position = {node_id: index for index, node_id in enumerate(node_ids)}
        for mask in others:
            if _qualifies(
                mask, universe, machine_state, position, allocatable, free, requests, reusable
            ):
                extras.add(mask)
    sizes = tuple(size for _, size in items)
    key = (node_ids, sizes, tuple(allocatable), unused, tuple(unused_free), frozenset(extras))
    hints = _RULES.get(key)
    if hints is None:
        hints = _RULES.put(key, _structured(*key))
    if hints.is_empty():
        return {}
    return dict.fromkeys(requests, hints)


def _qualifies(
    mask: int,
    universe: int,
    machine_state: NUMANodeMap,
    position: Mapping[int, int],
    allocatable: Sequence[Sequence[int]],
    free: Sequence[Sequence[int]],
    requests: Mapping[str, int],
    reusable: ReusableLookup | None,
) -> bool:
    """Whether one mask is a hint, as upstream's ``calculateHints`` tests it. Every node of a
    mask inside the universe is in the machine state, so its sums read the per-node rows."""
    if not mask or mask & ~universe:
        return False
    bits = set_bits(mask)
    rows = [position[bit] for bit in bits]
    for k, size in enumerate(requests.values()):
        if sum(allocatable[row][k] for row in rows) < size:
            return False
    if not respects_grouping(machine_state, bits):
        return False
    whole = None if reusable is None else BitMask.from_int(mask)
    for k, (resource, size) in enumerate(requests.items()):
        have = sum(free[row][k] for row in rows)
        if reusable is not None and whole is not None:
            have += reusable(whole, resource)
        if have < size:
            return False
    return True


_RuleKey = tuple[
    tuple[int, ...],
    tuple[int, ...],
    tuple[tuple[int, ...], ...],
    int,
    tuple[tuple[int, ...], ...],
    frozenset[int],
]

#: Memory rules by everything ``_structured`` reads: node ids, request sizes, every node's
#: allocatable memory, which nodes are unused and their free memory, and the masks that qualify
#: one by one. The same answer repeats from admission to admission.
_RULES: RuleMemo[_RuleKey, StructuredHints] = RuleMemo("memory hint rules", 1024)

#: Allocatable thresholds and the preferred width, by node ids, sizes and allocatable memory.
_CAPACITIES: RuleMemo[
    tuple[tuple[int, ...], tuple[int, ...], tuple[tuple[int, ...], ...]],
    tuple[tuple[Threshold, ...], int],
] = RuleMemo("memory capacity thresholds", 256)


def _structured(
    node_ids: tuple[int, ...],
    sizes: tuple[int, ...],
    allocatable: tuple[tuple[int, ...], ...],
    unused: int,
    unused_free: tuple[tuple[int, ...], ...],
    extras: frozenset[int],
) -> StructuredHints:
    """The rule for ``memory_hint_sets`` (possibly empty)."""
    key = (node_ids, sizes, allocatable)
    capacity_and_width = _CAPACITIES.get(key)
    if capacity_and_width is None:
        capacity_and_width = _CAPACITIES.put(key, _capacity(*key))
    capacity, min_affinity = capacity_and_width
    # The family's members lie within the unused nodes, so only their free memory matters.
    unused_ids = [n for n in node_ids if 0 <= n < 64 and unused >> n & 1]
    free = tuple(
        Threshold.per_node(
            {n: row[k] for n, row in zip(unused_ids, unused_free, strict=True)}, size
        )
        for k, size in enumerate(sizes)
    )
    family = Family(unused, capacity + free, (), 2)
    return StructuredHints(node_ids, [family], sorted(extras), min_affinity)


def _capacity(
    node_ids: tuple[int, ...], sizes: tuple[int, ...], allocatable: tuple[tuple[int, ...], ...]
) -> tuple[tuple[Threshold, ...], int]:
    """The allocatable thresholds (one per request) and the preferred width they imply."""
    thresholds = tuple(
        Threshold.per_node({n: row[k] for n, row in zip(node_ids, allocatable, strict=True)}, size)
        for k, size in enumerate(sizes)
    )
    return thresholds, min_width_meeting(node_ids, thresholds, len(node_ids))


def best_structured_hint(hints: StructuredHints, within: int = 0) -> TopologyHint | None:
    """``find_best_hint`` over the hints containing every node of ``within``, without listing
    them: preferred first, then fewest nodes, then the smallest mask value."""
    universe = hints.universe
    if within & ~universe:
        return None
    nodes = set_bits(universe & ~within)
    base = within.bit_count()
    pools = [0]
    for bit in nodes:
        pools.append(pools[-1] | 1 << bit)

    def first(width: int, want_preferred: bool) -> int | None:
        picks = width - base
        if picks < 0 or picks > len(nodes):
            return None

        def walk(chosen: int, left: int, limit: int) -> int | None:
            if left == 0:
                ok = chosen and hints.contains(chosen)
                return chosen if ok and hints.preferred(chosen) == want_preferred else None
            for index in range(left - 1, limit):
                step = chosen | 1 << nodes[index]
                if hints.may_extend(step, pools[index], left - 1):
                    found = walk(step, left - 1, index)
                    if found is not None:
                        return found
            return None

        if not hints.may_extend(within, pools[-1], picks):
            return None
        return walk(within, picks, len(nodes))

    widths = range(max(base, 1), universe.bit_count() + 1)
    for preferred in (True, False):
        for width in widths:
            if hints.aligned is None and (width == hints.preferred_width) != preferred:
                # Without socket alignment, exactly the hints of the preferred width are.
                continue
            found = first(width, preferred)
            if found is not None:
                return TopologyHint(BitMask.from_int(found), preferred)
    return None
