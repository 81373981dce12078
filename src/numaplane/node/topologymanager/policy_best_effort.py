"""The ``best-effort`` policy: merge for the best alignment, admit regardless.

Upstream ``policy_best_effort.go``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.node.topologymanager.numa_info import NUMAInfo
from numaplane.node.topologymanager.policy import (
    POLICY_BEST_EFFORT,
    MergeResult,
    filter_providers_hints,
    merge_filtered,
)
from numaplane.node.topologymanager.policy_options import PolicyOptions


@dataclass(frozen=True)
class BestEffortPolicy:
    """The full merge (``policy.merge_filtered``); every result is admitted."""

    numa_info: NUMAInfo
    options: PolicyOptions = field(default_factory=PolicyOptions)

    @property
    def name(self) -> str:
        """``best-effort``."""
        return POLICY_BEST_EFFORT

    def merge(self, providers_hints: Sequence[ProviderHints]) -> MergeResult:
        """The best merged hint and the admission verdict."""
        filtered = filter_providers_hints(providers_hints)
        hint = merge_filtered(self.numa_info, filtered, self.name, self.options).hint
        return MergeResult(hint, self.can_admit(hint))

    def can_admit(self, hint: TopologyHint) -> bool:
        """Always true: best effort never rejects."""
        return True
