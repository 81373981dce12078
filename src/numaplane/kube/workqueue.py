"""A work queue of object keys, as client-go's ``workqueue`` (typed rate-limiting delaying queue):

- a key added while already queued is queued once (dedup);
- a key added while a worker processes it is not handed to a second worker: it is queued again
  when the first calls :meth:`WorkQueue.done`, so one key is never processed twice at once;
- :meth:`WorkQueue.add_after` queues a key later (a key already waiting keeps the earlier time);
- :meth:`WorkQueue.add_rate_limited` queues a key after a per-key exponential backoff
  (5 ms doubling up to 1000 s, client-go's ``ItemExponentialFailureRateLimiter`` defaults),
  which :meth:`WorkQueue.forget` resets once the key was processed successfully;
- after :meth:`WorkQueue.shutdown`, :meth:`WorkQueue.get` drains what is queued, then raises
  :class:`ShutDown`.
"""

from __future__ import annotations

import asyncio
from collections import deque


class ShutDown(Exception):  # noqa: N818 - named as client-go's "shutdown" answer of Get
    """:meth:`WorkQueue.get` on a queue that was shut down and is empty."""


class ExponentialRateLimiter:
    """Per-key exponential backoff: ``base * 2**failures`` capped at ``cap`` (client-go's
    ``ItemExponentialFailureRateLimiter``)."""

    def __init__(self, base: float = 0.005, cap: float = 1000.0) -> None:
        self.base = base
        self.cap = cap
        self._failures: dict[str, int] = {}

    def when(self, key: str) -> float:
        """The delay before ``key``'s next try; counts one more failure."""
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        # 2**failures grows past any float for very long failing keys: cap before multiplying.
        if failures > 64:
            return self.cap
        return min(self.base * float(2**failures), self.cap)

    def forget(self, key: str) -> None:
        """``key`` succeeded: its next failure starts from ``base`` again."""
        self._failures.pop(key, None)

    def num_requeues(self, key: str) -> int:
        """How many times ``key`` failed since it was last forgotten."""
        return self._failures.get(key, 0)


class WorkQueue:
    """asyncio work queue of keys: deduplicated, one worker per key at a time, delayed and
    rate-limited adds."""

    def __init__(self, *, rate_limiter: ExponentialRateLimiter | None = None) -> None:
        self._queue: deque[str] = deque()
        self._dirty: set[str] = set()
        self._processing: set[str] = set()
        self._waiting: dict[str, tuple[float, asyncio.TimerHandle]] = {}
        self._limiter = rate_limiter or ExponentialRateLimiter()
        self._shutting_down = False
        self._getters: deque[asyncio.Future[None]] = deque()

    def __len__(self) -> int:
        """Keys queued (not counting those being processed or waiting for a delay)."""
        return len(self._queue)

    @property
    def shutting_down(self) -> bool:
        """:meth:`shutdown` was called."""
        return self._shutting_down

    def add(self, key: str) -> None:
        """Queue ``key`` unless it is already queued; while it is being processed it is queued
        again only at :meth:`done`."""
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        if key in self._processing:
            return
        self._queue.append(key)
        self._wake()

    def add_after(self, key: str, delay: float) -> None:
        """Queue ``key`` after ``delay`` seconds (now when ``delay <= 0``); a key already waiting
        is queued at the earlier of the two times."""
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(key)
            return
        loop = asyncio.get_running_loop()
        ready_at = loop.time() + delay
        waiting = self._waiting.get(key)
        if waiting is not None:
            if waiting[0] <= ready_at:
                return
            waiting[1].cancel()
        handle = loop.call_later(delay, self._ready, key)
        self._waiting[key] = (ready_at, handle)

    def _ready(self, key: str) -> None:
        self._waiting.pop(key, None)
        self.add(key)

    def add_rate_limited(self, key: str) -> None:
        """Queue ``key`` after its rate limiter's backoff (one more failure counted)."""
        self.add_after(key, self._limiter.when(key))

    def forget(self, key: str) -> None:
        """Reset ``key``'s backoff (it was processed successfully)."""
        self._limiter.forget(key)

    def num_requeues(self, key: str) -> int:
        """How many rate-limited adds of ``key`` since it was last forgotten."""
        return self._limiter.num_requeues(key)

    async def get(self) -> str:
        """The next key, marked as being processed (call :meth:`done` after); waits while the
        queue is empty; :class:`ShutDown` once shut down and drained."""
        while not self._queue:
            if self._shutting_down:
                raise ShutDown
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._getters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._getters:
                    self._getters.remove(waiter)
                # A getter cancelled after being woken passes the wake-up on.
                if waiter.cancelled() and self._queue:
                    self._wake()
        key = self._queue.popleft()
        self._processing.add(key)
        self._dirty.discard(key)
        return key

    def done(self, key: str) -> None:
        """Processing of ``key`` ended; if it was added meanwhile it is queued again now."""
        self._processing.discard(key)
        if key in self._dirty:
            self._queue.append(key)
            self._wake()

    def shutdown(self) -> None:
        """Accept no more keys; waiting :meth:`get` calls raise :class:`ShutDown` once the
        queue is drained."""
        self._shutting_down = True
        for _, handle in self._waiting.values():
            handle.cancel()
        self._waiting.clear()
        while self._getters:
            waiter = self._getters.popleft()
            if not waiter.done():
                waiter.set_result(None)

    def _wake(self) -> None:
        while self._getters:
            waiter = self._getters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
