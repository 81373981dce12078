"""The memory manager's metrics (§12): ``prometheus_client`` counters on a registry it is given.

Upstream counts in the static policy's ``Allocate``: one pinning request for every container
of a Guaranteed pod that reaches the allocation (after the QoS and pod-level checks), and one
error for every such call that fails.
"""

from __future__ import annotations

from typing import Final

from prometheus_client import CollectorRegistry, Counter

from numaplane.node.topologymanager.metrics import private_registry

PINNING_REQUESTS_TOTAL: Final = "kubelet_memory_manager_pinning_requests_total"
"""Counter: ``Allocate`` calls of Guaranteed containers."""

PINNING_ERRORS_TOTAL: Final = "kubelet_memory_manager_pinning_errors_total"
"""Counter: such calls that failed."""


class MemoryManagerMetrics:
    """The memory manager's counters, on ``registry`` (a private one when not given)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else private_registry()
        self.pinning_requests_total = Counter(
            PINNING_REQUESTS_TOTAL,
            "The number of memory pages allocations which required pinning.",
            registry=self.registry,
        )
        self.pinning_errors_total = Counter(
            PINNING_ERRORS_TOTAL,
            "The number of memory pages allocations which required pinning that failed.",
            registry=self.registry,
        )
