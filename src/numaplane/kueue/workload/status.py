"""Workload status rules over RAW Workload objects (the JSON dicts the API serves), as upstream's
``pkg/workload/workload.go``, ``evict/evict.go``, ``finish/finish.go`` and the job framework's
quota release: each rule takes the object and returns a NEW ``status`` dict (a deep copy; the
input is never mutated). Reasons and messages are upstream's, verbatim (SPEC §2).

Pure: ``now`` is seconds since the epoch, written as RFC 3339 (``metav1.Time``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from numaplane.kueue.api.conditions import (
    find_condition,
    format_time,
    parse_time,
    remove_condition,
    set_condition,
)
from numaplane.kueue.constants import (
    ADMITTED,
    CHECK_PENDING,
    CHECK_READY,
    CHECK_RETRY,
    DEACTIVATION_TARGET,
    EVICTED,
    FINISHED,
    PODS_READY,
    PREEMPTED,
    QUOTA_RESERVED,
    REASON_DEACTIVATED,
    REASON_NO_RESERVATION,
    REASON_PREEMPTED,
    REASON_QUOTA_RESERVED,
    REASON_UNSATISFIED_CHECKS,
    REQUEUED,
)

Status = dict[str, Any]

BLOCKED_ON_PREEMPTION_GATES: Final = "BlockedOnPreemptionGates"
#: ``QuotaReserved=False`` reason while waiting for the scheduler (observability gate on;
#: legacy ``Pending``).
REASON_PENDING_EVALUATION: Final = "PendingEvaluation"
REASON_NODE_FAILURES: Final = "NodeFailures"
REASON_PENDING_DELAYED_TOPOLOGY: Final = "PendingDelayedTopologyRequests"
REASON_ADMITTED: Final = "Admitted"
# PodsReady reasons (upstream ``generatePodsReadyCondition``).
REASON_WAIT_FOR_START: Final = "WaitForStart"
REASON_WAIT_FOR_RECOVERY: Final = "WaitForRecovery"
REASON_STARTED: Final = "Started"
REASON_RECOVERED: Final = "Recovered"

MSG_ADMITTED: Final = "The workload is admitted"
MSG_NO_RESERVATION: Final = "The workload has no reservation"
MSG_UNSATISFIED_CHECKS: Final = "The workload has not all checks ready"
MSG_PENDING_TOPOLOGY: Final = "There are pending delayed topology requests"
MSG_FINISHED: Final = "Workload has finished"
MSG_NOT_READY: Final = "Not all pods are ready or succeeded"
MSG_WAITING_FOR_RECOVERY: Final = "At least one pod has failed, waiting for recovery"
MSG_READY: Final = "All pods reached readiness and the workload is running"

#: Eviction reasons after which the quota release marks the workload ``Requeued=True`` at once
#: (upstream job reconciler: preemption and node failures need no backoff).
_REQUEUE_AT_ONCE: Final = frozenset({REASON_PREEMPTED, REASON_NODE_FAILURES})


@dataclass(frozen=True, slots=True)
class Event:
    """An event to record on the Workload: ``type`` is ``Normal`` or ``Warning``."""

    type: str
    reason: str
    message: str


# --- reading ------------------------------------------------------------------------------------


def status_copy(raw: Mapping[str, Any]) -> Status:
    """A deep copy of ``raw["status"]`` ({} when absent): what every rule edits."""
    return copy.deepcopy(dict(raw.get("status") or {}))


def _conditions(status: Status) -> list[dict[str, Any]]:
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        conditions = []
        status["conditions"] = conditions
    return conditions


def _generation(raw: Mapping[str, Any]) -> int | None:
    generation = (raw.get("metadata") or {}).get("generation")
    return generation if isinstance(generation, int) else None


def condition_true(status: Mapping[str, Any], kind: str) -> bool:
    """Whether condition ``kind`` of ``status`` is True."""
    found = find_condition(status.get("conditions"), kind)
    return found is not None and found.get("status") == "True"


def condition_false(status: Mapping[str, Any], kind: str) -> bool:
    """Whether condition ``kind`` of ``status`` is present and False."""
    found = find_condition(status.get("conditions"), kind)
    return found is not None and found.get("status") == "False"


def is_active(raw: Mapping[str, Any]) -> bool:
    """``spec.active`` (default true)."""
    return (raw.get("spec") or {}).get("active", True) is not False


def has_quota_reservation(status: Mapping[str, Any]) -> bool:
    """``QuotaReserved=True``."""
    return condition_true(status, QUOTA_RESERVED)


def is_admitted(status: Mapping[str, Any]) -> bool:
    """``Admitted=True``."""
    return condition_true(status, ADMITTED)


def is_finished(status: Mapping[str, Any]) -> bool:
    """``Finished=True``."""
    return condition_true(status, FINISHED)


def is_evicted(status: Mapping[str, Any]) -> bool:
    """``Evicted=True``."""
    return condition_true(status, EVICTED)


def state(status: Mapping[str, Any]) -> str:
    """Upstream ``workload.Status``: finished > admitted > quotaReserved > pending."""
    if is_finished(status):
        return "finished"
    if is_admitted(status):
        return "admitted"
    if has_quota_reservation(status):
        return "quotaReserved"
    return "pending"


def checks_of(status: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``status.admissionChecks`` (possibly empty)."""
    checks = status.get("admissionChecks")
    return checks if isinstance(checks, list) else []


