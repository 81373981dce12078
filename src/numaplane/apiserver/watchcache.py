"""The in-memory history a :class:`~numaplane.apiserver.storage.ClusterStore` serves watches from.

Every committed event is appended, in resourceVersion order, to one log per resource and to one
log of all resources. A :class:`Watcher` is only a cursor into one log (plus a namespace filter),
so publishing a batch costs one append per event and one wake-up per waiting watcher, whatever the
number of watchers: no event is copied into per-watcher buffers, and a watcher resuming from an
old resourceVersion reads the same log as everyone else. This is the role of upstream's watch
cache (k8s.io/apiserver/pkg/storage/cacher) without its per-watcher channels.

A watcher ends (its iteration stops, as upstream closes a result channel) when it is closed, when
the events it has not read yet were compacted away, or when it lags more than the log's lag limit
behind the newest event (upstream terminates watchers that cannot keep up, and clients re-list).
"""

from __future__ import annotations

import asyncio
from bisect import bisect_right
from collections import deque
from dataclasses import dataclass
from typing import Any, Final

ADDED: Final = "ADDED"
MODIFIED: Final = "MODIFIED"
DELETED: Final = "DELETED"


@dataclass(frozen=True, order=True, slots=True)
class ObjectKey:
    """Where an object is stored: ``resource`` is the group resource (``jobs.batch``, ``pods``),
    ``namespace`` is ``""`` for cluster-scoped objects."""

    resource: str
    namespace: str
    name: str


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One change, as a watch delivers it.

    ``object`` is the state after the event; for ``DELETED`` the last state with the deletion's
    resourceVersion in ``metadata.resourceVersion``. ``prev_object`` is the state before (``None``
    for ``ADDED``), which selector-filtered watches need to turn a change into ADDED or DELETED.
    Both dicts are shared with the store: never mutate them.
    """

    type: str
    resource_version: int
    key: ObjectKey
    object: dict[str, Any]
    prev_object: dict[str, Any] | None


def _event_rv(event: WatchEvent) -> int:
    return event.resource_version


class EventLog:
    """The committed events of one resource (or of all), oldest first, from the compacted
    resourceVersion on; ``base`` is the absolute position of ``events[0]``."""

    def __init__(self, lag_limit: int) -> None:
        self.events: list[WatchEvent] = []
        self.base = 0
        self.lag_limit = lag_limit
        self.watchers: set[Watcher] = set()
        self.waiting: set[Watcher] = set()

    @property
    def head(self) -> int:
        """The absolute position after the newest event."""
        return self.base + len(self.events)

    def position_after(self, rv: int) -> int:
        """The absolute position of the first event newer than ``rv``."""
        return self.base + bisect_right(self.events, rv, key=_event_rv)

    def events_after(self, rv: int) -> list[WatchEvent]:
        """The events newer than ``rv``, oldest first."""
        return self.events[bisect_right(self.events, rv, key=_event_rv) :]

    def publish(self, events: list[WatchEvent]) -> None:
        """Append committed ``events`` (in rv order), end watchers that fell too far behind, and
        wake the waiting ones."""
        self.events.extend(events)
        head = self.head
        for watcher in [w for w in self.watchers if head - w.position > self.lag_limit]:
            watcher.terminate()
        waiting, self.waiting = self.waiting, set()
        for watcher in waiting:
            watcher.wake()

    def trim(self, upto_rv: int) -> None:
        """Drop the events at or below ``upto_rv`` (compaction)."""
        cut = bisect_right(self.events, upto_rv, key=_event_rv)
        if cut:
            del self.events[:cut]
            self.base += cut
            for watcher in [w for w in self.watchers if w.position < self.base]:
                watcher.terminate()

    def close_all(self) -> None:
        """End every watcher of this log (the store is closing)."""
        for watcher in list(self.watchers):
            watcher.close()


class Watcher:
    """A stream of :class:`WatchEvent` in resourceVersion order: an async iterator, or
    ``await next(timeout_s)`` which answers ``None`` on timeout or once the watcher has ended
    (:attr:`closed` tells which)."""

    def __init__(
        self,
        log: EventLog,
        position: int,
        namespace: str | None,
        initial: list[WatchEvent],
    ) -> None:
        self._log = log
        self.position = position
        self._namespace = namespace
        self._initial: deque[WatchEvent] = deque(initial)
        self._closed = False
        self._wakeup: asyncio.Future[None] | None = None
        #: Why the watcher ended on its own ("" while open or when closed by its user).
        self.ended_because = ""
        log.watchers.add(self)

    @property
    def closed(self) -> bool:
        """Whether the watcher has ended (closed, compacted past, or too slow)."""
        return self._closed

    def close(self) -> None:
        """End the watcher; pending and future :meth:`next` calls answer ``None``."""
        if self._closed:
            return
        self._closed = True
        self._initial.clear()
        self._log.watchers.discard(self)
        self._log.waiting.discard(self)
        self.wake()

    def terminate(self, reason: str = "") -> None:
        """End the watcher because it cannot be served any more (it lags or was compacted past)."""
        if not self._closed:
            self.ended_because = reason or "watcher fell behind the event history"
            self.close()

    def wake(self) -> None:
        """Resume a pending :meth:`next` (new events, or the watcher ended)."""
        wakeup, self._wakeup = self._wakeup, None
        if wakeup is not None and not wakeup.done():
            wakeup.set_result(None)

    def _take(self) -> WatchEvent | None:
        if self._initial:
            return self._initial.popleft()
        log = self._log
        index = self.position - log.base
        if index < 0:
            self.terminate("events not yet read were compacted")
            return None
        events = log.events
        namespace = self._namespace
        end = len(events)
        while index < end:
            event = events[index]
            index += 1
            if namespace is None or event.key.namespace == namespace:
                self.position = log.base + index
                return event
        self.position = log.base + index
        return None

    async def next(self, timeout_s: float | None = None) -> WatchEvent | None:
        """The next event; ``None`` after ``timeout_s`` seconds without one (``0`` polls) or
        once the watcher has ended."""
        while not self._closed:
            event = self._take()
            if event is not None:
                return event
            if self._closed or timeout_s == 0:
                return None
            wakeup = asyncio.get_running_loop().create_future()
            self._wakeup = wakeup
            self._log.waiting.add(self)
            try:
                if timeout_s is None:
                    await wakeup
                else:
                    async with asyncio.timeout(timeout_s):
                        await wakeup
            except TimeoutError:
                self._log.waiting.discard(self)
                return self._take() if not self._closed else None
            finally:
                self._wakeup = None
        return None

    def __aiter__(self) -> Watcher:
        return self

    async def __anext__(self) -> WatchEvent:
        event = await self.next()
        if event is None:
            raise StopAsyncIteration
        return event
