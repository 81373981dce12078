"""The batch/v1 Job as Kueue's job framework sees it (upstream
``pkg/controller/jobs/job/job_controller.go`` and the label helpers of
``jobframework/interface.go``): its queue, suspension, activity, finish, podSet, and the edits
that start it (unsuspend, inject the flavors, partial-admission parallelism) and stop it
(suspend, clear ``startTime``, restore the template Kueue changed).

Pure: jobs are the API's JSON dicts; every edit returns a new dict.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final

from numaplane.kueue.constants import (
    PREBUILT_WORKLOAD_LABEL,
    PRIORITY_CLASS_LABEL,
    QUEUE_NAME_ANNOTATION,
    QUEUE_NAME_LABEL,
)
from numaplane.kueue.jobs.podsets import (
    PodSetInfo,
    PodSetInfoError,
    merge_into_template,
    restore_template,
)

Obj = dict[str, Any]

JOB_API_VERSION: Final = "batch/v1"
JOB_KIND: Final = "Job"
JOB_GROUP: Final = "batch"
#: The podSet name of a Job's only podSet (upstream ``kueue.DefaultPodSetName``).
DEFAULT_POD_SET: Final = "main"
JOB_MIN_PARALLELISM_ANNOTATION: Final = "kueue.x-k8s.io/job-min-parallelism"
JOB_COMPLETIONS_EQUAL_PARALLELISM_ANNOTATION: Final = (
    "kueue.x-k8s.io/job-completions-equal-parallelism"
)
#: Set while a stop is half-done, so that a crash between its writes redoes all of them.
STOPPING_ANNOTATION: Final = "kueue.x-k8s.io/stopping"
MAX_EXEC_TIME_LABEL: Final = "kueue.x-k8s.io/max-exec-time-seconds"
#: Labels the Job controller manages on the template: never copied to the Workload.
MANAGED_LABELS: Final = (
    "job-name",
    "controller-uid",
    "batch.kubernetes.io/job-name",
    "batch.kubernetes.io/controller-uid",
)
_MAX_INT32: Final = 2**31 - 1


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def labels_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    """``metadata.labels`` ({} when absent)."""
    return _meta(obj).get("labels") or {}


def annotations_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    """``metadata.annotations`` ({} when absent)."""
    return _meta(obj).get("annotations") or {}


def job_key(job: Mapping[str, Any]) -> str:
    """``namespace/name``."""
    meta = _meta(job)
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def queue_name(obj: Mapping[str, Any]) -> str:
    """Upstream ``QueueNameForObject``: the queue-name label, else the deprecated annotation."""
    return str(labels_of(obj).get(QUEUE_NAME_LABEL) or "") or str(
        annotations_of(obj).get(QUEUE_NAME_ANNOTATION) or ""
    )


def workload_priority_class_name(obj: Mapping[str, Any]) -> str:
    """Upstream ``WorkloadPriorityClassName``: the ``kueue.x-k8s.io/priority-class`` label."""
    return str(labels_of(obj).get(PRIORITY_CLASS_LABEL) or "")


def prebuilt_workload_name(job: Mapping[str, Any]) -> str | None:
    """Upstream ``PrebuiltWorkloadFor``: the prebuilt-workload label's value, else the
    annotation of the same key (what MultiKueue writes when the name is too long for a label);
    None when neither is there (an empty label still counts as set, as upstream reads it)."""
    labels = labels_of(job)
    if PREBUILT_WORKLOAD_LABEL in labels:
        return str(labels[PREBUILT_WORKLOAD_LABEL])
    annotated = annotations_of(job).get(PREBUILT_WORKLOAD_LABEL)
    return None if annotated is None else str(annotated)


def maximum_execution_time_seconds(obj: Mapping[str, Any]) -> int | None:
    """Upstream ``MaximumExecutionTimeSecondsForObject``: the label as a positive int32."""
    text = labels_of(obj).get(MAX_EXEC_TIME_LABEL)
    if text is None:
        return None
    try:
        value = int(str(text), 10)
    except ValueError:
        return None
    if value <= 0 or value > _MAX_INT32:
        return None
    return value


def is_suspended(job: Mapping[str, Any]) -> bool:
    """Upstream ``Job.IsSuspended``: ``spec.suspend`` and no stop half-done."""
    return _spec(job).get("suspend") is True and annotations_of(job).get(STOPPING_ANNOTATION) != (
        "true"
    )


def is_active(job: Mapping[str, Any]) -> bool:
    """Upstream ``Job.IsActive``: ``status.active`` is not zero."""
    return int((job.get("status") or {}).get("active") or 0) != 0


def finished(job: Mapping[str, Any]) -> tuple[str, str] | None:
    """Upstream ``Job.Finished`` as the Workload's finish: ``("Succeeded", message)`` for a
    ``Complete=True`` condition, ``("Failed", message)`` for ``Failed=True`` (the first such
    condition counts), None while running."""
    for cond in (job.get("status") or {}).get("conditions") or []:
        kind = cond.get("type")
        if kind in ("Complete", "Failed") and cond.get("status") == "True":
            reason = "Failed" if kind == "Failed" else "Succeeded"
            return reason, str(cond.get("message") or "")
    return None


def pods_count(job: Mapping[str, Any]) -> int:
    """Upstream ``podsCount``: parallelism (default 1), capped by completions."""
    spec = _spec(job)
    parallelism = spec.get("parallelism")
    count = 1 if parallelism is None else int(parallelism)
    completions = spec.get("completions")
    if completions is not None and int(completions) < count:
        count = int(completions)
    return count


def min_pods_count(job: Mapping[str, Any]) -> int | None:
    """Upstream ``minPodsCount``: the ``job-min-parallelism`` annotation as an integer (None
    when absent or not a number; the webhook refuses bad values)."""
    text = annotations_of(job).get(JOB_MIN_PARALLELISM_ANNOTATION)
    if text is None:
        return None
    try:
        return int(str(text), 10)
    except ValueError:
        return None


def sync_completions_with_parallelism(job: Mapping[str, Any]) -> bool:
    """Upstream ``syncCompletionWithParallelism``: the annotation parsed as Go's ParseBool."""
    text = str(annotations_of(job).get(JOB_COMPLETIONS_EQUAL_PARALLELISM_ANNOTATION, ""))
    return text in ("1", "t", "T", "true", "TRUE", "True")


