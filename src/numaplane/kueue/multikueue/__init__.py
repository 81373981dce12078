"""MultiKueue's pure core (SPEC §3): the workload reconciler (:mod:`.reconcile`), the
dispatchers (:mod:`.dispatch`), the batch/v1 Job adapter (:mod:`.batchjob`) and the strings
users see (:mod:`.constants`). The I/O lives in ``numaplane.kueue.runtime.multikueue``."""

from numaplane.kueue.multikueue.actions import (
    Action,
    CountMetric,
    CreateRemoteJob,
    CreateRemoteWorkload,
    PatchRemoteWorkloadStatus,
    Reconciled,
    RecordEvent,
    RemoveRemoteObjects,
    UpdateLocalJobStatus,
    UpdateLocalWorkloadStatus,
    UpdateRemoteWorkload,
)
from numaplane.kueue.multikueue.dispatch import DispatchState
from numaplane.kueue.multikueue.reconcile import reconcile
from numaplane.kueue.multikueue.view import GroupView, ReconcileOptions, RemoteView, workload_key

__all__ = [
    "Action",
    "CountMetric",
    "CreateRemoteJob",
    "CreateRemoteWorkload",
    "DispatchState",
    "GroupView",
    "PatchRemoteWorkloadStatus",
    "ReconcileOptions",
    "Reconciled",
    "RecordEvent",
    "RemoteView",
    "RemoveRemoteObjects",
    "UpdateLocalJobStatus",
    "UpdateLocalWorkloadStatus",
    "UpdateRemoteWorkload",
    "reconcile",
    "workload_key",
]
