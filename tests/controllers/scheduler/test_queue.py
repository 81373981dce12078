"""The scheduling queue: priority then arrival order, unschedulable pods wait for a cluster
change (through their backoff) or the periodic flush."""

from __future__ import annotations

from typing import Any

from numaplane.controllers.scheduler.podinfo import pod_info
from numaplane.controllers.scheduler.queue import SchedulingQueue

from .helpers import pod_obj


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def prio(name: str, priority: int) -> dict[str, Any]:
    obj = pod_obj(name)
    obj["spec"]["priority"] = priority
    return obj


def test_priority_then_arrival() -> None:
    queue = SchedulingQueue(clock=FakeClock())
    for name, priority in (("a", 0), ("b", 10), ("c", 0), ("d", 10)):
        queue.add(pod_info(prio(name, priority)))
    order = []
    while (pod := queue.pop()) is not None:
        order.append(pod.name)
    assert order == ["b", "d", "a", "c"]


def test_unschedulable_waits_for_a_change_and_its_backoff() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock=clock, initial_backoff=1.0)
    queue.add(pod_info(pod_obj("a")))
    pod = queue.pop()
    assert pod is not None
    queue.unschedulable(pod)
    assert queue.pop() is None
    queue.flush()
    assert queue.pop() is None, "no cluster change yet"
    queue.move_all_to_active()
    assert queue.pending() == {"active": 0, "backoff": 1, "unschedulable": 0}
    assert queue.pop() is None, "still in its 1 s backoff"
    clock.now += 1.0
    queue.flush()
    again = queue.pop()
    assert again is not None
    assert again.name == "a"


def test_backoff_doubles_up_to_the_cap() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock=clock, initial_backoff=1.0, max_backoff=3.0)
    queue.add(pod_info(pod_obj("a")))
    waits = []
    for _ in range(4):
        pod = queue.pop()
        assert pod is not None
        queue.backoff(pod)
        deadline = queue.next_backoff_deadline()
        assert deadline is not None
        waits.append(deadline - clock.now)
        clock.now = deadline
        queue.flush()
    assert waits == [1.0, 2.0, 3.0, 3.0]


def test_flush_retries_pods_unschedulable_too_long() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock=clock, max_unschedulable=300.0)
    queue.add(pod_info(pod_obj("a")))
    pod = queue.pop()
    assert pod is not None
    queue.unschedulable(pod)
    clock.now += 299.0
    queue.flush()
    assert queue.pop() is None
    clock.now += 1.0
    queue.flush()
    assert queue.pop() is not None


def test_update_of_a_queued_pod_keeps_one_entry() -> None:
    queue = SchedulingQueue(clock=FakeClock())
    queue.add(pod_info(pod_obj("a")))
    queue.add(pod_info(pod_obj("a", cpu="2")))
    first = queue.pop()
    assert first is not None
    assert first.requests["cpu"] == 2000
    assert queue.pop() is None
