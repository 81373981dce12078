"""The pods a Job creates, as upstream's ``GetPodFromTemplate`` and the Job controller build them:
the template's labels, annotations and spec, ``generateName`` ``<job>-`` (``<job>-<index>-`` for
an Indexed Job), the controller reference, the tracking finalizer; an Indexed Job's pod also gets
its completion index as annotation and label, the hostname ``<job>-<index>`` and the
``JOB_COMPLETION_INDEX`` environment variable read from the pod's own index label (the downward
API, as upstream injects it since the PodIndexLabel feature).

Pure: a Job dict in, a Pod dict out.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from numaplane.controllers.job.indexes import COMPLETION_INDEX_ANNOTATION, UNKNOWN_INDEX
from numaplane.controllers.job.podstate import TRACKING_FINALIZER, meta

Job = dict[str, Any]

COMPLETION_INDEX_ENV: Final = "JOB_COMPLETION_INDEX"
#: ``names.MaxGeneratedNameLength``: 63 less the 5 random characters the server appends.
MAX_GENERATED_NAME_LENGTH: Final = 58
INDEX_FIELD_PATH: Final = f"metadata.labels['{COMPLETION_INDEX_ANNOTATION}']"
FAILURE_COUNT_ANNOTATION: Final = "batch.kubernetes.io/job-index-failure-count"
IGNORED_FAILURE_COUNT_ANNOTATION: Final = "batch.kubernetes.io/job-index-ignored-failure-count"


def controller_reference(job: Mapping[str, Any]) -> dict[str, Any]:
    """``metav1.NewControllerRef(job, batch/v1 Job)``."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": meta(job).get("name"),
        "uid": meta(job).get("uid"),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def generate_name(job_name: str, index: int = UNKNOWN_INDEX) -> str:
    """``<job>-`` (``getPodsPrefix``), or ``<job>-<index>-`` cut to fit for an Indexed pod
    (``podGenerateNameWithIndex``)."""
    if index == UNKNOWN_INDEX:
        return f"{job_name}-"
    suffix = f"-{index}-"
    prefix = job_name + suffix
    if len(prefix) > MAX_GENERATED_NAME_LENGTH:
        prefix = prefix[: MAX_GENERATED_NAME_LENGTH - len(suffix)] + suffix
    return prefix


def _add_index_env(container: dict[str, Any]) -> None:
    env = container.get("env")
    if not isinstance(env, list):
        env = container["env"] = []
    if any(isinstance(v, dict) and v.get("name") == COMPLETION_INDEX_ENV for v in env):
        return
    env.append(
        {"name": COMPLETION_INDEX_ENV, "valueFrom": {"fieldRef": {"fieldPath": INDEX_FIELD_PATH}}}
    )


def pod_for_job(
    job: Mapping[str, Any],
    index: int = UNKNOWN_INDEX,
    *,
    failure_counts: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """The Pod the controller creates for ``job`` (``index``: the completion index of an Indexed
    Job's pod; ``failure_counts``: with ``backoffLimitPerIndex``, the counted and ignored
    failures of the index so far)."""
    spec = job.get("spec") or {}
    template = spec.get("template") or {}
    template_meta = template.get("metadata") or {}
    name = str(meta(job).get("name") or "")
    labels = dict(template_meta.get("labels") or {})
    annotations = dict(template_meta.get("annotations") or {})
    finalizers = list(template_meta.get("finalizers") or [])
    if TRACKING_FINALIZER not in finalizers:
        finalizers.append(TRACKING_FINALIZER)
    pod_spec = copy.deepcopy(template.get("spec") or {})
    if index != UNKNOWN_INDEX:
        annotations[COMPLETION_INDEX_ANNOTATION] = str(index)
        labels[COMPLETION_INDEX_ANNOTATION] = str(index)
        pod_spec["hostname"] = f"{name}-{index}"
        if failure_counts is not None:
            annotations[FAILURE_COUNT_ANNOTATION] = str(failure_counts[0])
            if failure_counts[1] > 0:
                annotations[IGNORED_FAILURE_COUNT_ANNOTATION] = str(failure_counts[1])
        for key in ("initContainers", "containers"):
            for container in pod_spec.get(key) or []:
                if isinstance(container, dict):
                    _add_index_env(container)
    pod_meta: dict[str, Any] = {
        "generateName": generate_name(name, index),
        "namespace": meta(job).get("namespace"),
        "labels": labels,
        "ownerReferences": [controller_reference(job)],
        "finalizers": finalizers,
    }
    if annotations:
        pod_meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": pod_spec}


def remove_finalizer_patch() -> dict[str, Any]:
    """The strategic merge patch that drops the tracking finalizer and nothing else
    (``removeTrackingFinalizerPatch``)."""
    return {"metadata": {"$deleteFromPrimitiveList/finalizers": [TRACKING_FINALIZER]}}


def adopt_patch(job: Mapping[str, Any], pod: Mapping[str, Any]) -> dict[str, Any]:
    """The strategic merge patch with which a Job adopts an orphan pod: its controller reference
    and the tracking finalizer, guarded by the pod's uid (``AdoptPod``)."""
    return {
        "metadata": {
            "ownerReferences": [controller_reference(job)],
            "uid": meta(pod).get("uid"),
            "finalizers": [TRACKING_FINALIZER],
        }
    }
