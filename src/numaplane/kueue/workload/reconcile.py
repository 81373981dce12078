"""One pass of upstream's workload controller (``pkg/controller/core/workload_controller.go``
``Reconcile``) over a RAW Workload: the first rule that applies gives a new status (or the
``spec.active=false`` update), events and when to look again. The caller writes the result and
calls again on the next observation, as the controller reconciles again on its own update.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from numaplane.kueue.api.conditions import find_condition, format_time, parse_time, set_condition
from numaplane.kueue.api.model import (
    STOP_HOLD_AND_DRAIN,
    STOP_NONE,
    AdmissionCheck,
    ClusterQueue,
    LocalQueue,
)
from numaplane.kueue.constants import (
    CHECK_REJECTED,
    CHECK_RETRY,
    DEACTIVATION_TARGET,
    QUOTA_RESERVED,
    REASON_ADMISSION_CHECK,
    REASON_BACKOFF_FINISHED,
    REASON_CLUSTER_QUEUE_STOPPED,
    REASON_DEACTIVATED,
    REASON_LOCAL_QUEUE_STOPPED,
    REASON_PODS_READY_TIMEOUT,
    REQUEUED,
)
from numaplane.kueue.workload import checks as ac
from numaplane.kueue.workload import eviction as ev
from numaplane.kueue.workload import status as st
from numaplane.kueue.workload import timeouts as tm
from numaplane.kueue.workload.decision import DEFAULT_OPTIONS, WorkloadDecision, WorkloadOptions
from numaplane.kueue.workload.status import Event, Status

REASON_REACTIVATED: Final = "Reactivated"
REASON_CLUSTER_QUEUE_RESTARTED: Final = "ClusterQueueRestarted"
REASON_LOCAL_QUEUE_RESTARTED: Final = "LocalQueueRestarted"
REASON_MISCONFIGURED: Final = "Misconfigured"
REASON_SUSPENDED: Final = "Suspended"
MSG_PENDING_EVALUATION: Final = "Workload is pending evaluation in the scheduling queue"

#: ``QuotaReserved=False`` reasons the scheduler wrote; kept until its next cycle (upstream
#: ``schedulerSetReasons``).
SCHEDULER_REASONS: Final = frozenset(
    {
        "WaitingForQuota",
        "NoMatchingFlavor",
        "ExceedsMaxQuota",
        "TopologyPlacementFailed",
        "WaitingForPreemptedWorkloads",
        "WaitingForPodsReady",
    }
)


_NOTHING: Final = WorkloadDecision()


def _changed(raw: Mapping[str, Any], status: Status) -> Status | None:
    return None if status == (raw.get("status") or {}) else status


def _with_status(raw: Mapping[str, Any], status: Status) -> dict[str, Any]:
    return {**raw, "status": status}


def _requeued_false_reason(status: Mapping[str, Any]) -> str | None:
    cond = find_condition(status.get("conditions"), REQUEUED)
    if cond is None or cond.get("status") != "False":
        return None
    return str(cond.get("reason", ""))


def _requeue_at(status: Mapping[str, Any]) -> float | None:
    text = (status.get("requeueState") or {}).get("requeueAt")
    return parse_time(text) if text else None


def requeue_after_backoff(
    raw: Mapping[str, Any], now: float, config: WorkloadOptions = DEFAULT_OPTIONS
) -> Status:
    """The controller's requeue step for an active workload with ``Requeued=False``:
    ``Deactivated`` → True ``Reactivated`` "The workload was reactivated"; ``PodsReadyTimeout``
    or ``AdmissionCheck`` → once ``requeueAt`` has passed, ``requeueAt`` cleared and True
    ``BackoffFinished`` "The workload backoff was finished". ``config`` is unused here (the
    backoff was computed at eviction) and kept for the callers' symmetry."""
    del config
    status = st.status_copy(raw)
    reason = _requeued_false_reason(status)
    if reason is not None and reason.startswith(REASON_DEACTIVATED):
        # "Deactivated" or a derived "DeactivatedDueTo<cause>".
        st.set_requeued(status, REASON_REACTIVATED, "The workload was reactivated", True, now)
    elif reason in (REASON_PODS_READY_TIMEOUT, REASON_ADMISSION_CHECK):
        at = _requeue_at(status)
        if at is not None and at > now:
            return status
        if "requeueState" in status:
            status["requeueState"].pop("requeueAt", None)
        st.set_requeued(
            status, REASON_BACKOFF_FINISHED, "The workload backoff was finished", True, now
        )
    return status


