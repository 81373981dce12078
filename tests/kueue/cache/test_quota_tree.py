"""The quota algebra (quota.md §2; upstream ``resource_node.go``) on the trees of quota.md's
worked examples and on hierarchical Cohorts: what a ClusterQueue may still use, could ever use,
whether it borrows, and how high it must borrow."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.kueue.api.model import ClusterQueue, Cohort, ResourceFlavor, Workload
from numaplane.kueue.cache import KueueCache, Snapshot
from tests.kueue.cache.builders import admitted, cohort, cq

CPU = 1000  # millicores per cpu

#: quota.md §6 "Shared setup for Q1–Q7" (upstream TestSchedule).
Q_QUEUES = (
    cq("sales", "", ("default", "cpu", 50 * CPU, None, None)),
    cq(
        "eng-alpha",
        "eng",
        ("on-demand", "cpu", 50 * CPU, 50 * CPU, None),
        ("spot", "cpu", 100 * CPU, 0, None),
    ),
    cq(
        "eng-beta",
        "eng",
        ("on-demand", "cpu", 50 * CPU, 10 * CPU, None),
        ("spot", "cpu", 0, 100 * CPU, None),
        ("model-a", "gpu", 20, 0, None),
    ),
    cq("lend-a", "lend", ("default", "cpu", 3 * CPU, None, 2 * CPU)),
    cq("lend-b", "lend", ("default", "cpu", 2 * CPU, None, 2 * CPU)),
)

#: Hierarchy: root (no quota of its own) → c1 {a 10, b 10}, c2 {c 10}; c2 borrows at most 2.
H_COHORTS = (
    cohort("root"),
    cohort("c1", "root"),
    cohort("c2", "root", ("f", "cpu", 0, 2, None)),
)
H_QUEUES = (
    cq("a", "c1", ("f", "cpu", 10, None, None)),
    cq("b", "c1", ("f", "cpu", 10, None, None)),
    cq("c", "c2", ("f", "cpu", 10, None, None)),
)


def snapshot_of(
    queues: tuple[ClusterQueue, ...],
    workloads: tuple[Workload, ...] = (),
    cohorts: tuple[Cohort, ...] = (),
) -> Snapshot:
    """A cache with these objects, snapshotted."""
    cache = KueueCache()
    for q in queues:
        for flavor in q.quotas():
            cache.upsert_flavor(ResourceFlavor(flavor[0]))
    for c in cohorts:
        cache.upsert_cohort(c)
    for q in queues:
        cache.upsert_cluster_queue(q)
    for wl in workloads:
        cache.upsert_workload(wl)
    return cache.snapshot()


@dataclass(frozen=True)
class AvailableCase:
    name: str
    queues: tuple[ClusterQueue, ...]
    workloads: tuple[Workload, ...]
    cluster_queue: str
    fr: tuple[str, str]
    available: int
    potential: int
    cohorts: tuple[Cohort, ...] = ()


AVAILABLE_CASES = (
    AvailableCase(
        "sales alone: own nominal", Q_QUEUES, (), "sales", ("default", "cpu"), 50 * CPU, 50 * CPU
    ),
    AvailableCase(
        "sales alone, half used",
        Q_QUEUES,
        (admitted("s", "sales", {("default", "cpu"): 20 * CPU}),),
        "sales",
        ("default", "cpu"),
        30 * CPU,
        50 * CPU,
    ),
    AvailableCase(
        "Q5: alpha on-demand after beta took 45 = min(100-45, 50+50)",
        Q_QUEUES,
        (admitted("existing", "eng-beta", {("on-demand", "cpu"): 45 * CPU}),),
        "eng-alpha",
        ("on-demand", "cpu"),
        55 * CPU,
        100 * CPU,
    ),
    AvailableCase(
        "Q5: alpha spot (borrowing limit 0, cohort spot 100)",
        Q_QUEUES,
        (admitted("existing", "eng-beta", {("on-demand", "cpu"): 45 * CPU}),),
        "eng-alpha",
        ("spot", "cpu"),
        100 * CPU,
        100 * CPU,
    ),
    AvailableCase(
        "Q2: beta on-demand capped by borrowing limit 10",
        Q_QUEUES,
        (),
        "eng-beta",
        ("on-demand", "cpu"),
        60 * CPU,
        60 * CPU,
    ),
    AvailableCase(
        "Q2: beta spot borrows all of alpha's spot",
        Q_QUEUES,
        (),
        "eng-beta",
        ("spot", "cpu"),
        100 * CPU,
        100 * CPU,
    ),
    AvailableCase(
        "Q4: beta on-demand after alpha took 45",
        Q_QUEUES,
        (admitted("alpha", "eng-alpha", {("on-demand", "cpu"): 45 * CPU}),),
        "eng-beta",
        ("on-demand", "cpu"),
        55 * CPU,
        60 * CPU,
    ),
    AvailableCase(
        "Q7: lend-b with lend/a 2 cpu reserved in it: 0 + (4 - 2)",
        Q_QUEUES,
        (admitted("a", "lend-b", {("default", "cpu"): 2 * CPU}, namespace="lend"),),
        "lend-b",
        ("default", "cpu"),
        2 * CPU,
        4 * CPU,
    ),
    AvailableCase(
        "Q7: lend-a keeps 1 private: 1 + (4 - 2)",
        Q_QUEUES,
        (admitted("a", "lend-b", {("default", "cpu"): 2 * CPU}, namespace="lend"),),
        "lend-a",
        ("default", "cpu"),
        3 * CPU,
        5 * CPU,
    ),
    AvailableCase(
        "hierarchy: a may use the whole root",
        H_QUEUES,
        (),
        "a",
        ("f", "cpu"),
        30,
        30,
        cohorts=H_COHORTS,
    ),
    AvailableCase(
        "hierarchy: c2's borrowing limit caps c: 10 + 2",
        H_QUEUES,
        (),
        "c",
        ("f", "cpu"),
        12,
        12,
        cohorts=H_COHORTS,
    ),
    AvailableCase(
        "hierarchy: b's use of c1 leaves a the rest",
        H_QUEUES,
        (admitted("w", "b", {("f", "cpu"): 15}),),
        "a",
        ("f", "cpu"),
        15,
        30,
        cohorts=H_COHORTS,
    ),
    AvailableCase(
        "hierarchy: c over its limit sees nothing, never negative",
        H_QUEUES,
        (admitted("w", "c", {("f", "cpu"): 12}),),
        "c",
        ("f", "cpu"),
        0,
        12,
        cohorts=H_COHORTS,
    ),
    AvailableCase(
        "cohort quota of its own is shared by queues with none",
        (cq("x", "pool", ("f", "cpu", 0, None, None)),),
        (),
        "x",
        ("f", "cpu"),
        7,
        7,
        cohorts=(cohort("pool", "", ("f", "cpu", 7, None, None)),),
    ),
    AvailableCase(
        "a Cohort's lending limit keeps its quota from its siblings",
        (
            cq("a", "c1", ("f", "cpu", 20, None, None)),
            cq("c", "c2", ("f", "cpu", 10, None, None)),
        ),
        (),
        "c",
        ("f", "cpu"),
        15,
        15,
        cohorts=(
            cohort("root"),
            cohort("c1", "root", ("f", "cpu", 0, None, 5)),
            cohort("c2", "root"),
        ),
    ),
    AvailableCase(
        "…while its own queues still reach all of it and the parent's",
        (
            cq("a", "c1", ("f", "cpu", 20, None, None)),
            cq("c", "c2", ("f", "cpu", 10, None, None)),
        ),
        (),
        "a",
        ("f", "cpu"),
        30,
        30,
        cohorts=(
            cohort("root"),
            cohort("c1", "root", ("f", "cpu", 0, None, 5)),
            cohort("c2", "root"),
        ),
    ),
    AvailableCase(
        "an undeclared flavor-resource has nothing",
        Q_QUEUES,
        (),
        "sales",
        ("spot", "cpu"),
        0,
        0,
    ),
)


@pytest.mark.parametrize("case", AVAILABLE_CASES, ids=[c.name for c in AVAILABLE_CASES])
def test_available_and_potential_available(case: AvailableCase) -> None:
    snap = snapshot_of(case.queues, case.workloads, case.cohorts)
    queue = snap.cluster_queues[case.cluster_queue]
    assert queue.available(case.fr) == case.available
    assert queue.potential_available(case.fr) == case.potential


def test_q7_tree_quantities() -> None:
    """quota.md Q7: lend-a keeps 1 private and lends 2, lend-b keeps 0 and lends 2, so the
    cohort holds 4; lend/a's 2 cpu in lend-b are all charged to the cohort."""
    snap = snapshot_of(
        Q_QUEUES, (admitted("a", "lend-b", {("default", "cpu"): 2 * CPU}, namespace="lend"),)
    )
    fr = ("default", "cpu")
    lend = snap.cohorts["lend"]
    assert snap.cluster_queues["lend-a"].node.local_quota(fr) == 1 * CPU
    assert snap.cluster_queues["lend-b"].node.local_quota(fr) == 0
    assert lend.subtree_quota(fr) == 4 * CPU
    assert lend.usage(fr) == 2 * CPU
    # 3 cpu more do not fit: "insufficient unused quota ... 1 more needed".
    assert not snap.cluster_queues["lend-b"].fits({fr: 3 * CPU})
    assert snap.cluster_queues["lend-b"].fits({fr: 2 * CPU})


