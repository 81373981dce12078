"""One pass of Kueue's job reconciler over a batch/v1 Job (upstream
``jobframework/reconciler.go`` ``ReconcileGenericJob`` with the Job integration of
``jobs/job/job_controller.go``), as a pure decision: :func:`reconcile_job` reads the Job, the
Workloads it owns and a :class:`JobContext`, and returns the writes to make, in order, and the
events to record on the Job (:class:`JobDecision`). Workload status changes are computed by
:mod:`numaplane.kueue.workload` (finish, quota release, PodsReady); this module decides when.

The order of the steps is upstream's: the single matching Workload (prebuilt or owned; extra or
stale ones deleted, a running Job without one stopped), finished Workload, Workload being
deleted, finished Job, missing Workload (created), PodsReady, eviction (stop, then release the
quota once the Job has no active pods), suspended Job (started once admitted), running Job
without admission (stopped).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from numaplane.api.selectors import SelectorError, label_selector_from_dict
from numaplane.kueue import workload as wl_rules
from numaplane.kueue.api.conditions import find_condition
from numaplane.kueue.constants import (
    CHECK_PENDING,
    EVICTED,
    JOB_UID_LABEL,
    PODS_READY,
    REASON_OUT_OF_SYNC,
)
from numaplane.kueue.jobs import batchjob
from numaplane.kueue.jobs.batchjob import (
    finished,
    is_active,
    is_suspended,
    prebuilt_workload_name,
    queue_name,
)
from numaplane.kueue.jobs.decision import (
    CREATE,
    DELETE,
    MSG_MISSING_WORKLOAD,
    MSG_NO_MATCHING,
    MSG_NOT_ADMITTED,
    MSG_OUT_OF_SYNC,
    MSG_WORKLOAD_DELETED,
    REASON_CREATED_WORKLOAD,
    REASON_DELETED_WORKLOAD,
    REASON_FINISHED_WORKLOAD,
    REASON_UPDATED_ADMISSION_CHECK,
    REASON_UPDATED_WORKLOAD,
    UPDATE,
    WORKLOAD,
    JobContext,
    JobDecision,
    JobWrite,
    RunState,
    is_reserved,
    key_of,
    meta_of,
    remove_finalizer,
    without_finalizer,
    workload_finished,
)
from numaplane.kueue.jobs.equivalence import equivalent, is_admitted
from numaplane.kueue.jobs.lifecycle import (
    start_job,
    stop_job,
)
from numaplane.kueue.jobs.workloads import (
    PriorityNotFoundError,
    controller_of,
    extract_priority,
    is_controlled_by,
    is_valid_label_value,
    new_workload,
    owner_reference,
    priority_needs_update,
)

Obj = dict[str, Any]


# --- the single workload ------------------------------------------------------------------------


def _priority(run: RunState) -> tuple[Obj | None, int] | None:
    try:
        return extract_priority(
            run.job, run.ctx.workload_priority_classes, run.ctx.priority_classes
        )
    except PriorityNotFoundError as err:
        run.decision.error = str(err)
        return None


def _construct(run: RunState) -> Obj | None:
    priority = _priority(run)
    if priority is None:
        return None
    ref, value = priority
    return new_workload(run.job, value, ref, label_keys_to_copy=run.ctx.label_keys_to_copy)


def _adopt_prebuilt(run: RunState, wl: Mapping[str, Any]) -> Obj:
    """Upstream ``EnsurePrebuiltWorkloadOwnership``: the Job becomes the controller owner (and
    the job-uid label is added) unless it already is."""
    if is_controlled_by(wl, run.job):
        return dict(wl)
    new = copy.deepcopy(dict(wl))
    meta = new.setdefault("metadata", {})
    refs = [
        r for r in meta.get("ownerReferences") or [] if r.get("uid") != meta_of(run.job).get("uid")
    ]
    meta["ownerReferences"] = [*refs, owner_reference(run.job)]
    uid = str(meta_of(run.job).get("uid", ""))
    if is_valid_label_value(uid):
        meta.setdefault("labels", {})[JOB_UID_LABEL] = uid
    run.write_workload(UPDATE, new)
    return new


def _prebuilt(run: RunState, name: str) -> Obj | None:
    wl = run.ctx.prebuilt_workload
    if wl is None or meta_of(wl).get("name") != name:
        return None
    owner = controller_of(wl)
    if owner is not None and owner.get("uid") != meta_of(run.job).get("uid"):
        return None  # controlled by another object: ignored, as upstream
    adopted = _adopt_prebuilt(run, wl)
    if not equivalent(run.job, adopted, run.ctx.flavors):
        run.workload_status(
            adopted, wl_rules.finish(adopted, REASON_OUT_OF_SYNC, MSG_OUT_OF_SYNC, run.ctx.now)
        )
        return None
    return adopted


def _ensure_one_workload(
    run: RunState, owned: Sequence[Mapping[str, Any]]
) -> tuple[Obj | None, bool]:
    """Upstream ``ensureOneWorkload``: the Workload of the Job, or None; the flag says the pass
    ends here (stale Workloads deleted, or an error)."""
    prebuilt = prebuilt_workload_name(run.job)
    if prebuilt is not None:
        return _prebuilt(run, prebuilt), False
    match: Obj | None = None
    to_delete: list[Obj] = []
    for wl in sorted(owned, key=lambda w: str(meta_of(w).get("name", ""))):
        if match is None and equivalent(run.job, wl, run.ctx.flavors):
            match = dict(wl)
        else:
            to_delete.append(dict(wl))
    to_update: Obj | None = None
    if match is None and to_delete and is_suspended(run.job) and not is_reserved(to_delete[0]):
        to_update, to_delete = to_delete[0], to_delete[1:]
    if match is None and not is_suspended(run.job):
        only = to_delete[0] if len(to_delete) == 1 else None
        if finished(run.job) is None:
            stop_job(run, only, MSG_MISSING_WORKLOAD if only is None else MSG_NO_MATCHING)
    for wl in to_delete:
        remove_finalizer(run, wl)
        run.write_workload(DELETE, wl)
        run.event(REASON_DELETED_WORKLOAD, f"Deleted not matching Workload: {key_of(wl)}")
    if to_delete:
        what = "no matching workloads" if match is None else "extra workloads"
        run.decision.error = f"{what}: deleted {len(to_delete)} workloads"
        return None, True
    if to_update is not None:
        built = _construct(run)
        if built is None:
            run.decision.error = f"can't construct workload for update: {run.decision.error}"
            return None, True
        spec = built["spec"]
        active = (to_update.get("spec") or {}).get("active")
        if active is not None:
            spec["active"] = active
        updated = {**to_update, "spec": spec}
        run.write_workload(UPDATE, updated)
        run.event(
            REASON_UPDATED_WORKLOAD,
            f"Updated not matching Workload for suspended job: {key_of(updated)}",
        )
        return updated, False
    if match is not None and priority_needs_update(run.job, match):
        priority = _priority(run)
        if priority is None:
            run.decision.error = f"prepare workload priority: {run.decision.error}"
            return None, True
        ref, value = priority
        spec = dict(match.get("spec") or {})
        if ref is None:
            spec.pop("priorityClassRef", None)
        else:
            spec["priorityClassRef"] = ref
        spec["priority"] = value
        match = {**match, "spec": spec}
        run.write_workload(UPDATE, match)
        run.event(REASON_UPDATED_WORKLOAD, f"Updated workload priority class: {key_of(match)}")
    return match, False


def _handle_no_workload(run: RunState) -> None:
    """Upstream ``handleJobWithNoWorkload``: create the Workload once the Job has no active
    pods (a Job waiting for a prebuilt Workload is stopped and retried instead)."""
    prebuilt = prebuilt_workload_name(run.job) is not None
    if prebuilt:
        stop_job(run, None, "missing workload")
    if is_active(run.job):
        return  # suspended, but its pods are still going away
    if prebuilt:
        run.decision.error = "prebuilt workload not found"
        return
    wl = _construct(run)
    if wl is None:
        return
    run.write_workload(CREATE, wl)
    run.event(REASON_CREATED_WORKLOAD, f"Created Workload: {key_of(wl)}")


def _admission_check_event(run: RunState, wl: Mapping[str, Any]) -> None:
    """Upstream ``recordAdmissionCheckUpdate``: the messages of Pending checks on the Job."""
    parts = [
        f"{check.get('name')}: {check.get('message')}"
        for check in (wl.get("status") or {}).get("admissionChecks") or []
        if check.get("state") == CHECK_PENDING and check.get("message")
    ]
    if parts:
        run.event(REASON_UPDATED_ADMISSION_CHECK, "; ".join(parts))


def _managed(job: Mapping[str, Any], ctx: JobContext) -> bool:
    """Whether Kueue manages the Job: it has a queue name, or jobs without one are managed
    and its namespace matches ``managedJobsNamespaceSelector``."""
    if queue_name(job):
        return True
    if not ctx.manage_jobs_without_queue_name:
        return False
    try:
        selector = label_selector_from_dict(ctx.managed_jobs_namespace_selector or {})
    except SelectorError:
        return False
    return selector.matches(dict(ctx.namespace_labels or {}))


def _update_reclaimable_pods(run: RunState, wl: Mapping[str, Any]) -> bool:
    """Upstream step 4 (``ReclaimablePods``, beta, on): the Job's reclaimable pods written to
    ``status.reclaimablePods`` when they differ (by podSet name and count); whether it wrote."""
    want = batchjob.reclaimable_pods(run.job)
    have = (wl.get("status") or {}).get("reclaimablePods") or []
    if {p["name"]: p["count"] for p in want} == {p.get("name"): p.get("count") for p in have}:
        return False
    status = copy.deepcopy(dict(wl.get("status") or {}))
    if want:
        status["reclaimablePods"] = want
    else:
        status.pop("reclaimablePods", None)
    run.workload_status(wl, status)
    return True


def _pods_ready_changed(wl: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    old = find_condition((wl.get("status") or {}).get("conditions"), PODS_READY)
    new = find_condition(status.get("conditions"), PODS_READY)
    if old is None or new is None:
        return old is not new
    return (old.get("status"), old.get("reason")) != (new.get("status"), new.get("reason"))


def reconcile_job(
    job: Mapping[str, Any] | None,
    owned_workloads: Sequence[Mapping[str, Any]],
    ctx: JobContext,
) -> JobDecision:
    """One pass of upstream ``ReconcileGenericJob`` for a batch/v1 Job (see the module
    docstring). ``job`` None (deleted) or being deleted: the finalizers of its Workloads are
    removed. ``owned_workloads``: the Workloads with an owner reference to the Job's name
    (:func:`~numaplane.kueue.jobs.owned_workloads`); the prebuilt Workload, if the Job names
    one, comes in ``ctx.prebuilt_workload``."""
    if job is None or meta_of(job).get("deletionTimestamp"):
        decision = JobDecision()
        for wl in owned_workloads:
            new = without_finalizer(wl)
            if new is not None:
                decision.writes.append(JobWrite(WORKLOAD, UPDATE, new))
        return decision
    if not _managed(job, ctx):
        return JobDecision(ignored=True)
    run = RunState(job, ctx)
    found, done = _ensure_one_workload(run, owned_workloads)
    if done:
        return run.decision
    _reconcile_with(run, found)
    return run.decision


def _reconcile_with(run: RunState, wl: Obj | None) -> None:
    now = run.ctx.now
    if wl is not None and workload_finished(wl):
        run.event(REASON_FINISHED_WORKLOAD, f"Workload '{key_of(wl)}' is declared finished")
        remove_finalizer(run, wl)
        return
    if wl is not None and meta_of(wl).get("deletionTimestamp"):
        stop_job(run, wl, MSG_WORKLOAD_DELETED)
        remove_finalizer(run, wl)
        return
    done = finished(run.job)
    if done is not None:
        if wl is not None:
            reason, message = done
            run.workload_status(wl, wl_rules.finish(wl, reason, message, now))
            run.event(REASON_FINISHED_WORKLOAD, f"Workload '{key_of(wl)}' is declared finished")
        return
    if wl is None:
        _handle_no_workload(run)
        return
    if _update_reclaimable_pods(run, wl):
        return
    if run.ctx.wait_for_pods_ready:
        status = wl_rules.set_pods_ready(wl, batchjob.pods_ready(run.job), now)
        if _pods_ready_changed(wl, status):
            run.workload_status(wl, status)
            return
    evicted = find_condition((wl.get("status") or {}).get("conditions"), EVICTED)
    if evicted is not None and evicted.get("status") == "True":
        stop_job(run, wl, str(evicted.get("message") or ""))
        if is_reserved(wl) and not is_active(run.job):
            run.workload_status(wl, wl_rules.release_quota(wl, now))
        return
    if is_suspended(run.job):
        if is_admitted(wl):
            start_job(run, wl)
            return
        if is_reserved(wl):
            _admission_check_event(run, wl)
        queue = queue_name(run.job)
        if (wl.get("spec") or {}).get("queueName") != queue:
            run.write_workload(
                UPDATE, {**wl, "spec": {**(wl.get("spec") or {}), "queueName": queue}}
            )
        return
    if not is_admitted(wl):
        stop_job(run, wl, MSG_NOT_ADMITTED)
