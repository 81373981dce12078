"""The CPU manager's metrics: ``prometheus_client`` objects on a registry it is given.

Names and help strings are the kubelet's (spec §12). The aligned-compute-resources counters are
the Topology Manager's (``AlignedComputeResources``), shared when both managers are given the
same object; upstream zero-initialises the CPU manager's series of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final

from prometheus_client import CollectorRegistry, Counter, Gauge

from numaplane.node.topologymanager.metrics import (
    BOUNDARY_PHYSICAL_CPU,
    BOUNDARY_UNCORE_CACHE,
    SCOPE_CONTAINER,
    AlignedComputeResources,
    private_registry,
)

PINNING_REQUESTS_TOTAL: Final = "kubelet_cpu_manager_pinning_requests_total"
PINNING_ERRORS_TOTAL: Final = "kubelet_cpu_manager_pinning_errors_total"
SHARED_POOL_SIZE_MILLICORES: Final = "kubelet_cpu_manager_shared_pool_size_millicores"
EXCLUSIVE_CPU_ALLOCATION_COUNT: Final = "kubelet_cpu_manager_exclusive_cpu_allocation_count"
ALLOCATION_PER_NUMA: Final = "kubelet_cpu_manager_allocation_per_numa"

ExclusiveCPUs = Callable[[], tuple[int, dict[int, int]]]
"""Computes ``(CPUs held exclusively, exclusively held CPUs per NUMA node)`` from a state."""


class CPUManagerMetrics:
    """Every series the CPU manager updates, on ``registry`` (a private one when not given)."""

    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        aligned: AlignedComputeResources | None = None,
    ) -> None:
        self.registry = registry if registry is not None else private_registry()
        self.pinning_requests_total = Counter(
            PINNING_REQUESTS_TOTAL,
            "The number of cpu core allocations which required pinning.",
            registry=self.registry,
        )
        self.pinning_errors_total = Counter(
            PINNING_ERRORS_TOTAL,
            "The number of cpu core allocations which required pinning failed.",
            registry=self.registry,
        )
        self.shared_pool_size_millicores = Gauge(
            SHARED_POOL_SIZE_MILLICORES,
            "The size of the shared CPU pool for non-guaranteed QoS pods, in millicores.",
            registry=self.registry,
        )
        self.exclusive_cpu_allocation_count = Gauge(
            EXCLUSIVE_CPU_ALLOCATION_COUNT,
            "The total number of CPUs exclusively allocated to containers running on this node",
            registry=self.registry,
        )
        self.allocation_per_numa = Gauge(
            ALLOCATION_PER_NUMA,
            "Number of CPUs allocated per NUMA node",
            ["numa_node"],
            registry=self.registry,
        )
        self.aligned = aligned if aligned is not None else AlignedComputeResources(self.registry)
        self.aligned.success.labels(SCOPE_CONTAINER, BOUNDARY_PHYSICAL_CPU)
        self.aligned.success.labels(SCOPE_CONTAINER, BOUNDARY_UNCORE_CACHE)
        self.aligned.failure.labels(SCOPE_CONTAINER, BOUNDARY_PHYSICAL_CPU)

    def count_aligned(self, boundary: str) -> None:
        """One more container aligned at ``boundary`` (container scope)."""
        self.aligned.count(SCOPE_CONTAINER, boundary)

    def count_aligned_failure(self, boundary: str) -> None:
        """One more container that could not be aligned at ``boundary``."""
        self.aligned.count_failure(SCOPE_CONTAINER, boundary)

    def track_exclusive(self, numa_nodes: Iterable[int], compute: ExclusiveCPUs) -> None:
        """Read the two exclusive-CPU gauges through ``compute`` whenever they are collected.

        Upstream recounts the whole state after every allocation and release; computing the
        same figures from the state when they are read gives the same values without making
        admissions pay for gauges nobody reads.
        """
        self.exclusive_cpu_allocation_count.set_function(lambda: compute()[0])
        for numa in numa_nodes:
            self.allocation_per_numa.labels(str(numa)).set_function(_per_numa(compute, numa))


def _per_numa(compute: ExclusiveCPUs, numa: int) -> Callable[[], float]:
    return lambda: compute()[1].get(numa, 0)
