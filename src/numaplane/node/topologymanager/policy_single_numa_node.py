"""The ``single-numa-node`` policy: every resource from one NUMA node, or reject.

Upstream ``policy_single_numa_node.go``: after filtering, each resource keeps only preferred
hints that are "any" or name exactly one node; the merge then uses ``Narrowest`` (the
prefer-closest option does not apply), and a result spanning every node becomes "any".

With ``prefer-most-allocated-numa-node`` (numaplane's, seed KEP-6007) a tie among two or more
preferred single-node candidates is settled by NUMA utilization (``numa_utilization``) instead
of by the lowest node id. ``merge_explained`` takes the utilization to read and returns the
``TieBreak`` it applied; ``merge`` (the ``Policy`` method) has no utilization to read, so a tie
there falls back to the default. ``UtilizationTieBreakingPolicy`` is the ``Policy`` the Topology
Manager installs when the option is on: it holds the utilization source and remembers each
merge's ``TieBreak`` for the explanation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from numaplane.cpuset import set_bits
from numaplane.node.topologymanager import policy as _policy
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.node.topologymanager.hint_sets import (
    StructuredHints,
    single_node_hint,
    single_node_preferred,
)
from numaplane.node.topologymanager.numa_info import NUMAInfo
from numaplane.node.topologymanager.numa_utilization import NUMAUtilization, TieBreak, break_tie
from numaplane.node.topologymanager.policy import (
    POLICY_SINGLE_NUMA_NODE,
    FilteredHints,
    HintMerger,
    filter_providers_hints,
)
from numaplane.node.topologymanager.policy_options import PolicyOptions


def filter_single_numa_hints(filtered_hints: Sequence[Sequence[TopologyHint]]) -> FilteredHints:
    """Per resource, the preferred hints that are "any" or single-node (may leave a list empty)."""
    return [
        single_node_preferred(resource_hints)
        if isinstance(resource_hints, StructuredHints)
        else [
            hint
            for hint in resource_hints
            if hint.preferred and (hint.numa_affinity is None or hint.numa_affinity.count() == 1)
        ]
        for resource_hints in filtered_hints
    ]


def single_node_merge(
    default: int, hints: Sequence[Sequence[TopologyHint]]
) -> tuple[TopologyHint, tuple[int, ...]] | None:
    """The merge of filtered single-numa-node lists, without walking permutations.

    Returns what ``HintMerger.merge_with_single_numa_ties`` returns for such lists (every hint
    preferred, each mask "any" or one node), or ``None`` when the lists are not of that shape
    or the reference walk is selected (``policy.USE_MERGE_SEARCH`` off).

    A permutation's AND is empty unless its non-nil masks all name the same node ``n``, so the
    merged candidates are ``({n}, preferred)`` for each ``n`` that every list allows (through
    ``{n}`` or "any") and some list names, and ``(all nodes, preferred)`` when every list holds
    "any". All are preferred, so ``Narrowest`` picks the lowest such ``n``, else all nodes; no
    candidate at all gives ``(all nodes, not preferred)``.
    """
    if not _policy.USE_MERGE_SEARCH or default == 0:
        return None
    per_resource: list[tuple[bool, int]] = []
    for resource_hints in hints:
        has_any = False
        singles = 0
        for hint in resource_hints:
            mask = hint.numa_affinity
            if not hint.preferred:
                return None
            if mask is None:
                has_any = True
                continue
            value = mask.value
            if value & (value - 1):
                return None
            singles |= value
        per_resource.append((has_any, singles))
    return _fold_single_nodes(default, per_resource)


def _single_node_merge_of_answers(
    default: int, providers_hints: Sequence[ProviderHints]
) -> tuple[TopologyHint, tuple[int, ...]]:
    """``single_node_merge(default, filter_single_numa_hints(filter_providers_hints(...)))``
    read straight from the providers' answers: per resource, whether its filtered list holds a
    preferred "any" and the mask of the single nodes it names, without building the lists."""
    per_resource: list[tuple[bool, int]] = []
    for answer in providers_hints:
        if not answer:
            continue  # "no preference": a preferred "any"
        for resource_hints in answer.values():
            if resource_hints is None:
                continue  # "no preference": a preferred "any"
            has_any = False
            if isinstance(resource_hints, StructuredHints):
                singles = resource_hints.preferred_single_nodes()
            else:
                singles = 0
                for hint in resource_hints:
                    if not hint.preferred:
                        continue
                    mask = hint.numa_affinity
                    if mask is None:
                        has_any = True
                    elif mask.count() == 1:
                        singles |= mask.value
            # An empty list becomes "any, not preferred", which the filter drops: no node.
            per_resource.append((has_any, singles))
    return _fold_single_nodes(default, per_resource)


def _fold_single_nodes(
    default: int, per_resource: Sequence[tuple[bool, int]]
) -> tuple[TopologyHint, tuple[int, ...]]:
    # Per resource: whether its filtered list holds "any", and the single nodes it names.
    accepted = default
    named = 0
    all_any = True
    for has_any, singles in per_resource:
        singles &= default
        named |= singles
        if has_any:
            continue
        all_any = False
        accepted &= singles
    return _single_node_result(default, accepted & named, all_any)


def _single_node_result(
    default: int, candidates: int, all_any: bool
) -> tuple[TopologyHint, tuple[int, ...]]:
    if all_any and default & (default - 1) == 0:
        # One node in all: the all-"any" candidate is that single node too.
        candidates |= default
    ties = tuple(set_bits(candidates))
    if ties:
        return single_node_hint(ties[0]), ties
    return TopologyHint(BitMask.from_int(default), all_any), ()


@dataclass(frozen=True)
class SingleNumaNodePolicy:
    """Admits only a preferred single-NUMA (or "any") result."""

    numa_info: NUMAInfo
    options: PolicyOptions = field(default_factory=PolicyOptions)

    @property
    def name(self) -> str:
        """``single-numa-node``."""
        return POLICY_SINGLE_NUMA_NODE

    def merge(self, providers_hints: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]:
        """The best single-node hint and the admission verdict."""
        best, admit, _ = self.merge_explained(providers_hints)
        return best, admit

    def merge_explained(
        self,
        providers_hints: Sequence[ProviderHints],
        utilization: NUMAUtilization | None = None,
    ) -> tuple[TopologyHint, bool, TieBreak | None]:
        """``merge``, with ``prefer-most-allocated-numa-node`` reading ``utilization``.

        The third value is the tie-break applied, ``None`` when the option is off or fewer than
        two preferred single-node candidates were found.
        """
        tie: TieBreak | None = None
        default = self.numa_info.default_affinity.value
        fast = None
        if _policy.USE_MERGE_SEARCH and default != 0:
            fast = _single_node_merge_of_answers(default, providers_hints)
        if fast is not None:
            best, tied = fast
        else:
            hints = filter_single_numa_hints(filter_providers_hints(providers_hints))
            merger = HintMerger(self.numa_info, hints, self.name, self.options)
            if not self.options.prefer_most_allocated_numa_node:
                best, tied = merger.merge(), ()
            else:
                best, tied = merger.merge_with_single_numa_ties()
        if self.options.prefer_most_allocated_numa_node:
            mask = best.numa_affinity
            if len(tied) > 1 and best.preferred and mask is not None and mask.count() == 1:
                # With a tie the merge picked one of the tied single nodes (the narrowest).
                (default,) = mask.bits
                tie = break_tie(tied, default, utilization)
                best = TopologyHint(BitMask(tie.chosen), True)
        if best.numa_affinity == self.numa_info.default_affinity:
            # "All nodes" here means nothing constrained the placement: report it as "any".
            best = TopologyHint(None, best.preferred)
        return best, self.can_admit(best), tie

    def can_admit(self, hint: TopologyHint) -> bool:
        """Whether the merged hint is preferred."""
        return hint.preferred


class UtilizationTieBreakingPolicy:
    """``single-numa-node`` with ``prefer-most-allocated-numa-node``, as a ``Policy``.

    ``utilization`` may be set after construction (the node builds its managers after the
    Topology Manager). Each ``merge`` appends its ``TieBreak`` (or ``None``) to a log that
    ``take_tie_breaks`` hands out and clears, one entry per merge, in merge order.
    """

    def __init__(
        self, inner: SingleNumaNodePolicy, utilization: NUMAUtilization | None = None
    ) -> None:
        self.inner = inner
        self.utilization = utilization
        self._log: list[TieBreak | None] = []

    @property
    def name(self) -> str:
        """``single-numa-node``."""
        return self.inner.name

    @property
    def numa_info(self) -> NUMAInfo:
        """The wrapped policy's NUMA info."""
        return self.inner.numa_info

    @property
    def options(self) -> PolicyOptions:
        """The wrapped policy's options."""
        return self.inner.options

    def merge(self, providers_hints: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]:
        """The merge with utilization tie-breaking; the tie-break is logged."""
        best, admit, tie = self.inner.merge_explained(providers_hints, self.utilization)
        self._log.append(tie)
        return best, admit

    def can_admit(self, hint: TopologyHint) -> bool:
        """Whether the merged hint is preferred."""
        return self.inner.can_admit(hint)

    def take_tie_breaks(self) -> list[TieBreak | None]:
        """The tie-breaks logged since the last call, one per merge; the log is cleared."""
        log, self._log = self._log, []
        return log
