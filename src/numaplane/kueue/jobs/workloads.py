"""A Job's Workload (upstream ``jobframework``: ``workload_names.go``, ``NewWorkload``,
``ConstructWorkload``, ``ExtractPriority``, ``UpdateWorkloadPriority``): its name, the object
built from the Job, its priority and its owner.

Pure: objects are the API's JSON dicts.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from numaplane.kueue.constants import (
    API_VERSION,
    JOB_UID_LABEL,
    RESOURCE_IN_USE_FINALIZER,
)
from numaplane.kueue.errors import KueueError
from numaplane.kueue.jobs.batchjob import (
    JOB_API_VERSION,
    JOB_GROUP,
    JOB_KIND,
    annotations_of,
    labels_of,
    maximum_execution_time_seconds,
    pod_sets,
    queue_name,
    workload_priority_class_name,
)

Obj = dict[str, Any]

_HASH_LENGTH: Final = 5
#: Upstream's name limit without ``ShortWorkloadNames`` (alpha, off): an object name.
_MAX_NAME: Final = 253
_PROVREQ_PREFIX: Final = "provreq.kueue.x-k8s.io/"
WORKLOAD_PRIORITY_CLASS_GROUP: Final = "kueue.x-k8s.io"
WORKLOAD_PRIORITY_CLASS_KIND: Final = "WorkloadPriorityClass"
POD_PRIORITY_CLASS_GROUP: Final = "scheduling.k8s.io"
POD_PRIORITY_CLASS_KIND: Final = "PriorityClass"
_LABEL_VALUE: Final = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def workload_name(job_name: str, job_uid: str, kind: str = JOB_KIND, group: str = JOB_GROUP) -> str:
    """Upstream ``GetWorkloadNameForOwnerWithGVK``: ``<kind>-<name>`` (lower-case kind, cut to
    fit) then ``-`` and the first 5 hex digits of SHA-1 over kind, group, name and uid."""
    digest = hashlib.sha1(f"{kind}\n{group}\n{job_name}\n{job_uid}".encode()).hexdigest()
    prefix = f"{kind.lower()}-{job_name}"[: _MAX_NAME - 1 - _HASH_LENGTH]
    return f"{prefix}-{digest[:_HASH_LENGTH]}"


def is_valid_label_value(value: str) -> bool:
    """``validation.IsValidLabelValue``: at most 63 characters of the label alphabet."""
    return len(value) <= 63 and _LABEL_VALUE.match(value) is not None


# --- priority -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PriorityClassInfo:
    """A ``scheduling.k8s.io/v1`` PriorityClass as the priority lookup reads it."""

    name: str
    value: int
    global_default: bool = False


class PriorityNotFoundError(KueueError):
    """The priority class a Job names does not exist: upstream's Get error, retried."""


def extract_priority(
    job: Mapping[str, Any],
    workload_priority_classes: Mapping[str, int],
    priority_classes: Mapping[str, PriorityClassInfo],
) -> tuple[Obj | None, int]:
    """Upstream ``ExtractPriority``: the ``kueue.x-k8s.io/priority-class`` label's
    WorkloadPriorityClass, else the template's ``priorityClassName``, else the global default
    PriorityClass (the lowest value if several), else no class and priority 0. Returns
    ``(spec.priorityClassRef or None, spec.priority)``; a named class that does not exist
    raises :class:`PriorityNotFoundError` with upstream's not-found message."""
    wpc = workload_priority_class_name(job)
    if wpc:
        if wpc not in workload_priority_classes:
            raise PriorityNotFoundError(f'workloadpriorityclasses.kueue.x-k8s.io "{wpc}" not found')
        ref = {"group": WORKLOAD_PRIORITY_CLASS_GROUP, "kind": WORKLOAD_PRIORITY_CLASS_KIND}
        return {**ref, "name": wpc}, workload_priority_classes[wpc]
    name = ""
    for pod_set in pod_sets(job):
        name = str(
            ((pod_set.get("template") or {}).get("spec") or {}).get("priorityClassName") or ""
        )
        if name:
            break
    if name:
        found = priority_classes.get(name)
        if found is None:
            raise PriorityNotFoundError(f'priorityclasses.scheduling.k8s.io "{name}" not found')
        return _pod_ref(found.name), found.value
    defaults = [pc for pc in priority_classes.values() if pc.global_default]
    if not defaults:
        return None, 0
    chosen = min(defaults, key=lambda pc: pc.value)
    return _pod_ref(chosen.name), chosen.value


def _pod_ref(name: str) -> Obj:
    return {"group": POD_PRIORITY_CLASS_GROUP, "kind": POD_PRIORITY_CLASS_KIND, "name": name}


def priority_class_name(wl: Mapping[str, Any]) -> str:
    """Upstream ``workload.PriorityClassName``: the name in ``spec.priorityClassRef``."""
    ref = (wl.get("spec") or {}).get("priorityClassRef") or {}
    return str(ref.get("name") or "")


