"""The pure decisions of a Job sync (upstream's helpers of ``syncJob``): which pods count as
failed, which finished pods are new since the last count, the succeeded indexes, whether the
backoff limit or the active deadline is passed, what the pod failure policy says."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numaplane.controllers.job.indexes import UNKNOWN_INDEX, Intervals, parse_intervals, pod_index
from numaplane.controllers.job.podstate import (
    FAILED,
    SUCCEEDED,
    deleting,
    has_tracking_finalizer,
    parse_time,
    phase,
    status,
    uid,
)
from numaplane.controllers.job.policies import match_pod_failure_policy
from numaplane.controllers.job.runtime import Obj, completions_of, is_indexed, is_suspended


def is_pod_failed(pod: Mapping[str, Any], job: Mapping[str, Any]) -> bool:
    """``isPodFailed``: phase Failed; or, unless only failed pods are replaced, being deleted
    without having succeeded (an orphan the kubelet never finished)."""
    if phase(pod) == FAILED:
        return True
    spec = job.get("spec") or {}
    if spec.get("podReplacementPolicy") == "Failed" or spec.get("podFailurePolicy") is not None:
        return False
    return deleting(pod) and phase(pod) != SUCCEEDED


def _valid_uncounted(
    job: Mapping[str, Any], pods: list[Obj], skip: frozenset[str], expected_rm: frozenset[str]
) -> list[Obj]:
    # getValidPodsWithFilter's selection: still tracked (finalizer), not already uncounted,
    # not awaiting its finalizer removal, and for an Indexed Job a valid index.
    completions = completions_of(job) or 0
    out: list[Obj] = []
    for pod in pods:
        pod_uid = uid(pod)
        if not has_tracking_finalizer(pod) or pod_uid in skip or pod_uid in expected_rm:
            continue
        if is_indexed(job):
            ix = pod_index(pod)
            if ix == UNKNOWN_INDEX or ix >= completions:
                continue
        out.append(pod)
    return out


def new_finished_pods(
    job: Mapping[str, Any],
    pods: list[Obj],
    uncounted_succeeded: frozenset[str],
    uncounted_failed: frozenset[str],
    expected_rm: frozenset[str],
) -> tuple[list[Obj], list[Obj]]:
    """``getNewFinishedPods``: succeeded and failed pods not yet in the status."""
    succeeded = [
        p
        for p in _valid_uncounted(job, pods, uncounted_succeeded, expected_rm)
        if phase(p) == SUCCEEDED
    ]
    failed = [
        p
        for p in _valid_uncounted(job, pods, uncounted_failed, expected_rm)
        if is_pod_failed(p, job)
    ]
    return succeeded, failed


def counted_failures(job: Mapping[str, Any], failed: list[Obj]) -> int:
    """``nonIgnoredFailedPodsCount``: failed pods less those an Ignore rule matches."""
    policy = (job.get("spec") or {}).get("podFailurePolicy")
    if policy is None:
        return len(failed)
    return sum(1 for p in failed if match_pod_failure_policy(policy, p).counts)


def fail_job_message(job: Mapping[str, Any], pods: list[Obj]) -> str | None:
    """``getFailJobMessage``: the message of the first failed pod a FailJob rule matches."""
    policy = (job.get("spec") or {}).get("podFailurePolicy")
    if policy is None:
        return None
    for pod in pods:
        if is_pod_failed(pod, job):
            message = match_pod_failure_policy(policy, pod).fail_job_message
            if message is not None:
                return message
    return None


def past_backoff_limit_on_failure(job: Mapping[str, Any], pods: list[Obj]) -> bool:
    """``pastBackoffLimitOnFailure``: with ``restartPolicy: OnFailure`` the restarts of the
    running and pending pods' containers reach the backoff limit (any restart for limit 0)."""
    spec = job.get("spec") or {}
    template_spec = (spec.get("template") or {}).get("spec") or {}
    if template_spec.get("restartPolicy") != "OnFailure":
        return False
    restarts = 0
    for pod in pods:
        if phase(pod) in ("Running", "Pending"):
            pod_status = status(pod)
            for key in ("initContainerStatuses", "containerStatuses"):
                for cs in pod_status.get(key) or []:
                    restarts += int((cs or {}).get("restartCount") or 0)
    limit = int(spec.get("backoffLimit") or 0)
    return restarts > 0 if limit == 0 else restarts >= limit


def deadline_left(job: Mapping[str, Any], now: float) -> float | None:
    """Seconds until ``activeDeadlineSeconds`` passes (``<= 0``: passed; ``pastActiveDeadline``),
    ``None`` when there is no deadline, no start time, or the Job is suspended."""
    deadline = (job.get("spec") or {}).get("activeDeadlineSeconds")
    started = parse_time(status(job).get("startTime"))
    if deadline is None or started is None or is_suspended(job):
        return None
    return float(deadline) - (now - started)


def succeeded_indexes(job: Mapping[str, Any], pods: list[Obj]) -> tuple[Intervals, Intervals]:
    """``calculateSucceededIndexes``: the indexes ``status.completedIndexes`` holds, and those
    plus the indexes of succeeded pods not counted yet."""
    completions = completions_of(job) or 0
    previous = parse_intervals(str(status(job).get("completedIndexes") or ""), completions)
    new = {
        ix
        for p in pods
        if phase(p) == SUCCEEDED
        and has_tracking_finalizer(p)
        and (ix := pod_index(p)) != UNKNOWN_INDEX
        and ix < completions
    }
    return previous, previous.with_indexes(new)
