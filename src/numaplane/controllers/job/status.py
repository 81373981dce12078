"""Job conditions, their reasons and messages, as upstream's Job controller writes them (kube
1.31+: a terminal outcome is first recorded as the interim ``FailureTarget`` or
``SuccessCriteriaMet`` condition, and ``Failed`` / ``Complete`` follow once no pod of the Job
is left terminating or uncounted)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from numaplane.controllers.job.podstate import format_time, status

Condition = dict[str, Any]

COMPLETE: Final = "Complete"
FAILED: Final = "Failed"
SUSPENDED: Final = "Suspended"
FAILURE_TARGET: Final = "FailureTarget"
SUCCESS_CRITERIA_MET: Final = "SuccessCriteriaMet"

REASON_BACKOFF_LIMIT: Final = "BackoffLimitExceeded"
MESSAGE_BACKOFF_LIMIT: Final = "Job has reached the specified backoff limit"
REASON_DEADLINE: Final = "DeadlineExceeded"
MESSAGE_DEADLINE: Final = "Job was active longer than specified deadline"
REASON_POD_FAILURE_POLICY: Final = "PodFailurePolicy"
REASON_MAX_FAILED_INDEXES: Final = "MaxFailedIndexesExceeded"
MESSAGE_MAX_FAILED_INDEXES: Final = (
    "Job has exceeded the specified maximal number of failed indexes"
)
REASON_FAILED_INDEXES: Final = "FailedIndexes"
MESSAGE_FAILED_INDEXES: Final = "Job has failed indexes"
REASON_COMPLETIONS_REACHED: Final = "CompletionsReached"
MESSAGE_COMPLETIONS_REACHED: Final = "Reached expected number of succeeded pods"
REASON_SUCCESS_POLICY: Final = "SuccessPolicy"
REASON_SUSPENDED: Final = "JobSuspended"
MESSAGE_SUSPENDED: Final = "Job suspended"
REASON_RESUMED: Final = "JobResumed"
MESSAGE_RESUMED: Final = "Job resumed"

#: ``spec.managedBy`` of Jobs this controller syncs (unset means the same).
JOB_CONTROLLER_NAME: Final = "kubernetes.io/job-controller"


def new_condition(kind: str, state: str, reason: str, message: str, now: float) -> Condition:
    """``newCondition``: probe and transition time ``now``."""
    stamp = format_time(now)
    return {
        "type": kind,
        "status": state,
        "lastProbeTime": stamp,
        "lastTransitionTime": stamp,
        "reason": reason,
        "message": message,
    }


def find_condition(conditions: list[Condition], kind: str) -> Condition | None:
    """The condition of type ``kind``."""
    for cond in conditions:
        if cond.get("type") == kind:
            return cond
    return None


def true_condition(job: Mapping[str, Any], kind: str) -> Condition | None:
    """The Job's condition of type ``kind`` when its status is True."""
    cond = find_condition(status(job).get("conditions") or [], kind)
    return cond if cond is not None and cond.get("status") == "True" else None


def is_finished(job: Mapping[str, Any]) -> bool:
    """``IsJobFinished``: ``Complete`` or ``Failed`` is True."""
    return true_condition(job, COMPLETE) is not None or true_condition(job, FAILED) is not None


def ensure_condition(
    conditions: list[Condition], kind: str, state: str, reason: str, message: str, now: float
) -> bool:
    """``ensureJobConditionStatus`` in place: the condition of ``kind`` replaced when its status,
    reason or message differ, appended when absent unless ``state`` is False (nothing to False
    means nothing); whether the list changed."""
    current = find_condition(conditions, kind)
    if current is not None:
        if (current.get("status"), current.get("reason"), current.get("message")) != (
            state,
            reason,
            message,
        ):
            current.clear()
            current.update(new_condition(kind, state, reason, message, now))
            return True
        return False
    if state != "False":
        conditions.append(new_condition(kind, state, reason, message, now))
        return True
    return False


def failure_target(reason: str, message: str, now: float) -> Condition:
    """``newFailureCondition``: the interim ``FailureTarget`` (the final ``Failed`` copies its
    reason and message)."""
    return new_condition(FAILURE_TARGET, "True", reason, message, now)


def success_criteria_met(now: float) -> Condition:
    """``newSuccessCondition``: the interim ``SuccessCriteriaMet`` of a Job whose completions
    are reached."""
    return new_condition(
        SUCCESS_CRITERIA_MET, "True", REASON_COMPLETIONS_REACHED, MESSAGE_COMPLETIONS_REACHED, now
    )


def final_of(interim: Condition, now: float) -> Condition:
    """The terminal condition an interim one leads to (``FailureTarget`` → ``Failed``,
    ``SuccessCriteriaMet`` → ``Complete``), same reason and message."""
    kind = FAILED if interim.get("type") == FAILURE_TARGET else COMPLETE
    return new_condition(
        kind, "True", str(interim.get("reason") or ""), str(interim.get("message") or ""), now
    )


def managed_by_other(job: Mapping[str, Any]) -> str | None:
    """``managedByExternalController``: the other controller's name when ``spec.managedBy`` is
    set to anything but the Job controller's."""
    managed_by = (job.get("spec") or {}).get("managedBy")
    if managed_by is None or managed_by == JOB_CONTROLLER_NAME:
        return None
    return str(managed_by)