@dataclass(frozen=True)
class HeightCase:
    name: str
    cluster_queue: str
    value: int
    expected: tuple[int, bool]
    workloads: tuple[Workload, ...] = ()


HEIGHT_CASES = (
    HeightCase("within nominal: the queue itself", "a", 10, (0, True)),
    HeightCase("beyond nominal, fits in c1", "a", 15, (1, True)),
    HeightCase("beyond c1, fits in the root", "a", 25, (2, False)),
    HeightCase("fits nowhere: height of the whole tree", "a", 35, (2, False)),
    HeightCase(
        "c1 already full with b's borrowing: must go to the root",
        "a",
        5,
        (0, True),
        (admitted("w", "b", {("f", "cpu"): 20}),),
    ),
    HeightCase(
        "beyond nominal while b holds c1's spare",
        "a",
        11,
        (2, False),
        (admitted("w", "b", {("f", "cpu"): 20}),),
    ),
)


@pytest.mark.parametrize("case", HEIGHT_CASES, ids=[c.name for c in HEIGHT_CASES])
def test_height_of_lowest_subtree_that_fits(case: HeightCase) -> None:
    snap = snapshot_of(H_QUEUES, case.workloads, H_COHORTS)
    got = snap.cluster_queues[case.cluster_queue].height_of_lowest_subtree_that_fits(
        ("f", "cpu"), case.value
    )
    assert got == case.expected