def has_all_checks_ready(status: Mapping[str, Any]) -> bool:
    """Every admission check state is ``Ready`` (true with no checks)."""
    return all(c.get("state") == CHECK_READY for c in checks_of(status))


def has_topology_assignments_pending(status: Mapping[str, Any]) -> bool:
    """A podSet assignment waits for its delayed topology request."""
    admission = status.get("admission") or {}
    return any(
        psa.get("topologyAssignment") is None and psa.get("delayedTopologyRequest") == "Pending"
        for psa in admission.get("podSetAssignments") or ()
    )


# --- Admitted -----------------------------------------------------------------------------------


def _sync_admitted_into(status: Status, now: float, generation: int | None) -> None:
    reserved = has_quota_reservation(status)
    should = (
        reserved and has_all_checks_ready(status) and not has_topology_assignments_pending(status)
    )
    old = find_condition(status.get("conditions"), ADMITTED)
    admitted = old is not None and old.get("status") == "True"
    if admitted and should:
        return
    if should:
        want = ("True", REASON_ADMITTED, MSG_ADMITTED)
    elif admitted and is_finished(status):
        want = ("False", FINISHED, MSG_FINISHED)
    elif not reserved:
        want = ("False", REASON_NO_RESERVATION, MSG_NO_RESERVATION)
    elif not has_all_checks_ready(status):
        want = ("False", REASON_UNSATISFIED_CHECKS, MSG_UNSATISFIED_CHECKS)
    else:
        want = ("False", REASON_PENDING_DELAYED_TOPOLOGY, MSG_PENDING_TOPOLOGY)
    if admitted and old is not None:
        # The admitted time so far counts toward maximumExecutionTimeSeconds.
        ran = int(now - parse_time(old.get("lastTransitionTime")))
        past = status.get("accumulatedPastExecutionTimeSeconds")
        status["accumulatedPastExecutionTimeSeconds"] = (past or 0) + ran
    set_condition(_conditions(status), ADMITTED, *want, now, generation)


def sync_admitted(raw: Mapping[str, Any], now: float) -> Status:
    """Upstream ``SyncAdmittedCondition``: ``Admitted`` True iff quota is reserved, every
    admission check is Ready and no delayed topology request is pending; otherwise False with
    the reason that blocks it (``NoReservation``, ``UnsatisfiedAdmissionChecks``,
    ``PendingDelayedTopologyRequests``, ``Finished``)."""
    status = status_copy(raw)
    _sync_admitted_into(status, now, _generation(raw))
    return status


# --- quota reservation --------------------------------------------------------------------------


