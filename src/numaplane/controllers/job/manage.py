"""Pods in and out (upstream's ``manageJob``, ``deleteJobPods``, ``deleteActivePods`` and
``activePodsForRemoval``): as many active pods as parallelism and the remaining completions
allow, the lowest pending indexes for an Indexed Job, none while suspended, creations in
slow-start batches and held back by the pod-failure backoff."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from numaplane.controllers.job.indexes import (
    UNKNOWN_INDEX,
    Intervals,
    first_pending_indexes,
    pod_index,
)
from numaplane.controllers.job.perindex import (
    has_backoff_limit_per_index,
    new_failure_counts,
    remaining_for_index,
)
from numaplane.controllers.job.pods import pod_for_job, remove_finalizer_patch
from numaplane.controllers.job.podstate import (
    has_tracking_finalizer,
    is_ready,
    is_terminating,
    meta,
    removal_order_key,
)
from numaplane.controllers.job.runtime import (
    SLOW_START_INITIAL_BATCH,
    JobRuntime,
    Obj,
    SyncContext,
    completions_of,
    is_indexed,
    is_suspended,
)
from numaplane.kube import ApiError

NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"


def only_replace_failed(job: Mapping[str, Any]) -> bool:
    """``onlyReplaceFailedPods``: ``podReplacementPolicy: Failed``, or a pod failure policy."""
    spec = job.get("spec") or {}
    return spec.get("podReplacementPolicy") == "Failed" or spec.get("podFailurePolicy") is not None


def _duplicates_for_removal(pods: list[Obj], completions: int) -> tuple[list[Obj], list[Obj]]:
    # appendDuplicatedIndexPodsForRemoval, in index order: pods without an index or out of
    # range go; of pods sharing an index all but the one most worth keeping go.
    rm: list[Obj] = []
    left: list[Obj] = []
    groups: dict[int, list[Obj]] = {}
    for pod in pods:
        groups.setdefault(pod_index(pod), []).append(pod)
    for ix in sorted(groups):
        group = groups[ix]
        if ix == UNKNOWN_INDEX or ix >= completions:
            rm.extend(group)
            continue
        group = sorted(group, key=removal_order_key)
        rm.extend(group[:-1])
        left.append(group[-1])
    return rm, left


def active_pods_for_removal(job: Mapping[str, Any], pods: list[Obj], at_least: int) -> list[Obj]:
    """``activePodsForRemoval``: an Indexed Job's duplicate and invalid-index pods, then as
    many more as ``at_least`` asks, earliest stage first (unscheduled, pending, not ready)."""
    if is_indexed(job):
        rm, left = _duplicates_for_removal(pods, completions_of(job) or 0)
    else:
        rm, left = [], list(pods)
    if len(rm) < at_least:
        left.sort(key=removal_order_key)
        rm.extend(left[: at_least - len(rm)])
    return rm


def _name(obj: Mapping[str, Any]) -> str:
    return str(meta(obj).get("name") or "")


async def _delete_pod(rt: JobRuntime, job: Obj, pod: Obj) -> None:
    # RealPodControl.DeletePod: its events; NotFound is passed on without one.
    namespace = meta(job).get("namespace")
    try:
        await rt.client.delete("v1", "pods", _name(pod), namespace)
    except ApiError as err:
        if not err.is_not_found:
            rt.recorder.event(job, "Warning", "FailedDelete", f"Error deleting: {err.message}")
        raise
    rt.recorder.event(job, "Normal", "SuccessfulDelete", f"Deleted pod: {_name(pod)}")


async def delete_job_pods(
    rt: JobRuntime, key: str, job: Obj, pods: list[Obj]
) -> tuple[int, int, Exception | None]:
    """``deleteJobPods``: each pod's finalizer removed first (a pod the controller deletes is
    never counted as failed), then the pod deleted; ``(ready deleted, deleted, first error)``."""
    failures: list[Exception] = []

    async def one(pod: Obj) -> tuple[bool, bool]:
        ok = True
        try:
            if has_tracking_finalizer(pod):
                await rt.client.patch(
                    "v1",
                    "pods",
                    _name(pod),
                    remove_finalizer_patch(),
                    meta(pod).get("namespace"),
                    patch_type="strategic",
                )
            await _delete_pod(rt, job, pod)
        except ApiError as err:
            # The informer will not see this deletion.
            rt.expectations.deletion_observed(key)
            if not err.is_not_found:
                failures.append(err)
                ok = False
        return ok, is_ready(pod)

    results = await asyncio.gather(*(one(p) for p in pods))
    deleted = sum(1 for ok, _ in results if ok)
    # Upstream counts a ready pod as deleted even when its deletion failed.
    ready = sum(1 for _, was_ready in results if was_ready)
    return ready, deleted, failures[0] if failures else None


async def delete_active_pods(
    rt: JobRuntime, job: Obj, pods: list[Obj]
) -> tuple[int, int, Exception | None]:
    """``deleteActivePods`` of a Job reaching a terminal condition: deletion requested, the
    finalizers kept (the tracking removes them and counts the pods)."""
    failures: list[Exception] = []

    async def one(pod: Obj) -> tuple[bool, bool]:
        try:
            await _delete_pod(rt, job, pod)
        except ApiError as err:
            if not err.is_not_found:
                failures.append(err)
                return False, is_ready(pod)
        return True, is_ready(pod)

    results = await asyncio.gather(*(one(p) for p in pods))
    deleted = sum(1 for ok, _ in results if ok)
    ready = sum(1 for _, was_ready in results if was_ready)
    return ready, deleted, failures[0] if failures else None


def _want_active(job: Mapping[str, Any], active: int, succeeded: int) -> int:
    parallelism = int((job.get("spec") or {}).get("parallelism") or 0)
    completions = completions_of(job)
    if completions is None:
        # A work-queue Job: once one pod succeeded, whatever runs is left to finish.
        return active if succeeded > 0 else parallelism
    return max(0, min(completions - succeeded, parallelism))


async def _create_one(
    rt: JobRuntime, ctx: SyncContext, index: int, failures: list[Exception]
) -> bool:
    # One CreatePodsWithGenerateName with its events; False when the pod was not created.
    job, key = ctx.job, ctx.key
    counts = None
    if index != UNKNOWN_INDEX and has_backoff_limit_per_index(job):
        counts = new_failure_counts(job, ctx.delayed.get(index))
    body = pod_for_job(job, index, failure_counts=counts)
    namespace = meta(job).get("namespace")
    try:
        created = await rt.client.create("v1", "pods", body, namespace)
    except ApiError as err:
        causes = (err.status.get("details") or {}).get("causes") or []
        if any(c.get("type") == NAMESPACE_TERMINATING_CAUSE for c in causes):
            # The namespace goes away: every later creation fails the same way.
            return True
        rt.recorder.event(job, "Warning", "FailedCreate", f"Error creating: {err.message}")
        rt.expectations.creation_observed(key)
        failures.append(err)
        return False
    rt.recorder.event(job, "Normal", "SuccessfulCreate", f"Created pod: {_name(created)}")
    return True


async def _create_pods(
    rt: JobRuntime, ctx: SyncContext, count: int, indexes: list[int]
) -> tuple[int, Exception | None]:
    """``count`` pods in slow-start batches (1, 2, 4, ...): after a batch with a failure the
    rest is not tried (expectations lowered for them); ``(created, first error)``."""
    key = ctx.key
    rt.expectations.expect_creations(key, count)
    failures: list[Exception] = []
    created = 0
    remaining = count
    batch = min(remaining, SLOW_START_INITIAL_BATCH)
    while remaining > 0:
        errors_before = len(failures)
        chosen = [indexes.pop(0) if indexes else UNKNOWN_INDEX for _ in range(batch)]
        results = await asyncio.gather(*(_create_one(rt, ctx, ix, failures) for ix in chosen))
        created += sum(1 for ok in results if ok)
        remaining -= batch
        if len(failures) > errors_before and remaining > 0:
            for _ in range(remaining):
                rt.expectations.creation_observed(key)
            break
        batch = min(2 * batch, remaining)
    return created, failures[0] if failures else None


async def manage_job(rt: JobRuntime, ctx: SyncContext) -> tuple[int, Exception | None]:
    """``manageJob``: the number of active pods after this sync's creations or deletions (never
    both in one sync; deletions first), and the first API error."""
    job, key = ctx.job, ctx.key
    active = len(ctx.active_pods)
    if is_suspended(job):
        doomed = active_pods_for_removal(job, ctx.active_pods, active)
        rt.expectations.expect_deletions(key, len(doomed))
        ready, removed, err = await delete_job_pods(rt, key, job, doomed)
        ctx.terminating += removed
        ctx.ready -= ready
        return active - removed, err
    want = _want_active(job, active, ctx.succeeded)
    doomed = active_pods_for_removal(job, ctx.active_pods, max(active - want, 0))
    doomed = doomed[: rt.max_create_delete]
    if doomed:
        rt.expectations.expect_deletions(key, len(doomed))
        ready, removed, err = await delete_job_pods(rt, key, job, doomed)
        ctx.terminating += removed
        ctx.ready -= ready
        return active - removed, err
    terminating = ctx.terminating if only_replace_failed(job) else 0
    diff = want - terminating - active
    if diff <= 0:
        return active, None
    per_index = has_backoff_limit_per_index(job)
    record = ctx.new_backoff
    wait = 0.0
    if record is not None and not per_index:
        wait = rt.backoff.remaining(
            record.failures_after_last_success, record.last_failure_time, rt.clock()
        )
    if wait > 0:
        rt.enqueue_after(key, max(wait, rt.sync_batch_period))
        # As upstream: the sync reports no active pods while creations wait for the backoff.
        return 0, None
    diff = min(diff, rt.max_create_delete)
    indexes: list[int] = []
    if is_indexed(job):
        indexes = first_pending_indexes(
            (pod_index(p) for p in ctx.active_pods),
            _not_pending(ctx),
            diff,
            completions_of(job) or 0,
        )
        if per_index:
            indexes, wait = _ready_indexes(rt, ctx, indexes)
            if wait > 0:
                rt.enqueue_after(key, max(wait, rt.sync_batch_period))
                return 0, None
        diff = len(indexes)
        if diff == 0:
            return active, None
    created, err = await _create_pods(rt, ctx, diff, indexes)
    return active + created, err


def _not_pending(ctx: SyncContext) -> Intervals:
    # firstPendingIndexes' taken indexes beside the active ones: succeeded, failed for good,
    # and those whose pod is still terminating when only failed pods are replaced.
    taken = ctx.succeeded_indexes
    if only_replace_failed(ctx.job):
        taken = taken.with_indexes(pod_index(p) for p in ctx.pods if is_terminating(p))
    if ctx.failed_indexes is not None:
        taken = taken.with_indexes(ctx.failed_indexes.indexes())
    return taken


def _ready_indexes(rt: JobRuntime, ctx: SyncContext, indexes: list[int]) -> tuple[list[int], float]:
    # getPodCreationInfoForIndependentIndexes: the indexes whose own backoff is over, else the
    # shortest wait among them.
    now = rt.clock()
    ready: list[int] = []
    waits: list[float] = []
    for ix in indexes:
        left = remaining_for_index(rt.backoff, now, ctx.delayed.get(ix))
        if left <= 0:
            ready.append(ix)
        else:
            waits.append(left)
    if ready:
        return ready, 0.0
    return [], min(waits, default=0.0)
