"""The quota tree (ClusterQueues and Cohorts), the live cache of admitted usage and the
per-cycle snapshot the scheduler works on."""

from numaplane.kueue.cache.cache import KueueCache
from numaplane.kueue.cache.fair_sharing import DRS, compare_drs
from numaplane.kueue.cache.snapshot import (
    REASON_COHORT_HAS_CYCLE,
    ClusterQueueSnapshot,
    CohortSnapshot,
    Snapshot,
)
from numaplane.kueue.cache.status import (
    ClusterQueueUsage,
    FlavorUsage,
    LocalQueueUsage,
    ResourceUsage,
)

__all__ = [
    "DRS",
    "REASON_COHORT_HAS_CYCLE",
    "ClusterQueueSnapshot",
    "ClusterQueueUsage",
    "CohortSnapshot",
    "FlavorUsage",
    "KueueCache",
    "LocalQueueUsage",
    "ResourceUsage",
    "Snapshot",
    "compare_drs",
]
