"""The static memory policy's hints as a rule (``StructuredHints``), not a list of masks.

The same hints as ``calculate_hints``. Multi-node masks over nodes nothing is allocated on form
one ``Family`` (allocatable and free memory reach every request); every other hint is checked
one by one as an extra: single nodes, the node groups existing multi-node blocks use, and the
masks this pod's init containers left reusable memory on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from numaplane.node.memorymanager.state import NUMANodeMap
from numaplane.node.memorymanager.topology_hints import (
    ReusableLookup,
    _respects_grouping,
    _table_sums,
)
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.node.topologymanager.hint_sets import (
    Family,
    StructuredHints,
    Threshold,
    bits_of,
    mask_of,
    min_width_meeting,
)


def memory_hint_sets(
    machine_state: NUMANodeMap,
    requests: Mapping[str, int],
    reusable: ReusableLookup | None = None,
    reusable_masks: Iterable[BitMask] = (),
) -> dict[str, StructuredHints]:
    """``calculate_hints`` as rules: one shared rule per requested resource, ``{}`` when no
    mask qualifies. ``reusable_masks`` must name every mask ``reusable`` may be non-zero on."""
    node_ids = sorted(machine_state)
    universe = mask_of(node_ids)
    allocatable: list[Threshold] = []
    free: list[Threshold] = []
    for resource, size in requests.items():
        alloc_by_node: dict[int, int] = {}
        free_by_node: dict[int, int] = {}
        for node_id in node_ids:
            table = machine_state[node_id].memory_map.get(resource)
            if table is not None:
                alloc_by_node[node_id] = table.allocatable
                free_by_node[node_id] = table.free
        allocatable.append(Threshold.per_node(alloc_by_node, size))
        free.append(Threshold.per_node(free_by_node, size))
    min_affinity = min_width_meeting(node_ids, allocatable, len(node_ids))

    def qualifies(mask: int) -> bool:
        bits = bits_of(mask)
        if not bits or mask & ~universe:
            return False
        sums = {r: _table_sums(machine_state, bits, r) for r in requests}  # (free, allocatable)
        if any(sums[r][1] < s for r, s in requests.items()):
            return False
        if not _respects_grouping(machine_state, bits):
            return False
        if reusable is None:
            return all(sums[r][0] >= s for r, s in requests.items())
        whole = BitMask.from_int(mask)
        return all(sums[r][0] + reusable(whole, r) >= s for r, s in requests.items())

    unused = mask_of(n for n in node_ids if machine_state[n].number_of_assignments <= 0)
    family = Family(unused, tuple(allocatable) + tuple(free), (), 2)
    candidates = {1 << n for n in node_ids if 0 <= n < 64}
    for node_id in node_ids:
        node = machine_state[node_id]
        if node.number_of_assignments > 0 and len(node.cells) > 1:
            candidates.add(mask_of(node.cells))
    candidates.update(m.value for m in reusable_masks)
    extras = [m for m in candidates if qualifies(m)]
    hints = StructuredHints(node_ids, [family], extras, min_affinity)
    if hints.is_empty():
        return {}
    return dict.fromkeys(requests, hints)


def best_structured_hint(hints: StructuredHints, within: int = 0) -> TopologyHint | None:
    """``find_best_hint`` over the hints containing every node of ``within``, without listing
    them: preferred first, then fewest nodes, then the smallest mask value."""
    universe = hints.universe
    if within & ~universe:
        return None
    nodes = bits_of(universe & ~within)
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