def _reset_active(status: Status, kind: str, reason: str, now: float, gen: int | None) -> None:
    old = find_condition(status.get("conditions"), kind)
    if old is None or old.get("status") != "True":
        return
    message = "Previously: " + str(old.get("message", ""))
    set_condition(_conditions(status), kind, "False", reason, message, now, gen)


def reserve_quota(
    raw: Mapping[str, Any],
    admission: Mapping[str, Any],
    now: float,
    *,
    checks_complete: bool = True,
) -> Status:
    """Upstream ``SetQuotaReservation`` (+ the scheduler's ``SyncAdmittedCondition``):
    ``status.admission`` set, ``QuotaReserved=True`` "Quota reserved in ClusterQueue <cq>",
    ``Evicted``/``Preempted``/``BlockedOnPreemptionGates`` that were True flipped to False
    (reason ``QuotaReserved``, "Previously: <msg>"). ``Admitted`` is synced only when the
    workload already carries every check its ClusterQueue requires (``checks_complete``, see
    :func:`numaplane.kueue.workload.checks.has_all_checks`)."""
    status = status_copy(raw)
    gen = _generation(raw)
    status["admission"] = copy.deepcopy(dict(admission))
    cq = admission.get("clusterQueue", "")
    message = f"Quota reserved in ClusterQueue {cq}"
    set_condition(
        _conditions(status), QUOTA_RESERVED, "True", REASON_QUOTA_RESERVED, message, now, gen
    )
    for kind in (EVICTED, PREEMPTED, BLOCKED_ON_PREEMPTION_GATES):
        _reset_active(status, kind, REASON_QUOTA_RESERVED, now, gen)
    if checks_complete:
        _sync_admitted_into(status, now, gen)
    return status


def _unset_reservation_into(
    status: Status, reason: str, message: str, now: float, gen: int | None
) -> None:
    set_condition(_conditions(status), QUOTA_RESERVED, "False", reason, message, now, gen)
    status.pop("admission", None)
    _sync_admitted_into(status, now, gen)


def set_pending(raw: Mapping[str, Any], reason: str, message: str, now: float) -> Status:
    """Upstream ``UnsetQuotaReservationWithCondition``: ``QuotaReserved=False`` with the
    scheduler's (or controller's) reason and message, no admission, ``Admitted`` synced."""
    status = status_copy(raw)
    _unset_reservation_into(status, reason, message, now, _generation(raw))
    return status


def set_requeued(status: Status, reason: str, message: str, requeued: bool, now: float) -> None:
    """Upstream ``SetRequeuedCondition`` on a status being built (edits in place)."""
    set_condition(
        _conditions(status), REQUEUED, "True" if requeued else "False", reason, message, now
    )


def release_quota(raw: Mapping[str, Any], now: float) -> Status:
    """The job framework's step once an evicted job is no longer active: ``Requeued`` (True for
    ``Preempted``/``NodeFailures``, else False, with the eviction's reason and message),
    ``QuotaReserved=False`` (``PendingEvaluation``, the eviction message), admission cleared.
    Quota is released only here (SPEC §2.5 step 2)."""
    status = status_copy(raw)
    gen = _generation(raw)
    evicted = find_condition(status.get("conditions"), EVICTED)
    message = ""
    if evicted is not None and evicted.get("status") == "True":
        reason = str(evicted.get("reason", ""))
        message = str(evicted.get("message", ""))
        requeued = reason in _REQUEUE_AT_ONCE
        set_condition(
            _conditions(status),
            REQUEUED,
            "True" if requeued else "False",
            reason,
            message,
            now,
            gen,
        )
    _unset_reservation_into(status, REASON_PENDING_EVALUATION, message, now, gen)
    return status


# --- eviction -----------------------------------------------------------------------------------


