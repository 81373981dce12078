"""The ``single-numa-node`` policy: every resource from one NUMA node, or reject.

Upstream ``policy_single_numa_node.go``: after filtering, each resource keeps only preferred
hints that are "any" or name exactly one node (``filter_single_numa_hints``); the merge then uses
``Narrowest`` (the prefer-closest option does not apply), and a result spanning every node
becomes "any".

With ``prefer-most-allocated-numa-node`` (numaplane's, seed KEP-6007) a tie among two or more
preferred single-node candidates is settled by NUMA utilization (``numa_utilization``) instead
of by the lowest node id. ``merge_explained`` takes the utilization to read and returns the
``TieBreak`` it applied in its ``MergeResult``; ``merge`` (the ``Policy`` method) has no
utilization to read, so a tie there falls back to the default. ``UtilizationTieBreakingPolicy``
is the ``Policy`` the Topology Manager installs when the option is on: it holds the utilization
source (set after the managers exist) and passes it to each merge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.node.topologymanager.hint_sets import StructuredHints, hint_set_of
from numaplane.node.topologymanager.numa_info import NUMAInfo
from numaplane.node.topologymanager.numa_utilization import NUMAUtilization, TieBreak, break_tie
from numaplane.node.topologymanager.policy import (
    POLICY_SINGLE_NUMA_NODE,
    MergeResult,
    filter_providers_hints,
    merge_filtered,
)
from numaplane.node.topologymanager.policy_options import PolicyOptions


def filter_single_numa_hints(
    filtered_hints: Sequence[Sequence[TopologyHint]],
) -> list[StructuredHints]:
    """Per resource, the preferred hints that are "any" or single-node (may leave a list empty)."""
    return [hint_set_of(hints).single_node_preferred() for hints in filtered_hints]


@dataclass(frozen=True)
class SingleNumaNodePolicy:
    """Admits only a preferred single-NUMA (or "any") result."""

    numa_info: NUMAInfo
    options: PolicyOptions = field(default_factory=PolicyOptions)

    @property
    def name(self) -> str:
        """``single-numa-node``."""
        return POLICY_SINGLE_NUMA_NODE

    def merge(self, providers_hints: Sequence[ProviderHints]) -> MergeResult:
        """The best single-node hint and the admission verdict (ties keep the default)."""
        return self.merge_explained(providers_hints)

    def merge_explained(
        self,
        providers_hints: Sequence[ProviderHints],
        utilization: NUMAUtilization | None = None,
    ) -> MergeResult:
        """``merge``, with ``prefer-most-allocated-numa-node`` reading ``utilization``.

        The result's ``tie_break`` is the tie-break applied, ``None`` when the option is off or
        fewer than two preferred single-node candidates were found.
        """
        hints = filter_single_numa_hints(filter_providers_hints(providers_hints))
        with_ties = self.options.prefer_most_allocated_numa_node
        merged = merge_filtered(self.numa_info, hints, self.name, self.options, with_ties)
        best = merged.hint
        tie: TieBreak | None = None
        if with_ties:
            tied = merged.single_node_ties
            mask = best.numa_affinity
            if len(tied) > 1 and best.preferred and mask is not None and mask.count() == 1:
                # With a tie the merge picked one of the tied single nodes (the narrowest).
                (default,) = mask.bits
                tie = break_tie(tied, default, utilization)
                best = TopologyHint(BitMask(tie.chosen), True)
        if best.numa_affinity == self.numa_info.default_affinity:
            # "All nodes" here means nothing constrained the placement: report it as "any".
            best = TopologyHint(None, best.preferred)
        return MergeResult(best, self.can_admit(best), tie)

    def can_admit(self, hint: TopologyHint) -> bool:
        """Whether the merged hint is preferred."""
        return hint.preferred


class UtilizationTieBreakingPolicy:
    """``single-numa-node`` with ``prefer-most-allocated-numa-node``, as a ``Policy``.

    ``utilization`` may be set after construction (the node builds its managers after the
    Topology Manager); each ``merge`` reads it and returns the ``TieBreak`` it applied.
    """

    def __init__(
        self, inner: SingleNumaNodePolicy, utilization: NUMAUtilization | None = None
    ) -> None:
        self.inner = inner
        self.utilization = utilization

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

    def merge(self, providers_hints: Sequence[ProviderHints]) -> MergeResult:
        """The merge with utilization tie-breaking."""
        return self.inner.merge_explained(providers_hints, self.utilization)

    def can_admit(self, hint: TopologyHint) -> bool:
        """Whether the merged hint is preferred."""
        return self.inner.can_admit(hint)
