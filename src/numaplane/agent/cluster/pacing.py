"""When a node's heartbeat acts: the retry backoff, the NodeResourceTopology's publication rule
and the lease's timestamps (pure; ``numaplane.agent.cluster.heartbeat`` uses them)."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["Backoff", "micro_time", "nrt_due"]


class Backoff:
    """Exponential backoff: ``initial`` doubling up to ``cap``; ``reset`` after a success."""

    def __init__(self, initial: float = 0.2, cap: float = 7.0) -> None:
        self.initial = initial
        self.cap = cap
        self._next = initial

    def next(self) -> float:
        """The delay before the next attempt (and double the one after)."""
        delay = self._next
        self._next = min(self._next * 2, self.cap)
        return delay

    def reset(self) -> None:
        """A success: start from ``initial`` again."""
        self._next = self.initial


def nrt_due(
    earliest: float,
    first_change: float | None,
    last_change: float,
    quiet: float,
    max_delay: float,
) -> float:
    """When a pending NodeResourceTopology may be published: not before ``earliest`` (the
    least interval after the last write), and, for changes first seen at ``first_change`` and
    last at ``last_change``, once ``quiet`` seconds passed without a change or ``max_delay``
    after the first one, whichever comes first. ``first_change`` ``None``: nothing to wait
    for (the publication at start, or a retry)."""
    if first_change is None:
        return earliest
    return max(earliest, min(last_change + quiet, first_change + max_delay))


def micro_time(moment: float) -> str:
    """A ``metav1.MicroTime`` (RFC 3339 with microseconds, UTC), as leases carry."""
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
