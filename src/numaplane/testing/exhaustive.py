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
from numaplane.node.memorymanager.topology_hints import ReusableLookup, list_hints
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
    """Upstream ``calculateHints`` mask by mask (``IterateBitMasks`` order): the memory
    manager's own listed definition, ``topology_hints.list_hints``."""
    return list_hints(machine_state, requests, reusable)
