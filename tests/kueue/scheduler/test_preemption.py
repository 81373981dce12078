"""Long because it is one table: upstream's cases, each a few lines of objects.

Classical preemption against upstream's ``TestPreemption`` table (quota.md §5, P1 and P3):
exact targets, reasons and messages for a preemptor whose assignment needs preemption."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from numaplane.kueue.api.model import ClusterQueue, Cohort, Workload
from numaplane.kueue.cache import Snapshot
from numaplane.kueue.resources import FlavorResource
from numaplane.kueue.scheduler.preemption import Preemptor
from tests.kueue.scheduler.sched_builders import (
    GI,
    NOW,
    admitted,
    cluster_queue,
    cohort,
    cpu,
    flavor,
    group,
    pending,
    preemption,
    quota,
    snapshot_of,
)

CPU = ("default", "cpu")
MEM = ("default", "memory")

QUEUES = (
    cluster_queue(
        "standalone",
        group(flavor("default", quota("cpu", cpu(6)))),
        group(flavor("alpha", quota("memory", 3 * GI)), flavor("beta", quota("memory", 3 * GI))),
        preemption=preemption(within="LowerPriority"),
    ),
    cluster_queue(
        "c1",
        group(flavor("default", quota("cpu", cpu(6), cpu(6)), quota("memory", 3 * GI, 3 * GI))),
        cohort="cohort",
        preemption=preemption(within="LowerPriority", reclaim="LowerPriority"),
    ),
    cluster_queue(
        "c2",
        group(flavor("default", quota("cpu", cpu(6), cpu(6)), quota("memory", 3 * GI, 3 * GI))),
        cohort="cohort",
        preemption=preemption(within="Never", reclaim="Any"),
    ),
    cluster_queue(
        "preventStarvation",
        group(flavor("default", quota("cpu", cpu(6)))),
        preemption=preemption(within="LowerOrNewerEqualPriority"),
    ),
    cluster_queue(
        "a_standard",
        group(flavor("default", quota("cpu", cpu(1), cpu(12)))),
        cohort="with_shared_cq",
        preemption=preemption("Never", "LowerPriority", "LowerPriority", 0),
    ),
    cluster_queue(
        "b_standard",
        group(flavor("default", quota("cpu", cpu(1), cpu(12)))),
        cohort="with_shared_cq",
        preemption=preemption("LowerPriority", "Any", "LowerPriority", 0),
    ),
    cluster_queue(
        "a_best_effort",
        group(flavor("default", quota("cpu", cpu(1), cpu(12)))),
        cohort="with_shared_cq",
        preemption=preemption("Never", "LowerPriority", "LowerPriority", 0),
    ),
    cluster_queue(
        "b_best_effort",
        group(flavor("default", quota("cpu", 0, cpu(13)))),
        cohort="with_shared_cq",
        preemption=preemption("Never", "LowerPriority", "LowerPriority", 0),
    ),
    cluster_queue(
        "shared", group(flavor("default", quota("cpu", cpu(10)))), cohort="with_shared_cq"
    ),
)


def incoming(priority: int, requests: dict[str, int]) -> Workload:
    """Upstream's ``in`` workload (UID wl-in, JobUID job-in)."""
    return pending("in", requests, priority=priority, uid="wl-in", job_uid="job-in")


@dataclass(frozen=True)
class Case:
    name: str
    admitted: tuple[Workload, ...]
    priority: int
    #: The preemptor's total requests per (flavor, resource) as its assignment charges them.
    requests: dict[FlavorResource, int]
    #: The (flavor, resource)s the assignment put in Preempt mode.
    preempt: frozenset[FlavorResource]
    target_cq: str
    #: target name → Preempted reason.
    want: dict[str, str]
    #: target name → exact message, where the case pins it.
    want_messages: dict[str, str] = field(default_factory=dict)
    #: Replaces the default queues (hierarchical cases).
    queues: tuple[ClusterQueue, ...] = ()
    cohorts: tuple[Cohort, ...] = ()


def msg(reason_words: str, preemptor: str, preemptee: str) -> str:
    return (
        "Preempted to accommodate a workload (UID: wl-in, JobUID: job-in) due to "
        f"{reason_words}; preemptor path: {preemptor}; preemptee path: {preemptee}"
    )


