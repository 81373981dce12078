"""One sync of one Job (upstream's ``syncJob``): count its pods, decide whether it failed
(backoff limit, active deadline, pod failure policy) or succeeded (completions, success policy),
suspend or resume it, manage its pods, and track its status."""

from __future__ import annotations

import copy

from numaplane.controllers.job import status as conditions
from numaplane.controllers.job.manage import delete_active_pods, manage_job
from numaplane.controllers.job.perindex import (
    delayed_deletions,
    failed_indexes,
    has_backoff_limit_per_index,
)
from numaplane.controllers.job.podstate import (
    deleting,
    format_time,
    is_active,
    is_ready,
    is_terminating,
)
from numaplane.controllers.job.policies import match_success_policy
from numaplane.controllers.job.runtime import (
    JobRuntime,
    SyncContext,
    completions_of,
    is_indexed,
    is_suspended,
)
from numaplane.controllers.job.sync_rules import (
    counted_failures,
    deadline_left,
    fail_job_message,
    new_finished_pods,
    past_backoff_limit_on_failure,
    succeeded_indexes,
)
from numaplane.controllers.job.tracking import track_status, uncounted_of

COMPLETION_MODES = ("NonIndexed", "Indexed")


def _forget(rt: JobRuntime, key: str) -> None:
    rt.expectations.delete(key)
    rt.finalizer_expectations.delete(key)
    rt.backoff_store.remove(key)


async def sync_job(rt: JobRuntime, key: str) -> None:
    """Sync the Job of ``key`` (``namespace/name``) once; API errors propagate so the caller
    retries with backoff."""
    shared = rt.lookup_job(key)
    if shared is None:
        _forget(rt, key)
        return
    if conditions.managed_by_other(shared) is not None:
        # Another controller (MultiKueue) owns this Job: not even its status is ours.
        return
    if conditions.is_finished(shared):
        rt.backoff_store.remove(key)
        return
    job = copy.deepcopy(shared)
    spec = job.setdefault("spec", {})
    mode = spec.get("completionMode")
    if mode is not None and mode not in COMPLETION_MODES:
        rt.recorder.event(
            job,
            "Warning",
            "UnknownCompletionMode",
            "Skipped Job sync because completion mode is unknown",
        )
        return
    ctx = await _context(rt, key, job)
    await _decide_and_act(rt, ctx)


async def _context(rt: JobRuntime, key: str, job: dict[str, object]) -> SyncContext:
    # Expectations are read before the pods: a pod created after this read makes the next
    # sync, not this one, see it.
    satisfied = rt.expectations.satisfied(key)
    pods = await rt.claim_pods(job)
    job_status = job.setdefault("status", {})
    assert isinstance(job_status, dict)
    uncounted = uncounted_of(job_status)
    active_pods = [p for p in pods if is_active(p)]
    ctx = SyncContext(
        key=key,
        job=job,
        pods=pods,
        active_pods=active_pods,
        ready=sum(1 for p in active_pods if is_ready(p)),
        terminating=sum(1 for p in pods if is_terminating(p)),
        uncounted_succeeded=frozenset(uncounted["succeeded"]),
        uncounted_failed=frozenset(uncounted["failed"]),
        expected_rm_finalizers=rt.finalizer_expectations.expected(key),
    )
    new_succeeded, new_failed = new_finished_pods(
        job, pods, ctx.uncounted_succeeded, ctx.uncounted_failed, ctx.expected_rm_finalizers
    )
    ctx.succeeded = (
        int(job_status.get("succeeded") or 0) + len(new_succeeded) + len(uncounted["succeeded"])
    )
    ctx.failed = (
        int(job_status.get("failed") or 0)
        + counted_failures(job, new_failed)
        + len(uncounted["failed"])
    )
    if not job_status.get("startTime") and not is_suspended(job):
        job_status["startTime"] = format_time(rt.clock())
    ctx.new_backoff = rt.backoff_store.new_record(key, new_succeeded, new_failed)
    ctx.satisfied = satisfied
    return ctx


