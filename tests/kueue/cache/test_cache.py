"""The live cache: which workloads count, in which queue, through every kind of event (queues
created after their workloads, queues moved between Cohorts, Cohorts deleted, cycles, assumed
reservations), and what its snapshots share and copy."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from numaplane.kueue.api.model import ResourceFlavor, Workload
from numaplane.kueue.cache import REASON_COHORT_HAS_CYCLE, KueueCache
from tests.kueue.cache.builders import admitted, cohort, cq

FR = ("f", "cpu")


def cache_with(*queues: str, cohort_name: str = "co", nominal: int = 10) -> KueueCache:
    cache = KueueCache()
    cache.upsert_flavor(ResourceFlavor("f"))
    for name in queues:
        cache.upsert_cluster_queue(cq(name, cohort_name, ("f", "cpu", nominal, None, None)))
    return cache


def finished(wl: Workload) -> Workload:
    return replace(wl, conditions={**wl.conditions, "Finished": ("True", "Succeeded", "", 0.0)})


@dataclass(frozen=True)
class CountCase:
    name: str
    workload: Workload
    counted: bool


BASE = admitted("w", "a", {FR: 4})
COUNT_CASES = (
    CountCase("reserved", BASE, True),
    CountCase(
        "admitted",
        replace(BASE, conditions={**BASE.conditions, "Admitted": ("True", "", "", 0.0)}),
        True,
    ),
    CountCase("no admission", replace(BASE, admission=None, conditions={}), False),
    CountCase("finished", finished(BASE), False),
    CountCase("deactivated", replace(BASE, active=False), False),
)


@pytest.mark.parametrize("case", COUNT_CASES, ids=[c.name for c in COUNT_CASES])
def test_which_workloads_count(case: CountCase) -> None:
    cache = cache_with("a")
    cache.upsert_workload(case.workload)
    assert cache.cluster_queue_usage("a").reserving_workloads == int(case.counted)
    assert cache.snapshot().cluster_queues["a"].usage(FR) == (4 if case.counted else 0)


def test_update_replaces_and_finish_releases() -> None:
    cache = cache_with("a", "b")
    wl = admitted("w", "a", {FR: 4})
    cache.upsert_workload(wl)
    cache.upsert_workload(admitted("w", "a", {FR: 6}))
    snap = cache.snapshot()
    assert snap.cluster_queues["a"].usage(FR) == 6
    # Without lending limits a Cohort is charged all of its members' usage.
    assert snap.cohorts["co"].usage(FR) == 6
    cache.upsert_workload(admitted("w", "b", {FR: 12}))
    snap = cache.snapshot()
    assert (snap.cluster_queues["a"].usage(FR), snap.cluster_queues["b"].usage(FR)) == (0, 12)
    assert snap.cohorts["co"].usage(FR) == 12
    cache.upsert_workload(finished(admitted("w", "b", {FR: 12})))
    snap = cache.snapshot()
    assert snap.cluster_queues["b"].usage(FR) == 0
    assert snap.cohorts["co"].usage(FR) == 0
    assert cache.workload("ns/w") is None


def test_workloads_before_their_queue_are_charged_when_it_appears() -> None:
    cache = cache_with("a")
    cache.upsert_workload(admitted("w", "late", {FR: 3}))
    assert "late" not in cache.snapshot().cluster_queues
    cache.upsert_cluster_queue(cq("late", "co", ("f", "cpu", 10, None, None)))
    snap = cache.snapshot()
    assert snap.cluster_queues["late"].usage(FR) == 3
    assert set(snap.cluster_queues["late"].workloads) == {"ns/w"}
    # Deleting the queue keeps the workload waiting; re-creating it charges it again.
    cache.delete_cluster_queue("late")
    assert cache.snapshot().cohorts["co"].usage(FR) == 0
    cache.upsert_cluster_queue(cq("late", "co", ("f", "cpu", 1, None, None)))
    snap = cache.snapshot()
    assert snap.cluster_queues["late"].usage(FR) == 3
    assert snap.cohorts["co"].usage(FR) == 3
    assert snap.cluster_queues["a"].available(FR) == 8
    cache.delete_workload("ns/w")
    assert cache.snapshot().cluster_queues["late"].usage(FR) == 0


def test_moving_a_queue_between_cohorts_moves_its_quota_and_usage() -> None:
    cache = cache_with("a", "b")
    cache.upsert_workload(admitted("w", "a", {FR: 15}))
    assert cache.snapshot().cohorts["co"].usage(FR) == 15
    cache.upsert_cluster_queue(cq("a", "other", ("f", "cpu", 10, None, None)))
    snap = cache.snapshot()
    assert snap.cohorts["co"].subtree_quota(FR) == 10
    assert snap.cohorts["co"].usage(FR) == 0
    assert snap.cohorts["other"].subtree_quota(FR) == 10
    assert snap.cohorts["other"].usage(FR) == 15
    assert snap.cluster_queues["a"].path() == "/other/a"
    cache.upsert_cluster_queue(cq("a", "", ("f", "cpu", 20, None, None)))
    snap = cache.snapshot()
    assert "other" not in snap.cohorts  # implicit cohorts disappear with their last member
    assert snap.cluster_queues["a"].available(FR) == 5


def test_quota_change_recomputes_the_tree() -> None:
    cache = cache_with("a", "b")
    cache.upsert_cluster_queue(cq("lone", "", ("f", "cpu", 1, None, None)))
    cache.upsert_workload(admitted("w", "a", {FR: 15}))
    before = cache.snapshot().cluster_queues
    cache.upsert_cluster_queue(cq("b", "co", ("f", "cpu", 30, None, None)))
    snap = cache.snapshot()
    assert snap.cohorts["co"].subtree_quota(FR) == 40
    assert snap.cluster_queues["b"].available(FR) == 25
    # Every queue of the changed tree may now fit more (upstream AllocatableResourceGeneration).
    for name in ("a", "b"):
        assert (
            snap.cluster_queues[name].allocatable_generation > before[name].allocatable_generation
        )
    assert (
        snap.cluster_queues["lone"].allocatable_generation == before["lone"].allocatable_generation
    )
    # A status-only update of a queue changes nothing.
    cache.upsert_cluster_queue(cq("b", "co", ("f", "cpu", 30, None, None)))
    assert cache.snapshot().cluster_queues["a"].allocatable_generation == (
        snap.cluster_queues["a"].allocatable_generation
    )
    # A workload leaving a queue bumps it too.
    cache.delete_workload("ns/w")
    assert cache.snapshot().cluster_queues["a"].allocatable_generation > (
        snap.cluster_queues["a"].allocatable_generation
    )


def test_cohort_object_quota_parent_and_deletion() -> None:
    cache = cache_with("a")
    cache.upsert_cohort(cohort("co", "top", ("f", "cpu", 5, None, None)))
    cache.upsert_cohort(cohort("top", "", ("f", "cpu", 100, None, None)))
    snap = cache.snapshot()
    assert snap.cluster_queues["a"].path() == "/top/co/a"
    assert snap.cohorts["co"].subtree_quota(FR) == 15
    assert snap.cohorts["top"].subtree_quota(FR) == 115
    assert snap.cluster_queues["a"].available(FR) == 115
    # Deleting the object keeps an implicit cohort for its member, without quota or parent.
    cache.delete_cohort("co")
    snap = cache.snapshot()
    assert snap.cluster_queues["a"].path() == "/co/a"
    assert snap.cohorts["co"].subtree_quota(FR) == 10
    assert snap.cohorts["top"].subtree_quota(FR) == 100
    assert snap.cohorts["co"].spec is None


def test_cohort_cycle_makes_its_queues_inactive_until_broken() -> None:
    cache = cache_with("a", cohort_name="x")
    cache.upsert_cluster_queue(cq("free", "", ("f", "cpu", 10, None, None)))
    cache.upsert_cohort(cohort("x", "y"))
    cache.upsert_cohort(cohort("y", "x"))
    cache.upsert_workload(admitted("w", "a", {FR: 12}))
    snap = cache.snapshot()
    assert not snap.cluster_queues["a"].active
    assert snap.cluster_queues["a"].inactive_reason == REASON_COHORT_HAS_CYCLE
    assert snap.cluster_queue("a") is None
    assert "x" not in snap.cohorts
    assert "y" not in snap.cohorts
    assert snap.cluster_queues["free"].active
    assert cache.cohort_tree_members("a") == ["a"]
    assert cache.cluster_queue_usage("a").reserving_workloads == 1
    cache.upsert_cohort(cohort("y", "", ("f", "cpu", 1, None, None)))
    snap = cache.snapshot()
    assert snap.cluster_queues["a"].active
    assert snap.cohorts["x"].usage(FR) == 12
    assert snap.cohorts["y"].usage(FR) == 12
    assert snap.cohorts["y"].subtree_quota(FR) == 11
    assert snap.cluster_queues["a"].available(FR) == 0
    assert snap.cluster_queues["a"].path() == "/y/x/a"


def test_self_parent_is_a_cycle() -> None:
    cache = cache_with("a", cohort_name="x")
    cache.upsert_cohort(cohort("x", "x"))
    assert cache.snapshot().cluster_queues["a"].inactive_reason == REASON_COHORT_HAS_CYCLE


def test_inactive_queue_usage_still_counts_in_its_cohort() -> None:
    """Upstream leaves an inactive queue out of the snapshot's tree (its workloads are no
    preemption candidates) while its usage stays in the Cohort's sums."""
    cache = cache_with("a", "b")
    cache.upsert_workload(admitted("w", "b", {FR: 14}))
    cache.upsert_cluster_queue(cq("b", "co", ("f", "cpu", 10, None, None), stop_policy="Hold"))
    snap = cache.snapshot()
    assert not snap.cluster_queues["b"].active
    assert [q.name for q in snap.cohorts["co"].subtree_cluster_queues()] == ["a"]
    assert snap.cluster_queues["a"].available(FR) == 6
    assert snap.inactive_cluster_queues() == {"b"}


