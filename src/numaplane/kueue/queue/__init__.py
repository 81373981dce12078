"""Pending workloads: one ordered queue per ClusterQueue, fed by LocalQueues.

How the engine drives :class:`QueueManager` (upstream's scheduler and workload controller):

* every observed Workload goes through ``upsert_workload`` (a reserved, finished or inactive one
  is removed), a deleted one through ``delete_workload``; ClusterQueues, Cohorts and
  LocalQueues through their ``upsert_*``/``delete_*`` (``active`` is the cache's verdict);
* a scheduling cycle takes ``heads()``; each head it does not reserve comes back through
  ``requeue(wl, immediate=..., reason=...)`` with upstream's RequeueReason;
* whenever quota may have been freed (a reserved workload finished, was deleted or went back to
  pending) call ``queue_inadmissible([its ClusterQueue])``: the whole cohort tree is retried;
* ``next_backoff_at()`` says when a parked workload's ``requeueAt`` passes (reconcile it then).
"""

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
