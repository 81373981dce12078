"""Eviction, preemption and deactivation of a RAW Workload (upstream ``pkg/workload/evict``,
``SetPreemptedCondition``, ``SetDeactivationTarget`` and the workload controller's handling of
``spec.active=false``). Each rule returns a NEW ``status`` dict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numaplane.kueue.api.conditions import (
    find_condition,
    format_time,
    remove_condition,
    set_condition,
)
from numaplane.kueue.constants import (
    CHECK_PENDING,
    CHECK_RETRY,
    DEACTIVATION_TARGET,
    EVICTED,
    PREEMPTED,
    REASON_DEACTIVATED,
    REASON_PREEMPTED,
)
from numaplane.kueue.workload.status import (
    BLOCKED_ON_PREEMPTION_GATES,
    Event,
    Status,
    checks_of,
    conditions_list,
    generation_of,
    is_evicted,
    status_copy,
    truncate_condition_message,
    truncate_event_message,
)


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
    message = truncate_condition_message(message)
    set_condition(conditions_list(status), EVICTED, "True", evicted_reason, message, now, gen)
    status.pop("clusterName", None)
    status.pop("nominatedClusterNames", None)
    reset_checks_on_eviction(status, now)
    status.pop("unhealthyNodes", None)
    blocked = find_condition(status.get("conditions"), BLOCKED_ON_PREEMPTION_GATES)
    if blocked is not None and blocked.get("status") == "True":
        set_condition(
            conditions_list(status),
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
    _evict_into(status, reason, message, underlying_cause, now, generation_of(raw))
    return status


def eviction_event(reason: str, message: str, underlying_cause: str = "") -> Event:
    """The Normal event upstream records with an eviction:
    ``EvictedDueTo<reason>[DueTo<cause>]``."""
    event_reason = reason_with_cause(EVICTED, reason)
    if reason == REASON_DEACTIVATED and underlying_cause:
        event_reason = reason_with_cause(event_reason, underlying_cause)
    return Event("Normal", event_reason, truncate_event_message(message))


def preempted(raw: Mapping[str, Any], reason: str, message: str, now: float) -> Status:
    """A preemption by the scheduler: ``Preempted=True`` (``InClusterQueue``,
    ``InCohortReclamation``, ``InCohortReclaimWhileBorrowing``, ``InCohortFairSharing``) and
    then :func:`evict` with reason ``Preempted`` and the same message."""
    status = status_copy(raw)
    conditions = conditions_list(status)
    set_condition(conditions, PREEMPTED, "True", reason, truncate_condition_message(message), now)
    _evict_into(status, REASON_PREEMPTED, message, "", now, generation_of(raw))
    return status


# --- deactivation -------------------------------------------------------------------------------


def set_deactivation_target(
    raw: Mapping[str, Any], reason: str, message: str, now: float
) -> Status:
    """Upstream ``SetDeactivationTarget``: ``DeactivationTarget=True`` with the cause (the
    workload controller then sets ``spec.active=false``)."""
    status = status_copy(raw)
    set_condition(
        conditions_list(status),
        DEACTIVATION_TARGET,
        "True",
        reason,
        message,
        now,
        generation_of(raw),
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
        _evict_into(status, REASON_DEACTIVATED, message, cause, now, generation_of(raw))
    if target is not None:
        remove_condition(conditions_list(status), DEACTIVATION_TARGET)
    status.pop("requeueState", None)
    return status
