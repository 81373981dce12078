"""The ``restricted`` policy: the best-effort merge, admitting only preferred results.

Upstream ``policy_restricted.go``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.node.topologymanager.numa_info import NUMAInfo
from numaplane.node.topologymanager.policy import (
    POLICY_RESTRICTED,
    MergeResult,
    filter_providers_hints,
    merge_filtered,
)
from numaplane.node.topologymanager.policy_options import PolicyOptions


@dataclass(frozen=True)
class RestrictedPolicy:
    """The full merge (``policy.merge_filtered``); admitted exactly when the result is preferred."""

    numa_info: NUMAInfo
    options: PolicyOptions = field(default_factory=PolicyOptions)

    @property
    def name(self) -> str:
        """``restricted``."""
        return POLICY_RESTRICTED

    def merge(self, providers_hints: Sequence[ProviderHints]) -> MergeResult:
        """The best merged hint and the admission verdict."""
        filtered = filter_providers_hints(providers_hints)
        hint = merge_filtered(self.numa_info, filtered, self.name, self.options).hint
        return MergeResult(hint, self.can_admit(hint))

    def can_admit(self, hint: TopologyHint) -> bool:
        """Whether the merged hint is preferred."""
        return hint.preferred
