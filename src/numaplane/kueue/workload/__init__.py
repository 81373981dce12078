"""Workload status rules: conditions, admission checks, eviction, requeueing, finishing.

Every rule takes a RAW Workload (the API's JSON dict) and returns a NEW ``status`` dict; the
input is never mutated. :func:`reconcile_workload` is one pass of upstream's workload controller.
"""

from numaplane.kueue.workload.checks import (
    admission_checks_for_workload,
    checks_message,
    has_all_checks,
    sync_admission_checks,
)
from numaplane.kueue.workload.decision import WorkloadDecision, WorkloadOptions
from numaplane.kueue.workload.eviction import (
    deactivate,
    evict,
    eviction_event,
    preempted,
    set_deactivation_target,
)
from numaplane.kueue.workload.reconcile import reconcile_workload, requeue_after_backoff
from numaplane.kueue.workload.reservation import reservation_events, reserve_quota
from numaplane.kueue.workload.status import (
    Event,
    finish,
    release_quota,
    set_pending,
    set_pods_ready,
    sync_admitted,
)

__all__ = [
    "Event",
    "WorkloadDecision",
    "WorkloadOptions",
    "admission_checks_for_workload",
    "checks_message",
    "deactivate",
    "evict",
    "eviction_event",
    "finish",
    "has_all_checks",
    "preempted",
    "reconcile_workload",
    "release_quota",
    "requeue_after_backoff",
    "reservation_events",
    "reserve_quota",
    "set_deactivation_target",
    "set_pending",
    "set_pods_ready",
    "sync_admission_checks",
    "sync_admitted",
]
