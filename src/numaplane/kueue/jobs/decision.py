"""The decision of one job-reconciler pass (:class:`JobDecision`: ordered writes, events on the
Job) and the state a pass builds it in; upstream's event reasons and messages."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from numaplane.kueue.api.conditions import is_condition_true
from numaplane.kueue.api.model import ResourceFlavor
from numaplane.kueue.constants import (
    FINISHED,
    QUOTA_RESERVED,
    RESOURCE_IN_USE_FINALIZER,
)
from numaplane.kueue.jobs.patch import merge_patch
from numaplane.kueue.jobs.workloads import (
    PriorityClassInfo,
)

Obj = dict[str, Any]

JOB: Final = "Job"
WORKLOAD: Final = "Workload"
#: Write operations: create, update (the whole object), status (the status subresource),
#: delete.
CREATE: Final = "create"
UPDATE: Final = "update"
STATUS: Final = "status"
DELETE: Final = "delete"

# Upstream ``jobframework/events.go`` reasons.
REASON_CREATED_WORKLOAD: Final = "CreatedWorkload"
REASON_STARTED: Final = "Started"
REASON_SUSPENDED: Final = "Suspended"
REASON_STOPPED: Final = "Stopped"
REASON_FINISHED_WORKLOAD: Final = "FinishedWorkload"
REASON_DELETED_WORKLOAD: Final = "DeletedWorkload"
REASON_UPDATED_WORKLOAD: Final = "UpdatedWorkload"
REASON_UPDATED_ADMISSION_CHECK: Final = "UpdatedAdmissionCheck"

FAILED_TO_START: Final = "FailedToStart"
MSG_OUT_OF_SYNC: Final = "The prebuilt workload is out of sync with its user job"
MSG_MISSING_WORKLOAD: Final = "Missing Workload; unable to restore pod templates"
MSG_NO_MATCHING: Final = (
    "No matching Workload; restoring pod templates according to existent Workload"
)
MSG_WORKLOAD_DELETED: Final = "Workload is deleted"
MSG_NOT_ADMITTED: Final = "Not admitted by cluster queue"


@dataclass(frozen=True, slots=True)
class JobContext:
    """What the reconciler reads besides the Job and its Workloads.

    ``prebuilt_workload``: the Workload named by the Job's prebuilt-workload label as stored
    (None when absent; :func:`~numaplane.kueue.jobs.batchjob.prebuilt_workload_name` says which
    to look up). ``namespace_labels``: the Job's namespace's labels (read only for Jobs without
    a queue name when ``manage_jobs_without_queue_name`` is on). ``wait_for_pods_ready``: the
    configuration's ``waitForPodsReady.enable``.
    """

    now: float
    flavors: Mapping[str, ResourceFlavor] = field(default_factory=dict)
    workload_priority_classes: Mapping[str, int] = field(default_factory=dict)
    priority_classes: Mapping[str, PriorityClassInfo] = field(default_factory=dict)
    prebuilt_workload: Mapping[str, Any] | None = None
    manage_jobs_without_queue_name: bool = False
    managed_jobs_namespace_selector: Mapping[str, Any] | None = None
    namespace_labels: Mapping[str, str] | None = None
    wait_for_pods_ready: bool = False
    label_keys_to_copy: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class JobWrite:
    """One API write: ``kind`` Job or Workload, ``op`` create/update/status/delete, ``obj`` the
    object as it must be after the write (its ``resourceVersion`` is the one observed, stale
    after an earlier write of the same object in the same decision). ``patch``: for Job writes,
    the same change as a JSON merge patch (RFC 7386), which needs no resourceVersion."""

    kind: str
    op: str
    obj: Mapping[str, Any]
    patch: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class JobEvent:
    """An event to record on the Job."""

    type: str
    reason: str
    message: str


@dataclass
class JobDecision:
    """The outcome of one pass: ``writes`` in order, ``events`` on the Job, ``error`` (non-empty:
    upstream returns an error here, the runtime retries with its backoff), ``requeue_after``
    (seconds), ``ignored`` (the Job is not Kueue's)."""

    writes: list[JobWrite] = field(default_factory=list)
    events: list[JobEvent] = field(default_factory=list)
    error: str = ""
    requeue_after: float | None = None
    ignored: bool = False


class RunState:
    """The state of one pass: the Job as the writes so far left it, the decision being built."""

    def __init__(self, job: Mapping[str, Any], ctx: JobContext) -> None:
        self.job: Obj = copy.deepcopy(dict(job))
        self.ctx = ctx
        self.decision = JobDecision()

    def event(self, reason: str, message: str) -> None:
        self.decision.events.append(JobEvent("Normal", reason, message))

    def write_job(self, new: Obj, op: str = UPDATE) -> None:
        patch = merge_patch(self.job, new)
        if patch:
            self.decision.writes.append(JobWrite(JOB, op, new, patch))
        self.job = new

    def write_workload(self, op: str, obj: Mapping[str, Any]) -> None:
        self.decision.writes.append(JobWrite(WORKLOAD, op, obj))

    def workload_status(self, wl: Mapping[str, Any], status: Obj) -> Obj:
        new = {**wl, "status": status}
        if status != (wl.get("status") or {}):
            self.write_workload(STATUS, new)
        return new


def meta_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def key_of(obj: Mapping[str, Any]) -> str:
    meta = meta_of(obj)
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def is_reserved(wl: Mapping[str, Any]) -> bool:
    return is_condition_true((wl.get("status") or {}).get("conditions"), QUOTA_RESERVED)


def workload_finished(wl: Mapping[str, Any]) -> bool:
    return is_condition_true((wl.get("status") or {}).get("conditions"), FINISHED)


def without_finalizer(wl: Mapping[str, Any]) -> Obj | None:
    """The Workload without Kueue's finalizer, or None when it has none to remove."""
    finalizers = list(meta_of(wl).get("finalizers") or [])
    if RESOURCE_IN_USE_FINALIZER not in finalizers:
        return None
    new = copy.deepcopy(dict(wl))
    new["metadata"]["finalizers"] = [f for f in finalizers if f != RESOURCE_IN_USE_FINALIZER]
    return new


def remove_finalizer(run: RunState, wl: Mapping[str, Any]) -> None:
    new = without_finalizer(wl)
    if new is not None:
        run.write_workload(UPDATE, new)
