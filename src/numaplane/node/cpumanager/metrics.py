"""The CPU manager's metrics as a plain record, with the kubelet's metric names.

The node engine is pure, so it only counts; the agent exports ``samples()`` through
``prometheus_client`` under the same names the kubelet uses.
"""

from __future__ import annotations

from collections.abc import Callable
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
    aligned: dict[tuple[str, str], int] = field(
        default_factory=lambda: {
            (SCOPE_CONTAINER, BOUNDARY_PHYSICAL_CPU): 0,
            (SCOPE_CONTAINER, BOUNDARY_UNCORE_CACHE): 0,
        }
    )
    aligned_failures: dict[tuple[str, str], int] = field(
        default_factory=lambda: {(SCOPE_CONTAINER, BOUNDARY_PHYSICAL_CPU): 0}
    )

    # The two exclusive-CPU gauges are derived from the CPU state, which changes on every
    # allocation and release: the policy hands over a way to compute them (``defer_exclusive``)
    # and they are computed when first read, so admissions do not pay for unread gauges.
    _exclusive_count: int = field(default=0, init=False, repr=False)
    _per_numa: dict[int, int] = field(default_factory=dict, init=False, repr=False)
    _pending: Callable[[], tuple[int, dict[int, int]]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def defer_exclusive(self, compute: Callable[[], tuple[int, dict[int, int]]]) -> None:
        """Let ``compute`` give ``(exclusive_cpu_allocation_count, allocation_per_numa)``
        when either is next read (it replaces any earlier pending computation)."""
        self._pending = compute

    def _settle(self) -> None:
        compute = self._pending
        if compute is not None:
            self._pending = None
            self._exclusive_count, self._per_numa = compute()

    @property
    def exclusive_cpu_allocation_count(self) -> int:
        """How many CPUs containers hold exclusively."""
        self._settle()
        return self._exclusive_count

    @exclusive_cpu_allocation_count.setter
    def exclusive_cpu_allocation_count(self, value: int) -> None:
        self._settle()
        self._exclusive_count = value

    @property
    def allocation_per_numa(self) -> dict[int, int]:
        """Exclusively held CPUs per NUMA node (every node of the topology)."""
        self._settle()
        return self._per_numa

    @allocation_per_numa.setter
    def allocation_per_numa(self, value: dict[int, int]) -> None:
        self._settle()
        self._per_numa = value

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