def test_height_without_cohort_is_zero_and_not_reclaimable() -> None:
    snap = snapshot_of(Q_QUEUES)
    assert snap.cluster_queues["sales"].height_of_lowest_subtree_that_fits(
        ("default", "cpu"), 60 * CPU
    ) == (0, False)


def test_q_setup_flat_cohort_height_is_one() -> None:
    """In a flat cohort, borrowing means level 1 (quota.md Q2: the podset that borrows 10)."""
    snap = snapshot_of(Q_QUEUES)
    beta = snap.cluster_queues["eng-beta"]
    assert beta.height_of_lowest_subtree_that_fits(("on-demand", "cpu"), 60 * CPU) == (1, False)
    assert beta.height_of_lowest_subtree_that_fits(("on-demand", "cpu"), 50 * CPU) == (0, True)


def test_borrowing_is_usage_above_nominal() -> None:
    snap = snapshot_of(Q_QUEUES, (admitted("w", "eng-beta", {("on-demand", "cpu"): 55 * CPU}),))
    beta = snap.cluster_queues["eng-beta"]
    alpha = snap.cluster_queues["eng-alpha"]
    assert beta.borrowing(("on-demand", "cpu"))
    assert not alpha.borrowing(("on-demand", "cpu"))
    assert not alpha.borrowing_with(("on-demand", "cpu"), 50 * CPU)
    assert alpha.borrowing_with(("on-demand", "cpu"), 50 * CPU + 1)
    assert not snap.cohorts["eng"].borrowing(("on-demand", "cpu"))


def test_paths() -> None:
    snap = snapshot_of(H_QUEUES + Q_QUEUES, cohorts=H_COHORTS)
    assert snap.cluster_queues["a"].path() == "/root/c1/a"
    assert snap.cluster_queues["eng-alpha"].path() == "/eng/eng-alpha"
    assert snap.cluster_queues["sales"].path() == "/sales"
    assert [q.name for q in snap.cohorts["root"].subtree_cluster_queues()] == ["a", "b", "c"]
    assert snap.cluster_queues["a"].parent is not None
    assert snap.cluster_queues["a"].parent.root() is snap.cohorts["root"]


def test_quantities_fit_in_quota_and_within_nominal() -> None:
    """What hierarchical preemption asks each node on the way up: does the request fit in the
    node's quota, and what of it is left for the parent after the node's private quota."""
    snap = snapshot_of(
        Q_QUEUES, (admitted("a", "lend-a", {("default", "cpu"): 2 * CPU}, namespace="lend"),)
    )
    fr = ("default", "cpu")
    lend_a = snap.cluster_queues["lend-a"]
    # lend-a's 2 cpu use up its private 1 cpu (and 1 of the cohort's 4): all of a new request
    # is left for the cohort.
    assert lend_a.quantities_fit_in_quota({fr: 1 * CPU}) == (True, {fr: 1 * CPU})
    assert lend_a.quantities_fit_in_quota({fr: 2 * CPU}) == (False, {fr: 2 * CPU})
    empty = snapshot_of(Q_QUEUES).cluster_queues["lend-a"]
    assert empty.quantities_fit_in_quota({fr: 2 * CPU}) == (True, {fr: 1 * CPU})
    assert lend_a.is_within_nominal([fr])
    assert snap.cohorts["lend"].is_within_nominal([fr])
    assert snap.cohorts["lend"].usage(fr) == 1 * CPU
    assert snap.cohorts["lend"].quantities_fit_in_quota({fr: 3 * CPU}) == (True, {fr: 3 * CPU})
    assert snap.cohorts["lend"].quantities_fit_in_quota({fr: 4 * CPU}) == (False, {fr: 4 * CPU})


def test_resource_group_for() -> None:
    beta = snapshot_of(Q_QUEUES).cluster_queues["eng-beta"]
    group = beta.resource_group_for("gpu")
    assert group is not None
    assert [f.name for f in group.flavors] == ["model-a"]
    assert beta.resource_group_for("memory") is None
