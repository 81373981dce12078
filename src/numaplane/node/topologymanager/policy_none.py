"""The ``none`` policy: no alignment, every pod admitted (upstream ``policy_none.go``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.node.topologymanager.policy import POLICY_NONE, MergeResult


@dataclass(frozen=True, slots=True)
class NonePolicy:
    """Merges nothing: the result is the empty hint ``{any, not preferred}``, always admitted."""

    @property
    def name(self) -> str:
        """``none``."""
        return POLICY_NONE

    def merge(self, providers_hints: Sequence[ProviderHints]) -> MergeResult:
        """The empty hint, admitted, without looking at the providers' hints."""
        hint = TopologyHint(None, False)
        return MergeResult(hint, self.can_admit(hint))

    def can_admit(self, hint: TopologyHint) -> bool:
        """Always true."""
        return True
