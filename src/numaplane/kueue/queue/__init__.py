"""Pending workloads: one ordered queue per ClusterQueue, fed by LocalQueues."""

from numaplane.kueue.queue.cluster_queue import (
    REQUEUE_FAILED_AFTER_NOMINATION,
    REQUEUE_GENERIC,
    REQUEUE_NAMESPACE_MISMATCH,
    REQUEUE_NO_FIT,
    REQUEUE_PENDING_PREEMPTION,
    REQUEUE_PREEMPTION_FAILED,
    REQUEUE_PREEMPTION_NO_CANDIDATES,
    PendingWorkloads,
    backoff_expired,
)
from numaplane.kueue.queue.manager import QueueManager, is_pending, local_queue_key

__all__ = [
    "REQUEUE_FAILED_AFTER_NOMINATION",
    "REQUEUE_GENERIC",
    "REQUEUE_NAMESPACE_MISMATCH",
    "REQUEUE_NO_FIT",
    "REQUEUE_PENDING_PREEMPTION",
    "REQUEUE_PREEMPTION_FAILED",
    "REQUEUE_PREEMPTION_NO_CANDIDATES",
    "PendingWorkloads",
    "QueueManager",
    "backoff_expired",
    "is_pending",
    "local_queue_key",
]
