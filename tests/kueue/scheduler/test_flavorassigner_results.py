"""What the scheduler reads from an assignment: ``message()``, ``reason()``, ``to_admission()``,
the resume index (``last_tried``), partial-admission counts, ``quotaCheckStrategy`` and what the
preemption oracle is asked."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.kueue.api.model import (
    IGNORE_UNDECLARED,
    MAY_STOP_SEARCH,
    Admission,
    ClusterQueue,
    FlavorFungibility,
    PodSet,
    PodSetAssignment,
    ResourceFlavor,
    Workload,
)
from numaplane.kueue.scheduler.flavorassigner import (
    FlavorAssignmentMode,
    LastTried,
    assign_flavors,
)

from .snapshots import build_snapshot
from .test_flavorassigner import (
    ENG_ALPHA,
    ENG_BETA,
    FLAVORS,
    Q_FLAVORS,
    FakeOracle,
    cq,
    fq,
    ps,
    rg,
    rq,
    term,
    wl,
)

MAY = FlavorFungibility(when_can_borrow=MAY_STOP_SEARCH, when_can_preempt=MAY_STOP_SEARCH)
TWO_FLAVORS = cq(
    "q",
    rg(fq("one", rq("pods", "10"), rq("cpu", "10")), fq("two", rq("pods", "10"), rq("cpu", "10"))),
    ff=MAY,
)


def snapshot_with(*queues: ClusterQueue, flavors: tuple[ResourceFlavor, ...] = FLAVORS) -> Any:
    return build_snapshot(queues, flavors)


def test_message_joins_every_pod_set_that_does_not_fit() -> None:
    queue = cq("q", rg(fq("one", rq("cpu", "4"))))
    snap = snapshot_with(queue)
    main = snap.cluster_queues["q"]
    main.add_usage({("one", "cpu"): 3000})
    got = assign_flavors(
        wl(ps("a", 1, {"cpu": "2"}), ps("b", 1, {"cpu": "1"})), main, snap, FakeOracle()
    )
    assert got.mode is FlavorAssignmentMode.PREEMPT
    assert got.message() == (
        "couldn't assign flavors to pod set a: insufficient unused quota for cpu in flavor one, "
        "1 more needed; couldn't assign flavors to pod set b: insufficient unused quota for cpu "
        "in flavor one, 2 more needed"
    )
    # Preempt is no NoFit: the scheduler, not the assigner, names the reason.
    assert got.reason() == ""


def test_a_selector_that_does_not_parse_is_the_pod_sets_error() -> None:
    bad = term(("type", "Foo", ("x",)))
    queue = cq("q", rg(fq("one", rq("cpu", "4"))))
    snap = snapshot_with(queue)
    got = assign_flavors(
        wl(ps("main", 1, {"cpu": "1"}, terms=(bad,))), snap.cluster_queues["q"], snap, None
    )
    assert got.mode is FlavorAssignmentMode.NO_FIT
    assert got.message() == (
        "failed to assign flavors to pod set main: "
        'nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Foo"'
    )
    assert got.reason() == "NoMatchingFlavor"


def test_to_admission_carries_flavors_usage_and_count_per_pod_set() -> None:
    queue = cq("q", rg(fq("default", rq("cpu", "10"), rq("pods", "10"))))
    snap = snapshot_with(queue)
    got = assign_flavors(
        wl(ps("driver", 1, {"cpu": "1"}), ps("workers", 4, {"cpu": "2"})),
        snap.cluster_queues["q"],
        snap,
        None,
    )
    assert got.to_admission("q") == Admission(
        "q",
        (
            PodSetAssignment(
                "driver", {"cpu": "default", "pods": "default"}, {"cpu": 1000, "pods": 1}, 1
            ),
            PodSetAssignment(
                "workers", {"cpu": "default", "pods": "default"}, {"cpu": 8000, "pods": 4}, 4
            ),
        ),
    )
    assert got.to_admission("q").usage() == got.usage


def test_counts_scale_the_requests_for_partial_admission() -> None:
    queue = cq("q", rg(fq("default", rq("cpu", "5"))))
    snap = snapshot_with(queue)
    pods = wl(ps("main", 10, {"cpu": "1"}))
    full = assign_flavors(pods, snap.cluster_queues["q"], snap, None)
    assert full.mode is FlavorAssignmentMode.NO_FIT
    partial = assign_flavors(pods, snap.cluster_queues["q"], snap, None, counts=[4])
    assert partial.mode is FlavorAssignmentMode.FIT
    assert partial.usage == {("default", "cpu"): 4000}
    assert partial.to_admission("q").pod_set_assignments[0].count == 4


@dataclass(frozen=True)
class ResumeCase:
    name: str
    last_tried: LastTried | None
    want_flavor: str
    want_mode: FlavorAssignmentMode
    want_tried: int


RESUME_CASES = [
    ResumeCase(
        "first attempt stops at the first flavor", None, "one", FlavorAssignmentMode.PREEMPT, 0
    ),
    ResumeCase(
        "a retry resumes after the flavor tried last",
        [{"cpu": 0, "pods": 0}],
        "two",
        FlavorAssignmentMode.FIT,
        -1,
    ),
    ResumeCase(
        "the index may be given by pod set index",
        {0: {"cpu": 0, "pods": 0}},
        "two",
        FlavorAssignmentMode.FIT,
        -1,
    ),
    ResumeCase(
        "-1 starts over from the first flavor",
        [{"cpu": -1, "pods": -1}],
        "one",
        FlavorAssignmentMode.PREEMPT,
        0,
    ),
    ResumeCase("no entry for the pod set starts over", [], "one", FlavorAssignmentMode.PREEMPT, 0),
    ResumeCase(
        "an index past the queue's flavors starts over",
        [{"cpu": 5, "pods": 5}],
        "one",
        FlavorAssignmentMode.PREEMPT,
        0,
    ),
]


@pytest.mark.parametrize("case", RESUME_CASES, ids=[c.name for c in RESUME_CASES])
def test_last_tried_flavor_index(case: ResumeCase) -> None:
    snap = snapshot_with(TWO_FLAVORS)
    main = snap.cluster_queues["q"]
    main.add_usage({("one", "cpu"): 2000})
    got = assign_flavors(
        wl(ps("main", 1, {"cpu": "9"})), main, snap, FakeOracle(), last_tried=case.last_tried
    )
    assert got.mode is case.want_mode
    assert got.pod_sets[0].flavors["cpu"].name == case.want_flavor
    assert got.last_tried_flavor_idx == [{"cpu": case.want_tried, "pods": case.want_tried}]
    assert got.pending_flavors() is (case.want_tried != -1)


@dataclass(frozen=True)
class UndeclaredCase:
    name: str
    strategy: str
    want_mode: FlavorAssignmentMode
    want_usage: Mapping[tuple[str, str], int]
    want_message: str


UNDECLARED_CASES = [
    UndeclaredCase(
        "BlockUndeclared refuses a resource no group covers",
        "BlockUndeclared",
        FlavorAssignmentMode.NO_FIT,
        {},
        "couldn't assign flavors to pod set main: resource example.com/gpu unavailable in "
        "ClusterQueue",
    ),
    UndeclaredCase(
        "IgnoreUndeclared assigns the declared resources only",
        IGNORE_UNDECLARED,
        FlavorAssignmentMode.FIT,
        {("default", "cpu"): 1000},
        "",
    ),
]


@pytest.mark.parametrize("case", UNDECLARED_CASES, ids=[c.name for c in UNDECLARED_CASES])
def test_quota_check_strategy(case: UndeclaredCase) -> None:
    queue = cq("q", rg(fq("default", rq("cpu", "4"))), quota_check_strategy=case.strategy)
    snap = snapshot_with(queue)
    got = assign_flavors(
        wl(ps("main", 1, {"cpu": "1", "example.com/gpu": "1"})),
        snap.cluster_queues["q"],
        snap,
        None,
    )
    assert got.mode is case.want_mode
    assert got.usage == case.want_usage
    assert got.message() == case.want_message


def test_the_oracle_is_asked_for_the_pod_sets_plus_earlier_ones_in_the_flavor() -> None:
    queue = cq("q", rg(fq("one", rq("cpu", "4"))))
    snap = snapshot_with(queue)
    main = snap.cluster_queues["q"]
    main.add_usage({("one", "cpu"): 1000})
    oracle = FakeOracle()
    got = assign_flavors(wl(ps("a", 1, {"cpu": "2"}), ps("b", 1, {"cpu": "2"})), main, snap, oracle)
    # a fits (1 + 2 ≤ 4); b needs 2 more on top of a's 2: the oracle is asked for 4.
    assert oracle.calls == [(("one", "cpu"), 4000)]
    assert [p.mode for p in got.pod_sets] == [
        FlavorAssignmentMode.FIT,
        FlavorAssignmentMode.PREEMPT,
    ]


def test_no_preemption_is_simulated_when_the_queue_may_not_preempt_while_borrowing() -> None:
    snap = snapshot_with(ENG_ALPHA, ENG_BETA, flavors=Q_FLAVORS)
    snap.cluster_queues["eng-beta"].add_usage({("on-demand", "cpu"): 45_000})
    oracle = FakeOracle()
    got = assign_flavors(
        wl(ps("main", 60, {"cpu": "1"})), snap.cluster_queues["eng-alpha"], snap, oracle
    )
    assert oracle.calls == []
    assert got.pod_sets[0].flavors["cpu"].name == "spot"


def test_without_an_oracle_preemption_counts_as_having_no_candidates() -> None:
    snap = snapshot_with(cq("q", rg(fq("one", rq("cpu", "4")), fq("two", rq("cpu", "4")))))
    main = snap.cluster_queues["q"]
    main.add_usage({("one", "cpu"): 3000, ("two", "cpu"): 3500})
    got = assign_flavors(wl(ps("main", 1, {"cpu": "2"})), main, snap, None)
    # Both need preemption and neither has candidates: the first one is kept.
    assert got.mode is FlavorAssignmentMode.PREEMPT
    assert got.pod_sets[0].flavors["cpu"].name == "one"
    assert got.message() == (
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor "
        "one, 1 more needed, insufficient unused quota for cpu in flavor two, 1500m more needed"
    )


# Workload.reclaimable_pods arrives with kmodel's parser; until the branches meet it is skipped.
HAS_RECLAIMABLE = "reclaimable_pods" in {f.name for f in dataclasses.fields(Workload)}


@dataclass(frozen=True)
class ReclaimCase:
    name: str
    pod_set: PodSet
    reclaimable: int
    queue: ClusterQueue
    want_flavor: str
    want_usage: Mapping[tuple[str, str], int]
    want_count: int


RECLAIM_CASES = [
    ReclaimCase(
        "with reclaimable pods; reclaimablePods on",
        ps("main", 5, {"cpu": "1"}),
        2,
        cq("q", rg(fq("default", rq("pods", "3"), rq("cpu", "10")))),
        "default",
        {("default", "pods"): 3, ("default", "cpu"): 3000},
        3,
    ),
    ReclaimCase(
        "fully reclaimed PodSet prefers a flavor with capacity",
        ps("main", 1, {"example.com/gpu": "1"}),
        1,
        cq("q", rg(fq("one", rq("example.com/gpu", "0")), fq("two", rq("example.com/gpu", "4")))),
        "two",
        {("two", "example.com/gpu"): 0},
        0,
    ),
]


@pytest.mark.skipif(not HAS_RECLAIMABLE, reason="Workload.reclaimable_pods not in this tree yet")
@pytest.mark.parametrize("case", RECLAIM_CASES, ids=[c.name for c in RECLAIM_CASES])
def test_reclaimable_pods_give_their_quota_back(case: ReclaimCase) -> None:
    snap = snapshot_with(case.queue)
    workload = dataclasses.replace(
        wl(case.pod_set),
        **{"reclaimable_pods": {case.pod_set.name: case.reclaimable}},  # type: ignore[arg-type,unused-ignore]
    )
    got = assign_flavors(workload, snap.cluster_queues["q"], snap, None)
    assert got.mode is FlavorAssignmentMode.FIT
    assert {fa.name for fa in got.pod_sets[0].flavors.values()} == {case.want_flavor}
    assert got.usage == case.want_usage
    assert got.pod_sets[0].count == case.want_count
