"""The MultiKueue workload reconciler as a pure function (upstream
``pkg/controller/admissionchecks/multikueue/workload.go``, ``wlReconciler.Reconcile`` and
``reconcileGroup``; SPEC §3.2–3.11, steps R0–R8 of §3.4): from what the manager knows of a
Workload, its Job and their copies on the clusters of its MultiKueueConfig, the writes to make
(:mod:`numaplane.kueue.multikueue.actions`), when to look again and the error to retry. The
steps R2–R8 are :class:`numaplane.kueue.multikueue.group.GroupPass`'s.

Elastic workloads (R1), orchestrated preemption (R7) and multi-workload jobs are not supported:
numaplane has neither workload slices nor the alpha gate, nor LeaderWorkerSet.
"""

from __future__ import annotations

from numaplane.gofmt import go_quote
from numaplane.kueue.constants import CHECK_REJECTED
from numaplane.kueue.multikueue import constants as mk
from numaplane.kueue.multikueue.actions import Reconciled
from numaplane.kueue.multikueue.batchjob import is_batch_job, owner_of, unmanaged_reason
from numaplane.kueue.multikueue.copies import find_check
from numaplane.kueue.multikueue.dispatch import DispatchState
from numaplane.kueue.multikueue.group import GroupPass
from numaplane.kueue.multikueue.view import GroupView, ReconcileOptions, workload_key

__all__ = ["reconcile"]


def reconcile(
    view: GroupView,
    options: ReconcileOptions,
    now: float,
    dispatcher_state: DispatchState | None = None,
) -> Reconciled:
    """One pass of upstream's workload reconciler. Workloads without the MultiKueue check, or
    whose check is Rejected, are left alone; a Workload not owned by a batch/v1 Job, or whose
    Job is not ``managedBy`` MultiKueue, gets its check Rejected; a deleted one has its
    remote objects removed from every connected cluster (R0); the others go through R2–R8.
    ``dispatcher_state`` holds the incremental dispatcher's rounds (edited in place; without
    one every pass starts a new round, so the controller keeps one for its lifetime)."""
    wl = view.local if view.local is not None else view.deleted
    if wl is None:
        return Reconciled()
    state = dispatcher_state if dispatcher_state is not None else DispatchState()
    check = find_check(wl.get("status") or {}, view.check) if view.check else None
    if check is None or check.get("state") == CHECK_REJECTED:
        return Reconciled()
    deleted = view.local is None or bool((wl.get("metadata") or {}).get("deletionTimestamp"))
    owner = owner_of(wl)
    if not is_batch_job(owner):
        if deleted:
            return Reconciled()
        message = mk.MSG_NO_ADAPTER
        if owner is not None:
            message = mk.no_adapter_for(str(owner.get("apiVersion", "")), str(owner.get("kind")))
        return GroupPass(view, options, now, wl, None).reject(message)
    job_name = str(owner.get("name", ""))
    group = GroupPass(view, options, now, wl, job_name)
    if deleted:
        state.forget(workload_key(wl))
        group.remove_everywhere()
        return group.out
    if view.local_job is None:
        # Upstream reads the Job to ask the adapter; it is not there (yet or any more).
        return Reconciled(error=f"jobs.batch {go_quote(job_name)} not found")
    reason = unmanaged_reason(view.local_job)
    if reason is not None:
        return group.reject(reason)
    group.run(state)
    return group.out
