"""The worked examples of ``../shared/kueue/quota.md`` §6 (Q*, P*, M*) as one table: the objects
of each example and the admitted set, preempted set, reasons and messages it states. Both the
engine-level test and the API-level test run this table.

Messages that name the preemptor's UID hold ``{uid}``: through the API the server assigns UIDs,
so the test substitutes the one it reads back (in process the table's own UID is used).

M3 (MultiKueue quota automation: manager nominal quota = sum of the workers' quotas, following
worker ClusterQueue edits and LocalQueue deletion) has no single-cluster meaning: it needs
MultiKueue workers and is left to issue 16. M1's manager side (preemption in the manager
ClusterQueue, the preemptor reserved only once the victim's quota is released) is here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tests.kueue.acceptance.objects import (
    Assigned,
    Obj,
    PodSetSpec,
    Quota,
    WorkloadSpec,
    cluster_queue,
    cpu_on,
    group,
    local_queue,
    main,
)

GPU = "example.com/gpu"

#: (podSet, resource, flavor, total quantity) of one reservation.
Assignment = tuple[tuple[str, str, str, str], ...]


@dataclass(frozen=True)
class QuotaCase:
    """One worked example: objects (created in this order: flavors, cohorts, ClusterQueues,
    LocalQueues, then ``workloads`` in list order, a second apart) and what the first
    scheduling cycle decides.

    ``reserved``: workloads that get a reservation in the first cycle, with their assignment.
    ``preempted``: workloads evicted by it: (Preempted reason, message).
    ``pending``: workloads left pending: (QuotaReserved=False reason, message).
    ``after_release``: once the preempted workloads' quota is released (their job reported
    inactive), the workloads that get a reservation, with their assignment.
    """

    name: str
    flavors: tuple[str, ...]
    cluster_queues: tuple[Obj, ...]
    local_queues: tuple[Obj, ...]
    workloads: tuple[WorkloadSpec, ...]
    reserved: Mapping[str, Assignment] = field(default_factory=dict)
    preempted: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    pending: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    after_release: Mapping[str, Assignment] = field(default_factory=dict)
    #: UID the in-process run gives the preemptor (``{uid}`` in messages).
    preemptor: str = ""

    @property
    def namespaces(self) -> tuple[str, ...]:
        """Every namespace the example's namespaced objects live in, sorted."""
        found = {str(lq["metadata"]["namespace"]) for lq in self.local_queues}
        found |= {w.namespace for w in self.workloads}
        return tuple(sorted(found))


# --- the TestSchedule setup (Q1–Q7, P4) ----------------------------------------------------------

Q_FLAVORS = ("default", "on-demand", "spot", "model-a")
Q_QUEUES = (
    cluster_queue("sales", [group([("default", [Quota("cpu", "50")])])], strategy="StrictFIFO"),
    cluster_queue(
        "eng-alpha",
        [
            group(
                [
                    ("on-demand", [Quota("cpu", "50", borrowing_limit="50")]),
                    ("spot", [Quota("cpu", "100", borrowing_limit="0")]),
                ]
            )
        ],
        cohort="eng",
        strategy="StrictFIFO",
    ),
    cluster_queue(
        "eng-beta",
        [
            group(
                [
                    ("on-demand", [Quota("cpu", "50", borrowing_limit="10")]),
                    ("spot", [Quota("cpu", "0", borrowing_limit="100")]),
                ]
            ),
            group([("model-a", [Quota(GPU, "20", borrowing_limit="0")])]),
        ],
        cohort="eng",
        strategy="StrictFIFO",
        reclaim="Any",
        within="LowerPriority",
    ),
    cluster_queue(
        "lend-a", [group([("default", [Quota("cpu", "3", lending_limit="2")])])], cohort="lend"
    ),
    cluster_queue(
        "lend-b", [group([("default", [Quota("cpu", "2", lending_limit="2")])])], cohort="lend"
    ),
)
Q_LOCAL_QUEUES = (
    local_queue("sales", "main", "sales"),
    local_queue("eng-alpha", "main", "eng-alpha"),
    local_queue("eng-beta", "main", "eng-beta"),
    local_queue("lend", "lend-a-queue", "lend-a"),
    local_queue("lend", "lend-b-queue", "lend-b"),
)

# --- the TestPreemption setup (P1–P3) ------------------------------------------------------------

P_FLAVORS = ("default",)
P_QUEUES = (
    cluster_queue(
        "standalone", [group([("default", [Quota("cpu", "6")])])], within="LowerPriority"
    ),
    cluster_queue(
        "c1",
        [group([("default", [Quota("cpu", "6", borrowing_limit="6")])])],
        cohort="cohort",
        within="LowerPriority",
        reclaim="LowerPriority",
    ),
    cluster_queue(
        "c2",
        [group([("default", [Quota("cpu", "6", borrowing_limit="6")])])],
        cohort="cohort",
        within="Never",
        reclaim="Any",
    ),
)
P_LOCAL_QUEUES = (
    local_queue("default", "standalone", "standalone"),
    local_queue("default", "c1", "c1"),
    local_queue("default", "c2", "c2"),
)


