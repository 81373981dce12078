"""Fair Sharing preemption against upstream's ``TestFairPreemptions`` setup: three queues of 3 CPUs
and a preemptible one of 0 in one cohort; targets and reasons (with the default beta gate
FairSharingPreemptWithinNominal, a preemptor staying within its nominal quota reclaims with
``InCohortReclamation``), and the cycle's Dominant Resource Share order."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.kueue.api.model import Workload
from numaplane.kueue.cache import Snapshot
from numaplane.kueue.scheduler.preemption import PreemptionOptions, Preemptor
from numaplane.kueue.scheduler.scheduler import SchedulerOptions, schedule
from tests.kueue.scheduler.sched_builders import (
    NOW,
    admitted,
    cluster_queue,
    cpu,
    flavor,
    group,
    pending,
    preemption,
    quota,
    snapshot_of,
)

CPU = ("default", "cpu")


QUEUES = tuple(
    cluster_queue(
        name,
        group(flavor("default", quota("cpu", nominal))),
        cohort="all",
        preemption=preemption("LowerPriority", "Any", "LowerPriority", -3)
        if name != "preemptible"
        else preemption(),
    )
    for name, nominal in (("a", cpu(3)), ("b", cpu(3)), ("c", cpu(3)), ("preemptible", 0))
)


def units(cq: str, *names: str, priority: int = 0) -> tuple[Workload, ...]:
    """One-CPU workloads ``names`` reserving in ``cq``."""
    return tuple(admitted(n, cq, {CPU: cpu(1)}, priority=priority) for n in names)


@dataclass(frozen=True)
class Case:
    name: str
    admitted: tuple[Workload, ...]
    target_cq: str
    request: int
    want: dict[str, str]


FS = "InCohortFairSharing"
RECLAIM = "InCohortReclamation"
IN_CQ = "InClusterQueue"

CASES = [
    Case(
        "reclaim nominal from user using the most",
        (
            *units("a", "a1", "a2", "a3"),
            *units("b", "b1", "b2", "b3", "b4", "b5"),
            *units("c", "c1"),
        ),
        "c",
        cpu(1),
        {"b1": RECLAIM},
    ),
    Case(
        "reclaim borrowable quota from user using the most",
        (
            *units("a", "a1", "a2", "a3"),
            *units("b", "b1", "b2", "b3", "b4", "b5"),
            *units("c", "c1"),
        ),
        "a",
        cpu(1),
        {"b1": FS},
    ),
    Case(
        "preempt one from each CQ borrowing",
        (
            admitted("a1", "a", {CPU: cpu(0.5)}),
            admitted("a2", "a", {CPU: cpu(0.5)}),
            admitted("a3", "a", {CPU: cpu(3)}),
            admitted("b1", "b", {CPU: cpu(0.5)}),
            admitted("b2", "b", {CPU: cpu(0.5)}),
            admitted("b3", "b", {CPU: cpu(3)}),
        ),
        "c",
        cpu(2),
        {"a1": RECLAIM, "b1": RECLAIM},
    ),
    Case(
        "can't preempt when everyone under nominal",
        (
            *units("a", "a1", "a2", "a3"),
            *units("b", "b1", "b2", "b3"),
            *units("c", "c1", "c2", "c3"),
        ),
        "c",
        cpu(1),
        {},
    ),
    Case(
        "can't preempt when it would switch the imbalance",
        (*units("a", "a1", "a2", "a3"), *units("b", "b1", "b2", "b3", "b4", "b5")),
        "a",
        cpu(2),
        {},
    ),
    Case(
        "can preempt lower priority workloads from same CQ",
        (
            *units("a", "a1_low", "a2_low", priority=-1),
            *units("a", "a3", "a4"),
            *units("b", "b1", "b2", "b3", "b4", "b5"),
        ),
        "a",
        cpu(2),
        {"a1_low": IN_CQ, "a2_low": IN_CQ},
    ),
    Case(
        "can preempt a combination of same CQ and highest user",
        (
            *units("a", "a_low", priority=-1),
            *units("a", "a2", "a3"),
            *units("b", "b1", "b2", "b3", "b4", "b5", "b6"),
        ),
        "a",
        cpu(2),
        {"a_low": IN_CQ, "b1": FS},
    ),
    Case(
        "can't preempt huge workload if the incoming is also huge",
        (admitted("a1", "a", {CPU: cpu(2)}), admitted("b1", "b", {CPU: cpu(7)})),
        "a",
        cpu(5),
        {},
    ),
]


def _usage(snap: Snapshot) -> dict[str, dict[tuple[str, str], int]]:
    """Every queue's usage, zero amounts left out (a simulation may leave a 0 entry)."""
    return {
        name: {fr: v for fr, v in cq.node.usage.items() if v}
        for name, cq in snap.cluster_queues.items()
    }


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fair_preemption_targets(case: Case) -> None:
    snap = snapshot_of(["default"], QUEUES, case.admitted)
    before = _usage(snap)
    preemptor = Preemptor(NOW, PreemptionOptions(fair_sharing=True))
    wl = pending("incoming", {"cpu": case.request}, uid="wl-in")
    targets = preemptor.targets_for(wl, case.target_cq, frozenset({CPU}), {CPU: case.request}, snap)
    assert {t.workload.name: t.reason for t in targets} == case.want
    assert _usage(snap) == before


@dataclass(frozen=True)
class OrderCase:
    name: str
    fair_sharing: bool
    want_reserved: str
    want_skipped: str


ORDER_CASES = [
    # Both heads borrow one level: classical order takes the higher priority first.
    OrderCase("classical: higher priority first", False, "a/x", "b/y"),
    # Fair Sharing: the nominee leaving its queue with the lower share goes first.
    OrderCase("fair sharing: lower Dominant Resource Share first", True, "b/y", "a/x"),
]


@pytest.mark.parametrize("case", ORDER_CASES, ids=[c.name for c in ORDER_CASES])
def test_fair_sharing_entry_order(case: OrderCase) -> None:
    queues = (
        cluster_queue("a", group(flavor("default", quota("cpu", cpu(3)))), cohort="all"),
        cluster_queue("b", group(flavor("default", quota("cpu", cpu(3)))), cohort="all"),
        cluster_queue("c", group(flavor("default", quota("cpu", cpu(4)))), cohort="all"),
    )
    running = (
        admitted("a-running", "a", {CPU: cpu(5)}, namespace="a"),
        admitted("b-running", "b", {CPU: cpu(3)}, namespace="b"),
    )
    snap = snapshot_of(["default"], queues, running)
    heads = (
        pending("x", {"cpu": cpu(2)}, namespace="a", priority=10),
        pending("y", {"cpu": cpu(2)}, namespace="b"),
    )
    result = schedule(
        snap,
        heads,
        now=NOW,
        options=SchedulerOptions(fair_sharing=case.fair_sharing),
        local_queues={"a/main": "a", "b/main": "b"},
    )
    assert [r.workload.key for r in result.reserved] == [case.want_reserved]
    assert {p.workload.key: p.message for p in result.pending} == {
        case.want_skipped: "Workload no longer fits after processing another workload"
    }
