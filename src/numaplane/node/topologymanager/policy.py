"""The hint merge shared by every policy that merges (upstream ``policy.go``).

Steps, in upstream order:

1. ``filter_providers_hints`` turns each provider's answer into per-resource hint lists, keeping
   the three "empty" shapes apart: a ``None``/empty map and a resource mapped to ``None`` mean
   "no preference" (``{any, preferred}``), a resource mapped to ``[]`` means "no possible
   placement" (``{any, not preferred}``). Every list comes out as a ``StructuredHints``.
2. ``merge_filtered`` finds the best merged hint. Upstream walks the cross product of the lists
   and keeps the best permutation by ``HintMerger.compare``; numaplane searches the same total
   order directly (``merge_search``). The cross-product walk itself is the reference the tests
   compare against (``numaplane.testing.exhaustive``).
3. Nothing accepted gives ``{all nodes, not preferred}``.

``merge`` of a policy returns a ``MergeResult``: the merged hint, the admit verdict and, for
``prefer-most-allocated-numa-node``, the tie-break it applied, so the explanation reads it from
the merge itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol, TypeAlias

from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.node.topologymanager.hint_sets import (
    ANY_NOT_PREFERRED,
    ANY_PREFERRED,
    StructuredHints,
    hint_set_of,
)
from numaplane.node.topologymanager.merge_search import Merged, search_merge
from numaplane.node.topologymanager.merge_single_node import fold_single_nodes
from numaplane.node.topologymanager.numa_info import NUMAInfo
from numaplane.node.topologymanager.numa_utilization import TieBreak
from numaplane.node.topologymanager.policy_options import PolicyOptions

POLICY_NONE: Final = "none"
POLICY_BEST_EFFORT: Final = "best-effort"
POLICY_RESTRICTED: Final = "restricted"
POLICY_SINGLE_NUMA_NODE: Final = "single-numa-node"

FilteredHints: TypeAlias = list[StructuredHints]
"""One hint list per (provider, resource) after filtering."""


@dataclass(frozen=True, slots=True)
class MergeResult:
    """What a policy's merge decided: the merged hint, whether the pod may be admitted, and the
    tie-break ``prefer-most-allocated-numa-node`` applied (``None`` when none was)."""

    hint: TopologyHint
    admit: bool
    tie_break: TieBreak | None = None


class Policy(Protocol):
    """A Topology Manager policy: a stateless merge plus its admission rule."""

    @property
    def name(self) -> str:
        """The policy's configuration string (``best-effort``, ...)."""
        ...

    def merge(self, providers_hints: Sequence[ProviderHints]) -> MergeResult:
        """The merged hint of every provider's hints, and whether the pod may be admitted."""
        ...

    def can_admit(self, hint: TopologyHint) -> bool:
        """Whether a merged hint satisfies the policy (upstream ``canAdmitPodResult``)."""
        ...


def is_alignment_guaranteed(policy: Policy) -> bool:
    """Upstream ``IsAlignmentGuaranteed``: only ``single-numa-node`` guarantees alignment."""
    return policy.name == POLICY_SINGLE_NUMA_NODE


def filter_providers_hints(providers_hints: Sequence[ProviderHints]) -> FilteredHints:
    """Per-resource hint lists from every provider (upstream ``filterProvidersHints``)."""
    filtered: FilteredHints = []
    for hints in providers_hints:
        if not hints:
            filtered.append(ANY_PREFERRED)
            continue
        for resource_hints in hints.values():
            if resource_hints is None:
                filtered.append(ANY_PREFERRED)
            elif not resource_hints:
                filtered.append(ANY_NOT_PREFERRED)
            else:
                filtered.append(hint_set_of(resource_hints))
    return filtered


def max_of_min_affinity_counts(filtered_hints: Sequence[Sequence[TopologyHint]]) -> int:
    """The widest of the per-resource narrowest masks (upstream ``maxOfMinAffinityCounts``)."""
    return max((hint_set_of(hints).min_count() for hints in filtered_hints), default=0)


def uses_closest(policy_name: str, options: PolicyOptions) -> bool:
    """Whether masks of equal standing compare by distance (upstream ``Closest``): with the
    prefer-closest-numa-nodes option, except under ``single-numa-node``."""
    return policy_name != POLICY_SINGLE_NUMA_NODE and options.prefer_closest_numa


def merge_filtered(
    numa_info: NUMAInfo,
    filtered_hints: Sequence[Sequence[TopologyHint]],
    policy_name: str,
    options: PolicyOptions,
    with_ties: bool = False,
) -> Merged:
    """The best merged hint of filtered lists (upstream ``HintMerger.Merge``); with
    ``with_ties`` also the NUMA ids of every distinct preferred merged candidate naming one
    node (the candidates a utilization tie-break chooses among)."""
    lists = [hint_set_of(hints) for hints in filtered_hints]
    closest = uses_closest(policy_name, options)
    if not closest:
        # Lists of preferred "any" or single-node hints (single-numa-node's, after its
        # filter): the candidates are read off per node.
        folded = fold_single_nodes(numa_info.default_affinity.value, lists)
        if folded is not None:
            return folded
    return search_merge(numa_info, lists, closest, max_of_min_affinity_counts(lists), with_ties)
