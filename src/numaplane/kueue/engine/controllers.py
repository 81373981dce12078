"""The Workload controller and the batch/v1 Job integration as writes: the pure rules
(:func:`numaplane.kueue.workload.reconcile_workload`, :func:`numaplane.kueue.jobs.reconcile_job`)
decide, this module turns their decisions into :class:`Write` and :class:`Event` values."""

from __future__ import annotations

from typing import Any

from numaplane.kueue import jobs as job_rules
from numaplane.kueue import workload as rules
from numaplane.kueue.engine.state import (
    CREATE,
    DELETE,
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


def reconcile_workload(state: EngineState, key: str, now: float) -> Outcome:
    """Upstream ``WorkloadReconciler.Reconcile`` for ``key``."""
    raw = state.objects[WORKLOAD].get(key)
    wl = state.workloads.get(key)
    if raw is None or wl is None or key in state.assumed:
        # Gone, or a reservation of ours is in flight: its own event brings us back.
        return Outcome()
    cq = state.cluster_queues.get(state.cluster_queue_of(wl))
    decision = rules.reconcile_workload(raw, cq, state.admission_checks, now, state.config)
    outcome = Outcome(requeue_after=decision.requeue_after)
    obj = with_kind(WORKLOAD, raw)
    events = _events(obj, decision.events)
    status = decision.new_status
    if status is not None and status != (raw.get("status") or {}):
        new = with_kind(WORKLOAD, with_status(raw, status))
        outcome.writes.append(Write(STATUS, WORKLOAD, new, _events(new, decision.events)))
    else:
        outcome.events.extend(events)
    return outcome


def reconcile_job(state: EngineState, key: str, now: float) -> Outcome:
    """Upstream ``JobReconciler.ReconcileGenericJob`` for the batch/v1 Job ``key``."""
    job = state.objects[JOB].get(key)
    if job is None:
        return Outcome()
    owned = state.workloads_of_job(key)
    context = job_rules.JobContext(
        now=now,
        config=state.config,
        flavors=state.cache.flavors() if hasattr(state.cache, "flavors") else {},
        workload_priority_classes=state.objects["WorkloadPriorityClass"],
        priority_classes=state.objects["PriorityClass"],
        local_queues=state.local_queues,
        namespace_labels=state.namespace_labels(key.partition("/")[0]),
    )
    decision = job_rules.reconcile_job(job, owned, context)
    outcome = Outcome(requeue_after=getattr(decision, "requeue_after", None))
    job_obj = with_kind(JOB, job)
    for action in decision.actions:
        verb = action.verb
        target = action.obj
        kind = action.kind
        obj = with_kind(kind, target)
        events = _events(job_obj if kind == JOB or action.event_on_job else obj, action.events)
        if verb == "create_workload" or (verb == CREATE and kind == WORKLOAD):
            outcome.writes.append(Write(CREATE, WORKLOAD, obj, events))
        elif verb in (UPDATE, "update_job"):
            outcome.writes.append(Write(UPDATE, kind, obj, events))
        elif verb in (STATUS, "workload_status"):
            outcome.writes.append(Write(STATUS, kind, obj, events))
        elif verb in (DELETE, "delete_workload"):
            outcome.writes.append(Write(DELETE, kind, obj, events))
        else:
            outcome.events.extend(events)
    outcome.events.extend(_events(job_obj, getattr(decision, "events", ())))
    return outcome