STANDALONE_3 = (
    admitted("low", "standalone", {CPU: cpu(2)}, priority=-1),
    admitted("mid", "standalone", {CPU: cpu(2)}),
    admitted("high", "standalone", {CPU: cpu(2)}, priority=1),
)
CPU_PREEMPT = frozenset({CPU})

CASES = [
    Case(
        "P1 preempt lowest priority",
        STANDALONE_3,
        1,
        {CPU: cpu(2)},
        CPU_PREEMPT,
        "standalone",
        {"low": "InClusterQueue"},
        {"low": msg("prioritization in the ClusterQueue", "/standalone", "/standalone")},
    ),
    Case(
        "preempt multiple",
        STANDALONE_3,
        1,
        {CPU: cpu(3)},
        CPU_PREEMPT,
        "standalone",
        {"low": "InClusterQueue", "mid": "InClusterQueue"},
    ),
    Case(
        "no preemption for low priority",
        (
            admitted("low", "standalone", {CPU: cpu(3)}, priority=-1),
            admitted("mid", "standalone", {CPU: cpu(3)}),
        ),
        -1,
        {CPU: cpu(1)},
        CPU_PREEMPT,
        "standalone",
        {},
    ),
    Case(
        "not enough low priority workloads",
        (
            admitted("low", "standalone", {CPU: cpu(3)}, priority=-1),
            admitted("mid", "standalone", {CPU: cpu(3)}),
        ),
        0,
        {CPU: cpu(4)},
        CPU_PREEMPT,
        "standalone",
        {},
    ),
    Case(
        "some free quota, preempt low priority",
        (
            admitted("low", "standalone", {CPU: cpu(1)}, priority=-1),
            admitted("mid", "standalone", {CPU: cpu(1)}),
            admitted("high", "standalone", {CPU: cpu(3)}, priority=1),
        ),
        1,
        {CPU: cpu(2)},
        CPU_PREEMPT,
        "standalone",
        {"low": "InClusterQueue"},
    ),
    Case(
        "minimal set excludes low priority",
        (
            admitted("low", "standalone", {CPU: cpu(1)}, priority=-1),
            admitted("mid", "standalone", {CPU: cpu(2)}),
            admitted("high", "standalone", {CPU: cpu(3)}, priority=1),
        ),
        1,
        {CPU: cpu(2)},
        CPU_PREEMPT,
        "standalone",
        {"mid": "InClusterQueue"},
    ),
    Case(
        "only preempt workloads using the chosen flavor",
        (
            admitted("low", "standalone", {("alpha", "memory"): 2 * GI}, priority=-1),
            admitted("mid", "standalone", {("beta", "memory"): GI}),
            admitted("high", "standalone", {("beta", "memory"): GI}, priority=1),
        ),
        1,
        {CPU: cpu(1), ("beta", "memory"): 2 * GI},
        frozenset({("beta", "memory")}),
        "standalone",
        {"mid": "InClusterQueue"},
    ),
    Case(
        "P3 reclaim quota from borrower",
        (
            admitted("c1-low", "c1", {CPU: cpu(3)}, priority=-1),
            admitted("c2-mid", "c2", {CPU: cpu(3)}),
            admitted("c2-high", "c2", {CPU: cpu(6)}, priority=1),
        ),
        1,
        {CPU: cpu(3)},
        CPU_PREEMPT,
        "c1",
        {"c2-mid": "InCohortReclamation"},
        {"c2-mid": msg("reclamation within the cohort", "/cohort/c1", "/cohort/c2")},
    ),
    Case(
        "reclaim quota if workload requests 0 resources for a resource at nominal quota",
        (
            admitted("c1-low", "c1", {CPU: cpu(3), MEM: 3 * GI}, priority=-1),
            admitted("c2-mid", "c2", {CPU: cpu(3)}),
            admitted("c2-high", "c2", {CPU: cpu(6)}, priority=1),
        ),
        1,
        {CPU: cpu(3), MEM: 0},
        CPU_PREEMPT,
        "c1",
        {"c2-mid": "InCohortReclamation"},
    ),
    Case(
        "no workloads borrowing",
        (
            admitted("c1-high", "c1", {CPU: cpu(4)}, priority=1),
            admitted("c2-low-1", "c2", {CPU: cpu(4)}, priority=-1),
        ),
        1,
        {CPU: cpu(4)},
        CPU_PREEMPT,
        "c1",
        {},
    ),
    Case(
        "not enough workloads borrowing",
        (
            admitted("c1-high", "c1", {CPU: cpu(4)}, priority=1),
            admitted("c2-low-1", "c2", {CPU: cpu(4)}, priority=-1),
            admitted("c2-low-2", "c2", {CPU: cpu(4)}, priority=-1),
        ),
        1,
        {CPU: cpu(4)},
        CPU_PREEMPT,
        "c1",
        {},
    ),
    Case(
        "preempting locally and borrowing other resources in cohort, without cohort candidates",
        (
            admitted("c1-low", "c1", {CPU: cpu(4)}, priority=-1),
            admitted("c2-low-1", "c2", {CPU: cpu(4)}, priority=-1),
            admitted("c2-high-2", "c2", {CPU: cpu(4)}, priority=1),
        ),
        1,
        {CPU: cpu(4), MEM: 5 * GI},
        frozenset({CPU, MEM}),
        "c1",
        {"c1-low": "InClusterQueue"},
        {"c1-low": msg("prioritization in the ClusterQueue", "/cohort/c1", "/cohort/c1")},
    ),
    Case(
        "preempting locally and borrowing same resource in cohort",
        (
            admitted("c1-med", "c1", {CPU: cpu(4)}),
            admitted("c1-low", "c1", {CPU: cpu(4)}, priority=-1),
            admitted("c2-low-1", "c2", {CPU: cpu(4)}, priority=-1),
        ),
        1,
        {CPU: cpu(4)},
        CPU_PREEMPT,
        "c1",
        {"c1-low": "InClusterQueue"},
    ),
    Case(
        "borrowWithinCohort: preempt a lower-priority workload of another queue while borrowing",
        (
            admitted("a_best_effort_low", "a_best_effort", {CPU: cpu(10)}, priority=-1),
            admitted("b_best_effort_low", "b_best_effort", {CPU: cpu(1)}, priority=-1),
        ),
        0,
        {CPU: cpu(10)},
        CPU_PREEMPT,
        "a_standard",
        {"a_best_effort_low": "InCohortReclaimWhileBorrowing"},
        {
            "a_best_effort_low": msg(
                "reclamation within the cohort while borrowing",
                "/with_shared_cq/a_standard",
                "/with_shared_cq/a_best_effort",
            )
        },
    ),
    Case(
        "borrowWithinCohort: not above maxPriorityThreshold while still borrowing",
        (admitted("b_standard", "b_standard", {CPU: cpu(10)}, priority=1),),
        2,
        {CPU: cpu(10)},
        CPU_PREEMPT,
        "a_standard",
        {},
    ),
    Case(
        "borrowWithinCohort: above maxPriorityThreshold when no borrowing is left",
        (admitted("b_standard", "b_standard", {CPU: cpu(13)}, priority=1),),
        2,
        {CPU: cpu(1)},
        CPU_PREEMPT,
        "a_standard",
        {"b_standard": "InCohortReclamation"},
        {
            "b_standard": msg(
                "reclamation within the cohort",
                "/with_shared_cq/a_standard",
                "/with_shared_cq/b_standard",
            )
        },
    ),
    Case(
        "borrowWithinCohort: no preemption in the own queue with withinClusterQueue Never",
        (admitted("a_standard", "a_standard", {CPU: cpu(13)}, priority=1),),
        2,
        {CPU: cpu(1)},
        CPU_PREEMPT,
        "a_standard",
        {},
    ),
    Case(
        "borrowWithinCohort: only the own queue when nothing is below the threshold",
        (
            admitted("a_standard_1", "a_standard", {CPU: cpu(10)}, priority=1),
            admitted("a_standard_2", "a_standard", {CPU: cpu(1)}, priority=1),
            admitted("b_standard_1", "b_standard", {CPU: cpu(1)}, priority=1),
            admitted("b_standard_2", "b_standard", {CPU: cpu(1)}, priority=2),
        ),
        3,
        {CPU: cpu(1)},
        CPU_PREEMPT,
        "b_standard",
        {"b_standard_1": "InClusterQueue"},
    ),
    Case(
        "borrowWithinCohort: own queue and other queues below the threshold together",
        (
            admitted("b_standard_high", "b_standard", {CPU: cpu(10)}, priority=2),
            admitted("b_standard_mid", "b_standard", {CPU: cpu(1)}, priority=1),
            admitted("a_best_effort_low", "a_best_effort", {CPU: cpu(1)}, priority=-1),
            admitted("a_best_effort_lower", "a_best_effort", {CPU: cpu(1)}, priority=-2),
        ),
        2,
        {CPU: cpu(2)},
        CPU_PREEMPT,
        "b_standard",
        {
            "a_best_effort_lower": "InCohortReclaimWhileBorrowing",
            "b_standard_mid": "InClusterQueue",
        },
    ),
    Case(
        "LowerOrNewerEqualPriority preempts an equal priority workload queued later",
        (
            admitted("older", "preventStarvation", {CPU: cpu(3)}, reserved_at=NOW - 100),
            admitted("newer", "preventStarvation", {CPU: cpu(3)}, reserved_at=NOW),
        ),
        0,
        {CPU: cpu(3)},
        CPU_PREEMPT,
        "preventStarvation",
        # The preemptor was queued at NOW - 60: only "newer" (queued at NOW) is newer.
        {"newer": "InClusterQueue"},
    ),
]


