"""The queue manager as upstream ``pkg/cache/queue``: heap order, BestEffortFIFO parking and
QueueInadmissibleWorkloads over cohort trees, StrictFIFO head blocking, LocalQueue binding,
requeue backoff and the pending counts the status writers read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import pytest

from numaplane.kueue.api.model import (
    STRICT_FIFO,
    Admission,
    Cohort,
    PodSetAssignment,
    Workload,
)
from numaplane.kueue.queue import (
    REQUEUE_NAMESPACE_MISMATCH,
    REQUEUE_NO_FIT,
    REQUEUE_PENDING_PREEMPTION,
    QueueManager,
)
from numaplane.testing.fakeclock import FakeClock

from .helpers import cq, lq, wl

T0 = 1_767_225_600.0


def manager(*cqs: str, strategy: str = "BestEffortFIFO") -> tuple[QueueManager, FakeClock]:
    clock = FakeClock(T0)
    m = QueueManager(clock.now)
    for name in cqs or ("cq",):
        m.upsert_cluster_queue(cq(name, strategy=strategy))
        m.upsert_local_queue(lq(f"lq-{name}" if cqs else "lq", name))
    return m, clock


def names(workloads: Sequence[Workload]) -> list[str]:
    return [w.name for w in workloads]


def drain(m: QueueManager) -> list[str]:
    """Pop heads until empty (one queue): the order the scheduler would see them."""
    out: list[str] = []
    while heads := m.heads():
        out.extend(names(heads))
    return out


@dataclass(frozen=True)
class OrderCase:
    name: str
    #: (name, priority, queue-order time, uid)
    workloads: tuple[tuple[str, int, float, str], ...]
    want: tuple[str, ...]


ORDER_CASES = (
    OrderCase(
        name="higher priority first",
        workloads=(("low", 0, 1.0, "a"), ("high", 10, 5.0, "b")),
        want=("high", "low"),
    ),
    OrderCase(
        name="same priority: earlier queue-order time first",
        workloads=(("late", 5, 9.0, "a"), ("early", 5, 2.0, "b")),
        want=("early", "late"),
    ),
    OrderCase(
        name="same priority and time: uid breaks the tie",
        workloads=(("z", 1, 3.0, "uid-2"), ("y", 1, 3.0, "uid-1")),
        want=("y", "z"),
    ),
    OrderCase(
        name="negative priorities sort below zero",
        workloads=(("neg", -5, 0.0, "a"), ("zero", 0, 10.0, "b"), ("pos", 3, 20.0, "c")),
        want=("pos", "zero", "neg"),
    ),
)


@pytest.mark.parametrize("case", ORDER_CASES, ids=[c.name for c in ORDER_CASES])
def test_heap_order(case: OrderCase) -> None:
    m, _ = manager()
    for name, prio, t, uid in case.workloads:
        assert m.upsert_workload(wl(name, priority=prio, t=t, uid=uid))
    assert tuple(drain(m)) == case.want


def test_update_changes_position_and_leaves_no_duplicate() -> None:
    m, _ = manager()
    m.upsert_workload(wl("a", priority=1, t=1))
    m.upsert_workload(wl("b", priority=2, t=2))
    # Many updates: the lazily deleted heap tuples must never surface as extra heads.
    for prio in range(100):
        m.upsert_workload(wl("a", priority=prio % 5, t=1))
    m.upsert_workload(wl("a", priority=9, t=1))
    assert drain(m) == ["a", "b"]
    assert m.pending_counts("cq") == (0, 0)


def test_best_effort_parks_an_inadmissible_head_and_moves_on() -> None:
    m, _ = manager()
    first, second = wl("first", t=1), wl("second", t=2)
    m.upsert_workload(first)
    m.upsert_workload(second)
    assert names(m.heads()) == ["first"]
    assert m.requeue(first, immediate=False, reason=REQUEUE_NO_FIT)
    assert m.pending_counts("cq") == (1, 1)
    assert names(m.heads()) == ["second"], "BestEffortFIFO: the next workload becomes head"
    assert m.requeue(second, immediate=False, reason=REQUEUE_NO_FIT)
    assert m.heads() == []
    assert not m.has_heads()
    assert m.queue_inadmissible(["cq"]) == 2
    assert drain(m) == ["first", "second"]


def test_strict_fifo_keeps_blocking_with_its_head() -> None:
    m, _ = manager(strategy=STRICT_FIFO)
    first, second = wl("first", t=1), wl("second", t=2)
    m.upsert_workload(first)
    m.upsert_workload(second)
    for _ in range(3):
        heads = m.heads()
        assert names(heads) == ["first"], "StrictFIFO: the head blocks the queue"
        assert m.requeue(heads[0], immediate=False, reason=REQUEUE_NO_FIT)
    assert m.pending_counts("cq") == (2, 0)


def test_strict_fifo_parks_a_namespace_mismatch() -> None:
    m, _ = manager(strategy=STRICT_FIFO)
    first = wl("first", t=1)
    m.upsert_workload(first)
    m.upsert_workload(wl("second", t=2))
    m.heads()
    assert m.requeue(first, immediate=True, reason=REQUEUE_NAMESPACE_MISMATCH)
    assert m.pending_counts("cq") == (1, 1)
    assert names(m.heads()) == ["second"]


def test_best_effort_immediate_requeue_returns_to_the_heap() -> None:
    m, _ = manager()
    first = wl("first", t=1)
    m.upsert_workload(first)
    m.heads()
    assert m.requeue(first, immediate=True)
    assert m.pending_counts("cq") == (1, 0)


def test_requeue_after_queue_inadmissible_during_the_cycle_goes_back_to_the_heap() -> None:
    # Upstream popCycle/queueInadmissibleCycle: quota freed while the head was being scheduled
    # must not leave it parked until the next cluster event.
    m, _ = manager()
    first = wl("first")
    m.upsert_workload(first)
    m.heads()
    m.queue_inadmissible(["cq"])
    assert m.requeue(first, immediate=False, reason=REQUEUE_NO_FIT)
    assert m.pending_counts("cq") == (1, 0)


def test_requeue_of_a_workload_already_queued_is_not_inserted() -> None:
    m, _ = manager()
    first = wl("first")
    m.upsert_workload(first)
    m.heads()
    m.upsert_workload(first)  # an update arrived while it was being scheduled
    assert not m.requeue(first, immediate=False, reason=REQUEUE_NO_FIT)
    assert m.pending_counts("cq") == (1, 0)


def test_sticky_preemptor_stays_head_over_a_higher_priority_arrival() -> None:
    m, _ = manager()
    preemptor = wl("preemptor", priority=5, t=1)
    m.upsert_workload(preemptor)
    m.heads()
    assert m.requeue(preemptor, immediate=False, reason=REQUEUE_PENDING_PREEMPTION)
    m.upsert_workload(wl("urgent", priority=100, t=2))
    assert names(m.heads()) == ["preemptor"]
    # Any other outcome ends the stickiness.
    m.requeue(preemptor, immediate=True, reason=REQUEUE_NO_FIT)
    assert names(m.heads()) == ["urgent"]


def test_sticky_ends_when_the_preemptor_is_reserved() -> None:
    m, _ = manager()
    preemptor = wl("preemptor", priority=5, t=1)
    m.upsert_workload(preemptor)
    m.heads()
    m.requeue(preemptor, immediate=False, reason=REQUEUE_PENDING_PREEMPTION)
    assert names(m.heads()) == ["preemptor"]  # popped again, then reserved
    admission = Admission("cq", (PodSetAssignment("main", {"cpu": "f"}, {"cpu": 1000}, 1),))
    reserved = wl("preemptor", priority=5, t=1, conditions={"QuotaReserved": ("True", "", "", 0)})
    m.upsert_workload(replace(reserved, admission=admission))
    m.upsert_workload(wl("urgent", priority=100, t=2))
    # Evicted later and pending again: an ordinary workload, not the sticky head.
    m.upsert_workload(preemptor)
    assert drain(m) == ["urgent", "preemptor"]


def test_queue_inadmissible_moves_the_whole_cohort_tree() -> None:
    clock = FakeClock(T0)
    m = QueueManager(clock.now)
    m.upsert_cohort(Cohort(name="child", parent="root"))
    m.upsert_cohort(Cohort(name="root"))
    for name, cohort in (("a", "child"), ("b", "root"), ("c", "other"), ("d", "")):
        m.upsert_cluster_queue(cq(name, cohort=cohort))
        m.upsert_local_queue(lq(f"lq-{name}", name))
    for name in "abcd":
        m.upsert_workload(wl(f"w-{name}", queue=f"lq-{name}"))
    for head in m.heads():
        m.requeue(head, immediate=False, reason=REQUEUE_NO_FIT)
    assert all(m.pending_counts(n) == (0, 1) for n in "abcd")
    assert m.queue_inadmissible(["a"]) == 2
    assert [m.pending_counts(n) for n in "abcd"] == [(1, 0), (1, 0), (0, 1), (0, 1)]
    assert m.queue_inadmissible(["d"]) == 1, "a queue without cohort moves alone"
    assert m.pending_counts("c") == (0, 1)


def parked_everywhere(m: QueueManager) -> None:
    for head in m.heads():
        m.requeue(head, immediate=False, reason=REQUEUE_NO_FIT)


def test_cohort_changes_requeue_their_tree_and_regroup_it() -> None:
    clock = FakeClock(T0)
    m = QueueManager(clock.now)
    for name, cohort in (("a", "left"), ("b", "right")):
        m.upsert_cluster_queue(cq(name, cohort=cohort))
        m.upsert_local_queue(lq(f"lq-{name}", name))
        m.upsert_workload(wl(f"w-{name}", queue=f"lq-{name}"))
    parked_everywhere(m)
    assert m.queue_inadmissible(["a"]) == 1, "separate trees: only a's"
    parked_everywhere(m)
    m.upsert_cohort(Cohort(name="left", parent="top"))
    assert [m.pending_counts(n) for n in "ab"] == [(1, 0), (0, 1)], "the edit requeues left's tree"
    parked_everywhere(m)
    m.upsert_cohort(Cohort(name="right", parent="top"))
    parked_everywhere(m)
    assert m.queue_inadmissible(["a"]) == 2, "now one tree under top"
    m.delete_cohort("right")
    parked_everywhere(m)
    assert m.queue_inadmissible(["a"]) == 1


def test_set_cluster_queue_active() -> None:
    m, _ = manager()
    m.upsert_workload(wl("w"))
    m.set_cluster_queue_active("cq", False)
    assert m.heads() == []
    m.set_cluster_queue_active("cq", True)
    assert names(m.heads()) == ["w"]


def test_queue_inadmissible_skips_a_cohort_cycle() -> None:
    clock = FakeClock(T0)
    m = QueueManager(clock.now)
    m.upsert_cohort(Cohort(name="x", parent="y"))
    m.upsert_cohort(Cohort(name="y", parent="x"))
    m.upsert_cluster_queue(cq("a", cohort="x"))
    m.upsert_local_queue(lq("lq", "a"))
    m.upsert_workload(wl("w"))
    (head,) = m.heads()
    m.requeue(head, immediate=False, reason=REQUEUE_NO_FIT)
    assert m.queue_inadmissible(["a"]) == 0
    assert m.pending_counts("a") == (0, 1)


def test_cluster_queue_spec_change_requeues_its_inadmissible_workloads() -> None:
    m, _ = manager()
    first = wl("first")
    m.upsert_workload(first)
    m.heads()
    m.requeue(first, immediate=False, reason=REQUEUE_NO_FIT)
    m.upsert_cluster_queue(cq("cq"))  # unchanged: stays parked
    assert m.pending_counts("cq") == (0, 1)
    m.upsert_cluster_queue(cq("cq", cohort="new"))
    assert m.pending_counts("cq") == (1, 0)


def test_inactive_cluster_queue_gives_no_heads() -> None:
    m, _ = manager()
    m.upsert_workload(wl("w"))
    m.upsert_cluster_queue(cq("cq"), active=False)
    assert not m.has_heads()
    assert m.heads() == []
    m.upsert_cluster_queue(cq("cq"), active=True)
    assert names(m.heads()) == ["w"]


def test_workload_waits_for_its_local_queue_and_cluster_queue() -> None:
    clock = FakeClock(T0)
    m = QueueManager(clock.now)
    assert not m.upsert_workload(wl("w"))
    assert m.local_queue_pending("ns", "lq") == 0, "no such LocalQueue yet"
    m.upsert_local_queue(lq("lq", "cq"))
    assert m.local_queue_pending("ns", "lq") == 1
    assert m.pending_counts("cq") == (0, 0)
    m.upsert_cluster_queue(cq("cq"))
    assert m.pending_counts("cq") == (1, 0)
    assert names(m.heads()) == ["w"]
    assert m.local_queue_pending("ns", "lq") == 0, "a popped head leaves its LocalQueue"


def test_deleting_the_local_queue_takes_its_workloads_out_until_it_returns() -> None:
    m, _ = manager()
    m.upsert_workload(wl("w"))
    m.delete_local_queue("ns", "lq")
    assert m.pending_counts("cq") == (0, 0)
    assert not m.requeue(wl("w"), immediate=True)
    m.upsert_local_queue(lq("lq", "cq"))
    assert m.pending_counts("cq") == (1, 0)


def test_stopped_local_queue_feeds_nothing_until_restarted() -> None:
    m, _ = manager()
    m.upsert_workload(wl("w"))
    m.upsert_local_queue(lq("lq", "cq", stop="Hold"))
    assert m.pending_counts("cq") == (0, 0)
    assert not m.upsert_workload(wl("w2"))
    m.upsert_local_queue(lq("lq", "cq"))
    assert m.pending_counts("cq") == (2, 0)


def test_local_queue_moving_to_another_cluster_queue_moves_its_workloads() -> None:
    m, _ = manager("a", "b")
    m.upsert_workload(wl("w", queue="lq-a"))
    m.upsert_local_queue(lq("lq-a", "b"))
    assert m.pending_counts("a") == (0, 0)
    assert m.pending_counts("b") == (1, 0)


def test_queue_name_change_refiles_the_workload() -> None:
    m, _ = manager("a", "b")
    m.upsert_workload(wl("w", queue="lq-a"))
    m.upsert_workload(wl("w", queue="lq-b"))
    assert m.pending_counts("a") == (0, 0)
    assert m.pending_counts("b") == (1, 0)
    assert m.local_queue_pending("ns", "lq-a") == 0


@dataclass(frozen=True)
class NotPendingCase:
    name: str
    conditions: dict[str, tuple[str, str, str, float]]
    active: bool = True


NOT_PENDING_CASES = (
    NotPendingCase("quota reserved", {"QuotaReserved": ("True", "QuotaReserved", "", 0)}),
    NotPendingCase("finished", {"Finished": ("True", "Succeeded", "", 0)}),
    NotPendingCase("deactivated", {}, active=False),
)


@pytest.mark.parametrize("case", NOT_PENDING_CASES, ids=[c.name for c in NOT_PENDING_CASES])
def test_a_workload_that_is_not_pending_leaves_the_queues(case: NotPendingCase) -> None:
    m, _ = manager()
    m.upsert_workload(wl("w"))
    assert not m.upsert_workload(wl("w", conditions=case.conditions, active=case.active))
    assert m.pending_counts("cq") == (0, 0)
    assert m.local_queue_pending("ns", "lq") == 0


def test_backoff_parks_until_requeue_at() -> None:
    m, clock = manager()
    w = wl("w", requeue_at=T0 + 60)
    assert m.upsert_workload(w)
    assert m.pending_counts("cq") == (0, 1)
    assert m.next_backoff_at() == T0 + 60
    assert m.queue_inadmissible(["cq"]) == 0, "still backing off"
    clock.advance(60)
    assert m.next_backoff_at() is None
    assert m.queue_inadmissible(["cq"]) == 1


def test_requeued_false_waits_for_the_workload_controller() -> None:
    m, clock = manager()
    waiting = {"Requeued": ("False", "PodsReadyTimeout", "", T0)}
    m.upsert_workload(wl("w", conditions=waiting))
    clock.advance(3600)
    assert m.queue_inadmissible(["cq"]) == 0
    # The controller flips Requeued=True (BackoffFinished): the update frees it.
    done = {"Requeued": ("True", "BackoffFinished", "", T0 + 3600)}
    m.upsert_workload(wl("w", conditions=done))
    assert m.pending_counts("cq") == (1, 0)


def test_update_of_a_parked_workload_that_cannot_help_keeps_it_parked() -> None:
    m, _ = manager()
    w = wl("w")
    m.upsert_workload(w)
    m.heads()
    m.requeue(w, immediate=False, reason=REQUEUE_NO_FIT)
    m.upsert_workload(wl("w"))
    assert m.pending_counts("cq") == (0, 1)
    m.upsert_workload(wl("w", priority=7))
    assert m.pending_counts("cq") == (1, 0), "a spec change may make it admissible"


def test_deleted_cluster_queue_keeps_workloads_for_its_return() -> None:
    m, _ = manager()
    m.upsert_workload(wl("w"))
    m.delete_cluster_queue("cq")
    assert m.heads() == []
    assert m.pending_counts("cq") == (0, 0)
    m.upsert_cluster_queue(cq("cq"))
    assert names(m.heads()) == ["w"]


def test_ten_thousand_workloads_over_a_hundred_queues_come_out_in_order() -> None:
    clock = FakeClock(T0)
    m = QueueManager(clock.now)
    for i in range(100):
        m.upsert_cluster_queue(cq(f"cq{i:03d}", cohort=f"co{i % 10}"))
        m.upsert_local_queue(lq(f"lq{i:03d}", f"cq{i:03d}"))
    for j in range(10_000):
        m.upsert_workload(wl(f"w{j:05d}", priority=j % 7, t=float(j), queue=f"lq{j % 100:03d}"))
    assert sum(m.pending_total(f"cq{i:03d}") for i in range(100)) == 10_000
    seen: dict[str, list[tuple[int, float]]] = {}
    rounds = 0
    while heads := m.heads():
        rounds += 1
        for h in heads:
            seen.setdefault(h.queue_name, []).append((-h.priority, h.queue_order_time))
    assert rounds == 100
    assert all(order == sorted(order) for order in seen.values())
    assert sum(len(v) for v in seen.values()) == 10_000
