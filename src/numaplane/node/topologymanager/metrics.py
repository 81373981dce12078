"""The Topology Manager's metrics as plain counters, named as the kubelet names them.

No exporter is imported here (the node core stays pure); the agent turns these records into
Prometheus series. Names, help strings and buckets follow ``pkg/kubelet/metrics/metrics.go``.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Final

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


@dataclass
class Counter:
    """A monotonically increasing count."""

    name: str
    help: str
    value: int = 0

    def inc(self, amount: int = 1) -> None:
        """Add ``amount`` (never negative)."""
        if amount < 0:
            raise ValueError("a counter only goes up")
        self.value += amount


@dataclass
class LabeledCounter:
    """Counters keyed by label values, in the order of ``label_names``."""

    name: str
    help: str
    label_names: tuple[str, ...]
    values: dict[tuple[str, ...], int] = field(default_factory=dict)

    def init(self, *labels: str) -> None:
        """Create the series at 0 if it does not exist (upstream pre-initialises some)."""
        self._check(labels)
        self.values.setdefault(labels, 0)

    def inc(self, *labels: str) -> None:
        """Add one to the series."""
        self._check(labels)
        self.values[labels] = self.values.get(labels, 0) + 1

    def get(self, *labels: str) -> int:
        """The series' value; 0 when it does not exist."""
        return self.values.get(labels, 0)

    def _check(self, labels: tuple[str, ...]) -> None:
        if len(labels) != len(self.label_names):
            raise ValueError(f"{self.name} takes labels {self.label_names}, got {labels}")


@dataclass
class Histogram:
    """Cumulative-bucket histogram: ``bucket_counts[i]`` counts observations <= ``buckets[i]``."""

    name: str
    help: str
    buckets: tuple[float, ...]
    sum: float = 0.0
    count: int = 0
    # Observations per bucket alone (not cumulative): one is counted once, in the narrowest
    # bucket that holds it, and ``bucket_counts`` adds them up when read.
    _in_bucket: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if not self._in_bucket:
            self._in_bucket = [0] * len(self.buckets)

    @property
    def bucket_counts(self) -> list[int]:
        """Cumulative counts: ``bucket_counts[i]`` observations are <= ``buckets[i]``."""
        return list(accumulate(self._in_bucket))

    def observe(self, value: float) -> None:
        """Record one observation."""
        self.sum += value
        self.count += 1
        i = bisect_left(self.buckets, value)
        if i < len(self._in_bucket):
            self._in_bucket[i] += 1


def aligned_compute_resources_counter() -> LabeledCounter:
    """A fresh ``container_aligned_compute_resources_count`` (labels scope, boundary)."""
    return LabeledCounter(
        ALIGNED_COMPUTE_RESOURCES,
        "Cumulative number of aligned compute resources allocated to containers by alignment type.",
        ("scope", "boundary"),
    )


def aligned_compute_resources_failure_counter() -> LabeledCounter:
    """A fresh ``container_aligned_compute_resources_failure_count`` (labels scope, boundary)."""
    return LabeledCounter(
        ALIGNED_COMPUTE_RESOURCES_FAILURE,
        "Cumulative number of failures to allocate aligned compute resources to containers by "
        "alignment type.",
        ("scope", "boundary"),
    )


@dataclass
class TopologyManagerMetrics:
    """Every series the Topology Manager updates.

    The two aligned-resources counters are shared with the CPU manager in the kubelet; pass the
    same ``LabeledCounter`` objects to both to get one series set.
    """

    admission_requests_total: Counter = field(
        default_factory=lambda: Counter(
            ADMISSION_REQUESTS_TOTAL,
            "The number of admission requests where resources have to be aligned.",
        )
    )
    admission_errors_total: Counter = field(
        default_factory=lambda: Counter(
            ADMISSION_ERRORS_TOTAL,
            "The number of admission request failures where resources could not be aligned.",
        )
    )
    admission_duration_ms: Histogram = field(
        default_factory=lambda: Histogram(
            ADMISSION_DURATION_MS,
            "Duration in milliseconds to serve a pod admission request.",
            DURATION_BUCKETS_MS,
        )
    )
    aligned_compute_resources: LabeledCounter = field(
        default_factory=aligned_compute_resources_counter
    )
    aligned_compute_resources_failure: LabeledCounter = field(
        default_factory=aligned_compute_resources_failure_counter
    )

    def initialize(self) -> None:
        """Create the zero series upstream's ``initializeMetrics`` creates."""
        for scope in (SCOPE_CONTAINER, SCOPE_POD):
            self.aligned_compute_resources.init(scope, BOUNDARY_NUMA_NODE)
            self.aligned_compute_resources_failure.init(scope, BOUNDARY_NUMA_NODE)

    def snapshot(self) -> Mapping[str, object]:
        """Every series by metric name (counters as numbers, labelled ones by label tuple)."""
        return {
            ADMISSION_REQUESTS_TOTAL: self.admission_requests_total.value,
            ADMISSION_ERRORS_TOTAL: self.admission_errors_total.value,
            ADMISSION_DURATION_MS: {
                "count": self.admission_duration_ms.count,
                "sum": self.admission_duration_ms.sum,
            },
            ALIGNED_COMPUTE_RESOURCES: dict(self.aligned_compute_resources.values),
            ALIGNED_COMPUTE_RESOURCES_FAILURE: dict(self.aligned_compute_resources_failure.values),
        }
