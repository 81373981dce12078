"""Hint generation of the static memory policy, and the requests it is computed from (§7.2).

Pure functions over a machine state: ``calculate_hints`` lists every NUMA mask that can hold a
request, ``regenerate_hints`` answers for a container that already has blocks,
``find_best_hint`` picks the hint ``Allocate`` falls back to. Requests are bytes per resource,
read from container *requests* (``memory`` and ``hugepages-*`` only) by ``numaplane.node.requests``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from numaplane.node.memorymanager.state import Block, NUMANodeMap
from numaplane.node.topologymanager.bitmask import BitMask, bit_mask_subsets
from numaplane.node.topologymanager.hint import TopologyHint

ReusableLookup = Callable[[BitMask, str], int]
"""(mask, resource) -> bytes this pod's init containers left reusable on exactly that mask."""


def _table_sums(machine_state: NUMANodeMap, nodes: Iterable[int], resource: str) -> tuple[int, int]:
    """(free, allocatable) of ``resource`` over ``nodes``; absent nodes or tables count 0."""
    free = allocatable = 0
    for node_id in nodes:
        node = machine_state.get(node_id)
        table = None if node is None else node.memory_map.get(resource)
        if table is not None:
            free += table.free
            allocatable += table.allocatable
    return free, allocatable


def groups_equal(first: Iterable[int], second: Iterable[int]) -> bool:
    """Whether two NUMA groups hold the same nodes (upstream ``areGroupsEqual``)."""
    return sorted(first) == sorted(second)


def calculate_hints(
    machine_state: NUMANodeMap,
    requests: Mapping[str, int],
    reusable: ReusableLookup | None = None,
    reusable_masks: Iterable[BitMask] | None = None,
) -> Mapping[str, Sequence[TopologyHint]]:
    """Upstream ``calculateHints``: every mask that can hold all of ``requests``.

    Masks are visited in ``IterateBitMasks`` order. A mask qualifies when its allocatable memory
    covers every request, it respects the single/cross-NUMA grouping rule, and its free memory
    (plus this pod's reusable init-container memory on that exact mask) covers every request.
    Preferred marks the masks as narrow as the narrowest mask with enough *allocatable* memory.
    Every requested resource gets the same masks; no qualifying mask gives an empty map.

    The answer is a rule (``StructuredHints``) that lists exactly those hints when iterated;
    ``reusable_masks`` names the masks ``reusable`` may be non-zero on (without it, and with a
    ``reusable`` lookup, the masks are listed one by one).
    """
    if reusable is None or reusable_masks is not None:
        from numaplane.node.memorymanager.memory_hint_sets import memory_hint_sets

        return memory_hint_sets(machine_state, requests, reusable, reusable_masks or ())
    return list_hints(machine_state, requests, reusable)


def list_hints(
    machine_state: NUMANodeMap,
    requests: Mapping[str, int],
    reusable: ReusableLookup | None = None,
) -> dict[str, list[TopologyHint]]:
    """``calculate_hints`` by definition: every mask visited and listed (``IterateBitMasks``
    order). The reference the rule-based answer is tested against; exponential in NUMA nodes."""
    node_ids = sorted(machine_state)
    min_affinity_size = len(node_ids)
    hints: dict[str, list[TopologyHint]] = {}
    for mask in bit_mask_subsets(node_ids):
        bits = mask.bits
        if any(_table_sums(machine_state, bits, r)[1] < size for r, size in requests.items()):
            continue
        min_affinity_size = min(min_affinity_size, mask.count())
        if not _respects_grouping(machine_state, bits):
            continue
        if any(
            _table_sums(machine_state, bits, r)[0]
            + (reusable(mask, r) if reusable is not None else 0)
            < size
            for r, size in requests.items()
        ):
            continue
        for resource in requests:
            hints.setdefault(resource, []).append(TopologyHint(mask, preferred=False))
    return {
        resource: [
            TopologyHint(
                h.numa_affinity,
                h.numa_affinity is not None and h.numa_affinity.count() == min_affinity_size,
            )
            for h in found
        ]
        for resource, found in hints.items()
    }


