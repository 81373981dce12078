"""Hint generation of the static memory policy, and the requests it is computed from (§7.2).

Pure functions over a machine state: ``memory_hint_sets`` gives every NUMA mask that can hold a
request as a rule (upstream ``calculateHints``, written the upstream way in
``numaplane.testing.upstream_hints``), ``regenerate_hints`` answers for a container that already
has blocks, ``find_best_hint`` picks the hint ``Allocate`` falls back to. Requests are bytes
per resource, read from container *requests* (``memory`` and ``hugepages-*`` only) by
``numaplane.node.requests``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from numaplane.node.memorymanager.memory_hint_sets import best_structured_hint, groups_equal
from numaplane.node.memorymanager.state import Block, NUMANodeMap
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.node.topologymanager.hint_sets import StructuredHints


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


def nodes_satisfy_request(
    machine_state: NUMANodeMap, bits: Sequence[int], requests: Mapping[str, int]
) -> bool:
    """Upstream ``isAffinitySatisfyRequest`` for the mask of ``bits``: its free memory covers
    every request."""
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


def find_best_hint(hints: StructuredHints | None) -> TopologyHint | None:
    """Upstream ``findBestHint`` over a rule of ``memory_hint_sets``: preferred first, then
    narrower; ``None`` without hints."""
    return None if hints is None else best_structured_hint(hints)


def best_hint_containing(hints: StructuredHints | None, mask: BitMask) -> TopologyHint | None:
    """``find_best_hint`` over the hints whose nodes include every node of ``mask``."""
    return None if hints is None else best_structured_hint(hints, mask.value)
