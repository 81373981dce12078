"""The workload controller's timers over a reserved RAW Workload: the ``waitForPodsReady``
timeout (upstream ``reconcileNotReadyTimeout``, with the requeuing strategy's backoff and
limit) and ``spec.maximumExecutionTimeSeconds`` (``reconcileMaxExecutionTime``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from numaplane.kueue.api.conditions import find_condition, parse_time
from numaplane.kueue.constants import (
    ADMITTED,
    DEACTIVATION_TARGET,
    PODS_READY,
    REASON_PODS_READY_TIMEOUT,
)
from numaplane.kueue.workload import eviction as ev
from numaplane.kueue.workload import status as st
from numaplane.kueue.workload.decision import WorkloadDecision, WorkloadOptions
from numaplane.kueue.workload.status import Event, Status

REASON_REQUEUING_LIMIT_EXCEEDED: Final = "RequeuingLimitExceeded"
REASON_MAXIMUM_EXECUTION_TIME_EXCEEDED: Final = "MaximumExecutionTimeExceeded"


def _changed(raw: Mapping[str, Any], status: Status) -> Status | None:
    return None if status == (raw.get("status") or {}) else status


def pods_ready_timeout(
    raw: Mapping[str, Any], status: Status, now: float, config: WorkloadOptions
) -> tuple[float | None, WorkloadDecision | None]:
    """Upstream ``reconcileNotReadyTimeout`` + ``admittedNotReadyWorkload``."""
    timeout = config.pods_ready_timeout
    if timeout is None or not st.is_active(raw) or st.is_evicted(status):
        return None, None
    if not st.is_admitted(status):
        return None, None
    ready = find_condition(status.get("conditions"), PODS_READY)
    if ready is not None and ready.get("status") == "True":
        return None, None
    if ready is None or ready.get("reason") in (st.REASON_WAIT_FOR_START, "PodsReady"):
        admitted = find_condition(status.get("conditions"), ADMITTED) or {}
        cause = st.REASON_WAIT_FOR_START
        remaining = timeout - (now - parse_time(admitted.get("lastTransitionTime")))
    elif ready.get("reason") == st.REASON_WAIT_FOR_RECOVERY and config.recovery_timeout is not None:
        cause = st.REASON_WAIT_FOR_RECOVERY
        remaining = config.recovery_timeout - (now - parse_time(ready.get("lastTransitionTime")))
    else:
        return None, None
    if remaining > 0:
        return remaining, None
    count = int((status.get("requeueState") or {}).get("count") or 0)
    limit = config.backoff_limit_count
    if limit is not None and count + 1 > limit:
        new = ev.set_deactivation_target(
            raw,
            REASON_REQUEUING_LIMIT_EXCEEDED,
            "exceeding the maximum number of re-queuing retries",
            now,
        )
        return None, WorkloadDecision(new_status=_changed(raw, new), steps=("requeuing-limit",))
    meta = raw.get("metadata") or {}
    message = f"Exceeded the PodsReady timeout {meta.get('namespace', '')}/{meta.get('name', '')}"
    new = ev.evict(raw, REASON_PODS_READY_TIMEOUT, message, now, underlying_cause=cause)
    st.update_requeue_state(new, now, config.backoff_base_seconds, config.backoff_max_seconds)
    event = ev.eviction_event(REASON_PODS_READY_TIMEOUT, message)
    return None, WorkloadDecision(new_status=new, events=(event,), steps=("pods-ready-timeout",))


def max_execution_time(
    raw: Mapping[str, Any], status: Status, now: float
) -> tuple[float | None, WorkloadDecision | None]:
    """Upstream ``reconcileMaxExecutionTime``."""
    limit = (raw.get("spec") or {}).get("maximumExecutionTimeSeconds")
    admitted = find_condition(status.get("conditions"), ADMITTED)
    if limit is None or admitted is None or admitted.get("status") != "True":
        return None, None
    past = int(status.get("accumulatedPastExecutionTimeSeconds") or 0)
    remaining = (int(limit) - past) - (now - parse_time(admitted.get("lastTransitionTime")))
    if remaining > 0:
        return remaining, None
    if st.condition_true(status, DEACTIVATION_TARGET):
        return None, None
    new = ev.set_deactivation_target(
        raw, REASON_MAXIMUM_EXECUTION_TIME_EXCEEDED, "exceeding the maximum execution time", now
    )
    new.pop("accumulatedPastExecutionTimeSeconds", None)
    event = Event(
        "Warning",
        REASON_MAXIMUM_EXECUTION_TIME_EXCEEDED,
        f"The maximum execution time ({int(limit)}s) exceeded",
    )
    return None, WorkloadDecision(new_status=new, events=(event,), steps=("max-execution-time",))
