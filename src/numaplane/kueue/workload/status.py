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
    set_condition,
)
from numaplane.kueue.constants import (
    ADMITTED,
    CHECK_READY,
    EVICTED,
    FINISHED,
    PODS_READY,
    QUOTA_RESERVED,
    REASON_NO_RESERVATION,
    REASON_PREEMPTED,
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


_MAX_CONDITION_MESSAGE: Final = 32 * 1024
_MAX_EVENT_MESSAGE: Final = 1024


def _truncate(message: str, limit: int) -> str:
    # Upstream cuts bytes and appends " ..." (util/api truncateMessage).
    data = message.encode()
    if len(data) <= limit:
        return message
    return data[: limit - 4].decode(errors="ignore") + " ..."


def truncate_condition_message(message: str) -> str:
    """Upstream ``TruncateConditionMessage``: at most 32 KiB, ending in " ..." when cut."""
    return _truncate(message, _MAX_CONDITION_MESSAGE)


def truncate_event_message(message: str) -> str:
    """Upstream ``TruncateEventMessage``: at most 1 KiB, ending in " ..." when cut."""
    return _truncate(message, _MAX_EVENT_MESSAGE)


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


def conditions_list(status: Status) -> list[dict[str, Any]]:
    """``status.conditions`` as a list to edit in place (created when absent)."""
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        conditions = []
        status["conditions"] = conditions
    return conditions


def generation_of(raw: Mapping[str, Any]) -> int | None:
    """``metadata.generation`` (the conditions' ``observedGeneration``), if set."""
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


def sync_admitted_into(status: Status, now: float, generation: int | None) -> None:
    """:func:`sync_admitted` on a status being built (in place)."""
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
    set_condition(conditions_list(status), ADMITTED, *want, now, generation)


def sync_admitted(raw: Mapping[str, Any], now: float) -> Status:
    """Upstream ``SyncAdmittedCondition``: ``Admitted`` True iff quota is reserved, every
    admission check is Ready and no delayed topology request is pending; otherwise False with
    the reason that blocks it (``NoReservation``, ``UnsatisfiedAdmissionChecks``,
    ``PendingDelayedTopologyRequests``, ``Finished``)."""
    status = status_copy(raw)
    sync_admitted_into(status, now, generation_of(raw))
    return status


# --- quota reservation --------------------------------------------------------------------------


def reset_active_condition(
    status: Status, kind: str, reason: str, now: float, gen: int | None
) -> None:
    """Upstream ``resetActiveCondition``: a True condition becomes False, "Previously: <msg>"."""
    old = find_condition(status.get("conditions"), kind)
    if old is None or old.get("status") != "True":
        return
    message = truncate_condition_message("Previously: " + str(old.get("message", "")))
    set_condition(conditions_list(status), kind, "False", reason, message, now, gen)


def _unset_reservation_into(
    status: Status, reason: str, message: str, now: float, gen: int | None
) -> None:
    message = truncate_condition_message(message)
    set_condition(conditions_list(status), QUOTA_RESERVED, "False", reason, message, now, gen)
    status.pop("admission", None)
    sync_admitted_into(status, now, gen)


def set_pending(raw: Mapping[str, Any], reason: str, message: str, now: float) -> Status:
    """Upstream ``UnsetQuotaReservationWithCondition``: ``QuotaReserved=False`` with the
    scheduler's (or controller's) reason and message, no admission, ``Admitted`` synced."""
    status = status_copy(raw)
    _unset_reservation_into(status, reason, message, now, generation_of(raw))
    return status


def set_requeued(status: Status, reason: str, message: str, requeued: bool, now: float) -> None:
    """Upstream ``SetRequeuedCondition`` on a status being built (edits in place)."""
    flag = "True" if requeued else "False"
    message = truncate_condition_message(message)
    set_condition(conditions_list(status), REQUEUED, flag, reason, message, now)


def release_quota(raw: Mapping[str, Any], now: float) -> Status:
    """The job framework's step once an evicted job is no longer active: ``Requeued`` (True for
    ``Preempted``/``NodeFailures``, else False, with the eviction's reason and message),
    ``QuotaReserved=False`` (``PendingEvaluation``, the eviction message), admission cleared.
    Quota is released only here (SPEC §2.5 step 2)."""
    status = status_copy(raw)
    gen = generation_of(raw)
    evicted = find_condition(status.get("conditions"), EVICTED)
    message = ""
    if evicted is not None and evicted.get("status") == "True":
        reason = str(evicted.get("reason", ""))
        message = str(evicted.get("message", ""))
        requeued = reason in _REQUEUE_AT_ONCE
        set_condition(
            conditions_list(status),
            REQUEUED,
            "True" if requeued else "False",
            reason,
            message,
            now,
            gen,
        )
    _unset_reservation_into(status, REASON_PENDING_EVALUATION, message, now, gen)
    return status


# --- requeue state, finishing, PodsReady ----------------------------------------------------


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
    """Upstream ``Finish``: ``Finished=True`` (``Succeeded``, ``Failed``, ``OutOfSync``, ...);
    a workload already finished is left as it is. A finished workload no longer counts against
    quota."""
    status = status_copy(raw)
    if is_finished(status):
        return status
    message = truncate_condition_message(message)
    gen = generation_of(raw)
    set_condition(conditions_list(status), FINISHED, "True", reason, message, now, gen)
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
    set_condition(conditions_list(status), PODS_READY, *want, now, generation_of(raw))
    return status
