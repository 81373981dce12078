"""The ``single-numa-node`` policy: every resource from one NUMA node, or reject.

Upstream ``policy_single_numa_node.go``: after filtering, each resource keeps only preferred
hints that are "any" or name exactly one node; the merge then uses ``Narrowest`` (the
prefer-closest option does not apply), and a result spanning every node becomes "any".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.node.topologymanager.numa_info import NUMAInfo
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
        [
            hint
            for hint in resource_hints
            if hint.preferred and (hint.numa_affinity is None or hint.numa_affinity.count() == 1)
        ]
        for resource_hints in filtered_hints
    ]


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
        hints = filter_single_numa_hints(filter_providers_hints(providers_hints))
        best = HintMerger(self.numa_info, hints, self.name, self.options).merge()
        if best.numa_affinity == self.numa_info.default_affinity:
            # "All nodes" here means nothing constrained the placement: report it as "any".
            best = TopologyHint(None, best.preferred)
        return best, self.can_admit(best)

    def can_admit(self, hint: TopologyHint) -> bool:
        """Whether the merged hint is preferred."""
        return hint.preferred
