"""The scheduling queue, as upstream's ``PriorityQueue``: an active queue (highest priority
first, then first come), a backoff queue, and the unschedulable pods.

A pod that fit nowhere waits among the unschedulable pods until the cluster changes in a way
that may let it fit (``move_all_to_active``: a node added or updated, an assigned pod deleted
or ended), or until it has waited ``max_unschedulable`` seconds (upstream's
``podMaxInUnschedulablePodsDuration``, 5 minutes; checked by ``flush``). Moved pods still in
their backoff (1 s doubling to 10 s per failed attempt, upstream's defaults) go through the
backoff queue first.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import time
from collections.abc import Callable
from typing import Final

from numaplane.controllers.scheduler.podinfo import PodInfo

__all__ = ["SchedulingQueue"]

INITIAL_BACKOFF: Final = 1.0
MAX_BACKOFF: Final = 10.0
MAX_UNSCHEDULABLE: Final = 300.0


class SchedulingQueue:
    """See the module doc. Keys are ``namespace/name``; a key is in at most one sub-queue."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        initial_backoff: float = INITIAL_BACKOFF,
        max_backoff: float = MAX_BACKOFF,
        max_unschedulable: float = MAX_UNSCHEDULABLE,
    ) -> None:
        self._clock = clock
        self._initial_backoff = initial_backoff
        self._max_backoff = max_backoff
        self._max_unschedulable = max_unschedulable
        self._seq = itertools.count()
        self._active: list[tuple[int, int, str]] = []
        self._backoff: list[tuple[float, int, str]] = []
        #: Every queued pod by key, with the sub-queue it is in.
        self._pods: dict[str, PodInfo] = {}
        self._where: dict[str, str] = {}
        self._unschedulable_since: dict[str, float] = {}
        self._backoff_until: dict[str, float] = {}
        self._wake = asyncio.Event()

    def __len__(self) -> int:
        return len(self._pods)

    def __contains__(self, key: str) -> bool:
        return key in self._pods

    def pending(self) -> dict[str, int]:
        """How many pods each sub-queue holds (``active``, ``backoff``, ``unschedulable``)."""
        counts = {"active": 0, "backoff": 0, "unschedulable": 0}
        for where in self._where.values():
            counts[where] += 1
        return counts

    def add(self, pod: PodInfo) -> None:
        """A new or changed pending pod: into the active queue (a pod already queued is
        updated in place; an unschedulable one is moved, as upstream's update)."""
        key = pod.key
        where = self._where.get(key)
        if where is not None:
            pod.attempts = self._pods[key].attempts
            pod.last_message = self._pods[key].last_message
            self._pods[key] = pod
            if where == "unschedulable":
                self._to_active(key)
            return
        self._pods[key] = pod
        self._to_active(key)

    def delete(self, key: str) -> None:
        """Forget the pod (it was deleted or assigned)."""
        self._pods.pop(key, None)
        self._where.pop(key, None)
        self._unschedulable_since.pop(key, None)
        self._backoff_until.pop(key, None)

    def _to_active(self, key: str) -> None:
        pod = self._pods[key]
        self._where[key] = "active"
        self._unschedulable_since.pop(key, None)
        heapq.heappush(self._active, (-pod.priority, next(self._seq), key))
        self._wake.set()

    def unschedulable(self, pod: PodInfo) -> None:
        """The pod fit nowhere: it waits for a cluster change."""
        pod.attempts += 1
        key = pod.key
        self._pods[key] = pod
        self._where[key] = "unschedulable"
        now = self._clock()
        self._unschedulable_since[key] = now
        self._backoff_until[key] = now + self._backoff_of(pod)

    def backoff(self, pod: PodInfo) -> None:
        """The attempt failed for a reason other than fit (a bind error): retry after backoff."""
        pod.attempts += 1
        key = pod.key
        self._pods[key] = pod
        self._where[key] = "backoff"
        until = self._clock() + self._backoff_of(pod)
        self._backoff_until[key] = until
        heapq.heappush(self._backoff, (until, next(self._seq), key))
        self._wake.set()

    def _backoff_of(self, pod: PodInfo) -> float:
        factor: float = 2.0 ** max(0, pod.attempts - 1)
        return min(self._max_backoff, self._initial_backoff * factor)

    def move_all_to_active(self) -> None:
        """The cluster changed: every unschedulable pod gets another attempt (after its
        backoff)."""
        now = self._clock()
        for key in [k for k, w in self._where.items() if w == "unschedulable"]:
            self._requeue(key, now)

    def _requeue(self, key: str, now: float) -> None:
        until = self._backoff_until.get(key, 0.0)
        self._unschedulable_since.pop(key, None)
        if until > now:
            self._where[key] = "backoff"
            heapq.heappush(self._backoff, (until, next(self._seq), key))
            self._wake.set()
        else:
            self._to_active(key)

    def flush(self) -> None:
        """Move pods whose backoff ended to the active queue, and pods unschedulable for longer
        than ``max_unschedulable`` back to a new attempt."""
        now = self._clock()
        while self._backoff and self._backoff[0][0] <= now:
            _, _, key = heapq.heappop(self._backoff)
            if self._where.get(key) == "backoff" and self._backoff_until.get(key, 0.0) <= now:
                self._to_active(key)
        for key, since in list(self._unschedulable_since.items()):
            if now - since >= self._max_unschedulable:
                self._requeue(key, now)

    def next_backoff_deadline(self) -> float | None:
        """When the earliest pod in the backoff queue is due (clock time), if any."""
        return self._backoff[0][0] if self._backoff else None

    def pop(self) -> PodInfo | None:
        """The next pod to schedule, or ``None`` when the active queue is empty."""
        while self._active:
            _, _, key = heapq.heappop(self._active)
            if self._where.get(key) == "active":
                del self._where[key]
                return self._pods.pop(key)
        self._wake.clear()
        return None

    async def wait(self, timeout: float) -> None:
        """Wait until a pod may be active, at most ``timeout`` seconds."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout)