def _respects_grouping(machine_state: NUMANodeMap, bits: Sequence[int]) -> bool:
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


def violates_numa_allocation(machine_state: NUMANodeMap, mask: BitMask) -> bool:
    """Upstream ``isAffinityViolatingNUMAAllocations``: a cross-NUMA mask over a node that is
    already used alone or within another group."""
    return nodes_violate_numa_allocation(machine_state, mask.bits)


def nodes_violate_numa_allocation(machine_state: NUMANodeMap, bits: Sequence[int]) -> bool:
    """``violates_numa_allocation`` of the mask of ``bits`` (ascending node ids)."""
    if len(bits) == 1:
        return False
    for node_id in bits:
        node = machine_state.get(node_id)
        if node is None or node.number_of_assignments == 0:
            continue
        if len(node.cells) == 1 or not groups_equal(node.cells, bits):
            return True
    return False


def affinity_satisfies_request(
    machine_state: NUMANodeMap, mask: BitMask, requests: Mapping[str, int]
) -> bool:
    """Upstream ``isAffinitySatisfyRequest``: the mask's free memory covers every request."""
    return nodes_satisfy_request(machine_state, mask.bits, requests)


def nodes_satisfy_request(
    machine_state: NUMANodeMap, bits: Sequence[int], requests: Mapping[str, int]
) -> bool:
    """``affinity_satisfies_request`` of the mask of ``bits``."""
    return all(
        _table_sums(machine_state, bits, resource)[0] >= size for resource, size in requests.items()
    )


def regenerate_hints(
    blocks: Sequence[Block], requests: Mapping[str, int]
) -> dict[str, list[TopologyHint]] | None:
    """Upstream ``regenerateHints``: the stored blocks as preferred hints.

    ``None`` (no preference) when the blocks do not match the requests one to one: a different
    number, a type not requested, or a size other than the request.
    """
    hints: dict[str, list[TopologyHint]] = {resource: [] for resource in requests}
    if len(blocks) != len(requests):
        return None
    for block in blocks:
        if block.type not in requests or block.size != requests[block.type]:
            return None
        hints[block.type].append(TopologyHint(BitMask.from_bits(block.numa_affinity), True))
    return hints


def find_best_hint(hints: Iterable[TopologyHint]) -> TopologyHint | None:
    """Upstream ``findBestHint``: preferred first, then narrower; the first wins ties."""
    from numaplane.node.memorymanager.memory_hint_sets import best_structured_hint
    from numaplane.node.topologymanager.hint_sets import StructuredHints

    if isinstance(hints, StructuredHints):
        return best_structured_hint(hints)
    best: TopologyHint | None = None
    for hint in hints:
        current = None if best is None else best.numa_affinity
        if best is None or current is None:
            best = hint
            continue
        if hint.preferred and not best.preferred:
            best = hint
            continue
        if (
            hint.preferred == best.preferred
            and hint.numa_affinity is not None
            and hint.numa_affinity.is_narrower_than(current)
        ):
            best = hint
    return best


def is_hint_in_group(hint: Iterable[int], group: Iterable[int]) -> bool:
    """Whether every node of ``hint`` is in ``group`` (upstream ``isHintInGroup``)."""
    return set(hint) <= set(group)


def best_hint_containing(hints: Sequence[TopologyHint], mask: BitMask) -> TopologyHint | None:
    """``find_best_hint`` over the hints whose nodes include every node of ``mask``."""
    from numaplane.node.memorymanager.memory_hint_sets import best_structured_hint
    from numaplane.node.topologymanager.hint_sets import StructuredHints

    if isinstance(hints, StructuredHints):
        return best_structured_hint(hints, mask.value)
    return find_best_hint(
        h
        for h in hints
        if h.numa_affinity is not None and is_hint_in_group(mask.bits, h.numa_affinity.bits)
    )