def _pending_reason(
    raw: Mapping[str, Any],
    status: Status,
    cq: ClusterQueue | None,
    lq: LocalQueue | None,
    cq_active: bool,
) -> tuple[str, str] | None:
    """Upstream ``resolveGranularUnadmittedQuotaReservedCondition``."""
    queue_name = (raw.get("spec") or {}).get("queueName", "")
    if not st.is_active(raw):
        return (REASON_DEACTIVATED, "The workload is deactivated")
    if lq is None:
        return (REASON_MISCONFIGURED, f"LocalQueue {queue_name} doesn't exist")
    if lq.stop_policy != STOP_NONE:
        return (REASON_SUSPENDED, f"LocalQueue {queue_name} is inactive")
    if cq is None:
        return (REASON_MISCONFIGURED, f"ClusterQueue {lq.cluster_queue} doesn't exist")
    if not cq_active:
        return (REASON_SUSPENDED, f"ClusterQueue {cq.name} is inactive")
    cond = find_condition(status.get("conditions"), QUOTA_RESERVED)
    if cond is not None and cond.get("reason") in SCHEDULER_REASONS:
        return (str(cond.get("reason")), str(cond.get("message", "")))
    return (st.REASON_PENDING_EVALUATION, MSG_PENDING_EVALUATION)


def reconcile_workload(
    raw: Mapping[str, Any],
    cq: ClusterQueue | None,
    checks: Mapping[str, AdmissionCheck] | None,
    now: float,
    config: WorkloadOptions = DEFAULT_OPTIONS,
    *,
    lq: LocalQueue | None = None,
    cq_active: bool = True,
) -> WorkloadDecision:
    """One workload-controller pass. ``lq`` is the workload's LocalQueue (None: it does not
    exist), ``cq`` its ClusterQueue (None: missing), ``cq_active`` the ClusterQueue's
    ``Active`` condition. ``checks`` (the AdmissionCheck objects) is accepted for the callers;
    which checks apply comes from the ClusterQueue's strategy."""
    del checks
    status = st.status_copy(raw)
    if st.is_finished(status):
        return _NOTHING
    retry_at = ac.max_retry_time(status)
    if retry_at is not None and retry_at > now:
        # An admission check asked to retry later (KEP-3258, upstream NeedsRequeueAtUpdate):
        # hold the workload until then; a later requeueAt already set is never moved back.
        current = _requeue_at(status)
        if current is None or current < retry_at:
            status.setdefault("requeueState", {})["requeueAt"] = format_time(retry_at)
            return WorkloadDecision(new_status=status, steps=("retry-time",))
    if st.is_active(raw):
        if st.condition_true(status, DEACTIVATION_TARGET):
            return WorkloadDecision(deactivate=True, steps=("deactivate",))
        at = _requeue_at(status)
        if at is not None:
            if at > now:
                return WorkloadDecision(requeue_after=at - now, steps=("wait-backoff",))
            if st.state(status) == "pending":
                status["requeueState"].pop("requeueAt", None)
                return WorkloadDecision(new_status=status, steps=("backoff-elapsed",))
        if _requeued_false_reason(status) is not None:
            requeued = requeue_after_backoff(raw, now, config)
            if (new := _changed(raw, requeued)) is not None:
                return WorkloadDecision(new_status=new, steps=("requeued",))
    else:
        if not st.is_evicted(status) or "requeueState" in status:
            evicting = not st.is_evicted(status)
            new_status = ev.deactivate(raw, now)
            events: tuple[Event, ...] = ()
            if evicting and status.get("admission") is not None:
                evicted = find_condition(new_status.get("conditions"), "Evicted") or {}
                target = find_condition(status.get("conditions"), DEACTIVATION_TARGET)
                cause = str(target.get("reason", "")) if target is not None else ""
                events = (
                    ev.eviction_event(REASON_DEACTIVATED, str(evicted.get("message", "")), cause),
                )
            return WorkloadDecision(new_status=new_status, events=events, steps=("deactivated",))

    requeued_reason = _requeued_false_reason(status)
    lq_active = lq is not None and lq.stop_policy == STOP_NONE
    if lq_active and requeued_reason == REASON_LOCAL_QUEUE_STOPPED:
        st.set_requeued(
            status,
            REASON_LOCAL_QUEUE_RESTARTED,
            "The LocalQueue was restarted after being stopped",
            True,
            now,
        )
        return WorkloadDecision(new_status=status, steps=("lq-restarted",))
    if lq is not None and cq is not None:
        if requeued_reason == REASON_CLUSTER_QUEUE_STOPPED and cq.stop_policy == STOP_NONE:
            st.set_requeued(
                status,
                REASON_CLUSTER_QUEUE_RESTARTED,
                "The ClusterQueue was restarted after being stopped",
                True,
                now,
            )
            return WorkloadDecision(new_status=status, steps=("cq-restarted",))
        synced = ac.sync_admission_checks(raw, cq, None, now)
        if (new := _changed(raw, synced)) is not None:
            return WorkloadDecision(new_status=new, steps=("sync-checks",))

    if not st.is_admitted(status):
        if not st.has_quota_reservation(status):
            want = _pending_reason(raw, status, cq, lq, cq_active)
            if want is not None:
                reason, message = want[0], st.truncate_condition_message(want[1])
                conditions = st.conditions_list(status)
                gen = st.generation_of(raw)
                set_condition(conditions, QUOTA_RESERVED, "False", reason, message, now, gen)
        status = st.sync_admitted(_with_status(raw, status), now)
        if (new := _changed(raw, status)) is not None:
            events = ()
            if st.is_admitted(new):
                reserved = find_condition(new.get("conditions"), QUOTA_RESERVED) or {}
                waited = now - parse_time(reserved.get("lastTransitionTime"))
                cq_name = (new.get("admission") or {}).get("clusterQueue", "")
                events = (
                    Event(
                        "Normal",
                        "Admitted",
                        f"Admitted by ClusterQueue {cq_name}, wait time since reservation "
                        f"was {waited:.0f}s",
                    ),
                )
            return WorkloadDecision(new_status=new, events=events, steps=("sync-admitted",))

    if st.has_quota_reservation(status):
        return _reconcile_reserved(raw, status, cq, lq, now, config)
    return _NOTHING


