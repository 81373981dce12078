"""Counting finished pods exactly once (upstream's ``trackJobStatusAndRemoveFinalizers``): a
finished pod's uid is first written to ``status.uncountedTerminatedPods``, then its
``batch.kubernetes.io/job-tracking`` finalizer is removed, then the uid moves into the
``succeeded``/``failed`` counters. A crash between any two steps leaves enough in the API for
the next controller to finish the step without counting a pod twice or losing it. The terminal
condition is written last, once nothing is uncounted or terminating."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Mapping
from typing import Any

from numaplane.controllers.job import status as conditions
from numaplane.controllers.job.indexes import UNKNOWN_INDEX, pod_index
from numaplane.controllers.job.pods import remove_finalizer_patch
from numaplane.controllers.job.podstate import (
    SUCCEEDED,
    deleting,
    has_tracking_finalizer,
    meta,
    phase,
    uid,
)
from numaplane.controllers.job.policies import match_pod_failure_policy
from numaplane.controllers.job.runtime import (
    JobRuntime,
    Obj,
    SyncContext,
    completions_of,
    is_indexed,
)
from numaplane.controllers.job.sync_rules import is_pod_failed
from numaplane.kube import ApiError


def uncounted_of(job_status: dict[str, Any]) -> dict[str, list[str]]:
    """``status.uncountedTerminatedPods`` with both lists present (created when absent)."""
    uncounted = job_status.get("uncountedTerminatedPods")
    if not isinstance(uncounted, dict):
        uncounted = job_status["uncountedTerminatedPods"] = {}
    uncounted["succeeded"] = list(uncounted.get("succeeded") or [])
    uncounted["failed"] = list(uncounted.get("failed") or [])
    return uncounted


def clean_uncounted(job_status: dict[str, Any], with_finalizer: set[str]) -> bool:
    """``cleanUncountedPodsWithoutFinalizers``: uids whose pods lost their finalizer leave the
    uncounted lists for the counters; whether anything moved."""
    uncounted = uncounted_of(job_status)
    changed = False
    for name, counter in (("succeeded", "succeeded"), ("failed", "failed")):
        kept = [u for u in uncounted[name] if u in with_finalizer]
        if len(kept) != len(uncounted[name]):
            changed = True
            job_status[counter] = (
                int(job_status.get(counter) or 0) + len(uncounted[name]) - len(kept)
            )
            uncounted[name] = kept
    return changed


def status_for_write(job: Obj) -> Obj:
    """The Job as the status update sends it: empty lists and zero counters the Go types omit
    left out (``ready`` and ``terminating`` are pointers, kept at 0)."""
    out = copy.deepcopy(job)
    st = out.setdefault("status", {})
    uncounted = st.get("uncountedTerminatedPods")
    if isinstance(uncounted, dict):
        for name in ("succeeded", "failed"):
            if not uncounted.get(name):
                uncounted.pop(name, None)
    for name in ("active", "succeeded", "failed"):
        if st.get(name) == 0:
            st.pop(name)
    if st.get("completedIndexes") == "":
        st.pop("completedIndexes")
    return out


async def update_status(rt: JobRuntime, job: Obj) -> Obj:
    """``UpdateStatus`` (PUT, conditional on the resourceVersion read): the Job as stored."""
    body = status_for_write(job)
    return await rt.client.update(
        "batch/v1", "jobs", body, meta(job).get("namespace"), subresource="status"
    )


async def remove_finalizers(
    rt: JobRuntime, key: str, pods: list[Obj]
) -> tuple[list[bool], Exception | None]:
    """``removeTrackingFinalizerFromPods``: per pod whether its finalizer is gone (a pod already
    deleted counts as gone), and the first error."""
    rt.finalizer_expectations.expect_removed(key, (uid(p) for p in pods))
    failures: list[Exception] = []

    async def one(pod: Obj) -> bool:
        if not has_tracking_finalizer(pod):
            return False
        try:
            await rt.client.patch(
                "v1",
                "pods",
                str(meta(pod).get("name")),
                remove_finalizer_patch(),
                meta(pod).get("namespace"),
                patch_type="strategic",
            )
        except ApiError as err:
            # No update will be observed for this pod.
            rt.finalizer_expectations.removal_observed(key, uid(pod))
            if not err.is_not_found:
                failures.append(err)
                return False
        return True

    done = await asyncio.gather(*(one(p) for p in pods))
    return list(done), failures[0] if failures else None


def _can_remove_finalizer(ctx: SyncContext, pod: Obj, failed: bool) -> bool:
    if deleting(ctx.job) or ctx.finished is not None or phase(pod) == SUCCEEDED:
        return True
    if not failed:
        return False
    # With backoffLimitPerIndex the last failed pod of an index waits for its replacement.
    kept = ctx.delayed.get(pod_index(pod))
    return kept is None or uid(kept) != uid(pod)


def _collect(ctx: SyncContext, rt: JobRuntime) -> tuple[list[Obj], list[int], bool, bool]:
    # The loop of trackJobStatusAndRemoveFinalizers: pods whose finalizer may go, the newly
    # succeeded indexes, whether the status changed, whether the uncounted cap was reached.
    job = ctx.job
    indexed = is_indexed(job)
    completions = completions_of(job) or 0
    uncounted = uncounted_of(ctx.status)
    policy = ctx.spec.get("podFailurePolicy")
    to_remove: list[Obj] = []
    new_indexes: list[int] = []
    changed = False
    terminal_failure = (
        ctx.finished is not None and ctx.finished.get("type") != conditions.SUCCESS_CRITERIA_MET
    )
    for pod in ctx.pods:
        pod_uid = uid(pod)
        if not has_tracking_finalizer(pod) or pod_uid in ctx.expected_rm_finalizers:
            continue  # counted in an earlier sync
        failed = is_pod_failed(pod, job)
        if not _can_remove_finalizer(ctx, pod, failed):
            continue
        to_remove.append(pod)
        ix = pod_index(pod)
        if phase(pod) == SUCCEEDED and pod_uid not in ctx.uncounted_failed:
            if indexed:
                # The index alone prevents counting a success twice.
                if (
                    ix != UNKNOWN_INDEX
                    and ix < completions
                    and not ctx.prev_succeeded_indexes.has(ix)
                ):
                    new_indexes.append(ix)
                    changed = True
            elif pod_uid not in ctx.uncounted_succeeded:
                uncounted["succeeded"].append(pod_uid)
                changed = True
        elif failed or terminal_failure:
            # Once the Job is failing, every pod not succeeded counts as failed.
            valid = not indexed or (ix != UNKNOWN_INDEX and ix < completions)
            counts = match_pod_failure_policy(policy, pod).counts
            if pod_uid not in ctx.uncounted_failed and valid and counts:
                uncounted["failed"].append(pod_uid)
                changed = True
        if (
            len(new_indexes) + len(uncounted["succeeded"]) + len(uncounted["failed"])
            >= rt.max_uncounted
        ):
            # The rest waits for the next sync, so that one big Job does not starve others.
            return to_remove, new_indexes, changed, True
    return to_remove, new_indexes, changed, False


def _enact_finished(rt: JobRuntime, ctx: SyncContext) -> bool:
    # enactJobFinished: the terminal condition, once nothing is uncounted or terminating.
    finished = ctx.finished
    if finished is None:
        return False
    uncounted = uncounted_of(ctx.status)
    if uncounted["succeeded"] or uncounted["failed"] or ctx.terminating > 0:
        return False
    conds = ctx.status.setdefault("conditions", [])
    kind = str(finished["type"])
    conditions.ensure_condition(
        conds,
        kind,
        "True",
        str(finished.get("reason") or ""),
        str(finished.get("message") or ""),
        rt.clock(),
    )
    if kind == conditions.COMPLETE:
        ctx.status["completionTime"] = finished["lastTransitionTime"]
    return True


def _record_finished(rt: JobRuntime, job: Mapping[str, Any], finished: Mapping[str, Any]) -> None:
    # recordJobFinished's events.
    obj = dict(job)
    if finished.get("type") == conditions.COMPLETE:
        completions = completions_of(job)
        succeeded = int((job.get("status") or {}).get("succeeded") or 0)
        if completions is not None and succeeded > completions:
            rt.recorder.event(
                obj,
                "Warning",
                "TooManySucceededPods",
                "Too many succeeded pods running after completion count reached",
            )
        rt.recorder.event(obj, "Normal", "Completed", "Job completed")
    else:
        rt.recorder.event(
            obj, "Warning", str(finished.get("reason") or ""), str(finished.get("message") or "")
        )


async def track_status(rt: JobRuntime, ctx: SyncContext, needs_flush: bool) -> None:
    """``trackJobStatusAndRemoveFinalizers``: record newly finished pods as uncounted, write the
    interim terminal condition, remove their finalizers, move them into the counters, and write
    the terminal condition when the Job is done."""
    job_status = ctx.status
    uncounted_of(job_status)
    if is_indexed(ctx.job):
        ctx.pods.sort(key=pod_index)
    with_finalizer = {
        uid(p)
        for p in ctx.pods
        if has_tracking_finalizer(p) and uid(p) not in ctx.expected_rm_finalizers
    }
    if clean_uncounted(job_status, with_finalizer):
        needs_flush = True
    to_remove, new_indexes, changed, capped = _collect(ctx, rt)
    needs_flush = needs_flush or changed
    if is_indexed(ctx.job):
        ctx.succeeded_indexes = ctx.succeeded_indexes.with_indexes(new_indexes)
        text = str(ctx.succeeded_indexes)
        if text != (job_status.get("completedIndexes") or ""):
            needs_flush = True
        job_status["succeeded"] = ctx.succeeded_indexes.total()
        job_status["completedIndexes"] = text
        if ctx.failed_indexes is not None:
            failed_text = str(ctx.failed_indexes)
            if job_status.get("failedIndexes") != failed_text:
                job_status["failedIndexes"] = failed_text
                needs_flush = True
    finished = ctx.finished
    if finished is not None and finished.get("type") == conditions.FAILURE_TARGET:
        # The reason is recorded before any finalizer goes, so a crash cannot lose it.
        job_status.setdefault("conditions", []).append(finished)
        needs_flush = True
        ctx.finished = conditions.final_of(finished, rt.clock())
    elif finished is not None and finished.get("type") == conditions.SUCCESS_CRITERIA_MET:
        if conditions.true_condition(ctx.job, conditions.SUCCESS_CRITERIA_MET) is None:
            job_status.setdefault("conditions", []).append(finished)
            needs_flush = True
        ctx.finished = conditions.final_of(finished, rt.clock())
    needs_flush = await _flush_and_remove(rt, ctx, to_remove, with_finalizer, needs_flush)
    done = not capped and _enact_finished(rt, ctx)
    if done or needs_flush:
        ctx.job = await update_status(rt, ctx.job)
        if done and ctx.finished is not None:
            _record_finished(rt, ctx.job, ctx.finished)


async def _flush_and_remove(
    rt: JobRuntime,
    ctx: SyncContext,
    to_remove: list[Obj],
    with_finalizer: set[str],
    needs_flush: bool,
) -> bool:
    # flushUncountedAndRemoveFinalizers: write the uncounted uids (and interim condition), then
    # remove the finalizers, then move what lost its finalizer into the counters; whether the
    # status still has changes to write.
    if needs_flush:
        ctx.job = await update_status(rt, ctx.job)
        if ctx.new_backoff is not None:
            rt.backoff_store.update(ctx.new_backoff)
        needs_flush = False
    failure: Exception | None = None
    if to_remove:
        removed, failure = await remove_finalizers(rt, ctx.key, to_remove)
        for pod, ok in zip(to_remove, removed, strict=True):
            if ok:
                with_finalizer.discard(uid(pod))
    if clean_uncounted(ctx.status, with_finalizer):
        needs_flush = True
    if failure is not None:
        if needs_flush:
            ctx.job = await update_status(rt, ctx.job)
        raise failure
    return needs_flush
