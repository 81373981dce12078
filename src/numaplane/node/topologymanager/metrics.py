"""The Topology Manager's metrics: ``prometheus_client`` objects on a registry it is given.

Names, help strings, labels and buckets follow ``pkg/kubelet/metrics/metrics.go`` (spec §12).
The objects only count in memory; exposing a registry over HTTP is the agent's job.

The two aligned-compute-resources counters are shared with the CPU manager in the kubelet
(one series set for both): ``AlignedComputeResources`` creates them once on a registry, and
whoever builds both managers hands the same object to the second one.
"""

from __future__ import annotations

from typing import Final

from prometheus_client import CollectorRegistry, Counter, Histogram

ADMISSION_REQUESTS_TOTAL: Final = "kubelet_topology_manager_admission_requests_total"
ADMISSION_ERRORS_TOTAL: Final = "kubelet_topology_manager_admission_errors_total"
ADMISSION_DURATION_MS: Final = "kubelet_topology_manager_admission_duration_ms"
ALIGNED_COMPUTE_RESOURCES: Final = "kubelet_container_aligned_compute_resources_count"
ALIGNED_COMPUTE_RESOURCES_FAILURE: Final = (
    "kubelet_container_aligned_compute_resources_failure_count"
)

SCOPE_CONTAINER: Final = "container"
SCOPE_POD: Final = "pod"
BOUNDARY_NUMA_NODE: Final = "numa_node"
BOUNDARY_PHYSICAL_CPU: Final = "physical_cpu"
BOUNDARY_UNCORE_CACHE: Final = "uncore_cache"

#: ExponentialBuckets(0.05, 2, 15): 0.05 ms ... 819.2 ms.
DURATION_BUCKETS_MS: Final = tuple(0.05 * 2**i for i in range(15))


def private_registry() -> CollectorRegistry:
    """A registry of one node's managers (the process-wide default registry is left alone,
    so that several nodes, agents or tests live in one process)."""
    return CollectorRegistry(auto_describe=False)


class AlignedComputeResources:
    """``container_aligned_compute_resources_count`` and its ``_failure_count`` sibling
    (labels ``scope``, ``boundary``), created once per registry.

    prometheus_client exposes every counter sample with a ``_total`` suffix, so these two are
    scraped as ``..._count_total`` and ``..._failure_count_total``.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        # The series of each (scope, boundary) pair once looked up: ``labels()`` validates its
        # arguments and takes a lock on every call, a cost admissions should not pay. Keyed on
        # the label values, which name one series for the life of the counter (nothing here
        # ever removes a series).
        self._successes: dict[tuple[str, str], Counter] = {}
        self._failures: dict[tuple[str, str], Counter] = {}
        self.success = Counter(
            ALIGNED_COMPUTE_RESOURCES,
            "Cumulative number of aligned compute resources allocated to containers by "
            "alignment type.",
            ["scope", "boundary"],
            registry=registry,
        )
        self.failure = Counter(
            ALIGNED_COMPUTE_RESOURCES_FAILURE,
            "Cumulative number of failures to allocate aligned compute resources to containers "
            "by alignment type.",
            ["scope", "boundary"],
            registry=registry,
        )

    def count(self, scope: str, boundary: str) -> None:
        """One more container (or pod) aligned at ``boundary``."""
        series = self._successes.get((scope, boundary))
        if series is None:
            series = self._successes[(scope, boundary)] = self.success.labels(scope, boundary)
        series.inc()

    def count_failure(self, scope: str, boundary: str) -> None:
        """One more container (or pod) that could not be aligned at ``boundary``."""
        series = self._failures.get((scope, boundary))
        if series is None:
            series = self._failures[(scope, boundary)] = self.failure.labels(scope, boundary)
        series.inc()


class TopologyManagerMetrics:
    """Every series the Topology Manager updates, on ``registry`` (a private one when not
    given); ``aligned`` shares the aligned-resources counters already created there."""

    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        aligned: AlignedComputeResources | None = None,
    ) -> None:
        self.registry = registry if registry is not None else private_registry()
        self.admission_requests_total = Counter(
            ADMISSION_REQUESTS_TOTAL,
            "The number of admission requests where resources have to be aligned.",
            registry=self.registry,
        )
        self.admission_errors_total = Counter(
            ADMISSION_ERRORS_TOTAL,
            "The number of admission request failures where resources could not be aligned.",
            registry=self.registry,
        )
        self.admission_duration_ms = Histogram(
            ADMISSION_DURATION_MS,
            "Duration in milliseconds to serve a pod admission request.",
            buckets=DURATION_BUCKETS_MS,
            registry=self.registry,
        )
        self.aligned = aligned if aligned is not None else AlignedComputeResources(self.registry)
        self.aligned_compute_resources = self.aligned.success
        self.aligned_compute_resources_failure = self.aligned.failure

    def initialize(self) -> None:
        """Create the zero series upstream's ``initializeMetrics`` creates."""
        for scope in (SCOPE_CONTAINER, SCOPE_POD):
            self.aligned_compute_resources.labels(scope, BOUNDARY_NUMA_NODE)
            self.aligned_compute_resources_failure.labels(scope, BOUNDARY_NUMA_NODE)