def _is_workload_priority_class(wl: Mapping[str, Any]) -> bool:
    ref = (wl.get("spec") or {}).get("priorityClassRef") or {}
    return (
        ref.get("group") == WORKLOAD_PRIORITY_CLASS_GROUP
        and ref.get("kind") == WORKLOAD_PRIORITY_CLASS_KIND
    )


def priority_needs_update(job: Mapping[str, Any], wl: Mapping[str, Any]) -> bool:
    """Upstream ``UpdateWorkloadPriority``'s test: the workload has no priority class or a
    WorkloadPriorityClass, and the Job's ``priority-class`` label names another one (set,
    changed or removed)."""
    has_no_priority = not (wl.get("spec") or {}).get("priorityClassRef")
    if not (has_no_priority or _is_workload_priority_class(wl)):
        return False
    return workload_priority_class_name(job) != priority_class_name(wl)


# --- construction -------------------------------------------------------------------------------


def new_workload(
    job: Mapping[str, Any],
    priority: int,
    priority_class_ref: Mapping[str, Any] | None,
    *,
    label_keys_to_copy: Sequence[str] = (),
) -> Obj:
    """Upstream ``ConstructWorkload`` + ``PrepareWorkloadPriority`` for a batch/v1 Job: named
    by :func:`workload_name`, the copied labels plus ``kueue.x-k8s.io/job-uid`` (when the uid is
    a valid label value), the ProvisioningRequest annotations, the ``resource-in-use``
    finalizer, the Job as controller owner; spec: queue name, podSets, maximum execution time,
    priority class reference and priority."""
    meta = _meta(job)
    name, uid = str(meta.get("name", "")), str(meta.get("uid", ""))
    job_labels = labels_of(job)
    labels = {k: str(job_labels[k]) for k in label_keys_to_copy if k in job_labels}
    if is_valid_label_value(uid):
        labels[JOB_UID_LABEL] = uid
    metadata: Obj = {
        "name": workload_name(name, uid),
        "namespace": meta.get("namespace", ""),
        "labels": labels,
        "finalizers": [RESOURCE_IN_USE_FINALIZER],
        "ownerReferences": [owner_reference(job)],
    }
    annotations = {
        k: str(v) for k, v in annotations_of(job).items() if str(k).startswith(_PROVREQ_PREFIX)
    }
    if annotations:
        metadata["annotations"] = annotations
    spec: Obj = {"queueName": queue_name(job), "podSets": pod_sets(job)}
    max_exec = maximum_execution_time_seconds(job)
    if max_exec is not None:
        spec["maximumExecutionTimeSeconds"] = max_exec
    if priority_class_ref is not None:
        spec["priorityClassRef"] = dict(priority_class_ref)
    spec["priority"] = priority
    return {"apiVersion": API_VERSION, "kind": "Workload", "metadata": metadata, "spec": spec}


def owner_reference(job: Mapping[str, Any]) -> Obj:
    """The controller reference ``SetControllerReference`` puts on the Job's Workload."""
    meta = _meta(job)
    return {
        "apiVersion": JOB_API_VERSION,
        "kind": JOB_KIND,
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def controller_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """``metav1.GetControllerOf``: the owner reference with ``controller: true``."""
    for ref in _meta(obj).get("ownerReferences") or []:
        if ref.get("controller") is True:
            return dict(ref)
    return None


def is_controlled_by(obj: Mapping[str, Any], job: Mapping[str, Any]) -> bool:
    """``metav1.IsControlledBy``: the controller reference carries the Job's uid."""
    owner = controller_of(obj)
    return owner is not None and owner.get("uid") == _meta(job).get("uid")


def owner_job_key(wl: Mapping[str, Any]) -> str | None:
    """``namespace/name`` of the batch/v1 Job controlling ``wl`` (which Job to reconcile when
    a Workload changes: upstream's ``Owns(&Workload{})``), None when no Job controls it."""
    owner = controller_of(wl)
    if owner is None or owner.get("kind") != JOB_KIND or owner.get("apiVersion") != JOB_API_VERSION:
        return None
    return f"{_meta(wl).get('namespace', '')}/{owner.get('name', '')}"


def owned_workloads(
    namespace: str, job_name: str, workloads: Sequence[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """The Workloads of ``workloads`` in ``namespace`` with an owner reference to the batch/v1
    Job ``job_name`` (upstream's owner index, by kind and name: a Job deleted and created again
    under the same name sees its predecessor's Workloads, which no longer match and go). What
    :func:`~numaplane.kueue.jobs.reconcile_job` takes, for a deleted Job too."""
    found = []
    for wl in workloads:
        if _meta(wl).get("namespace", "") != namespace:
            continue
        for ref in _meta(wl).get("ownerReferences") or []:
            if (
                ref.get("apiVersion") == JOB_API_VERSION
                and ref.get("kind") == JOB_KIND
                and ref.get("name") == job_name
            ):
                found.append(wl)
                break
    return found
