"""Long because it is one table: upstream's cases, each a few lines of objects.

The scheduling cycle against upstream's ``TestSchedule`` setup (quota.md §4 and §6: Q1, Q2,
Q4, Q5, Q7, P4): what is reserved (flavors, amounts, counts), what is preempted (reason and
message) and why the rest waits (reason, message, immediate or parked)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest

from numaplane.kueue.api.model import STRICT_FIFO, ClusterQueue, PodSet, Workload
from numaplane.kueue.scheduler.scheduler import CycleResult, SchedulerOptions, schedule
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
    with_pod_sets,
)

GPU = "example.com/gpu"
FLAVORS = ("default", "on-demand", "spot", "model-a")


def dep(*values: str) -> dict[str, object]:
    """``namespaceSelector`` matching namespaces whose ``dep`` label is one of ``values``."""
    return {"matchExpressions": [{"key": "dep", "operator": "In", "values": list(values)}]}


QUEUES = (
    cluster_queue(
        "sales",
        group(flavor("default", quota("cpu", cpu(50), 0))),
        namespace_selector=dep("sales"),
        queueing_strategy=STRICT_FIFO,
    ),
    cluster_queue(
        "eng-alpha",
        group(
            flavor("on-demand", quota("cpu", cpu(50), cpu(50))),
            flavor("spot", quota("cpu", cpu(100), 0)),
        ),
        cohort="eng",
        namespace_selector=dep("eng"),
        queueing_strategy=STRICT_FIFO,
    ),
    cluster_queue(
        "eng-beta",
        group(
            flavor("on-demand", quota("cpu", cpu(50), cpu(10))),
            flavor("spot", quota("cpu", 0, cpu(100))),
        ),
        group(flavor("model-a", quota(GPU, 20, 0))),
        cohort="eng",
        namespace_selector=dep("eng"),
        queueing_strategy=STRICT_FIFO,
        preemption=preemption(within="LowerPriority", reclaim="Any"),
    ),
    cluster_queue(
        "flavor-nonexistent-cq",
        group(flavor("nonexistent-flavor", quota("cpu", cpu(50)))),
        queueing_strategy=STRICT_FIFO,
    ),
    cluster_queue(
        "lend-a",
        group(flavor("default", quota("cpu", cpu(3), None, cpu(2)))),
        cohort="lend",
        namespace_selector=dep("lend"),
    ),
    cluster_queue(
        "lend-b",
        group(flavor("default", quota("cpu", cpu(2), None, cpu(2)))),
        cohort="lend",
        namespace_selector=dep("lend"),
    ),
)

LOCAL_QUEUES = {
    "sales/main": "sales",
    "sales/blocked": "eng-alpha",
    "eng-alpha/main": "eng-alpha",
    "eng-beta/main": "eng-beta",
    "sales/flavor-nonexistent-queue": "flavor-nonexistent-cq",
    "sales/cq-nonexistent-queue": "nonexistent-cq",
    "lend/lend-a-queue": "lend-a",
    "lend/lend-b-queue": "lend-b",
}

NAMESPACES = {
    "sales": {"dep": "sales"},
    "eng-alpha": {"dep": "eng"},
    "eng-beta": {"dep": "eng"},
    "lend": {"dep": "lend"},
}

#: A reserved podSet: (podSet, resource) → (flavor, amount, count).
Reserved = dict[tuple[str, str], tuple[str, int, int]]


@dataclass(frozen=True)
class Case:
    name: str
    #: Workloads already reserving quota (they carry an admission).
    admitted: tuple[Workload, ...]
    #: The heads of this cycle, at most one per ClusterQueue.
    heads: tuple[Workload, ...]
    want_reserved: dict[str, Reserved] = field(default_factory=dict)
    #: key → (Preempted reason, message)
    want_preempted: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: key → (QuotaReserved reason, message, requeue)
    want_pending: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    extra_queues: tuple[ClusterQueue, ...] = ()
    extra_local_queues: dict[str, str] = field(default_factory=dict)
    #: key → the reservation's "flavors considered" ("" unless given).
    want_considered: dict[str, str] = field(default_factory=dict)


def one(ns: str, name: str, count: int, millicores: int) -> Workload:
    """A pending workload of podSet ``one`` with ``count`` pods of ``millicores`` each."""
    return pending(name, {"cpu": millicores}, count=count, namespace=ns, pod_set="one")


def running(
    ns: str, name: str, cq: str, fl: str, millicores: int, *, priority: int = 0
) -> Workload:
    """A workload reserving ``millicores`` of ``fl`` in ``cq`` (podSet ``main``)."""
    return admitted(name, cq, {(fl, "cpu"): millicores}, namespace=ns, priority=priority)


PREEMPT_MSG = (
    "Preempted to accommodate a workload (UID: wl-preemptor, JobUID: job-preemptor) due to {}; "
    "preemptor path: {}; preemptee path: {}"
)

OTHER_QUEUES = (
    cluster_queue(
        "other-alpha",
        group(flavor("on-demand", quota("cpu", cpu(50), cpu(50)))),
        cohort="other",
    ),
    cluster_queue(
        "other-beta",
        group(flavor("on-demand", quota("cpu", cpu(50), cpu(10)))),
        cohort="other",
        preemption=preemption(within="LowerPriority", reclaim="Any"),
    ),
)

RECLAIM_QUEUES = (
    cluster_queue(
        "cq-a",
        group(flavor("default", quota("cpu", cpu(4)))),
        cohort="r",
        preemption=preemption(reclaim="LowerPriority"),
    ),
    cluster_queue("cq-b", group(flavor("default", quota("cpu", cpu(4)))), cohort="r"),
)

OVERLAP_QUEUES = (
    cluster_queue(
        "c1",
        group(flavor("default", quota("cpu", cpu(6)))),
        cohort="ov",
        preemption=preemption(reclaim="Any"),
    ),
    cluster_queue(
        "c2",
        group(flavor("default", quota("cpu", cpu(6)))),
        cohort="ov",
        preemption=preemption(reclaim="Any"),
    ),
    cluster_queue("c3", group(flavor("default", quota("cpu", 0))), cohort="ov"),
)

CASES = [
    Case(
        "Q1 admit in same cohort with no borrowing",
        (),
        (one("eng-alpha", "new", 40, cpu(1)), one("eng-beta", "new", 40, cpu(1))),
        want_reserved={
            "eng-alpha/new": {("one", "cpu"): ("on-demand", cpu(40), 40)},
            "eng-beta/new": {("one", "cpu"): ("on-demand", cpu(40), 40)},
        },
    ),
    Case(
        "Q2 assign multiple resources and flavors",
        (),
        (
            Workload(
                namespace="eng-beta",
                name="new",
                uid="new",
                queue_name="main",
                pod_sets=(
                    PodSet("one", 10, {"cpu": cpu(6), GPU: 1}),
                    PodSet("two", 40, {"cpu": cpu(1)}),
                ),
            ),
        ),
        want_reserved={
            "eng-beta/new": {
                ("one", "cpu"): ("on-demand", cpu(60), 10),
                ("one", GPU): ("model-a", 10, 10),
                ("two", "cpu"): ("spot", cpu(40), 40),
            }
        },
        want_considered={
            "eng-beta/new": "one: on-demand(Fit;borrow=1) | two: on-demand(NoFit;insufficient "
            "quota for cpu in flavor on-demand, previously considered podsets requests (60) + "
            "current podset request (40) > maximum capacity (60)), spot(Fit;borrow=1)"
        },
    ),
    Case(
        "Q4 can borrow if cohort was assigned and will not result in overadmission",
        (),
        # The borrowing head comes first here; the cycle still processes alpha first.
        (one("eng-beta", "new", 55, cpu(1)), one("eng-alpha", "new", 45, cpu(1))),
        want_reserved={
            "eng-alpha/new": {("one", "cpu"): ("on-demand", cpu(45), 45)},
            "eng-beta/new": {("one", "cpu"): ("on-demand", cpu(55), 55)},
        },
        want_considered={"eng-beta/new": "one: on-demand(Fit;borrow=1)"},
    ),
    Case(
        "cannot borrow if cohort was assigned and would result in overadmission",
        (),
        (one("eng-beta", "new", 56, cpu(1)), one("eng-alpha", "new", 45, cpu(1))),
        want_reserved={"eng-alpha/new": {("one", "cpu"): ("on-demand", cpu(45), 45)}},
        want_pending={
            "eng-beta/new": (
                "WaitingForQuota",
                "Workload no longer fits after processing another workload",
                "immediate",
            )
        },
    ),
    Case(
        "Q5 not enough resources to borrow, fallback to next flavor",
        (running("eng-beta", "existing", "eng-beta", "on-demand", cpu(45)),),
        (one("eng-alpha", "new", 60, cpu(1)),),
        want_reserved={"eng-alpha/new": {("one", "cpu"): ("spot", cpu(60), 60)}},
        want_considered={
            "eng-alpha/new": "one: on-demand(NoFit;borrow=1;insufficient unused quota for cpu "
            "in flavor on-demand, 5 more needed)"
        },
    ),
    Case(
        "Q7 workload exceeds lending limit when borrow in cohort",
        (running("lend", "a", "lend-b", "default", cpu(2)),),
        (pending("b", {"cpu": cpu(3)}, namespace="lend", queue="lend-b-queue"),),
        want_pending={
            "lend/b": (
                "WaitingForQuota",
                "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                "flavor default, 1 more needed",
                "inadmissible",
            )
        },
    ),
    Case(
        "P4 preempt workloads in ClusterQueue and cohort",
        (
            running("eng-alpha", "use-all-spot", "eng-alpha", "spot", cpu(100)),
            running("eng-beta", "low-1", "eng-beta", "on-demand", cpu(30), priority=-1),
            running("eng-beta", "low-2", "eng-beta", "on-demand", cpu(10), priority=-2),
            running("eng-alpha", "borrower", "eng-alpha", "on-demand", cpu(60)),
        ),
        (
            pending(
                "preemptor",
                {"cpu": cpu(20)},
                namespace="eng-beta",
                uid="wl-preemptor",
                job_uid="job-preemptor",
            ),
        ),
        want_preempted={
            "eng-alpha/borrower": (
                "InCohortReclamation",
                PREEMPT_MSG.format(
                    "reclamation within the cohort", "/eng/eng-beta", "/eng/eng-alpha"
                ),
            ),
            "eng-beta/low-2": (
                "InClusterQueue",
                PREEMPT_MSG.format(
                    "prioritization in the ClusterQueue", "/eng/eng-beta", "/eng/eng-beta"
                ),
            ),
        },
        want_pending={
            "eng-beta/preemptor": (
                "WaitingForPreemptedWorkloads",
                "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                "flavor on-demand, 20 more needed, insufficient unused quota for cpu in flavor "
                "spot, 20 more needed. Pending the preemption of 2 workload(s)",
                "immediate",
            )
        },
    ),
    Case(
        "multiple CQs need preemption",
        (running("eng-alpha", "use-all", "other-alpha", "on-demand", cpu(100)),),
        (
            pending(
                "preemptor",
                {"cpu": cpu(1)},
                namespace="eng-beta",
                queue="other",
                priority=-1,
                uid="wl-preemptor",
                job_uid="job-preemptor",
            ),
            pending("pending", {"cpu": cpu(1)}, namespace="eng-alpha", queue="other", priority=1),
        ),
        want_preempted={
            "eng-alpha/use-all": (
                "InCohortReclamation",
                PREEMPT_MSG.format(
                    "reclamation within the cohort", "/other/other-beta", "/other/other-alpha"
                ),
            )
        },
        want_pending={
            "eng-beta/preemptor": (
                "WaitingForPreemptedWorkloads",
                "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                "flavor on-demand, 1 more needed. Pending the preemption of 1 workload(s)",
                "immediate",
            ),
            "eng-alpha/pending": (
                "WaitingForQuota",
                "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                "flavor on-demand, 1 more needed",
                "inadmissible",
            ),
        },
        extra_queues=OTHER_QUEUES,
        extra_local_queues={"eng-alpha/other": "other-alpha", "eng-beta/other": "other-beta"},
    ),
    Case(
        "cannot borrow resource not listed in clusterQueue",
        (),
        (pending("new", {GPU: 1}, namespace="eng-alpha"),),
        want_pending={
            "eng-alpha/new": (
                "NoMatchingFlavor",
                "couldn't assign flavors to pod set main: resource example.com/gpu unavailable "
                "in ClusterQueue",
                "immediate",
            )
        },
    ),
    Case(
        "namespace not matching the ClusterQueue selector",
        (),
        (pending("new", {"cpu": cpu(1)}, namespace="sales", queue="blocked"),),
        want_pending={
            "sales/new": (
                "Misconfigured",
                "Workload namespace doesn't match ClusterQueue selector",
                "inadmissible",
            )
        },
    ),
    Case(
        "inactive ClusterQueue (missing flavor)",
        (),
        (pending("new", {"cpu": cpu(1)}, namespace="sales", queue="flavor-nonexistent-queue"),),
        want_pending={
            "sales/new": (
                "Misconfigured",
                "ClusterQueue flavor-nonexistent-cq is inactive",
                "immediate",
            )
        },
    ),
    Case(
        "missing ClusterQueue",
        (),
        (pending("new", {"cpu": cpu(1)}, namespace="sales", queue="cq-nonexistent-queue"),),
        want_pending={
            "sales/new": ("Misconfigured", "ClusterQueue nonexistent-cq not found", "inadmissible")
        },
    ),
    Case(
        "failed admission checks",
        (),
        (
            replace(
                pending("new", {"cpu": cpu(1)}, namespace="sales"),
                check_states={"check": "Retry"},
            ),
        ),
        want_pending={
            "sales/new": (
                "PendingEvaluation",
                "The workload has failed admission checks",
                "immediate",
            )
        },
    ),
    Case(
        "no overadmission while borrowing",
        (
            with_pod_sets(
                admitted("existing", "eng-gamma", {}, namespace="eng-gamma"),
                ("borrow-on-demand", "on-demand", "cpu", cpu(51), 51),
                ("use-all-spot", "spot", "cpu", cpu(100), 100),
            ),
        ),
        (
            pending(
                "new",
                {"cpu": cpu(1)},
                namespace="eng-beta",
                count=50,
                pod_set="one",
                created=NOW - 2,
            ),
            pending(
                "new-alpha", {"cpu": cpu(1)}, namespace="eng-alpha", pod_set="one", created=NOW - 1
            ),
            pending(
                "new-gamma",
                {"cpu": cpu(1)},
                namespace="eng-gamma",
                count=50,
                pod_set="one",
                created=NOW,
            ),
        ),
        want_reserved={
            "eng-beta/new": {("one", "cpu"): ("on-demand", cpu(50), 50)},
            "eng-alpha/new-alpha": {("one", "cpu"): ("on-demand", cpu(1), 1)},
        },
        want_pending={
            "eng-gamma/new-gamma": (
                "WaitingForQuota",
                "couldn't assign flavors to pod set one: insufficient unused quota for cpu in "
                "flavor on-demand, 41 more needed, insufficient unused quota for cpu in flavor "
                "spot, 50 more needed",
                "inadmissible",
            )
        },
        extra_queues=(
            cluster_queue(
                "eng-gamma",
                group(
                    flavor("on-demand", quota("cpu", cpu(50), cpu(10))),
                    flavor("spot", quota("cpu", 0, cpu(100))),
                ),
                cohort="eng",
                preemption=preemption(within="LowerPriority", reclaim="Any"),
            ),
        ),
        extra_local_queues={"eng-gamma/main": "eng-gamma"},
    ),
    Case(
        "partial admission single variable pod set",
        (),
        (
            pending(
                "new", {"cpu": cpu(2)}, namespace="sales", count=50, min_count=20, pod_set="one"
            ),
        ),
        want_reserved={"sales/new": {("one", "cpu"): ("default", cpu(50), 25)}},
    ),
    Case(
        "partial admission single variable pod set, preempt first",
        (admitted("old", "eng-beta", {("model-a", GPU): 10}, namespace="eng-beta", priority=-4),),
        (
            pending(
                "new",
                {GPU: 1},
                namespace="eng-beta",
                count=20,
                min_count=10,
                pod_set="one",
                priority=4,
                uid="wl-new",
                job_uid="job-new",
            ),
        ),
        want_preempted={
            "eng-beta/old": (
                "InClusterQueue",
                "Preempted to accommodate a workload (UID: wl-new, JobUID: job-new) due to "
                "prioritization in the ClusterQueue; preemptor path: /eng/eng-beta; "
                "preemptee path: /eng/eng-beta",
            )
        },
        want_pending={
            "eng-beta/new": (
                "WaitingForPreemptedWorkloads",
                "couldn't assign flavors to pod set one: insufficient unused quota for "
                "example.com/gpu in flavor model-a, 10 more needed. Pending the preemption of 1 "
                "workload(s)",
                "immediate",
            )
        },
    ),
    Case(
        "partial admission single variable pod set, preempt with partial admission",
        (admitted("old", "eng-beta", {("model-a", GPU): 10}, namespace="eng-beta", priority=-4),),
        (
            pending(
                "new",
                {GPU: 1},
                namespace="eng-beta",
                count=30,
                min_count=10,
                pod_set="one",
                priority=4,
                uid="wl-new",
                job_uid="job-new",
            ),
        ),
        want_preempted={
            "eng-beta/old": (
                "InClusterQueue",
                "Preempted to accommodate a workload (UID: wl-new, JobUID: job-new) due to "
                "prioritization in the ClusterQueue; preemptor path: /eng/eng-beta; "
                "preemptee path: /eng/eng-beta",
            )
        },
        want_pending={
            "eng-beta/new": (
                "WaitingForPreemptedWorkloads",
                "couldn't assign flavors to pod set one: insufficient unused quota for "
                "example.com/gpu in flavor model-a, 10 more needed. Pending the preemption of 1 "
                "workload(s)",
                "immediate",
            )
        },
    ),
    Case(
        "partial admission reduces the count to what fits",
        (),
        (pending("new", {"cpu": cpu(1)}, namespace="sales", count=60, min_count=20),),
        want_reserved={"sales/new": {("main", "cpu"): ("default", cpu(50), 50)}},
    ),
    Case(
        "partial admission cannot go below minCount",
        (running("sales", "big", "sales", "default", cpu(40)),),
        (pending("new", {"cpu": cpu(1)}, namespace="sales", count=30, min_count=20),),
        want_pending={
            "sales/new": (
                "WaitingForQuota",
                "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                "flavor default, 20 more needed",
                "immediate",
            )
        },
    ),
    Case(
        "preempting entry without candidates holds its quota back from later entries",
        (running("r", "b-running", "cq-b", "default", cpu(6), priority=5),),
        (
            pending("x", {"cpu": cpu(4)}, namespace="a", priority=1),
            pending("y", {"cpu": cpu(2)}, namespace="b"),
        ),
        want_pending={
            "a/x": (
                "WaitingForQuota",
                "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                "flavor default, 2 more needed",
                "inadmissible",
            ),
            "b/y": (
                "WaitingForQuota",
                "Workload no longer fits after processing another workload",
                "immediate",
            ),
        },
        extra_queues=RECLAIM_QUEUES,
        extra_local_queues={"a/main": "cq-a", "b/main": "cq-b"},
    ),
    Case(
        "without the preemptor, the borrowing entry is admitted",
        (running("r", "b-running", "cq-b", "default", cpu(6), priority=5),),
        (pending("y", {"cpu": cpu(2)}, namespace="b"),),
        want_reserved={"b/y": {("main", "cpu"): ("default", cpu(2), 1)}},
        extra_queues=RECLAIM_QUEUES,
        extra_local_queues={"a/main": "cq-a", "b/main": "cq-b"},
        want_considered={"b/y": "main: default(Fit;borrow=1)"},
    ),
    Case(
        "a second preemptor with overlapping targets is skipped",
        (running("ov", "hog", "c3", "default", cpu(12)),),
        (
            pending("p1", {"cpu": cpu(6)}, namespace="one", uid="wl-p1", created=NOW - 20),
            pending("p2", {"cpu": cpu(6)}, namespace="two", uid="wl-p2", created=NOW - 10),
        ),
        want_preempted={
            "ov/hog": (
                "InCohortReclamation",
                "Preempted to accommodate a workload (UID: wl-p1, JobUID: UNKNOWN) due to "
                "reclamation within the cohort; preemptor path: /ov/c1; preemptee path: /ov/c3",
            )
        },
        want_pending={
            "one/p1": (
                "WaitingForPreemptedWorkloads",
                "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                "flavor default, 6 more needed. Pending the preemption of 1 workload(s)",
                "immediate",
            ),
            "two/p2": (
                "WaitingForQuota",
                "Workload has overlapping preemption targets with another workload",
                "immediate",
            ),
        },
        extra_queues=OVERLAP_QUEUES,
        extra_local_queues={"one/main": "c1", "two/main": "c2"},
    ),
]


def run(case: Case) -> CycleResult:
    queues = (*QUEUES, *case.extra_queues)
    snap = snapshot_of(FLAVORS, queues, case.admitted)
    namespaces = {
        **NAMESPACES,
        **{key.split("/")[0]: {} for key in case.extra_local_queues},
        **{wl.namespace: {} for wl in case.admitted if wl.namespace not in NAMESPACES},
    }
    return schedule(
        snap,
        case.heads,
        now=NOW,
        local_queues={**LOCAL_QUEUES, **case.extra_local_queues},
        namespace_labels=namespaces,
    )


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_schedule(case: Case) -> None:
    result = run(case)
    reserved = {
        r.workload.key: {
            (psa.name, res): (psa.flavors[res], psa.resource_usage[res], psa.count)
            for psa in r.admission.pod_set_assignments
            for res in psa.flavors
        }
        for r in result.reserved
    }
    assert reserved == case.want_reserved
    for r in result.reserved:
        assert r.message == f"Quota reserved in ClusterQueue {r.admission.cluster_queue}"
    considered = {r.workload.key: r.flavors_considered for r in result.reserved}
    assert considered == {key: case.want_considered.get(key, "") for key in case.want_reserved}
    assert {p.target.key: (p.reason, p.message) for p in result.preempted} == case.want_preempted
    assert {p.workload.key: (p.reason, p.message, p.requeue) for p in result.pending} == (
        case.want_pending
    )


def test_reserved_usage_is_added_to_the_snapshot() -> None:
    snap = snapshot_of(FLAVORS, QUEUES)
    heads = (pending("new", {"cpu": cpu(10)}, namespace="sales"),)
    schedule(snap, heads, now=NOW, local_queues=LOCAL_QUEUES, namespace_labels=NAMESPACES)
    assert snap.cluster_queues["sales"].usage(("default", "cpu")) == cpu(10)


@dataclass(frozen=True)
class BlockCase:
    name: str
    all_pods_ready: bool
    want_reserved: tuple[str, ...]
    want_waiting: tuple[str, ...]


BLOCK_CASES = [
    BlockCase(
        "every reserving workload is PodsReady: one reservation",
        True,
        ("sales/a",),
        ("eng-alpha/b",),
    ),
    BlockCase("a reserving workload is not PodsReady: none", False, (), ("sales/a", "eng-alpha/b")),
]


@pytest.mark.parametrize("case", BLOCK_CASES, ids=[c.name for c in BLOCK_CASES])
def test_block_admission_waits_for_pods_ready(case: BlockCase) -> None:
    snap = snapshot_of(FLAVORS, QUEUES)
    heads = (
        pending("a", {"cpu": cpu(1)}, namespace="sales", created=NOW - 20),
        pending("b", {"cpu": cpu(1)}, namespace="eng-alpha", created=NOW - 10),
    )
    result = schedule(
        snap,
        heads,
        now=NOW,
        options=SchedulerOptions(block_admission=True),
        local_queues=LOCAL_QUEUES,
        namespace_labels=NAMESPACES,
        all_pods_ready=case.all_pods_ready,
    )
    assert tuple(r.workload.key for r in result.reserved) == case.want_reserved
    waiting = (
        "WaitingForPodsReady",
        "waiting for all admitted workloads to be in PodsReady condition",
        "immediate",
    )
    assert {
        p.workload.key: (p.reason, p.message, p.requeue) for p in result.pending
    } == dict.fromkeys(case.want_waiting, waiting)


def test_an_entry_without_assignment_keeps_its_resume_point() -> None:
    snap = snapshot_of(FLAVORS, QUEUES)
    head = replace(pending("new", {"cpu": cpu(1)}, namespace="sales"), check_states={"c": "Retry"})
    result = schedule(
        snap,
        (head,),
        now=NOW,
        local_queues=LOCAL_QUEUES,
        namespace_labels=NAMESPACES,
        last_tried={"sales/new": [{"cpu": 0}]},
    )
    assert [p.last_tried for p in result.pending] == [[{"cpu": 0}]]