def _reconcile_reserved(
    raw: Mapping[str, Any],
    status: Status,
    cq: ClusterQueue | None,
    lq: LocalQueue | None,
    now: float,
    config: WorkloadOptions,
) -> WorkloadDecision:
    # Check-based eviction (upstream reconcileCheckBasedEviction).
    if not st.is_evicted(status) and (
        ac.has_retry_checks(status) or ac.has_rejected_checks(status)
    ):
        if ac.has_rejected_checks(status):
            message = ac.checks_message(ac.checks_in_state(status, CHECK_REJECTED), CHECK_REJECTED)
            new = ev.set_deactivation_target(raw, REASON_ADMISSION_CHECK, message, now)
            event = Event(
                "Warning",
                "AdmissionCheckRejected",
                st.truncate_event_message(f"Deactivated due to {message}"),
            )
            return WorkloadDecision(new_status=new, events=(event,), steps=("checks-rejected",))
        message = "Evicted due to " + ac.checks_message(
            ac.checks_in_state(status, CHECK_RETRY), CHECK_RETRY
        )
        new = ev.evict(raw, REASON_ADMISSION_CHECK, message, now)
        event = ev.eviction_event(REASON_ADMISSION_CHECK, message)
        return WorkloadDecision(new_status=new, events=(event,), steps=("checks-retry",))

    queue_name = (raw.get("spec") or {}).get("queueName", "")
    admitted = st.is_admitted(status)
    # LocalQueue then ClusterQueue stop policies (reconcileOn{Local,Cluster}QueueActiveState).
    for kind, obj, missing_name, stop_reason in (
        ("LocalQueue", lq, queue_name, REASON_LOCAL_QUEUE_STOPPED),
        ("ClusterQueue", cq, _cq_name(status, lq, cq), REASON_CLUSTER_QUEUE_STOPPED),
    ):
        stop = obj.stop_policy if obj is not None else STOP_NONE
        if admitted:
            if stop != STOP_HOLD_AND_DRAIN or st.is_evicted(status):
                continue
            message = f"The {kind} is stopped"
            new = ev.evict(raw, stop_reason, message, now)
            return WorkloadDecision(
                new_status=new,
                events=(ev.eviction_event(stop_reason, message),),
                steps=(f"{kind}-drain",),
            )
        if obj is None:
            new = st.set_pending(
                raw, REASON_MISCONFIGURED, f"{kind} {missing_name} is terminating or missing", now
            )
            return WorkloadDecision(new_status=_changed(raw, new), steps=(f"{kind}-missing",))
        if stop != STOP_NONE:
            new = st.set_pending(raw, REASON_SUSPENDED, f"{kind} {missing_name} is stopped", now)
            return WorkloadDecision(new_status=_changed(raw, new), steps=(f"{kind}-stopped",))

    pods_after, decision = tm.pods_ready_timeout(raw, status, now, config)
    if decision is not None:
        return decision
    exec_after, decision = tm.max_execution_time(raw, status, now)
    if decision is not None:
        return decision
    waits = [w for w in (pods_after, exec_after) if w is not None and w > 0]
    return WorkloadDecision(requeue_after=min(waits) if waits else None)


def _cq_name(status: Mapping[str, Any], lq: LocalQueue | None, cq: ClusterQueue | None) -> str:
    if cq is not None:
        return cq.name
    if lq is not None:
        return lq.cluster_queue
    return str((status.get("admission") or {}).get("clusterQueue", ""))
