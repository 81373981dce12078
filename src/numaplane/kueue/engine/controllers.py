"""The Workload controller and the batch/v1 Job integration as writes: the pure rules
(:func:`numaplane.kueue.workload.reconcile_workload`, :func:`numaplane.kueue.jobs.reconcile_job`)
decide, this module turns their decisions into :class:`Write` and :class:`Event` values."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Final

from numaplane.kueue import jobs as job_rules
from numaplane.kueue import workload as rules
from numaplane.kueue.engine.state import (
    JOB,
    PRIORITY_CLASS,
    STATUS,
    UPDATE,
    WORKLOAD,
    WORKLOAD_PRIORITY_CLASS,
    EngineState,
    Event,
    Obj,
    Outcome,
    Write,
    with_kind,
    with_status,
)
from numaplane.kueue.jobs import JobContext

#: The Job integration's name in ``integrations.frameworks``.
JOB_FRAMEWORK: Final = "batch/job"


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


def _priority_classes(state: EngineState) -> dict[str, job_rules.PriorityClassInfo]:
    found = {}
    for name, obj in state.objects[PRIORITY_CLASS].items():
        found[name] = job_rules.PriorityClassInfo(
            name, int(obj.get("value") or 0), bool(obj.get("globalDefault"))
        )
    return found


def _workload_priority_classes(state: EngineState) -> dict[str, int]:
    return {
        name: int(obj.get("value") or 0)
        for name, obj in state.objects[WORKLOAD_PRIORITY_CLASS].items()
    }


def job_context(state: EngineState, job: Mapping[str, Any] | None, now: float) -> JobContext:
    """What the Job integration reads besides the Job and its Workloads."""
    config = state.config
    namespace = str(((job or {}).get("metadata") or {}).get("namespace") or "")
    prebuilt = None
    if job is not None:
        name = job_rules.prebuilt_workload_name(job)
        if name:
            prebuilt = state.objects[WORKLOAD].get(f"{namespace}/{name}")
    return JobContext(
        now=now,
        flavors=state.cache.flavors(),
        workload_priority_classes=_workload_priority_classes(state),
        priority_classes=_priority_classes(state),
        prebuilt_workload=prebuilt,
        manage_jobs_without_queue_name=config.manage_jobs_without_queue_name,
        managed_jobs_namespace_selector=config.jobs_namespace_selector(),
        namespace_labels=state.namespace_labels(namespace),
        wait_for_pods_ready=config.wait_for_pods_ready_enabled,
        label_keys_to_copy=config.integrations.label_keys_to_copy,
    )


def reconcile_job(state: EngineState, key: str, now: float) -> Outcome:
    """Upstream ``JobReconciler.ReconcileGenericJob`` for the batch/v1 Job ``key``; its writes
    are ordered (a Workload created, then the Job started, ...)."""
    if JOB_FRAMEWORK not in state.config.integrations.frameworks:
        return Outcome()
    job = state.objects[JOB].get(key)
    owned = state.workloads_of_job(key)
    if job is None and not owned:
        return Outcome()
    decision = job_rules.reconcile_job(job, owned, job_context(state, job, now))
    outcome = Outcome(requeue_after=decision.requeue_after, ordered=True, error=decision.error)
    for jw in decision.writes:
        obj = with_kind(jw.kind, jw.obj)
        patch = dict(jw.patch) if jw.patch is not None and jw.op == UPDATE else None
        outcome.writes.append(Write(jw.op, jw.kind, obj, patch=patch))
    if job is not None:
        events = _events(with_kind(JOB, job), decision.events)
        if outcome.writes:
            # Recorded once the pass's writes are made, as upstream records them after each.
            last = outcome.writes[-1]
            outcome.writes[-1] = dataclasses.replace(last, events=last.events + events)
        else:
            outcome.events.extend(events)
    return outcome
