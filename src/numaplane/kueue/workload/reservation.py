"""Quota reservation of a RAW Workload, as the scheduler writes it (upstream
``SetQuotaReservation`` followed by ``SyncAdmittedCondition`` when the workload already carries
every admission check its ClusterQueue requires)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from numaplane.kueue.api.conditions import find_condition, parse_time, set_condition
from numaplane.kueue.api.model import ClusterQueue
from numaplane.kueue.constants import (
    EVICTED,
    PREEMPTED,
    QUOTA_RESERVED,
    REASON_QUOTA_RESERVED,
    REQUEUED,
)
from numaplane.kueue.workload.checks import admission_checks_for_workload, has_all_checks
from numaplane.kueue.workload.status import (
    BLOCKED_ON_PREEMPTION_GATES,
    Event,
    Status,
    conditions_list,
    generation_of,
    has_quota_reservation,
    is_admitted,
    reset_active_condition,
    status_copy,
    sync_admitted_into,
    truncate_condition_message,
    truncate_event_message,
)


def reserve_quota(
    raw: Mapping[str, Any],
    admission: Mapping[str, Any],
    now: float,
    *,
    cq: ClusterQueue | None = None,
) -> Status:
    """``status.admission`` set to ``admission`` (its JSON form), ``QuotaReserved=True``
    "Quota reserved in ClusterQueue <cq>", and every ``Evicted``/``Preempted``/
    ``BlockedOnPreemptionGates`` that was True flipped to False (reason ``QuotaReserved``,
    "Previously: <msg>"). ``Admitted`` is synced at once only when the workload already has
    every check ``cq`` requires for this admission (None: no checks required); otherwise the
    workload controller adds the checks first."""
    status = status_copy(raw)
    gen = generation_of(raw)
    status["admission"] = copy.deepcopy(dict(admission))
    message = truncate_condition_message(
        f"Quota reserved in ClusterQueue {admission.get('clusterQueue', '')}"
    )
    conditions = conditions_list(status)
    set_condition(conditions, QUOTA_RESERVED, "True", REASON_QUOTA_RESERVED, message, now, gen)
    for kind in (EVICTED, PREEMPTED, BLOCKED_ON_PREEMPTION_GATES):
        reset_active_condition(status, kind, REASON_QUOTA_RESERVED, now, gen)
    required = admission_checks_for_workload(status, cq) if cq is not None else set()
    if has_all_checks(status, required):
        sync_admitted_into(status, now, gen)
    return status


def queued_wait_seconds(raw: Mapping[str, Any], now: float) -> float:
    """Upstream ``QueuedWaitTime``: since the last ``Requeued`` transition, else since
    creation."""
    requeued = find_condition((raw.get("status") or {}).get("conditions"), REQUEUED)
    if requeued is not None:
        since = parse_time(requeued.get("lastTransitionTime"))
    else:
        since = parse_time((raw.get("metadata") or {}).get("creationTimestamp"))
    return now - since


def reservation_events(
    raw: Mapping[str, Any], new_status: Mapping[str, Any], now: float, *, considered: str = ""
) -> tuple[Event, ...]:
    """The scheduler's events for a reservation it wrote (``raw`` before, ``new_status``
    after): ``QuotaReserved`` "Quota reserved in ClusterQueue <cq>, wait time since queued
    was <n>s" (with "; Flavors considered: ..." when ``considered`` is given) unless the
    workload already had a reservation, and ``Admitted`` "... wait time since reservation was
    0s" when the reservation admitted it at once."""
    cq = (new_status.get("admission") or {}).get("clusterQueue", "")
    events: list[Event] = []
    if not has_quota_reservation(raw.get("status") or {}):
        waited = queued_wait_seconds(raw, now)
        message = f"Quota reserved in ClusterQueue {cq}, wait time since queued was {waited:.0f}s"
        if considered:
            message = f"{message}; Flavors considered: {considered}"
        events.append(Event("Normal", "QuotaReserved", truncate_event_message(message)))
    if is_admitted(new_status):
        events.append(
            Event(
                "Normal",
                "Admitted",
                f"Admitted by ClusterQueue {cq}, wait time since reservation was 0s",
            )
        )
    return tuple(events)
