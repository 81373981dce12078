"""One workload-controller pass (upstream ``workload_controller.go`` ``Reconcile``): the rule
that applies, its exact conditions, events and recheck times."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest

from numaplane.kueue.api.conditions import format_time
from numaplane.kueue.api.model import (
    AdmissionCheckRule,
    ClusterQueue,
    LocalQueue,
)
from numaplane.kueue.workload import (
    Event,
    WorkloadOptions,
    reconcile_workload,
    release_quota,
)

from .helpers import T0, admitted, check, cond, conds, raw_wl, reserved

NOW = T0 + 300
CQ = ClusterQueue(name="cq")
LQ = LocalQueue(namespace="ns", name="lq", cluster_queue="cq")
WAIT = WorkloadOptions(pods_ready_timeout=3, backoff_limit_count=None)


@dataclass(frozen=True)
class Case:
    name: str
    raw: dict[str, Any]
    #: type → (status, reason, message) expected in the new status; None: no status write
    want: dict[str, tuple[str, str, str]] | None
    events: tuple[Event, ...] = ()
    requeue_after: float | None = None
    deactivate: bool = False
    cq: ClusterQueue | None = CQ
    lq: LocalQueue | None = LQ
    cq_active: bool = True
    options: WorkloadOptions = field(default_factory=WorkloadOptions)


RESERVED = ("True", "QuotaReserved", "Quota reserved in ClusterQueue cq")
ADMITTED = ("True", "Admitted", "The workload is admitted")
NO_RESERVATION = ("False", "NoReservation", "The workload has no reservation")
NOT_ALL_READY = ("False", "UnsatisfiedAdmissionChecks", "The workload has not all checks ready")

CASES = (
    Case(
        name="finished workloads are left alone",
        raw=admitted(cond("Finished", "True", "Succeeded", "done")),
        want=None,
    ),
    Case(
        name="pending workload is marked pending evaluation",
        raw=raw_wl(),
        want={
            "QuotaReserved": (
                "False",
                "PendingEvaluation",
                "Workload is pending evaluation in the scheduling queue",
            ),
            "Admitted": NO_RESERVATION,
        },
    ),
    Case(
        name="the scheduler's pending reason is kept",
        raw=raw_wl(
            cond("QuotaReserved", "False", "WaitingForQuota", "couldn't assign flavors"),
            cond("Admitted", "False", "NoReservation", "The workload has no reservation"),
        ),
        want=None,
    ),
    Case(
        name="a stale blocker is replaced once the queues are fine",
        raw=raw_wl(
            cond("QuotaReserved", "False", "Misconfigured", "LocalQueue lq doesn't exist"),
            cond("Admitted", "False", "NoReservation", "The workload has no reservation"),
        ),
        want={
            "QuotaReserved": (
                "False",
                "PendingEvaluation",
                "Workload is pending evaluation in the scheduling queue",
            ),
            "Admitted": NO_RESERVATION,
        },
    ),
    Case(
        name="missing LocalQueue",
        raw=raw_wl(),
        lq=None,
        cq=None,
        want={
            "QuotaReserved": ("False", "Misconfigured", "LocalQueue lq doesn't exist"),
            "Admitted": NO_RESERVATION,
        },
    ),
    Case(
        name="stopped LocalQueue",
        raw=raw_wl(),
        lq=LocalQueue(namespace="ns", name="lq", cluster_queue="cq", stop_policy="Hold"),
        want={
            "QuotaReserved": ("False", "Suspended", "LocalQueue lq is inactive"),
            "Admitted": NO_RESERVATION,
        },
    ),
    Case(
        name="missing ClusterQueue",
        raw=raw_wl(),
        cq=None,
        want={
            "QuotaReserved": ("False", "Misconfigured", "ClusterQueue cq doesn't exist"),
            "Admitted": NO_RESERVATION,
        },
    ),
    Case(
        name="inactive ClusterQueue",
        raw=raw_wl(),
        cq_active=False,
        want={
            "QuotaReserved": ("False", "Suspended", "ClusterQueue cq is inactive"),
            "Admitted": NO_RESERVATION,
        },
    ),
    Case(
        name="reserved with every check ready becomes admitted",
        raw=reserved(checks=[check("ac", "Ready")]),
        cq=ClusterQueue(name="cq", admission_checks=(AdmissionCheckRule("ac"),)),
        want={"QuotaReserved": RESERVED, "Admitted": ADMITTED},
        events=(
            Event(
                "Normal",
                "Admitted",
                "Admitted by ClusterQueue cq, wait time since reservation was 300s",
            ),
        ),
    ),
    Case(
        name="reserved but a check pending",
        raw=reserved(checks=[check("ac", "Pending")]),
        cq=ClusterQueue(name="cq", admission_checks=(AdmissionCheckRule("ac"),)),
        want={"QuotaReserved": RESERVED, "Admitted": NOT_ALL_READY},
    ),
    Case(
        name="a check the ClusterQueue requires is added first",
        raw=reserved(),
        cq=ClusterQueue(name="cq", admission_checks=(AdmissionCheckRule("ac"),)),
        want={"QuotaReserved": RESERVED},
    ),
    Case(
        name="retry check evicts",
        raw=reserved(
            cond(
                "Admitted",
                "False",
                "UnsatisfiedAdmissionChecks",
                "The workload has not all checks ready",
            ),
            checks=[check("check-1", "Retry"), check("check-2", "Ready")],
        ),
        cq=ClusterQueue(
            name="cq",
            admission_checks=(AdmissionCheckRule("check-1"), AdmissionCheckRule("check-2")),
        ),
        want={
            "QuotaReserved": RESERVED,
            "Admitted": NOT_ALL_READY,
            "Evicted": (
                "True",
                "AdmissionCheck",
                'Evicted due to AdmissionCheck in Retry state: "check-1"',
            ),
        },
        events=(
            Event(
                "Normal",
                "EvictedDueToAdmissionCheck",
                'Evicted due to AdmissionCheck in Retry state: "check-1"',
            ),
        ),
    ),
    Case(
        name="rejected check marks the deactivation target",
        raw=admitted(checks=[check("check", "Rejected", "quota exceeded")]),
        cq=ClusterQueue(name="cq", admission_checks=(AdmissionCheckRule("check"),)),
        want={
            "QuotaReserved": RESERVED,
            "Admitted": ADMITTED,
            "DeactivationTarget": (
                "True",
                "AdmissionCheck",
                'AdmissionCheck in Rejected state: "check" (quota exceeded)',
            ),
        },
        events=(
            Event(
                "Warning",
                "AdmissionCheckRejected",
                'Deactivated due to AdmissionCheck in Rejected state: "check" (quota exceeded)',
            ),
        ),
    ),
    Case(
        name="deactivation target on an active workload sets spec.active=false",
        raw=admitted(cond("DeactivationTarget", "True", "AdmissionCheck", "x")),
        want=None,
        deactivate=True,
    ),
    Case(
        name="inactive workload with a rejected check is evicted as deactivated",
        raw=admitted(
            cond(
                "DeactivationTarget",
                "True",
                "AdmissionCheck",
                'AdmissionCheck in Rejected state: "check-1"',
            ),
            active=False,
            checks=[check("check-1", "Rejected")],
        ),
        want={
            "QuotaReserved": RESERVED,
            "Admitted": ADMITTED,
            "Evicted": (
                "True",
                "DeactivatedDueToAdmissionCheck",
                'The workload is deactivated due to AdmissionCheck in Rejected state: "check-1"',
            ),
        },
        events=(
            Event(
                "Normal",
                "EvictedDueToDeactivatedDueToAdmissionCheck",
                'The workload is deactivated due to AdmissionCheck in Rejected state: "check-1"',
            ),
        ),
    ),
    Case(
        name="inactive pending workload is evicted without an event",
        raw=raw_wl(active=False),
        want={"Evicted": ("True", "Deactivated", "The workload is deactivated")},
    ),
    Case(
        name="inactive evicted workload shows Deactivated as its pending reason",
        raw=raw_wl(
            cond("Evicted", "True", "Deactivated", "The workload is deactivated"), active=False
        ),
        want={
            "Evicted": ("True", "Deactivated", "The workload is deactivated"),
            "QuotaReserved": ("False", "Deactivated", "The workload is deactivated"),
            "Admitted": NO_RESERVATION,
        },
    ),
    Case(
        name="reactivated workload is requeued",
        raw=raw_wl(
            cond("Evicted", "True", "Deactivated", "The workload is deactivated"),
            cond("Requeued", "False", "Deactivated", "The workload is deactivated"),
        ),
        want={
            "Evicted": ("True", "Deactivated", "The workload is deactivated"),
            "Requeued": ("True", "Reactivated", "The workload was reactivated"),
        },
    ),
    Case(
        name="reactivated after a derived deactivation reason",
        raw=raw_wl(
            cond(
                "Requeued",
                "False",
                "DeactivatedDueToRequeuingLimitExceeded",
                "The workload is deactivated due to exceeding the maximum number of re-queuing "
                "retries",
            ),
        ),
        want={"Requeued": ("True", "Reactivated", "The workload was reactivated")},
    ),
    Case(
        name="a shorter check delay does not move requeueAt back",
        raw=raw_wl(
            checks=[
                check("ac", "Retry", requeueAfterSeconds=5, lastTransitionTime=format_time(NOW))
            ],
            requeue_state={"requeueAt": format_time(NOW + 10)},
        ),
        want=None,
        requeue_after=10,
    ),
    Case(
        name="backoff not over: look again at requeueAt",
        raw=raw_wl(
            cond("Requeued", "False", "PodsReadyTimeout", "Exceeded the PodsReady timeout ns/wl"),
            requeue_state={"count": 1, "requeueAt": format_time(NOW + 45)},
        ),
        want=None,
        requeue_after=45,
    ),
    Case(
        name="backoff over for a pending workload: requeueAt cleared first",
        raw=raw_wl(
            cond("Requeued", "False", "PodsReadyTimeout", "m"),
            requeue_state={"count": 1, "requeueAt": format_time(NOW - 1)},
        ),
        want={"Requeued": ("False", "PodsReadyTimeout", "m")},
    ),
    Case(
        name="backoff finished",
        raw=raw_wl(cond("Requeued", "False", "AdmissionCheck", "m"), requeue_state={"count": 1}),
        want={"Requeued": ("True", "BackoffFinished", "The workload backoff was finished")},
    ),
    Case(
        name="LocalQueue restarted",
        raw=raw_wl(cond("Requeued", "False", "LocalQueueStopped", "The LocalQueue is stopped")),
        want={
            "Requeued": (
                "True",
                "LocalQueueRestarted",
                "The LocalQueue was restarted after being stopped",
            )
        },
    ),
    Case(
        name="ClusterQueue restarted",
        raw=raw_wl(cond("Requeued", "False", "ClusterQueueStopped", "The ClusterQueue is stopped")),
        want={
            "Requeued": (
                "True",
                "ClusterQueueRestarted",
                "The ClusterQueue was restarted after being stopped",
            )
        },
    ),
    Case(
        name="HoldAndDrain ClusterQueue evicts admitted workloads",
        raw=admitted(),
        cq=ClusterQueue(name="cq", stop_policy="HoldAndDrain"),
        want={
            "QuotaReserved": RESERVED,
            "Admitted": ADMITTED,
            "Evicted": ("True", "ClusterQueueStopped", "The ClusterQueue is stopped"),
        },
        events=(Event("Normal", "EvictedDueToClusterQueueStopped", "The ClusterQueue is stopped"),),
    ),
    Case(
        name="HoldAndDrain LocalQueue evicts admitted workloads",
        raw=admitted(),
        lq=LocalQueue(namespace="ns", name="lq", cluster_queue="cq", stop_policy="HoldAndDrain"),
        want={
            "QuotaReserved": RESERVED,
            "Admitted": ADMITTED,
            "Evicted": ("True", "LocalQueueStopped", "The LocalQueue is stopped"),
        },
        events=(Event("Normal", "EvictedDueToLocalQueueStopped", "The LocalQueue is stopped"),),
    ),
    Case(
        name="Hold keeps admitted workloads running",
        raw=admitted(),
        cq=ClusterQueue(name="cq", stop_policy="Hold"),
        want=None,
    ),
    Case(
        name="a reservation not yet admitted is dropped when the ClusterQueue stops",
        raw=reserved(cond("Admitted", *NOT_ALL_READY), checks=[check("ac", "Pending")]),
        cq=ClusterQueue(
            name="cq", stop_policy="Hold", admission_checks=(AdmissionCheckRule("ac"),)
        ),
        want={
            "QuotaReserved": ("False", "Suspended", "ClusterQueue cq is stopped"),
            "Admitted": NO_RESERVATION,
        },
    ),
    Case(
        name="PodsReady timeout evicts and backs off",
        raw=admitted(),
        options=WAIT,
        want={
            "QuotaReserved": RESERVED,
            "Admitted": ADMITTED,
            "Evicted": ("True", "PodsReadyTimeout", "Exceeded the PodsReady timeout ns/wl"),
        },
        events=(
            Event("Normal", "EvictedDueToPodsReadyTimeout", "Exceeded the PodsReady timeout ns/wl"),
        ),
    ),
    Case(
        name="PodsReady not timed out yet",
        raw=admitted(
            cond("PodsReady", "False", "WaitForStart", "Not all pods are ready or succeeded")
        ),
        options=WorkloadOptions(pods_ready_timeout=600),
        want=None,
        requeue_after=300,
    ),
    Case(
        name="ready pods never time out",
        raw=admitted(cond("PodsReady", "True", "Started", "ok")),
        options=WAIT,
        want=None,
    ),
    Case(
        name="requeuing limit reached deactivates instead",
        raw=admitted(requeue_state={"count": 1}),
        options=WorkloadOptions(pods_ready_timeout=3, backoff_limit_count=1),
        want={
            "QuotaReserved": RESERVED,
            "Admitted": ADMITTED,
            "DeactivationTarget": (
                "True",
                "RequeuingLimitExceeded",
                "exceeding the maximum number of re-queuing retries",
            ),
        },
    ),
    Case(
        name="waiting for recovery times out after the recovery timeout",
        raw=admitted(cond("PodsReady", "False", "WaitForRecovery", "m", at=NOW - 10)),
        options=WorkloadOptions(pods_ready_timeout=3, recovery_timeout=5),
        want={
            "QuotaReserved": RESERVED,
            "Admitted": ADMITTED,
            "PodsReady": ("False", "WaitForRecovery", "m"),
            "Evicted": ("True", "PodsReadyTimeout", "Exceeded the PodsReady timeout ns/wl"),
        },
        events=(
            Event("Normal", "EvictedDueToPodsReadyTimeout", "Exceeded the PodsReady timeout ns/wl"),
        ),
    ),
    Case(
        name="maximum execution time exceeded",
        raw=admitted(max_exec=200),
        want={
            "QuotaReserved": RESERVED,
            "Admitted": ADMITTED,
            "DeactivationTarget": (
                "True",
                "MaximumExecutionTimeExceeded",
                "exceeding the maximum execution time",
            ),
        },
        events=(
            Event(
                "Warning",
                "MaximumExecutionTimeExceeded",
                "The maximum execution time (200s) exceeded",
            ),
        ),
    ),
    Case(
        name="maximum execution time counts the past admissions",
        raw=admitted(max_exec=1000, accumulatedPastExecutionTimeSeconds=600),
        want=None,
        requeue_after=100,
    ),
)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_reconcile(case: Case) -> None:
    before = copy.deepcopy(case.raw)
    got = reconcile_workload(
        case.raw, case.cq, None, NOW, case.options, lq=case.lq, cq_active=case.cq_active
    )
    assert case.raw == before, "the input object must not change"
    if case.want is None:
        assert got.new_status is None
    else:
        assert got.new_status is not None
        assert conds(got.new_status) == case.want
    assert got.events == case.events
    assert got.requeue_after == case.requeue_after
    assert got.deactivate is case.deactivate


def test_pods_ready_timeout_sets_the_requeue_state() -> None:
    got = reconcile_workload(admitted(), CQ, None, NOW, WAIT, lq=LQ)
    assert got.new_status is not None
    assert got.new_status["requeueState"] == {"count": 1, "requeueAt": format_time(NOW + 60)}
    second = reconcile_workload(admitted(requeue_state={"count": 3}), CQ, None, NOW, WAIT, lq=LQ)
    assert second.new_status is not None
    assert second.new_status["requeueState"]["requeueAt"] == format_time(NOW + 480)


def test_retry_with_requeue_after_seconds_holds_the_workload_until_then() -> None:
    cq = ClusterQueue(name="cq", admission_checks=(AdmissionCheckRule("ac"),))
    raw = reserved(
        cond("Admitted", *NOT_ALL_READY),
        checks=[check("ac", "Retry", "later", requeueAfterSeconds=900)],
    )
    first = reconcile_workload(raw, cq, None, NOW, lq=LQ)
    assert first.steps == ("retry-time",)
    assert first.new_status is not None
    assert first.new_status["requeueState"] == {"requeueAt": format_time(T0 + 900)}
    raw = {**raw, "status": first.new_status}
    held = reconcile_workload(raw, cq, None, NOW, lq=LQ)
    assert held.new_status is None
    assert held.requeue_after == 600
    due = reconcile_workload(raw, cq, None, T0 + 900, lq=LQ)
    assert due.new_status is not None
    assert conds(due.new_status)["Evicted"] == (
        "True",
        "AdmissionCheck",
        'Evicted due to AdmissionCheck in Retry state: "ac" (later)',
    )
    (reset,) = due.new_status["admissionChecks"]
    assert reset["requeueAfterSeconds"] == 900
    assert reset["retryCount"] == 1


def settle(raw: dict[str, Any], now: float, options: WorkloadOptions = WAIT) -> dict[str, Any]:
    """Apply reconcile passes until nothing more is written (what the controller's own watch
    does)."""
    for _ in range(20):
        got = reconcile_workload(raw, CQ, None, now, options, lq=LQ)
        if got.new_status is None:
            return raw
        raw = {**raw, "status": got.new_status}
    raise AssertionError("reconcile did not settle")


def test_pods_ready_timeout_cycle_ends_requeued_after_the_backoff() -> None:
    raw = settle(admitted(), NOW)
    assert conds(raw["status"])["Evicted"][1] == "PodsReadyTimeout"
    # The job stops; the job framework releases the quota.
    raw = {**raw, "status": release_quota(raw, NOW)}
    assert conds(raw["status"])["Requeued"] == (
        "False",
        "PodsReadyTimeout",
        "Exceeded the PodsReady timeout ns/wl",
    )
    waiting = reconcile_workload(raw, CQ, None, NOW + 10, WAIT, lq=LQ)
    assert waiting.new_status is None
    assert waiting.requeue_after == 50
    raw = settle(raw, NOW + 60)
    assert conds(raw["status"])["Requeued"] == (
        "True",
        "BackoffFinished",
        "The workload backoff was finished",
    )
    assert "requeueAt" not in raw["status"]["requeueState"]
    assert raw["status"]["requeueState"]["count"] == 1