def pods_ready(job: Mapping[str, Any]) -> bool:
    """Upstream ``Job.PodsReady``: succeeded + ready pods reach the podSet's count."""
    status = job.get("status") or {}
    done = int(status.get("succeeded") or 0) + int(status.get("ready") or 0)
    return done >= pods_count(job)


def pod_sets(job: Mapping[str, Any]) -> list[Obj]:
    """Upstream ``Job.PodSets``: one podSet ``main`` with the template (the Job controller's
    labels removed), count = parallelism capped by completions, minCount from
    ``job-min-parallelism``."""
    template = copy.deepcopy(dict(_spec(job).get("template") or {}))
    labels = (template.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        for key in MANAGED_LABELS:
            labels.pop(key, None)
    pod_set: Obj = {"name": DEFAULT_POD_SET, "template": template, "count": pods_count(job)}
    minimum = min_pods_count(job)
    if minimum is not None:
        pod_set["minCount"] = minimum
    return [pod_set]


def run_with_pod_sets_info(job: Mapping[str, Any], infos: Sequence[PodSetInfo]) -> Obj:
    """Upstream ``Job.RunWithPodSetsInfo``: unsuspended, parallelism (and completions when
    synced) from the admitted count under partial admission, the info merged into the
    template. Raises :class:`~numaplane.kueue.jobs.podsets.PodSetInfoError` (permanent)."""
    new = copy.deepcopy(dict(job))
    spec = new.setdefault("spec", {})
    spec["suspend"] = False
    if len(infos) != 1:
        # Upstream's BadPodSetsInfoLenError prints its two numbers swapped; kept verbatim.
        raise PodSetInfoError(f"invalid podset infos: expecting {len(infos)} podset, got 1")
    info = infos[0]
    if min_pods_count(job) is not None:
        spec["parallelism"] = info.count
        if sync_completions_with_parallelism(job):
            spec["completions"] = info.count
    merge_into_template(spec.setdefault("template", {}), info)
    return new


def restore_pod_sets_info(job: Obj, infos: Sequence[PodSetInfo]) -> bool:
    """Upstream ``Job.RestorePodSetsInfo`` (in place): partial-admission parallelism back to
    the podSet's count, the template's Kueue-written parts back to the podSet's (the Job
    controller's labels kept); whether anything changed."""
    if not infos:
        return False
    spec = job.setdefault("spec", {})
    info = copy.deepcopy(infos[0])
    changed = False
    if min_pods_count(job) is not None and int(spec.get("parallelism") or 0) != info.count:
        changed = True
        spec["parallelism"] = info.count
        if sync_completions_with_parallelism(job):
            spec["completions"] = info.count
    template = spec.setdefault("template", {})
    current_labels = (template.get("metadata") or {}).get("labels") or {}
    for key in MANAGED_LABELS:
        if key in current_labels:
            info.labels[key] = current_labels[key]
    return restore_template(template, info) or changed


def reclaimable_pods(job: Mapping[str, Any]) -> list[Obj]:
    """Upstream ``Job.ReclaimablePods``: once some pods succeeded and fewer completions remain
    than the parallelism, the difference is quota the Workload no longer needs
    (``[{name: main, count}]``; empty otherwise)."""
    spec = _spec(job)
    raw_parallelism = spec.get("parallelism")
    parallelism = 1 if raw_parallelism is None else int(raw_parallelism)
    succeeded = int((job.get("status") or {}).get("succeeded") or 0)
    if parallelism == 1 or succeeded == 0:
        return []
    completions = spec.get("completions")
    remaining = (int(completions) if completions is not None else parallelism) - succeeded
    if remaining >= parallelism:
        return []
    return [{"name": DEFAULT_POD_SET, "count": parallelism - remaining}]
