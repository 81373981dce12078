"""MultiKueue's batch/v1 Job adapter (upstream ``pkg/controller/jobs/job/job_multikueue_adapter.go``
and ``jobframework``'s MultiKueue helpers): which adapter a Workload has, whether its Job is
MultiKueue's to dispatch, the Job created on the admitting worker (SPEC §3.7), what of the
worker's Job status is mirrored back (SPEC §3.8) and the ownership check of remote objects.

Pure: jobs are the API's JSON dicts; nothing here mutates its input.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeGuard

from numaplane.kueue.api.conditions import format_time
from numaplane.kueue.jobs.batchjob import JOB_API_VERSION, JOB_KIND, is_suspended
from numaplane.kueue.jobs.batchjob import finished as job_finished
from numaplane.kueue.jobs.workloads import controller_of, is_valid_label_value
from numaplane.kueue.multikueue.constants import (
    CONTROLLER_NAME,
    ERR_NOT_OWNED,
    MSG_JOB_SUSPENDED_BY_ADAPTER,
    ORIGIN_LABEL,
    PREBUILT_WORKLOAD_LABEL,
    REASON_JOB_SUSPENDED_BY_ADAPTER,
    not_managed,
)

Obj = dict[str, Any]

#: batch/v1 ``JobSuspended`` condition type.
JOB_SUSPENDED: Final = "Suspended"
#: Template labels the worker's Job controller sets from its own Job's uid: a copy of the
#: manager's would not match the worker Job's selector, so they are dropped.
CONTROLLER_UID_LABELS: Final = ("controller-uid", "batch.kubernetes.io/controller-uid")


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def owner_of(workload: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Upstream's adapter lookup: the controller owner reference, else the first owner
    reference, else None (no owner at all)."""
    owner = controller_of(workload)
    if owner is not None:
        return owner
    refs = _meta(workload).get("ownerReferences") or []
    return refs[0] if refs else None


def is_batch_job(owner: Mapping[str, Any] | None) -> TypeGuard[Mapping[str, Any]]:
    """Whether ``owner`` is a batch/v1 Job: the only kind with a MultiKueue adapter here."""
    return (
        owner is not None
        and owner.get("apiVersion") == JOB_API_VERSION
        and owner.get("kind") == JOB_KIND
    )


def unmanaged_reason(job: Mapping[str, Any]) -> str | None:
    """Upstream ``IsJobManagedByKueue``: None when ``spec.managedBy`` is MultiKueue's, else
    the Rejected message (``The owner is not managed by Kueue: Expecting ...``)."""
    managed_by = str((job.get("spec") or {}).get("managedBy") or "")
    return None if managed_by == CONTROLLER_NAME else not_managed(managed_by)


def is_owned(obj: Mapping[str, Any] | None, origin: str) -> bool:
    """Whether a remote object carries ``kueue.x-k8s.io/multikueue-origin=<origin>``."""
    if obj is None:
        return False
    return (_meta(obj).get("labels") or {}).get(ORIGIN_LABEL) == origin


def ownership_error(obj: Mapping[str, Any], origin: str) -> str:
    """Upstream ``ValidateRemoteObjectOwnership``'s error for an object someone else made."""
    meta = _meta(obj)
    key = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    kind = obj.get("kind") or JOB_KIND
    return f'{ERR_NOT_OWNED}: expected "{ORIGIN_LABEL}"="{origin}" on {kind} "{key}"'


def remote_job(local_job: Mapping[str, Any], workload_name: str, origin: str) -> Obj:
    """The Job created on the admitting worker (upstream ``SyncJob`` when the remote Job is
    missing): the local Job's name, namespace, labels and annotations (no owner references,
    uid or status) and a copy of its spec without ``selector``, the controller-uid template
    labels and ``managedBy`` (the worker's Job controller owns it); labelled with the origin
    and the prebuilt Workload (an annotation when the name is no valid label value, as
    upstream ``SetPrebuiltWorkloadName``); suspended, so the worker's Kueue starts it once it
    has matched it to the admitted copy."""
    meta = _meta(local_job)
    labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
    annotations = {str(k): str(v) for k, v in (meta.get("annotations") or {}).items()}
    labels[ORIGIN_LABEL] = origin
    if is_valid_label_value(workload_name):
        labels[PREBUILT_WORKLOAD_LABEL] = workload_name
    else:
        annotations[PREBUILT_WORKLOAD_LABEL] = workload_name
    metadata: Obj = {"name": meta.get("name", ""), "namespace": meta.get("namespace", "")}
    metadata["labels"] = labels
    if annotations:
        metadata["annotations"] = annotations
    spec = copy.deepcopy(dict(local_job.get("spec") or {}))
    spec.pop("selector", None)
    spec.pop("managedBy", None)
    spec["suspend"] = True
    template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if isinstance(template_labels, dict):
        for key in CONTROLLER_UID_LABELS:
            template_labels.pop(key, None)
    return {"apiVersion": JOB_API_VERSION, "kind": JOB_KIND, "metadata": metadata, "spec": spec}


@dataclass(frozen=True, slots=True)
class StatusUpdate:
    """What mirroring the worker's Job gives the local Job: its new ``status`` (None: leave it
    as it is) and whether the sync was deferred (the caller looks again in 2 s)."""

    status: Obj | None
    deferred: bool = False


def _with_suspended_condition(status: Mapping[str, Any], now: float) -> Obj | None:
    """``status`` with ``JobSuspended=True`` (added, or set when not True), None when it is
    already True (as batch's ``ensureJobConditionStatus``)."""
    fresh = copy.deepcopy(dict(status))
    conditions = fresh.setdefault("conditions", [])
    stamp = format_time(now)
    condition = {
        "type": JOB_SUSPENDED,
        "status": "True",
        "lastProbeTime": stamp,
        "lastTransitionTime": stamp,
        "reason": REASON_JOB_SUSPENDED_BY_ADAPTER,
        "message": MSG_JOB_SUSPENDED_BY_ADAPTER,
    }
    for i, existing in enumerate(conditions):
        if existing.get("type") == JOB_SUSPENDED:
            if existing.get("status") == "True":
                return None
            conditions[i] = condition
            return fresh
    conditions.append(condition)
    return fresh


def determine_status_update(
    local_job: Mapping[str, Any], remote: Mapping[str, Any], now: float
) -> StatusUpdate:
    """Upstream ``determineStatusUpdate`` (SPEC §3.8): the worker's status is copied whole
    when the local Job runs (unsuspended), when both are suspended (an eviction on the worker
    reports ``active: 0`` this way) or when the worker's Job finished. A local Job still
    suspended while the worker's runs is not given the running status (it would carry a
    ``startTime`` while suspended): it only gets ``JobSuspended=True`` (reason
    ``MultiKueueAdapter``) and the sync is deferred."""
    remote_status = copy.deepcopy(dict(remote.get("status") or {}))
    if not is_suspended(local_job) or is_suspended(remote) or job_finished(remote) is not None:
        same = remote_status == (local_job.get("status") or {})
        return StatusUpdate(None if same else remote_status)
    return StatusUpdate(_with_suspended_condition(local_job.get("status") or {}, now), True)