def _message(cause: str, preemptor: str, preemptee: str, job: str = "job-in") -> str:
    return (
        f"Preempted to accommodate a workload (UID: {{uid}}, JobUID: {job}) due to {cause}; "
        f"preemptor path: {preemptor}; preemptee path: {preemptee}"
    )


IN_CQ = "prioritization in the ClusterQueue"
RECLAIM = "reclamation within the cohort"


def _running(ns: str, name: str, queue: str, prio: int, holds: Assigned, cpu: str) -> WorkloadSpec:
    count = holds.pod_sets[0][1]
    return WorkloadSpec(ns, name, main(count, cpu=cpu), queue=queue, priority=prio, holds=holds)


CASES: tuple[QuotaCase, ...] = (
    QuotaCase(
        name="Q1-same-cohort-no-borrowing",
        flavors=Q_FLAVORS,
        cluster_queues=Q_QUEUES,
        local_queues=Q_LOCAL_QUEUES,
        workloads=(
            WorkloadSpec("eng-alpha", "new", main(40, cpu="1")),
            WorkloadSpec("eng-beta", "new", main(40, cpu="1")),
        ),
        reserved={
            "eng-alpha/new": (("main", "cpu", "on-demand", "40"),),
            "eng-beta/new": (("main", "cpu", "on-demand", "40"),),
        },
    ),
    QuotaCase(
        name="Q2-multiple-resources-and-flavors",
        flavors=Q_FLAVORS,
        cluster_queues=Q_QUEUES,
        local_queues=Q_LOCAL_QUEUES,
        workloads=(
            WorkloadSpec(
                "eng-beta",
                "new",
                (
                    PodSetSpec("one", 10, {"cpu": "6", GPU: "1"}),
                    PodSetSpec("two", 40, {"cpu": "1"}),
                ),
            ),
        ),
        reserved={
            "eng-beta/new": (
                ("one", "cpu", "on-demand", "60"),
                ("one", GPU, "model-a", "10"),
                ("two", "cpu", "spot", "40"),
            ),
        },
    ),
    QuotaCase(
        name="Q4-borrow-within-cohort-room",
        flavors=Q_FLAVORS,
        cluster_queues=Q_QUEUES,
        local_queues=Q_LOCAL_QUEUES,
        workloads=(
            WorkloadSpec("eng-alpha", "new", main(45, cpu="1")),
            WorkloadSpec("eng-beta", "new", main(55, cpu="1")),
        ),
        reserved={
            "eng-alpha/new": (("main", "cpu", "on-demand", "45"),),
            "eng-beta/new": (("main", "cpu", "on-demand", "55"),),
        },
    ),
    QuotaCase(
        name="Q5-fall-back-to-next-flavor",
        flavors=Q_FLAVORS,
        cluster_queues=Q_QUEUES,
        local_queues=Q_LOCAL_QUEUES,
        workloads=(
            WorkloadSpec(
                "eng-beta",
                "existing",
                (PodSetSpec("one", 45, {"cpu": "1"}),),
                holds=Assigned("eng-beta", (("one", 45, (("cpu", "on-demand", "45"),)),)),
            ),
            WorkloadSpec("eng-alpha", "new", (PodSetSpec("one", 60, {"cpu": "1"}),)),
        ),
        reserved={"eng-alpha/new": (("one", "cpu", "spot", "60"),)},
    ),
    QuotaCase(
        name="Q7-lending-limit",
        flavors=Q_FLAVORS,
        cluster_queues=Q_QUEUES,
        local_queues=Q_LOCAL_QUEUES,
        workloads=(
            WorkloadSpec(
                "lend",
                "a",
                main(1, cpu="2"),
                queue="lend-b-queue",
                holds=cpu_on("lend-b", "default", "2"),
            ),
            WorkloadSpec("lend", "b", main(1, cpu="3"), queue="lend-b-queue"),
        ),
        pending={
            "lend/b": (
                "WaitingForQuota",
                "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                "flavor default, 1 more needed",
            )
        },
    ),
    QuotaCase(
        name="P1-preempt-lowest-priority",
        flavors=P_FLAVORS,
        cluster_queues=P_QUEUES,
        local_queues=P_LOCAL_QUEUES,
        workloads=(
            _running("default", "low", "standalone", -1, cpu_on("standalone", "default", "2"), "2"),
            _running("default", "mid", "standalone", 0, cpu_on("standalone", "default", "2"), "2"),
            _running("default", "high", "standalone", 1, cpu_on("standalone", "default", "2"), "2"),
            WorkloadSpec(
                "default",
                "in",
                main(1, cpu="2"),
                queue="standalone",
                priority=1,
                uid="wl-in",
                job_uid="job-in",
            ),
        ),
        preempted={
            "default/low": ("InClusterQueue", _message(IN_CQ, "/standalone", "/standalone"))
        },
        pending={
            "default/in": (
                "WaitingForPreemptedWorkloads",
                "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                "flavor default, 2 more needed. Pending the preemption of 1 workload(s)",
            )
        },
        after_release={"default/in": (("main", "cpu", "default", "2"),)},
        preemptor="wl-in",
    ),
    QuotaCase(
        name="P3-reclaim-from-borrower",
        flavors=P_FLAVORS,
        cluster_queues=P_QUEUES,
        local_queues=P_LOCAL_QUEUES,
        workloads=(
            _running("default", "c1-low", "c1", -1, cpu_on("c1", "default", "3"), "3"),
            _running("default", "c2-mid", "c2", 0, cpu_on("c2", "default", "3"), "3"),
            _running("default", "c2-high", "c2", 1, cpu_on("c2", "default", "6"), "6"),
            WorkloadSpec(
                "default",
                "in",
                main(1, cpu="3"),
                queue="c1",
                priority=1,
                uid="wl-in",
                job_uid="job-in",
            ),
        ),
        preempted={
            "default/c2-mid": ("InCohortReclamation", _message(RECLAIM, "/cohort/c1", "/cohort/c2"))
        },
        pending={
            "default/in": (
                "WaitingForPreemptedWorkloads",
                "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                "flavor default, 3 more needed. Pending the preemption of 1 workload(s)",
            )
        },
        after_release={"default/in": (("main", "cpu", "default", "3"),)},
        preemptor="wl-in",
    ),
    QuotaCase(
        name="P4-reclaim-and-in-cluster-queue",
        flavors=Q_FLAVORS,
        cluster_queues=Q_QUEUES,
        local_queues=Q_LOCAL_QUEUES,
        workloads=(
            _running(
                "eng-alpha", "use-all-spot", "main", 0, cpu_on("eng-alpha", "spot", "100"), "100"
            ),
            _running("eng-beta", "low-1", "main", -1, cpu_on("eng-beta", "on-demand", "30"), "30"),
            _running("eng-beta", "low-2", "main", -2, cpu_on("eng-beta", "on-demand", "10"), "10"),
            _running(
                "eng-alpha", "borrower", "main", 0, cpu_on("eng-alpha", "on-demand", "60"), "60"
            ),
            WorkloadSpec(
                "eng-beta",
                "preemptor",
                main(1, cpu="20"),
                uid="wl-preemptor",
                job_uid="job-preemptor",
            ),
        ),
        preempted={
            "eng-alpha/borrower": (
                "InCohortReclamation",
                _message(RECLAIM, "/eng/eng-beta", "/eng/eng-alpha", "job-preemptor"),
            ),
            "eng-beta/low-2": (
                "InClusterQueue",
                _message(IN_CQ, "/eng/eng-beta", "/eng/eng-beta", "job-preemptor"),
            ),
        },
        pending={
            "eng-beta/preemptor": (
                "WaitingForPreemptedWorkloads",
                "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                "flavor on-demand, 20 more needed, insufficient unused quota for cpu in flavor "
                "spot, 20 more needed. Pending the preemption of 2 workload(s)",
            )
        },
        after_release={"eng-beta/preemptor": (("main", "cpu", "on-demand", "20"),)},
        preemptor="wl-preemptor",
    ),
    QuotaCase(
        name="M1-manager-preempts-in-cluster-queue",
        flavors=("default",),
        cluster_queues=(
            cluster_queue(
                "cluster-queue",
                [
                    group(
                        [
                            (
                                "default",
                                [
                                    Quota("cpu", "2"),
                                    Quota("memory", "2G"),
                                    Quota("ephemeral-storage", "100G"),
                                ],
                            )
                        ]
                    )
                ],
                within="LowerPriority",
            ),
        ),
        local_queues=(local_queue("default", "user-queue", "cluster-queue"),),
        workloads=(
            WorkloadSpec(
                "default",
                "low",
                main(1, cpu="2", memory="1G"),
                queue="user-queue",
                priority=100,
                holds=Assigned(
                    "cluster-queue",
                    (("main", 1, (("cpu", "default", "2"), ("memory", "default", "1G"))),),
                ),
            ),
            WorkloadSpec(
                "default",
                "high",
                main(1, cpu="2", memory="1G"),
                queue="user-queue",
                priority=300,
                uid="wl-high",
                job_uid="job-high",
            ),
        ),
        preempted={
            "default/low": (
                "InClusterQueue",
                _message(IN_CQ, "/cluster-queue", "/cluster-queue", "job-high"),
            )
        },
        pending={
            "default/high": (
                "WaitingForPreemptedWorkloads",
                "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                "flavor default, 2 more needed. Pending the preemption of 1 workload(s)",
            )
        },
        after_release={
            "default/high": (("main", "cpu", "default", "2"), ("main", "memory", "default", "1G"))
        },
        preemptor="wl-high",
    ),
)