def reset_checks_on_eviction(status: Status, now: float) -> None:
    """Upstream ``resetChecksOnEviction`` (in place): every non-Pending check back to Pending,
    "Reset to Pending after eviction. Previously: <state>"; ``retryCount`` +1 for a Retry;
    ``requeueAfterSeconds`` kept; pod set updates dropped."""
    for i, check in enumerate(checks_of(status)):
        old_state = check.get("state")
        if old_state == CHECK_PENDING:
            continue
        fresh: dict[str, Any] = {
            "name": check.get("name"),
            "state": CHECK_PENDING,
            "message": f"Reset to Pending after eviction. Previously: {old_state}",
            "lastTransitionTime": format_time(now),
        }
        if check.get("requeueAfterSeconds") is not None:
            fresh["requeueAfterSeconds"] = check["requeueAfterSeconds"]
        if old_state == CHECK_RETRY:
            fresh["retryCount"] = int(check.get("retryCount") or 0) + 1
        status["admissionChecks"][i] = fresh


def reason_with_cause(reason: str, cause: str) -> str:
    """Upstream ``ReasonWithCause``: ``<reason>DueTo<cause>``."""
    return f"{reason}DueTo{cause}"


def _count_eviction(status: Status, reason: str, cause: str) -> None:
    stats = status.setdefault("schedulingStats", {})
    evictions = stats.setdefault("evictions", [])
    for entry in evictions:
        if entry.get("reason") == reason and entry.get("underlyingCause", "") == cause:
            entry["count"] = int(entry.get("count") or 0) + 1
            return
    entry = {"reason": reason, "count": 1}
    if cause:
        entry["underlyingCause"] = cause
    evictions.append(entry)


def _evict_into(
    status: Status, reason: str, message: str, cause: str, now: float, gen: int | None
) -> None:
    evicted_reason = (
        reason_with_cause(reason, cause) if reason == REASON_DEACTIVATED and cause else reason
    )
    set_condition(_conditions(status), EVICTED, "True", evicted_reason, message, now, gen)
    status.pop("clusterName", None)
    status.pop("nominatedClusterNames", None)
    reset_checks_on_eviction(status, now)
    status.pop("unhealthyNodes", None)
    blocked = find_condition(status.get("conditions"), BLOCKED_ON_PREEMPTION_GATES)
    if blocked is not None and blocked.get("status") == "True":
        set_condition(
            _conditions(status),
            BLOCKED_ON_PREEMPTION_GATES,
            "False",
            evicted_reason,
            message,
            now,
            gen,
        )
    for gate in status.get("preemptionGates") or ():
        gate["position"] = "Closed"
        gate["lastTransitionTime"] = format_time(now)
    _count_eviction(status, reason, cause)


def evict(
    raw: Mapping[str, Any], reason: str, message: str, now: float, *, underlying_cause: str = ""
) -> Status:
    """Upstream ``Evict`` (``prepareForEviction``): ``Evicted=True`` (reason, or
    ``DeactivatedDueTo<cause>``), cluster nomination cleared, checks reset to Pending,
    unhealthy nodes cleared, ``BlockedOnPreemptionGates`` False, preemption gates closed, the
    eviction counted in ``schedulingStats``. Quota stays reserved until :func:`release_quota`."""
    status = status_copy(raw)
    _evict_into(status, reason, message, underlying_cause, now, _generation(raw))
    return status


def eviction_event(reason: str, message: str, underlying_cause: str = "") -> Event:
    """The Normal event upstream records with an eviction:
    ``EvictedDueTo<reason>[DueTo<cause>]``."""
    event_reason = reason_with_cause(EVICTED, reason)
    if reason == REASON_DEACTIVATED and underlying_cause:
        event_reason = reason_with_cause(event_reason, underlying_cause)
    return Event("Normal", event_reason, message)


def preempted(raw: Mapping[str, Any], reason: str, message: str, now: float) -> Status:
    """A preemption by the scheduler: ``Preempted=True`` (``InClusterQueue``,
    ``InCohortReclamation``, ``InCohortReclaimWhileBorrowing``, ``InCohortFairSharing``) and
    then :func:`evict` with reason ``Preempted`` and the same message."""
    status = status_copy(raw)
    set_condition(_conditions(status), PREEMPTED, "True", reason, message, now)
    _evict_into(status, REASON_PREEMPTED, message, "", now, _generation(raw))
    return status


