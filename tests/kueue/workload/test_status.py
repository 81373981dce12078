"""The status rules (reserve, pending, evict, preempt, release, deactivate, finish, PodsReady,
admission checks) with upstream's reasons and messages verbatim; none mutates its input."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from numaplane.kueue.api.conditions import format_time
from numaplane.kueue.api.model import (
    AdmissionCheckRule,
    ClusterQueue,
    FlavorQuotas,
    ResourceGroup,
    ResourceQuota,
)
from numaplane.kueue.workload import (
    checks_message,
    deactivate,
    evict,
    eviction_event,
    finish,
    preempted,
    release_quota,
    reservation_events,
    reserve_quota,
    set_pending,
    set_pods_ready,
    sync_admission_checks,
    sync_admitted,
)
from numaplane.kueue.workload.status import Event, backoff_seconds

from .helpers import T0, admission, admitted, check, cond, conds, raw_wl, reserved

NOW = T0 + 100
CQ_WITH_CHECK = ClusterQueue(name="cq", admission_checks=(AdmissionCheckRule("ac"),))


@dataclass(frozen=True)
class RuleCase:
    name: str
    raw: dict[str, Any]
    rule: Callable[[dict[str, Any]], dict[str, Any]]
    want_conditions: dict[str, tuple[str, str, str]]
    #: status fields that must (True) or must not (False) be present afterwards
    fields: dict[str, bool] = field(default_factory=dict)


RULE_CASES = (
    RuleCase(
        name="reserve quota on a fresh workload admits it when it has no checks",
        raw=raw_wl(),
        rule=lambda r: reserve_quota(r, admission(), NOW),
        want_conditions={
            "QuotaReserved": ("True", "QuotaReserved", "Quota reserved in ClusterQueue cq"),
            "Admitted": ("True", "Admitted", "The workload is admitted"),
        },
        fields={"admission": True},
    ),
    RuleCase(
        name="reserve quota flips Evicted and Preempted to False with Previously",
        raw=raw_wl(
            cond("Evicted", "True", "Preempted", "Preempted to accommodate x"),
            cond("Preempted", "True", "InClusterQueue", "Preempted to accommodate x"),
            cond("Requeued", "True", "Preempted", "Preempted to accommodate x"),
        ),
        rule=lambda r: reserve_quota(r, admission(), NOW),
        want_conditions={
            "Evicted": ("False", "QuotaReserved", "Previously: Preempted to accommodate x"),
            "Preempted": ("False", "QuotaReserved", "Previously: Preempted to accommodate x"),
            "Requeued": ("True", "Preempted", "Preempted to accommodate x"),
            "QuotaReserved": ("True", "QuotaReserved", "Quota reserved in ClusterQueue cq"),
            "Admitted": ("True", "Admitted", "The workload is admitted"),
        },
    ),
    RuleCase(
        name="reserve quota with a pending check is not admitted",
        raw=raw_wl(checks=[check("ac", "Pending")]),
        rule=lambda r: reserve_quota(r, admission(), NOW),
        want_conditions={
            "QuotaReserved": ("True", "QuotaReserved", "Quota reserved in ClusterQueue cq"),
            "Admitted": (
                "False",
                "UnsatisfiedAdmissionChecks",
                "The workload has not all checks ready",
            ),
        },
    ),
    RuleCase(
        name="reserve quota before the checks are synced leaves Admitted alone",
        raw=raw_wl(),
        rule=lambda r: reserve_quota(r, admission(), NOW, cq=CQ_WITH_CHECK),
        want_conditions={
            "QuotaReserved": ("True", "QuotaReserved", "Quota reserved in ClusterQueue cq"),
        },
    ),
    RuleCase(
        name="reserve quota with the required check already ready admits",
        raw=raw_wl(checks=[check("ac", "Ready")]),
        rule=lambda r: reserve_quota(r, admission(), NOW, cq=CQ_WITH_CHECK),
        want_conditions={
            "QuotaReserved": ("True", "QuotaReserved", "Quota reserved in ClusterQueue cq"),
            "Admitted": ("True", "Admitted", "The workload is admitted"),
        },
    ),
    RuleCase(
        name="pending from the scheduler",
        raw=raw_wl(),
        rule=lambda r: set_pending(
            r,
            "WaitingForQuota",
            "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
            "flavor default, 1 more needed",
            NOW,
        ),
        want_conditions={
            "QuotaReserved": (
                "False",
                "WaitingForQuota",
                "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                "flavor default, 1 more needed",
            ),
            "Admitted": ("False", "NoReservation", "The workload has no reservation"),
        },
        fields={"admission": False},
    ),
    RuleCase(
        name="preemption sets Preempted then evicts with reason Preempted",
        raw=admitted(),
        rule=lambda r: preempted(r, "InClusterQueue", "Preempted to accommodate a workload", NOW),
        want_conditions={
            "QuotaReserved": ("True", "QuotaReserved", "Quota reserved in ClusterQueue cq"),
            "Admitted": ("True", "Admitted", "The workload is admitted"),
            "Preempted": ("True", "InClusterQueue", "Preempted to accommodate a workload"),
            "Evicted": ("True", "Preempted", "Preempted to accommodate a workload"),
        },
        fields={"admission": True},
    ),
    RuleCase(
        name="quota release after preemption requeues at once",
        raw=admitted(cond("Evicted", "True", "Preempted", "Preempted to accommodate y")),
        rule=lambda r: release_quota(r, NOW),
        want_conditions={
            "QuotaReserved": ("False", "PendingEvaluation", "Preempted to accommodate y"),
            "Admitted": ("False", "NoReservation", "The workload has no reservation"),
            "Evicted": ("True", "Preempted", "Preempted to accommodate y"),
            "Requeued": ("True", "Preempted", "Preempted to accommodate y"),
        },
        fields={"admission": False, "accumulatedPastExecutionTimeSeconds": True},
    ),
    RuleCase(
        name="quota release after a PodsReady timeout waits for the backoff",
        raw=admitted(
            cond("Evicted", "True", "PodsReadyTimeout", "Exceeded the PodsReady timeout ns/wl")
        ),
        rule=lambda r: release_quota(r, NOW),
        want_conditions={
            "QuotaReserved": (
                "False",
                "PendingEvaluation",
                "Exceeded the PodsReady timeout ns/wl",
            ),
            "Admitted": ("False", "NoReservation", "The workload has no reservation"),
            "Evicted": ("True", "PodsReadyTimeout", "Exceeded the PodsReady timeout ns/wl"),
            "Requeued": ("False", "PodsReadyTimeout", "Exceeded the PodsReady timeout ns/wl"),
        },
    ),
    RuleCase(
        name="quota release after a stopped ClusterQueue is not requeued",
        raw=admitted(cond("Evicted", "True", "ClusterQueueStopped", "The ClusterQueue is stopped")),
        rule=lambda r: release_quota(r, NOW),
        want_conditions={
            "QuotaReserved": ("False", "PendingEvaluation", "The ClusterQueue is stopped"),
            "Admitted": ("False", "NoReservation", "The workload has no reservation"),
            "Evicted": ("True", "ClusterQueueStopped", "The ClusterQueue is stopped"),
            "Requeued": ("False", "ClusterQueueStopped", "The ClusterQueue is stopped"),
        },
    ),
    RuleCase(
        name="deactivation without a cause",
        raw=admitted(active=False),
        rule=lambda r: deactivate(r, NOW),
        want_conditions={
            "QuotaReserved": ("True", "QuotaReserved", "Quota reserved in ClusterQueue cq"),
            "Admitted": ("True", "Admitted", "The workload is admitted"),
            "Evicted": ("True", "Deactivated", "The workload is deactivated"),
        },
    ),
    RuleCase(
        name="deactivation for exceeding the requeuing limit",
        raw=admitted(
            cond(
                "DeactivationTarget",
                "True",
                "RequeuingLimitExceeded",
                "exceeding the maximum number of re-queuing retries",
            ),
            active=False,
            requeue_state={"count": 3},
        ),
        rule=lambda r: deactivate(r, NOW),
        want_conditions={
            "QuotaReserved": ("True", "QuotaReserved", "Quota reserved in ClusterQueue cq"),
            "Admitted": ("True", "Admitted", "The workload is admitted"),
            "Evicted": (
                "True",
                "DeactivatedDueToRequeuingLimitExceeded",
                "The workload is deactivated due to exceeding the maximum number of re-queuing "
                "retries",
            ),
        },
        fields={"requeueState": False},
    ),
    RuleCase(
        name="finish",
        raw=admitted(),
        rule=lambda r: finish(r, "Succeeded", "Job finished successfully", NOW),
        want_conditions={
            "QuotaReserved": ("True", "QuotaReserved", "Quota reserved in ClusterQueue cq"),
            "Admitted": ("True", "Admitted", "The workload is admitted"),
            "Finished": ("True", "Succeeded", "Job finished successfully"),
        },
    ),
    RuleCase(
        name="pods ready on an admitted workload",
        raw=admitted(),
        rule=lambda r: set_pods_ready(r, True, NOW),
        want_conditions={
            "QuotaReserved": ("True", "QuotaReserved", "Quota reserved in ClusterQueue cq"),
            "Admitted": ("True", "Admitted", "The workload is admitted"),
            "PodsReady": (
                "True",
                "Started",
                "All pods reached readiness and the workload is running",
            ),
        },
    ),
    RuleCase(
        name="pods no longer ready wait for recovery",
        raw=admitted(cond("PodsReady", "True", "Started", "x")),
        rule=lambda r: set_pods_ready(r, False, NOW),
        want_conditions={
            "QuotaReserved": ("True", "QuotaReserved", "Quota reserved in ClusterQueue cq"),
            "Admitted": ("True", "Admitted", "The workload is admitted"),
            "PodsReady": (
                "False",
                "WaitForRecovery",
                "At least one pod has failed, waiting for recovery",
            ),
        },
    ),
    RuleCase(
        name="pods ready again after recovery",
        raw=admitted(cond("PodsReady", "False", "WaitForRecovery", "x")),
        rule=lambda r: set_pods_ready(r, True, NOW),
        want_conditions={
            "QuotaReserved": ("True", "QuotaReserved", "Quota reserved in ClusterQueue cq"),
            "Admitted": ("True", "Admitted", "The workload is admitted"),
            "PodsReady": (
                "True",
                "Recovered",
                "All pods reached readiness and the workload is running",
            ),
        },
    ),
    RuleCase(
        name="pods of a workload not admitted wait for start",
        raw=reserved(),
        rule=lambda r: set_pods_ready(r, True, NOW),
        want_conditions={
            "QuotaReserved": ("True", "QuotaReserved", "Quota reserved in ClusterQueue cq"),
            "PodsReady": ("False", "WaitForStart", "Not all pods are ready or succeeded"),
        },
    ),
    RuleCase(
        name="sync admitted with every check ready",
        raw=reserved(checks=[check("a", "Ready"), check("b", "Ready")]),
        rule=lambda r: sync_admitted(r, NOW),
        want_conditions={
            "QuotaReserved": ("True", "QuotaReserved", "Quota reserved in ClusterQueue cq"),
            "Admitted": ("True", "Admitted", "The workload is admitted"),
        },
    ),
)


@pytest.mark.parametrize("case", RULE_CASES, ids=[c.name for c in RULE_CASES])
def test_rule(case: RuleCase) -> None:
    before = copy.deepcopy(case.raw)
    status = case.rule(case.raw)
    assert case.raw == before, "the input object must not change"
    assert conds(status) == case.want_conditions
    for name, present in case.fields.items():
        assert (name in status) is present, name


def test_losing_admission_adds_the_admitted_time_to_the_past_execution_time() -> None:
    status = release_quota(admitted(cond("Evicted", "True", "Preempted", "m")), NOW)
    assert status["accumulatedPastExecutionTimeSeconds"] == 100
    twice = release_quota(
        admitted(cond("Evicted", "True", "Preempted", "m"), accumulatedPastExecutionTimeSeconds=40),
        NOW,
    )
    assert twice["accumulatedPastExecutionTimeSeconds"] == 140


def test_eviction_resets_checks_nomination_and_counts_it() -> None:
    raw = reserved(
        checks=[
            check("check-1", "Retry", "infra", requeueAfterSeconds=30, retryCount=2),
            check("check-2", "Ready", podSetUpdates=[{"name": "main"}]),
            check("check-3", "Pending", "waiting"),
        ],
        clusterName="worker1",
        nominatedClusterNames=["worker1", "worker2"],
        preemptionGates=[{"name": "g", "position": "Open", "lastTransitionTime": "x"}],
    )
    status = evict(
        raw, "AdmissionCheck", 'Evicted due to AdmissionCheck in Retry state: "check-1"', NOW
    )
    assert conds(status)["Evicted"] == (
        "True",
        "AdmissionCheck",
        'Evicted due to AdmissionCheck in Retry state: "check-1"',
    )
    got = {c["name"]: c for c in status["admissionChecks"]}
    assert got["check-1"]["state"] == "Pending"
    assert got["check-1"]["message"] == "Reset to Pending after eviction. Previously: Retry"
    assert got["check-1"]["retryCount"] == 3
    assert got["check-1"]["requeueAfterSeconds"] == 30
    assert got["check-2"]["message"] == "Reset to Pending after eviction. Previously: Ready"
    assert "retryCount" not in got["check-2"]
    assert "podSetUpdates" not in got["check-2"]
    assert got["check-3"]["message"] == "waiting", "a Pending check is left as it is"
    assert "clusterName" not in status
    assert "nominatedClusterNames" not in status
    assert status["preemptionGates"][0]["position"] == "Closed"
    assert status["schedulingStats"]["evictions"] == [{"reason": "AdmissionCheck", "count": 1}]
    again = evict({**raw, "status": status}, "AdmissionCheck", "m", NOW)
    assert again["schedulingStats"]["evictions"] == [{"reason": "AdmissionCheck", "count": 2}]


@dataclass(frozen=True)
class EventCase:
    name: str
    reason: str
    cause: str
    want: str


EVENT_CASES = (
    EventCase("preemption", "Preempted", "", "EvictedDueToPreempted"),
    EventCase("admission check", "AdmissionCheck", "", "EvictedDueToAdmissionCheck"),
    EventCase(
        "pods ready timeout keeps its cause out",
        "PodsReadyTimeout",
        "WaitForStart",
        "EvictedDueToPodsReadyTimeout",
    ),
    EventCase("deactivated by a user", "Deactivated", "", "EvictedDueToDeactivated"),
    EventCase(
        "deactivated on the manager",
        "Deactivated",
        "EvictedOnManagerCluster",
        "EvictedDueToDeactivatedDueToEvictedOnManagerCluster",
    ),
)


@pytest.mark.parametrize("case", EVENT_CASES, ids=[c.name for c in EVENT_CASES])
def test_eviction_event_reason(case: EventCase) -> None:
    assert eviction_event(case.reason, "msg", case.cause) == Event("Normal", case.want, "msg")


CQ = ClusterQueue(
    name="cq",
    resource_groups=(
        ResourceGroup(
            covered_resources=("cpu",),
            flavors=(
                FlavorQuotas("f1", (ResourceQuota("cpu", 1000),)),
                FlavorQuotas("f2", (ResourceQuota("cpu", 1000),)),
            ),
        ),
    ),
    admission_checks=(
        AdmissionCheckRule("z-all"),
        AdmissionCheckRule("b-f2", ("f2",)),
        AdmissionCheckRule("a-both", ("f1", "f2")),
    ),
)


@dataclass(frozen=True)
class SyncCase:
    name: str
    raw: dict[str, Any]
    want: tuple[str, ...]


SYNC_CASES = (
    SyncCase("before admission only all-flavor checks", raw_wl(), ("a-both", "z-all")),
    SyncCase(
        "admitted on f2 gets the f2 check",
        reserved(adm=admission(flavor="f2")),
        ("a-both", "b-f2", "z-all"),
    ),
    SyncCase(
        "admitted on f1 skips the f2 check",
        reserved(adm=admission(flavor="f1")),
        ("a-both", "z-all"),
    ),
    SyncCase(
        "obsolete checks are dropped, states kept",
        raw_wl(checks=[check("gone", "Ready"), check("z-all", "Ready")]),
        ("a-both", "z-all"),
    ),
)


@pytest.mark.parametrize("case", SYNC_CASES, ids=[c.name for c in SYNC_CASES])
def test_sync_admission_checks(case: SyncCase) -> None:
    status = sync_admission_checks(case.raw, CQ, None, NOW)
    assert tuple(c["name"] for c in status["admissionChecks"]) == case.want
    before = {c["name"]: c["state"] for c in case.raw["status"].get("admissionChecks", [])}
    for c in status["admissionChecks"]:
        assert c["state"] == before.get(c["name"], "Pending")


def test_sync_admission_checks_without_checks_removes_the_field() -> None:
    status = sync_admission_checks(
        raw_wl(checks=[check("x", "Ready")]), ClusterQueue("cq"), None, NOW
    )
    assert "admissionChecks" not in status


@dataclass(frozen=True)
class MessageCase:
    name: str
    checks: tuple[dict[str, Any], ...]
    state: str
    want: str


MESSAGE_CASES = (
    MessageCase(
        "one check",
        (check("check", "Rejected"),),
        "Rejected",
        'AdmissionCheck in Rejected state: "check"',
    ),
    MessageCase(
        "one check with message",
        (check("check", "Rejected", "quota exceeded"),),
        "Rejected",
        'AdmissionCheck in Rejected state: "check" (quota exceeded)',
    ),
    MessageCase(
        "several sorted by name",
        (
            check("check-3", "Retry", "budget exhausted"),
            check("check-1", "Retry", "infrastructure not prepared"),
        ),
        "Retry",
        'AdmissionChecks in Retry state: "check-1" (infrastructure not prepared); '
        '"check-3" (budget exhausted)',
    ),
)


@pytest.mark.parametrize("case", MESSAGE_CASES, ids=[c.name for c in MESSAGE_CASES])
def test_checks_message(case: MessageCase) -> None:
    assert checks_message(list(case.checks), case.state) == case.want


@pytest.mark.parametrize(
    ("count", "want"), [(1, 60), (2, 120), (3, 240), (6, 1920), (7, 3600), (20, 3600)]
)
def test_backoff_doubles_up_to_the_maximum(count: int, want: int) -> None:
    assert backoff_seconds(count, 60, 3600) == want


def test_long_messages_are_cut_as_upstream() -> None:
    long = "x" * 40_000
    status = evict(admitted(), "Preempted", long, NOW)
    message = conds(status)["Evicted"][2]
    assert len(message) == 32 * 1024
    assert message.endswith("x ...")
    event = eviction_event("Preempted", long)
    assert len(event.message) == 1024
    assert event.message.endswith(" ...")


def test_finishing_twice_keeps_the_first_reason() -> None:
    once = finish(admitted(), "Failed", "BackoffLimitExceeded", NOW)
    twice = finish({**admitted(), "status": once}, "Succeeded", "ok", NOW + 5)
    assert conds(twice)["Finished"] == ("True", "Failed", "BackoffLimitExceeded")


def test_reservation_events() -> None:
    raw = raw_wl()
    raw["metadata"]["creationTimestamp"] = format_time(T0 - 7)
    status = reserve_quota(raw, admission(), T0)
    assert reservation_events(raw, status, T0) == (
        Event(
            "Normal",
            "QuotaReserved",
            "Quota reserved in ClusterQueue cq, wait time since queued was 7s",
        ),
        Event(
            "Normal", "Admitted", "Admitted by ClusterQueue cq, wait time since reservation was 0s"
        ),
    )
    requeued = raw_wl(
        cond("Requeued", "True", "Preempted", "m", at=T0 - 3), checks=[check("ac", "Pending")]
    )
    status = reserve_quota(requeued, admission(), T0)
    assert reservation_events(requeued, status, T0, considered="main: default(Fit)") == (
        Event(
            "Normal",
            "QuotaReserved",
            "Quota reserved in ClusterQueue cq, wait time since queued was 3s; "
            "Flavors considered: main: default(Fit)",
        ),
    )
