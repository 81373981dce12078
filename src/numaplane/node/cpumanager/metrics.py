"""The CPU manager's metrics as a plain record, with the kubelet's metric names.

The node engine is pure, so it only counts; the agent exports ``samples()`` through
``prometheus_client`` under the same names the kubelet uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

PINNING_REQUESTS_TOTAL: Final = "kubelet_cpu_manager_pinning_requests_total"
PINNING_ERRORS_TOTAL: Final = "kubelet_cpu_manager_pinning_errors_total"
SHARED_POOL_SIZE_MILLICORES: Final = "kubelet_cpu_manager_shared_pool_size_millicores"
EXCLUSIVE_CPU_ALLOCATION_COUNT: Final = "kubelet_cpu_manager_exclusive_cpu_allocation_count"
ALLOCATION_PER_NUMA: Final = "kubelet_cpu_manager_allocation_per_numa"
ALIGNED_COMPUTE_RESOURCES: Final = "kubelet_container_aligned_compute_resources_count"
ALIGNED_COMPUTE_RESOURCES_FAILURE: Final = (
    "kubelet_container_aligned_compute_resources_failure_count"
)

SCOPE_CONTAINER: Final = "container"
BOUNDARY_PHYSICAL_CPU: Final = "physical_cpu"
BOUNDARY_UNCORE_CACHE: Final = "uncore_cache"

Sample = tuple[str, tuple[tuple[str, str], ...], int]
"""``(metric name, sorted label pairs, value)``."""


@dataclass
class CPUManagerMetrics:
    """Counters and gauges of one CPU manager (mutable: the manager updates it in place)."""

    pinning_requests_total: int = 0
    pinning_errors_total: int = 0
    shared_pool_size_millicores: int = 0
    exclusive_cpu_allocation_count: int = 0
    allocation_per_numa: dict[int, int] = field(default_factory=dict)
    aligned: dict[tuple[str, str], int] = field(
        default_factory=lambda: {
            (SCOPE_CONTAINER, BOUNDARY_PHYSICAL_CPU): 0,
            (SCOPE_CONTAINER, BOUNDARY_UNCORE_CACHE): 0,
        }
    )
    aligned_failures: dict[tuple[str, str], int] = field(
        default_factory=lambda: {(SCOPE_CONTAINER, BOUNDARY_PHYSICAL_CPU): 0}
    )

    def count_aligned(self, boundary: str) -> None:
        """One more container aligned at ``boundary`` (container scope)."""
        key = (SCOPE_CONTAINER, boundary)
        self.aligned[key] = self.aligned.get(key, 0) + 1

    def count_aligned_failure(self, boundary: str) -> None:
        """One more container that could not be aligned at ``boundary``."""
        key = (SCOPE_CONTAINER, boundary)
        self.aligned_failures[key] = self.aligned_failures.get(key, 0) + 1

    def samples(self) -> list[Sample]:
        """Every series, in a stable order."""
        out: list[Sample] = [
            (PINNING_REQUESTS_TOTAL, (), self.pinning_requests_total),
            (PINNING_ERRORS_TOTAL, (), self.pinning_errors_total),
            (SHARED_POOL_SIZE_MILLICORES, (), self.shared_pool_size_millicores),
            (EXCLUSIVE_CPU_ALLOCATION_COUNT, (), self.exclusive_cpu_allocation_count),
        ]
        for numa, count in sorted(self.allocation_per_numa.items()):
            out.append((ALLOCATION_PER_NUMA, (("numa_node", str(numa)),), count))
        for (scope, boundary), count in sorted(self.aligned.items()):
            labels = (("boundary", boundary), ("scope", scope))
            out.append((ALIGNED_COMPUTE_RESOURCES, labels, count))
        for (scope, boundary), count in sorted(self.aligned_failures.items()):
            labels = (("boundary", boundary), ("scope", scope))
            out.append((ALIGNED_COMPUTE_RESOURCES_FAILURE, labels, count))
        return out