def _tree_queue(name: str, parent: str, nominal: int = 0) -> ClusterQueue:
    policy = preemption(within="LowerPriority", reclaim="Any")
    return cluster_queue(
        name, group(flavor("default", quota("cpu", nominal))), cohort=parent, preemption=policy
    )


#            R
#      /      |         \
#   C(2) q_borrowing(0)  q_nominal(2)
#  /
# q
TREE_COHORTS = (cohort("r"), cohort("c", "r", group(flavor("default", quota("cpu", cpu(2))))))
TREE_QUEUES = (
    _tree_queue("q", "c"),
    _tree_queue("q_borrowing", "r"),
    _tree_queue("q_nominal", "r", cpu(2)),
)
#: The same tree without q_nominal.
TREE_QUEUES_2 = TREE_QUEUES[:2]
TREE_MSG = msg("reclamation within the cohort", "/r/c/q", "/r/q_borrowing")

CASES += [
    Case(
        "hierarchical: preempt with hierarchical advantage",
        (admitted("admitted2", "q_borrowing", {CPU: cpu(2)}),),
        0,
        {CPU: cpu(2)},
        CPU_PREEMPT,
        "q",
        {"admitted2": "InCohortReclamation"},
        {"admitted2": TREE_MSG},
        TREE_QUEUES_2,
        TREE_COHORTS,
    ),
    Case(
        "hierarchical: avoid queues within nominal quota",
        (
            admitted("admitted1", "q_nominal", {CPU: cpu(2)}, priority=-10),
            admitted("admitted2", "q_borrowing", {CPU: cpu(2)}),
        ),
        0,
        {CPU: cpu(2)},
        CPU_PREEMPT,
        "q",
        {"admitted2": "InCohortReclamation"},
        {"admitted2": TREE_MSG},
        TREE_QUEUES,
        TREE_COHORTS,
    ),
    Case(
        "hierarchical: preempt multiple with hierarchical advantage, whatever their priority",
        (
            admitted("admitted1", "q_borrowing", {CPU: cpu(1)}, priority=1),
            admitted("admitted2", "q_borrowing", {CPU: cpu(1)}, priority=2),
        ),
        0,
        {CPU: cpu(2)},
        CPU_PREEMPT,
        "q",
        {"admitted1": "InCohortReclamation", "admitted2": "InCohortReclamation"},
        {},
        TREE_QUEUES_2,
        TREE_COHORTS,
    ),
]


def _snapshot(case: Case) -> Snapshot:
    queues = case.queues or QUEUES
    return snapshot_of(["default", "alpha", "beta"], queues, case.admitted, case.cohorts)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_preemption_targets(case: Case) -> None:
    snap = _snapshot(case)
    before = {name: dict(cq.node.usage) for name, cq in snap.cluster_queues.items()}
    preemptor = Preemptor(NOW)
    wl = incoming(case.priority, {r: v for (_, r), v in case.requests.items()})
    targets = preemptor.targets_for(wl, case.target_cq, case.preempt, case.requests, snap)
    assert {t.workload.name: t.reason for t in targets} == case.want
    for name, message in case.want_messages.items():
        assert next(t.message for t in targets if t.workload.name == name) == message
    # The simulation leaves the snapshot as it found it.
    assert {name: dict(cq.node.usage) for name, cq in snap.cluster_queues.items()} == before