def test_assume_and_forget() -> None:
    cache = cache_with("a")
    pending = replace(admitted("w", "a", {FR: 4}), admission=None, conditions={})
    cache.upsert_workload(pending)
    cache.assume_workload(admitted("w", "a", {FR: 4}))
    assert cache.is_assumed("ns/w")
    assert cache.snapshot().cluster_queues["a"].usage(FR) == 4
    assert cache.forget_workload("ns/w")
    assert cache.snapshot().cluster_queues["a"].usage(FR) == 0
    assert not cache.forget_workload("ns/w")
    # An observed version replaces the assumption: without admission, nothing is counted.
    cache.assume_workload(admitted("w", "a", {FR: 4}))
    cache.upsert_workload(pending)
    assert not cache.is_assumed("ns/w")
    assert cache.snapshot().cluster_queues["a"].usage(FR) == 0
    # Once the reservation is observed, the workload is no longer only assumed.
    cache.assume_workload(admitted("w", "a", {FR: 4}))
    cache.upsert_workload(admitted("w", "a", {FR: 4}))
    assert not cache.is_assumed("ns/w")
    assert not cache.forget_workload("ns/w")
    assert cache.snapshot().cluster_queues["a"].usage(FR) == 4


def test_snapshot_is_isolated_from_the_cache() -> None:
    cache = cache_with("a", "b")
    cache.upsert_workload(admitted("w1", "a", {FR: 12}))
    snap = cache.snapshot()
    snap.add_workload(admitted("w2", "b", {FR: 5}))
    snap.remove_workload(admitted("w1", "a", {FR: 12}))
    assert snap.cohorts["co"].usage(FR) == 5
    fresh = cache.snapshot()
    assert fresh.cluster_queues["a"].usage(FR) == 12
    assert fresh.cluster_queues["b"].usage(FR) == 0
    assert fresh.cohorts["co"].usage(FR) == 12
    assert set(fresh.cluster_queues["a"].workloads) == {"ns/w1"}


