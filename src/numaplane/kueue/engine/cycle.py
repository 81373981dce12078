"""One scheduling cycle as upstream's ``Scheduler.schedule`` runs it around the pure decision
(:func:`numaplane.kueue.scheduler.scheduler.schedule`): pop the heads, take a snapshot, decide
with the LocalQueues and namespace labels the informers saw, then *assume* every reservation in
the cache before its status write goes out (``admit``), turn each preemption into the target's
eviction write and each pending head into a requeue, a Warning event and, when it changed, a
status write (``requeueAndUpdate``). The reservation and eviction writes carry their decision
(``Write.redo``) so that a conflict with a concurrent status change redoes them on the fresh
object, as upstream's server-side apply with retry does."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Final

from numaplane.kueue import constants as c
from numaplane.kueue import workload as rules
from numaplane.kueue.api.conditions import parse_time
from numaplane.kueue.api.model import Admission, Workload
from numaplane.kueue.api.workload_parse import admission_to_dict
from numaplane.kueue.engine.state import (
    STATUS,
    WORKLOAD,
    EngineState,
    Event,
    Obj,
    Outcome,
    Touched,
    Write,
    with_kind,
    with_status,
)
from numaplane.kueue.queue import is_pending
from numaplane.kueue.scheduler.scheduler import (
    REQUEUE_IMMEDIATE,
    Pending,
    SchedulerOptions,
    schedule,
)
from numaplane.kueue.workload.status import truncate_event_message

NORMAL: Final = "Normal"
WARNING: Final = "Warning"


def _conditions(status: Mapping[str, Any]) -> dict[str, tuple[str, str, str, float]]:
    return {
        str(cond.get("type")): (
            str(cond.get("status", "")),
            str(cond.get("reason", "")),
            str(cond.get("message", "")),
            parse_time(cond.get("lastTransitionTime")),
        )
        for cond in status.get("conditions") or ()
    }


def assumed_version(
    wl: Workload, admission: Admission, status: Mapping[str, Any], raw: Obj
) -> Workload:
    """``wl`` as its reserved status reads, for a workload never evicted: only the admission
    and the conditions change, so the model is derived rather than parsed again (the podSets'
    quantities are the costly part of a parse, and a reservation leaves the spec alone)."""
    return dataclasses.replace(wl, admission=admission, conditions=_conditions(status), raw=raw)


def _reserve(
    state: EngineState, wl: Workload, admission: Admission, considered: str, now: float
) -> Write | None:
    raw = state.objects[WORKLOAD].get(wl.key)
    if raw is None:
        return None
    state.last_tried.pop(wl.key, None)
    cq = state.cluster_queues.get(admission.cluster_queue)
    # Admitted is synced with the reservation only when the workload already carries every
    # check its ClusterQueue requires (upstream prepareWorkload); else the workload
    # controller adds the checks first.
    status = rules.reserve_quota(raw, admission_to_dict(admission), now, cq=cq)
    new = with_status(raw, status)
    current = state.workloads.get(wl.key, wl)
    if c.EVICTED in current.conditions:
        # The flip of Evicted can move its queue-order time: read it the long way.
        assumed = state.parse_workload(new)
    else:
        assumed = assumed_version(current, admission, status, new)
    state.cache.assume_workload(assumed)
    state.assumed[wl.key] = assumed
    obj = with_kind(WORKLOAD, new)
    events = tuple(
        Event(obj, e.type, e.reason, e.message)
        for e in rules.reservation_events(raw, status, now, considered=considered)
    )
    spec = raw.get("spec")

    def redo(fresh: Obj) -> Obj | None:
        # Still ours to reserve: the assumption stands, the workload is still pending with
        # the spec the decision was made for.
        current = state.workloads.get(wl.key)
        if wl.key not in state.assumed or current is None or not is_pending(current):
            return None
        if fresh.get("spec") != spec:
            return None
        redone = rules.reserve_quota(fresh, admission_to_dict(admission), now, cq=cq)
        return with_kind(WORKLOAD, with_status(fresh, redone))

    return Write(STATUS, WORKLOAD, obj, events, assumed=wl.key, redo=redo)


def _preempt(
    state: EngineState, target: Workload, reason: str, message: str, now: float
) -> Write | None:
    raw = state.objects[WORKLOAD].get(target.key)
    if raw is None or state.workloads[target.key].is_evicted:
        # Being evicted already (upstream IssuePreemptions): counted, nothing to write.
        return None
    status = rules.preempted(raw, reason, message, now)
    obj = with_kind(WORKLOAD, with_status(raw, status))

    def redo(fresh: Obj) -> Obj | None:
        current = state.workloads.get(target.key)
        if current is None or current.is_evicted or not current.has_quota_reservation:
            return None
        return with_kind(WORKLOAD, with_status(fresh, rules.preempted(fresh, reason, message, now)))

    return Write(STATUS, WORKLOAD, obj, (Event(obj, NORMAL, "Preempted", message),), redo=redo)


def _pending(state: EngineState, pending: Pending, now: float) -> Outcome:
    wl, reason, message = pending.workload, pending.reason, pending.message
    if pending.last_tried is not None:
        state.last_tried[wl.key] = pending.last_tried
    else:
        state.last_tried.pop(wl.key, None)
    # The latest version: the head may have changed while the cycle ran (never in memory).
    current = state.workloads.get(wl.key, wl)
    state.queues.requeue(
        current, immediate=pending.requeue == REQUEUE_IMMEDIATE, reason=pending.requeue_reason
    )
    raw = state.objects[WORKLOAD].get(wl.key)
    if raw is None:
        return Outcome()
    obj = with_kind(WORKLOAD, raw)
    outcome = Outcome(events=[Event(obj, WARNING, reason, truncate_event_message(message))])
    status = rules.set_pending(raw, reason, message, now)
    if status == (raw.get("status") or {}):
        return outcome

    def redo(fresh: Obj) -> Obj | None:
        # Upstream applies this status with force (server-side apply, no resourceVersion), so
        # it lands over a concurrent write of the workload controller. Dropping it instead
        # would leave the head parked with the controller's "pending evaluation" until some
        # unrelated change woke its queue.
        current = state.workloads.get(wl.key)
        if current is None or wl.key in state.assumed or not is_pending(current):
            return None
        redone = rules.set_pending(fresh, reason, message, now)
        if redone == (fresh.get("status") or {}):
            return None
        return with_kind(WORKLOAD, with_status(fresh, redone))

    outcome.writes.append(
        Write(STATUS, WORKLOAD, with_kind(WORKLOAD, with_status(raw, status)), redo=redo)
    )
    return outcome


def scheduler_options(state: EngineState) -> SchedulerOptions:
    """The cycle's options from Kueue's configuration."""
    gates = state.config.feature_gates
    return SchedulerOptions(
        priority_sorting_within_cohort=gates.get("PrioritySortingWithinCohort", True),
        partial_admission=gates.get("PartialAdmission", True),
        fair_sharing=state.config.fair_sharing.enable,
    )


def cycle(state: EngineState, now: float) -> Outcome:
    """Run one scheduling cycle; the writes and events it asks for."""
    heads = state.queues.heads()
    outcome = Outcome()
    if not heads:
        return outcome
    snapshot = state.cache.snapshot()
    result = schedule(
        snapshot,
        heads,
        now=now,
        options=scheduler_options(state),
        local_queues={key: lq.cluster_queue for key, lq in state.local_queues.items()},
        namespace_labels=state.namespace_labels_all,
        last_tried=state.last_tried,
    )
    for reservation in result.reserved:
        # The flavors tried that did not simply fit (upstream appends
        # FormatFlavorAssignmentAttemptsForEvents to the event).
        write = _reserve(
            state,
            reservation.workload,
            reservation.admission,
            reservation.flavors_considered,
            now,
        )
        if write is not None:
            outcome.writes.append(write)
    for preemption in result.preempted:
        write = _preempt(state, preemption.target, preemption.reason, preemption.message, now)
        if write is not None:
            outcome.writes.append(write)
    for pending in result.pending:
        outcome.extend(_pending(state, pending, now))
    return outcome


def write_failed(state: EngineState, write: Write) -> Touched:
    """A write of the cycle failed: forget the reservation it carried and queue the workload
    again as it is now (upstream ``admit``'s failure path)."""
    key = write.assumed
    if not key:
        return Touched()
    assumed = state.assumed.pop(key, None)
    state.cache.forget_workload(key)
    current = state.workloads.get(key)
    touched = Touched(workloads={key}, schedule=True)
    if current is not None:
        state.cache.upsert_workload(current)
        state.queues.upsert_workload(current)
    if assumed is not None and assumed.admission is not None:
        touched.merge(state.wake_tree([assumed.admission.cluster_queue]))
    return touched