# --- deactivation, requeue state, finishing, PodsReady ------------------------------------------


def set_deactivation_target(
    raw: Mapping[str, Any], reason: str, message: str, now: float
) -> Status:
    """Upstream ``SetDeactivationTarget``: ``DeactivationTarget=True`` with the cause (the
    workload controller then sets ``spec.active=false``)."""
    status = status_copy(raw)
    set_condition(
        _conditions(status), DEACTIVATION_TARGET, "True", reason, message, now, _generation(raw)
    )
    return status


def deactivate(raw: Mapping[str, Any], now: float) -> Status:
    """The workload controller's handling of ``spec.active=false``: evict with ``Deactivated``
    ("The workload is deactivated"), or ``DeactivatedDueTo<cause>`` ("... due to <msg>") when a
    ``DeactivationTarget`` names a cause; the target condition and ``requeueState`` removed."""
    status = status_copy(raw)
    target = find_condition(status.get("conditions"), DEACTIVATION_TARGET)
    if not is_evicted(status):
        cause = ""
        message = "The workload is deactivated"
        if target is not None:
            cause = str(target.get("reason", ""))
            message = f"{message} due to {target.get('message', '')}"
        _evict_into(status, REASON_DEACTIVATED, message, cause, now, _generation(raw))
    if target is not None:
        remove_condition(_conditions(status), DEACTIVATION_TARGET)
    status.pop("requeueState", None)
    return status


def backoff_seconds(count: int, base: int, maximum: int) -> int:
    """Upstream's requeue backoff ``base·2^(count-1)`` capped at ``maximum`` (whole seconds;
    upstream's jitter of 0.0001 is left out so decisions are reproducible)."""
    wait: int = base * (2 ** max(count - 1, 0))
    return min(wait, maximum)


def update_requeue_state(status: Status, now: float, base: int, maximum: int) -> None:
    """Upstream ``UpdateRequeueState`` (in place): count +1, ``requeueAt`` moved to
    now + backoff unless a later one is already set."""
    requeue = status.setdefault("requeueState", {})
    count = int(requeue.get("count") or 0) + 1
    until = now + backoff_seconds(count, base, maximum)
    current = parse_time(requeue.get("requeueAt")) if requeue.get("requeueAt") else None
    if current is None or current < until:
        requeue["requeueAt"] = format_time(until)
    requeue["count"] = count


def finish(raw: Mapping[str, Any], reason: str, message: str, now: float) -> Status:
    """``Finished=True`` (``Succeeded``, ``Failed``, ``OutOfSync``, ...). A finished workload
    no longer counts against quota."""
    status = status_copy(raw)
    set_condition(_conditions(status), FINISHED, "True", reason, message, now, _generation(raw))
    return status


def set_pods_ready(raw: Mapping[str, Any], pods_ready: bool, now: float) -> Status:
    """Upstream ``generatePodsReadyCondition``: True ``Started`` (``Recovered`` after a
    recovery wait) when the admitted workload's pods are ready; otherwise False
    ``WaitForStart``, or ``WaitForRecovery`` once they had been ready."""
    status = status_copy(raw)
    current = find_condition(status.get("conditions"), PODS_READY)
    if not is_admitted(status):
        want = ("False", REASON_WAIT_FOR_START, MSG_NOT_READY)
    elif pods_ready:
        recovering = current is not None and current.get("reason") in (
            REASON_WAIT_FOR_RECOVERY,
            REASON_RECOVERED,
        )
        want = ("True", REASON_RECOVERED if recovering else REASON_STARTED, MSG_READY)
    elif current is None:
        want = ("False", REASON_WAIT_FOR_START, MSG_NOT_READY)
    elif current.get("status") == "True" or current.get("reason") == REASON_WAIT_FOR_RECOVERY:
        want = ("False", REASON_WAIT_FOR_RECOVERY, MSG_WAITING_FOR_RECOVERY)
    else:
        want = ("False", REASON_WAIT_FOR_START, MSG_NOT_READY)
    set_condition(_conditions(status), PODS_READY, *want, now, _generation(raw))
    return status