def _terminal_condition(rt: JobRuntime, ctx: SyncContext) -> None:
    # The order of syncJob: an interim success already recorded wins; then a recorded
    # FailureTarget or a FailJob rule; then the backoff limit, then the deadline.
    job, now = ctx.job, rt.clock()
    ctx.finished = conditions.true_condition(job, conditions.SUCCESS_CRITERIA_MET)
    if ctx.finished is None:
        target = conditions.true_condition(job, conditions.FAILURE_TARGET)
        if target is not None:
            ctx.finished = conditions.final_of(target, now)
        elif (message := fail_job_message(job, ctx.pods)) is not None:
            ctx.finished = conditions.failure_target(
                conditions.REASON_POD_FAILURE_POLICY, message, now
            )
    if ctx.finished is None:
        limit = int(ctx.spec.get("backoffLimit") or 0)
        left = deadline_left(job, now)
        if ctx.failed > limit or past_backoff_limit_on_failure(job, ctx.pods):
            ctx.finished = conditions.failure_target(
                conditions.REASON_BACKOFF_LIMIT, conditions.MESSAGE_BACKOFF_LIMIT, now
            )
        elif left is not None and left <= 0:
            ctx.finished = conditions.failure_target(
                conditions.REASON_DEADLINE, conditions.MESSAGE_DEADLINE, now
            )
        elif left is not None:
            rt.enqueue_after(ctx.key, left)
    if is_indexed(job):
        ctx.prev_succeeded_indexes, ctx.succeeded_indexes = succeeded_indexes(job, ctx.pods)
        ctx.succeeded = ctx.succeeded_indexes.total()
        if has_backoff_limit_per_index(job):
            _per_index(rt, ctx)
        if ctx.finished is None:
            message = match_success_policy(
                ctx.spec.get("successPolicy"), completions_of(job) or 0, ctx.succeeded_indexes
            )
            if message is not None:
                ctx.finished = conditions.new_condition(
                    conditions.SUCCESS_CRITERIA_MET,
                    "True",
                    conditions.REASON_SUCCESS_POLICY,
                    message,
                    now,
                )


def _per_index(rt: JobRuntime, ctx: SyncContext) -> None:
    # The failed indexes, the conditions they lead to, the failed pods kept for their counts.
    job, now = ctx.job, rt.clock()
    failed = failed_indexes(job, ctx.pods)
    ctx.failed_indexes = failed
    if ctx.finished is None:
        most = ctx.spec.get("maxFailedIndexes")
        if most is not None and failed.total() > int(most):
            ctx.finished = conditions.failure_target(
                conditions.REASON_MAX_FAILED_INDEXES, conditions.MESSAGE_MAX_FAILED_INDEXES, now
            )
        elif failed.total() > 0 and failed.total() + ctx.succeeded_indexes.total() >= (
            completions_of(job) or 0
        ):
            ctx.finished = conditions.failure_target(
                conditions.REASON_FAILED_INDEXES, conditions.MESSAGE_FAILED_INDEXES, now
            )
    ctx.delayed = delayed_deletions(
        job, ctx.pods, ctx.active_pods, ctx.succeeded_indexes, failed, ctx.expected_rm_finalizers
    )


def _suspension(rt: JobRuntime, ctx: SyncContext) -> bool:
    # The Suspended condition and its events; a resumed Job starts its deadline anew.
    conds = ctx.status.setdefault("conditions", [])
    now = rt.clock()
    if is_suspended(ctx.job):
        changed = conditions.ensure_condition(
            conds,
            conditions.SUSPENDED,
            "True",
            conditions.REASON_SUSPENDED,
            conditions.MESSAGE_SUSPENDED,
            now,
        )
        if changed:
            rt.recorder.event(ctx.job, "Normal", "Suspended", "Job suspended")
        return changed
    changed = conditions.ensure_condition(
        conds,
        conditions.SUSPENDED,
        "False",
        conditions.REASON_RESUMED,
        conditions.MESSAGE_RESUMED,
        now,
    )
    if changed:
        rt.recorder.event(ctx.job, "Normal", "Resumed", "Job resumed")
        ctx.status["startTime"] = format_time(now)
    return changed


async def _decide_and_act(rt: JobRuntime, ctx: SyncContext) -> None:
    satisfied = ctx.satisfied
    _terminal_condition(rt, ctx)
    active = len(ctx.active_pods)
    suspend_changed = False
    manage_error: Exception | None = None
    if ctx.finished is not None:
        ready, deleted, manage_error = await delete_active_pods(rt, ctx.job, ctx.active_pods)
        if deleted != active or not satisfied:
            # Pods may remain, or be missing from the cache: not finished yet.
            ctx.finished = None
        active -= deleted
        ctx.terminating += deleted
        ctx.ready -= ready
    else:
        managed = False
        if satisfied and not deleting(ctx.job):
            active, manage_error = await manage_job(rt, ctx)
            managed = True
        completions = completions_of(ctx.job)
        if completions is None:
            # A work-queue Job is done when one pod succeeded and none runs.
            complete = ctx.succeeded > 0 and active == 0
        else:
            complete = ctx.succeeded >= completions and active == 0
        if complete:
            ctx.finished = conditions.success_criteria_met(rt.clock())
        elif managed:
            suspend_changed = _suspension(rt, ctx)
    st = ctx.status
    needs_update = (
        suspend_changed
        or active != int(st.get("active") or 0)
        or st.get("ready") != ctx.ready
        or st.get("terminating") != ctx.terminating
    )
    st["active"] = active
    st["ready"] = ctx.ready
    st["terminating"] = ctx.terminating
    await track_status(rt, ctx, needs_update)
    if manage_error is not None:
        raise manage_error
