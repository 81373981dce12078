"""The simulated nodes' clock: the wall time their objects carry, and timers at wall times.

A simulated container "runs" until a wall time (its start plus the pod's
``numaplane.io/simulated-duration``), so the clock answers both questions: what time it is,
and call this back at that time. ``WallClock`` is the real one (asyncio's timers);
``numaplane.testing.fakeclock.FakeClock`` moves only when a test advances it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["Clock", "Timer", "WallClock"]


class Timer(Protocol):
    """A pending callback (``asyncio.TimerHandle`` is one)."""

    def cancel(self) -> None:
        """Do not call it (no effect once it ran)."""


class Clock(Protocol):
    """Wall time in seconds since the epoch, and callbacks at such times."""

    def now(self) -> float:
        """The current wall time."""

    def call_at(self, when: float, callback: Callable[[], None]) -> Timer:
        """Call ``callback`` (in the event loop's thread) once the wall time reaches ``when``;
        at once (soon) when it already has."""


class WallClock:
    """``time.time`` and the running event loop's timers."""

    def now(self) -> float:
        """``time.time()``."""
        return time.time()

    def call_at(self, when: float, callback: Callable[[], None]) -> Timer:
        """A loop timer ``when - now`` seconds from now (needs a running loop)."""
        delay = max(0.0, when - time.time())
        return asyncio.get_running_loop().call_later(delay, callback)
