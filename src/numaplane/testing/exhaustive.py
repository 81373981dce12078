"""The Topology Manager's exhaustive definition, kept as the reference for differential tests.

Upstream walks the full cross product of every provider's hints, each hint list naming every
qualifying mask. numaplane's merge searches instead (``topologymanager.merge_search``) and its
providers answer with rules (``StructuredHints``); these functions are the definition they must
agree with: ``exhaustive_merge`` folds ``HintMerger.compare`` over every permutation in upstream
order, and ``calculate_memory_hints`` lists memory hints mask by mask.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import product

from numaplane.node.memorymanager.state import NUMANodeMap
from numaplane.node.memorymanager.topology_hints import (
    ReusableLookup,
    _respects_grouping,
    _table_sums,
)
from numaplane.node.topologymanager.bitmask import bit_mask_subsets
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.node.topologymanager.numa_info import NUMAInfo
from numaplane.node.topologymanager.policy import HintMerger, merge_permutation
from numaplane.node.topologymanager.policy_options import PolicyOptions


def materialized(hints: Sequence[Sequence[TopologyHint]]) -> list[list[TopologyHint]]:
    """Every hint list as a plain list (rule-based lists are listed mask by mask)."""
    return [list(h) for h in hints]


def exhaustive_merge(
    numa_info: NUMAInfo,
    hints: Sequence[Sequence[TopologyHint]],
    policy_name: str,
    options: PolicyOptions,
) -> TopologyHint:
    """Upstream ``HintMerger.Merge``: every permutation, first list outermost, folded with
    ``compare``; nothing accepted gives ``{all nodes, not preferred}``."""
    lists = materialized(hints)
    merger = HintMerger(numa_info, lists, policy_name, options)
    default = numa_info.default_affinity
    best: TopologyHint | None = None
    for permutation in product(*lists):
        candidate = merge_permutation(default, permutation)
        best = merger.compare(best, candidate)
    return best if best is not None else TopologyHint(default, False)


def calculate_memory_hints(
    machine_state: NUMANodeMap,
    requests: Mapping[str, int],
    reusable: ReusableLookup | None = None,
) -> dict[str, list[TopologyHint]]:
    """Upstream ``calculateHints`` mask by mask (``IterateBitMasks`` order)."""
    node_ids = sorted(machine_state)
    min_affinity_size = len(node_ids)
    found: list[TopologyHint] = []
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
        found.append(TopologyHint(mask, False))
    if not found:
        return {}
    return {
        resource: [
            TopologyHint(h.numa_affinity, h.numa_affinity.count() == min_affinity_size)
            for h in found
            if h.numa_affinity is not None
        ]
        for resource in requests
    }