def test_simulated_removal_is_restored() -> None:
    cache = cache_with("a", "b")
    w1 = admitted("w1", "a", {FR: 12})
    w2 = admitted("w2", "b", {FR: 3})
    cache.upsert_workload(w1)
    cache.upsert_workload(w2)
    snap = cache.snapshot()
    restore = snap.simulate_workload_removal([w1, w2])
    assert snap.cluster_queues["b"].available(FR) == 20
    restore()
    assert snap.cluster_queues["b"].available(FR) == 5
    assert set(snap.cluster_queues["a"].workloads) == {"ns/w1"}
    undo = snap.cluster_queues["b"].simulate_usage_addition({FR: 5})
    assert snap.cluster_queues["a"].available(FR) == 0
    undo()
    assert snap.cluster_queues["a"].available(FR) == 5


def test_cohort_tree_members() -> None:
    cache = cache_with("a", "b")
    cache.upsert_cluster_queue(cq("c", "sub", ("f", "cpu", 1, None, None)))
    cache.upsert_cluster_queue(cq("lone", "", ("f", "cpu", 1, None, None)))
    cache.upsert_cohort(cohort("sub", "co"))
    assert cache.cohort_tree_members("c") == ["a", "b", "c"]
    assert cache.cohort_tree_members("a") == ["a", "b", "c"]
    assert cache.cohort_tree_members("lone") == ["lone"]
    assert cache.cohort_tree_members("unknown") == ["unknown"]


def test_pods_ready_tracking() -> None:
    cache = cache_with("a")
    assert cache.pods_ready_for_all_admitted_workloads()
    cache.upsert_workload(admitted("w", "a", {FR: 1}))
    assert not cache.pods_ready_for_all_admitted_workloads()
    cache.upsert_workload(admitted("w", "a", {FR: 1}, pods_ready=True))
    assert cache.pods_ready_for_all_admitted_workloads()


def test_cluster_queue_queries() -> None:
    cache = cache_with("a", "b")
    cache.upsert_workload(admitted("w", "a", {FR: 1}))
    assert cache.cluster_queue_names() == ["a", "b"]
    assert not cache.cluster_queue_empty("a")
    assert cache.cluster_queue_empty("b")
    assert cache.cluster_queue_empty("missing")
    assert [w.key for w in cache.cluster_queue_workloads("a")] == ["ns/w"]
    assert cache.cluster_queues_using_flavor("f") == ["a", "b"]
    assert cache.cluster_queues_using_flavor("g") == []
    assert list(cache.flavors()) == ["f"]
    assert dict(cache.admission_checks()) == {}
