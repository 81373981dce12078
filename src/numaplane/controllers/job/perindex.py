"""``backoffLimitPerIndex`` of Indexed Jobs, as upstream's ``indexed_job_utils.go`` runs it: each
pod carries the failures of its index so far (``batch.kubernetes.io/job-index-failure-count``,
and ``...-ignored-failure-count`` for failures an Ignore rule matched); an index whose pod fails
with its count at the limit, or that a FailIndex rule matches, is failed for good
(``status.failedIndexes``); a failed pod is kept (its finalizer held) until its replacement
exists, so the count passes on; each index waits out its own backoff. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from numaplane.controllers.job.backoff import PodFailureBackoff
from numaplane.controllers.job.indexes import UNKNOWN_INDEX, Intervals, parse_intervals, pod_index
from numaplane.controllers.job.pods import (
    FAILURE_COUNT_ANNOTATION,
    IGNORED_FAILURE_COUNT_ANNOTATION,
)
from numaplane.controllers.job.podstate import finished_time, has_tracking_finalizer, meta, status
from numaplane.controllers.job.policies import FAIL_INDEX, match_pod_failure_policy
from numaplane.controllers.job.runtime import Obj, completions_of, is_indexed
from numaplane.controllers.job.sync_rules import is_pod_failed

_MAX_INT32: Final = 2**31 - 1


def has_backoff_limit_per_index(job: Mapping[str, Any]) -> bool:
    """``hasBackoffLimitPerIndex``."""
    return is_indexed(job) and (job.get("spec") or {}).get("backoffLimitPerIndex") is not None


def _annotation_int(pod: Mapping[str, Any], key: str) -> int:
    # parseInt32: unreadable, negative or too large values read as 0.
    value = (meta(pod).get("annotations") or {}).get(key)
    try:
        number = int(str(value))
    except ValueError:
        return 0
    return number if 0 <= number <= _MAX_INT32 else 0


def failure_count(pod: Mapping[str, Any]) -> int:
    """The index's counted failures before this pod."""
    return _annotation_int(pod, FAILURE_COUNT_ANNOTATION)


def absolute_failure_count(pod: Mapping[str, Any]) -> int:
    """Counted and ignored failures of the index before this pod."""
    return failure_count(pod) + _annotation_int(pod, IGNORED_FAILURE_COUNT_ANNOTATION)


def is_index_failed(job: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """``isIndexFailed``: the pod failed and a FailIndex rule matched it, or its failure counts
    and the index had already used up its limit."""
    if not is_pod_failed(pod, job):
        return False
    policy = (job.get("spec") or {}).get("podFailurePolicy")
    counts = True
    if policy is not None:
        found = match_pod_failure_policy(policy, pod)
        if found.action == FAIL_INDEX:
            return True
        counts = found.counts
    limit = int((job.get("spec") or {}).get("backoffLimitPerIndex") or 0)
    return counts and failure_count(pod) >= limit


def failed_indexes(job: Mapping[str, Any], pods: Iterable[Obj]) -> Intervals:
    """``calculateFailedIndexes``: ``status.failedIndexes`` plus the indexes of tracked pods
    that failed them now."""
    completions = completions_of(job) or 0
    previous = parse_intervals(str(status(job).get("failedIndexes") or ""), completions)
    new = [
        ix
        for p in pods
        if (ix := pod_index(p)) != UNKNOWN_INDEX
        and ix < completions
        and has_tracking_finalizer(p)
        and is_index_failed(job, p)
    ]
    return previous.with_indexes(new)


def delayed_deletions(
    job: Mapping[str, Any],
    pods: Iterable[Obj],
    active_pods: Iterable[Obj],
    succeeded: Intervals,
    failed: Intervals,
    expected_rm: frozenset[str],
) -> dict[int, Obj]:
    """``getPodsWithDelayedDeletionPerIndex``: per index still to run again, the latest failed
    pod (highest count, then latest finish), kept until its replacement carries the count."""
    completions = completions_of(job) or 0
    active = {pod_index(p) for p in active_pods}
    out: dict[int, Obj] = {}
    for pod in pods:
        if not has_tracking_finalizer(pod) or meta(pod).get("uid") in expected_rm:
            continue
        if not is_pod_failed(pod, job):
            continue
        ix = pod_index(pod)
        if ix == UNKNOWN_INDEX or ix >= completions:
            continue
        if succeeded.has(ix) or failed.has(ix) or ix in active:
            continue
        kept = out.get(ix)
        if kept is None or (
            absolute_failure_count(kept) <= absolute_failure_count(pod)
            and finished_time(pod) >= finished_time(kept)
        ):
            out[ix] = pod
    return out


def new_failure_counts(
    job: Mapping[str, Any], replaced: Mapping[str, Any] | None
) -> tuple[int, int]:
    """``getNewIndexFailureCounts``: the counted and ignored failures the replacement of
    ``replaced`` carries."""
    if replaced is None:
        return 0, 0
    counted = failure_count(replaced)
    ignored = _annotation_int(replaced, IGNORED_FAILURE_COUNT_ANNOTATION)
    policy = (job.get("spec") or {}).get("podFailurePolicy")
    if policy is not None and not match_pod_failure_policy(policy, replaced).counts:
        return counted, ignored + 1
    return counted + 1, ignored


def remaining_for_index(backoff: PodFailureBackoff, now: float, last_failed: Obj | None) -> float:
    """``getRemainingTimePerIndex``: the index's own backoff after its last failed pod."""
    if last_failed is None:
        return 0.0
    failures = absolute_failure_count(last_failed) + 1
    return backoff.remaining(failures, finished_time(last_failed), now)
