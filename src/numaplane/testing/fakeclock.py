"""``FakeClock``: a wall clock that moves only when a test advances it, with timers.

It has the shape of ``numaplane.agent.simulated.clock.Clock`` (``now``, ``call_at``), so a test
decides when a simulated container's duration has passed instead of sleeping through it.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["FakeClock", "FakeTimer"]


@dataclass(eq=False)
class FakeTimer:
    """A callback due at ``when``; ``cancel`` drops it."""

    when: float
    callback: Callable[[], None]
    cancelled: bool = field(default=False)

    def cancel(self) -> None:
        """Do not call it."""
        self.cancelled = True


class FakeClock:
    """Starts at ``start`` (seconds since the epoch); ``advance`` moves it and runs the timers
    that fall due, in time order (then in the order they were set)."""

    def __init__(self, start: float = 1_767_225_600.0) -> None:  # 2026-01-01T00:00:00Z
        self._now = start
        self._seq = itertools.count()
        self._heap: list[tuple[float, int, FakeTimer]] = []

    def now(self) -> float:
        """The fake wall time."""
        return self._now

    def call_at(self, when: float, callback: Callable[[], None]) -> FakeTimer:
        """Remember ``callback`` for ``when`` (run by the next ``advance`` reaching it)."""
        timer = FakeTimer(when, callback)
        heapq.heappush(self._heap, (when, next(self._seq), timer))
        return timer

    @property
    def pending(self) -> int:
        """How many timers wait (cancelled ones not counted)."""
        return sum(1 for _, _, t in self._heap if not t.cancelled)

    def advance(self, seconds: float) -> None:
        """Move the time forward by ``seconds``, calling every timer due on the way (each sees
        ``now()`` at its own due time; timers they set are run too when due)."""
        target = self._now + seconds
        while self._heap and self._heap[0][0] <= target:
            when, _, timer = heapq.heappop(self._heap)
            if timer.cancelled:
                continue
            self._now = max(self._now, when)
            timer.callback()
        self._now = target
