"""The memory manager's metrics as a pure record (§12); the agent exports it.

Upstream counts in the static policy's ``Allocate``: one pinning request for every container
of a Guaranteed pod that reaches the allocation (after the QoS and pod-level checks), and one
error for every such call that fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

PINNING_REQUESTS_TOTAL: Final = "kubelet_memory_manager_pinning_requests_total"
"""Counter: ``Allocate`` calls of Guaranteed containers."""

PINNING_ERRORS_TOTAL: Final = "kubelet_memory_manager_pinning_errors_total"
"""Counter: such calls that failed."""


@dataclass(frozen=True, slots=True)
class MemoryManagerMetrics:
    """Counter values of the memory manager."""

    pinning_requests_total: int = 0
    pinning_errors_total: int = 0

    def with_request(self) -> MemoryManagerMetrics:
        """One more pinning request."""
        # Direct construction: ``dataclasses.replace`` costs more than the whole count.
        return MemoryManagerMetrics(self.pinning_requests_total + 1, self.pinning_errors_total)

    def with_error(self) -> MemoryManagerMetrics:
        """One more pinning error."""
        return MemoryManagerMetrics(self.pinning_requests_total, self.pinning_errors_total + 1)

    def samples(self) -> dict[str, int]:
        """The values under their kubelet metric names."""
        return {
            PINNING_REQUESTS_TOTAL: self.pinning_requests_total,
            PINNING_ERRORS_TOTAL: self.pinning_errors_total,
        }
