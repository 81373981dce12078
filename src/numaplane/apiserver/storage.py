"""One logical cluster's object store: SQLite (WAL, ``synchronous=FULL``) on disk, the current
state and the recent history in memory.

- **One global resourceVersion**, assigned when a write is accepted (on the event loop, so writes
  are checked and ordered in one place), persisted with every transaction and resumed on reopen.
- **Durable before acknowledged**: a writer thread commits every write queued while the previous
  commit ran in one transaction (group commit: one fsync for all of them), then hands the batch
  back to the event loop, which applies it to the committed state and publishes its events in rv
  order. Reads (:meth:`ClusterStore.get`, :meth:`ClusterStore.list`) use the in-memory committed
  state and never wait for the writer.
- **History**: one row per write on disk (:mod:`numaplane.apiserver.storagedb`); compaction
  leaves exactly the state at the compacted rv C plus the rows after it, so reopening replays them
  into the current state and the events after C, which watches and :meth:`ClusterStore.list_at`
  read from memory (:mod:`numaplane.apiserver.watchcache`).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import sqlite3
from bisect import bisect_left
from pathlib import Path
from typing import Any, Final

from numaplane.apiserver import errors
from numaplane.apiserver.storagedb import PendingWrite, Writer, connect, load, object_rv
from numaplane.apiserver.watchcache import ADDED as ADDED
from numaplane.apiserver.watchcache import DELETED as DELETED
from numaplane.apiserver.watchcache import MODIFIED as MODIFIED
from numaplane.apiserver.watchcache import EventLog
from numaplane.apiserver.watchcache import ObjectKey as ObjectKey
from numaplane.apiserver.watchcache import Watcher as Watcher
from numaplane.apiserver.watchcache import WatchEvent as WatchEvent

#: Upstream's message for a list at a compacted revision (k8s.io/apiserver storage/etcd3).
EXPIRED_LIST: Final = "The resourceVersion for the provided list is too old."


def too_large_resource_version(rv: int, current: int) -> errors.StatusError:
    """Upstream's answer to a read at a resourceVersion the store has not reached (504 Timeout,
    cause ResourceVersionTooLarge, retry after 1 s)."""
    message = f"Too large resource version: {rv}, current: {current}"
    return errors.StatusError(
        504,
        "Timeout",
        message,
        {
            "causes": [{"reason": "ResourceVersionTooLarge", "message": message}],
            "retryAfterSeconds": 1,
        },
    )


class ClusterStore:
    """The objects of one logical cluster; see the module docstring. Open with :meth:`open`.

    Dicts handed out (by reads, writes and watch events) are shared with the store: never mutate
    them. Write methods copy what they are given.
    """

    def __init__(self, db: sqlite3.Connection, *, keep_revisions: int, watch_lag_limit: int):
        self._db = db
        self._keep_revisions = keep_revisions
        self._lag_limit = watch_lag_limit
        #: Committed state: resource -> (namespace, name) -> object.
        self._objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
        #: Per resource, its keys sorted (rebuilt lazily after a key is added or removed).
        self._sorted: dict[str, builtins.list[tuple[str, str]]] = {}
        #: Accepted, not yet committed: key -> (rv, object after, None once deleted).
        self._pending: dict[ObjectKey, tuple[int, dict[str, Any] | None]] = {}
        self._logs: dict[str, EventLog] = {}
        self._all = EventLog(watch_lag_limit)
        self._rv = 0
        self._next_rv = 0
        self._compacted = 0
        self._failed: BaseException | None = None
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._writer: Writer | None = None
        self._compactor: asyncio.Task[None] | None = None
        self._compaction_asked = 0
        self._compaction_waiters: builtins.list[tuple[int, asyncio.Future[None]]] = []

    @classmethod
    async def open(
        cls,
        path: Path,
        *,
        compact_interval_s: float = 300.0,
        keep_revisions: int = 10_000,
        watch_lag_limit: int = 100_000,
    ) -> ClusterStore:
        """Open (creating if needed) the store at ``path``. Every ``compact_interval_s`` seconds,
        and whenever the history grows past twice ``keep_revisions``, it is compacted to the
        newest ``keep_revisions`` revisions. A watcher more than ``watch_lag_limit`` events behind
        is ended."""
        db = await asyncio.to_thread(connect, path)
        store = cls(db, keep_revisions=keep_revisions, watch_lag_limit=watch_lag_limit)
        await asyncio.to_thread(store._load)
        loop = asyncio.get_running_loop()
        store._loop = loop
        store._writer = Writer(db, store._committed_threadsafe)
        store._writer.start()
        store._compactor = loop.create_task(store._compact_periodically(compact_interval_s))
        return store

    def _load(self) -> None:
        """Replay the stored revisions into the current state and the history after the
        compacted rv."""
        self._rv, self._compacted, revisions = load(self._db)
        self._next_rv = self._rv
        events: builtins.list[WatchEvent] = []
        for rv, kind, key, obj in revisions:
            objects = self._objects.setdefault(key.resource, {})
            k = (key.namespace, key.name)
            prev = objects.get(k)
            if kind == DELETED:
                objects.pop(k, None)
            else:
                objects[k] = obj
            if rv > self._compacted:
                events.append(WatchEvent(kind, rv, key, obj, prev))
        self._publish(events)

    # ----- reads -----

    def current_rv(self) -> int:
        """The highest committed (durable) resourceVersion."""
        return self._rv

    def compacted_rv(self) -> int:
        """The compacted resourceVersion: events at or below it are gone."""
        return self._compacted

    def get(self, key: ObjectKey) -> dict[str, Any] | None:
        """The committed object at ``key`` (shared: never mutate), or ``None``."""
        objects = self._objects.get(key.resource)
        return None if objects is None else objects.get((key.namespace, key.name))

    def get_latest(self, key: ObjectKey) -> dict[str, Any] | None:
        """The object at ``key`` including writes accepted but not yet committed (for
        read-modify-write), or ``None``."""
        pending = self._pending.get(key)
        return pending[1] if pending is not None else self.get(key)

    def _sorted_keys(self, resource: str) -> builtins.list[tuple[str, str]]:
        keys = self._sorted.get(resource)
        if keys is None:
            keys = self._sorted[resource] = sorted(self._objects.get(resource, ()))
        return keys

    def list(
        self, resource: str, namespace: str | None = None
    ) -> tuple[builtins.list[dict[str, Any]], int]:
        """The committed objects of ``resource`` (in ``namespace`` when given), sorted by
        (namespace, name), and the resourceVersion of that snapshot."""
        objects = self._objects.get(resource)
        if not objects:
            return [], self._rv
        keys = self._sorted_keys(resource)
        if namespace is not None:
            start = bisect_left(keys, (namespace, ""))
            end = bisect_left(keys, (namespace + "\0", ""))
            keys = keys[start:end]
        return [objects[k] for k in keys], self._rv

    def list_at(
        self, resource: str, namespace: str | None, rv: int
    ) -> builtins.list[dict[str, Any]]:
        """The objects of ``resource`` (in ``namespace`` when given) as they were at exactly
        ``rv``, sorted by (namespace, name); 410 Expired when ``rv`` was compacted."""
        if rv < self._compacted:
            raise errors.gone(EXPIRED_LIST)
        if rv > self._rv:
            raise too_large_resource_version(rv, self._rv)
        state = dict(self._objects.get(resource, {}))
        log = self._logs.get(resource)
        if log is not None:
            for event in reversed(log.events_after(rv)):
                k = (event.key.namespace, event.key.name)
                if event.prev_object is None:
                    state.pop(k, None)
                else:
                    state[k] = event.prev_object
        return [state[k] for k in sorted(state) if namespace is None or k[0] == namespace]

    # ----- writes -----

    def _accept(
        self, kind: str, key: ObjectKey, obj: dict[str, Any], prev: dict[str, Any] | None
    ) -> asyncio.Future[dict[str, Any]]:
        if self._failed is not None:
            raise errors.internal_error(f"storage failed: {self._failed}")
        if self._closed or self._writer is None or self._loop is None:
            raise errors.service_unavailable("storage is closed")
        self._next_rv += 1
        rv = self._next_rv
        stored = dict(obj)
        stored["metadata"] = {**obj.get("metadata", {}), "resourceVersion": str(rv)}
        self._pending[key] = (rv, None if kind == DELETED else stored)
        future: asyncio.Future[dict[str, Any]] = self._loop.create_future()
        self._writer.submit(PendingWrite(rv, kind, key, stored, prev, future))
        return future

    async def create(self, key: ObjectKey, obj: dict[str, Any]) -> dict[str, Any]:
        """Store a new object; returns it with its resourceVersion once durable. 409
        AlreadyExists when ``key`` holds one."""
        if self.get_latest(key) is not None:
            raise errors.already_exists(key.resource, key.name)
        return await self._accept(ADDED, key, obj, None)

    def _latest_expected(self, key: ObjectKey, expect_rv: int | None) -> dict[str, Any]:
        # The object a write replaces: 404 when absent, 409 when ``expect_rv`` is stale.
        prev = self.get_latest(key)
        if prev is None:
            raise errors.not_found(key.resource, key.name)
        if expect_rv is not None and object_rv(prev) != expect_rv:
            raise errors.conflict(key.resource, key.name)
        return prev

    async def update(
        self, key: ObjectKey, obj: dict[str, Any], expect_rv: int | None
    ) -> dict[str, Any]:
        """Replace the object at ``key``; returns it with its new resourceVersion once durable.
        404 when absent; 409 Conflict when ``expect_rv`` is given and is not the latest rv."""
        prev = self._latest_expected(key, expect_rv)
        return await self._accept(MODIFIED, key, obj, prev)

    async def delete(self, key: ObjectKey, expect_rv: int | None) -> dict[str, Any]:
        """Remove the object at ``key``; returns its last state with the deletion's
        resourceVersion once durable. 404 when absent; 409 Conflict on a stale ``expect_rv``."""
        prev = self._latest_expected(key, expect_rv)
        return await self._accept(DELETED, key, prev, prev)

    # ----- commit (writer thread -> loop) -----

    def _committed_threadsafe(
        self, batch: builtins.list[PendingWrite], compact_to: int, error: BaseException | None
    ) -> None:
        assert self._loop is not None
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is waiting any more
            self._loop.call_soon_threadsafe(self._committed, batch, compact_to, error)

    def _committed(
        self, batch: builtins.list[PendingWrite], compact_to: int, error: BaseException | None
    ) -> None:
        if error is None:
            try:
                self._apply(batch, compact_to)
                return
            except Exception as exc:  # a bug: fail loudly rather than leave writers waiting
                error = exc
        self._fail(batch, error)

    def _fail(self, batch: builtins.list[PendingWrite], error: BaseException) -> None:
        """The store cannot go on: fail ``batch`` and every later write (500)."""
        self._failed = error
        failure = errors.internal_error(f"storage failed: {error}")
        for write in batch:
            self._pending.pop(write.key, None)
            if not write.future.done():
                write.future.set_exception(failure)
        self._settle_compactions(failure)

    def _apply(self, batch: builtins.list[PendingWrite], compact_to: int) -> None:
        events: builtins.list[WatchEvent] = []
        for write in batch:
            key = write.key
            objects = self._objects.setdefault(key.resource, {})
            k = (key.namespace, key.name)
            if write.type == DELETED:
                objects.pop(k, None)
                self._sorted.pop(key.resource, None)
            else:
                if write.type == ADDED:
                    self._sorted.pop(key.resource, None)
                objects[k] = write.obj
            pending = self._pending.get(key)
            if pending is not None and pending[0] == write.rv:
                del self._pending[key]
            events.append(WatchEvent(write.type, write.rv, key, write.obj, write.prev))
        if batch:
            self._rv = batch[-1].rv
            if self._rv - self._compacted > 2 * self._keep_revisions:
                # Between scheduled compactions the history in memory stays bounded (as the
                # capacity of upstream's watch cache bounds it), whatever the write rate.
                self._request_compaction()
        self._publish(events)
        if compact_to > self._compacted:
            self._compacted = compact_to
            self._all.trim(compact_to)
            for log in self._logs.values():
                log.trim(compact_to)
        self._settle_compactions(None)
        for write in batch:
            if not write.future.done():
                write.future.set_result(write.obj)

    def _settle_compactions(self, failure: errors.StatusError | None) -> None:
        waiting, self._compaction_waiters = self._compaction_waiters, []
        for rv, done in waiting:
            if done.done():
                continue
            if failure is not None:
                done.set_exception(failure)
            elif rv <= self._compacted:
                done.set_result(None)
            else:
                self._compaction_waiters.append((rv, done))

    def _log(self, resource: str) -> EventLog:
        log = self._logs.get(resource)
        if log is None:
            log = self._logs[resource] = EventLog(self._lag_limit)
        return log

    def _publish(self, events: builtins.list[WatchEvent]) -> None:
        if not events:
            return
        by_resource: dict[str, builtins.list[WatchEvent]] = {}
        for event in events:
            by_resource.setdefault(event.key.resource, []).append(event)
        for resource, group in by_resource.items():
            self._log(resource).publish(group)
        self._all.publish(events)

    # ----- watch -----

    def watch(self, resource: str | None, namespace: str | None, from_rv: int | None) -> Watcher:
        """Watch ``resource`` (all when ``None``) in ``namespace`` (all when ``None``).

        ``from_rv=None``: a synthetic ADDED for every current object, then every later change.
        ``from_rv=N``: every event newer than N, in order; 410 Expired when N is older than the
        compacted resourceVersion (upstream's watch-cache wording).
        """
        log = self._all if resource is None else self._log(resource)
        initial: builtins.list[WatchEvent] = []
        if from_rv is None:
            resources = [resource] if resource is not None else sorted(self._objects)
            for name in resources:
                for obj in self.list(name, namespace)[0]:
                    meta = obj["metadata"]
                    key = ObjectKey(name, meta.get("namespace", ""), meta["name"])
                    initial.append(WatchEvent(ADDED, object_rv(obj), key, obj, None))
            position = log.head
        else:
            if from_rv < self._compacted:
                raise errors.gone(f"too old resource version: {from_rv} ({self._compacted})")
            position = log.position_after(from_rv)
        return Watcher(log, position, namespace, initial)

    # ----- compaction and lifecycle -----

    async def compact(self, rv: int) -> None:
        """Compact the history at ``rv`` (at most the current rv) and wait until it is done."""
        rv = min(rv, self._rv)
        if rv <= self._compacted or self._writer is None:
            return
        assert self._loop is not None
        done: asyncio.Future[None] = self._loop.create_future()
        self._compaction_waiters.append((rv, done))
        self._writer.compact(rv)
        await done

    def _request_compaction(self) -> None:
        """Ask the writer to compact to the newest ``keep_revisions`` revisions."""
        target = self._rv - self._keep_revisions
        if target > max(self._compacted, self._compaction_asked) and self._writer is not None:
            self._compaction_asked = target
            self._writer.compact(target)

    async def _compact_periodically(self, interval_s: float) -> None:
        while True:
            await asyncio.sleep(interval_s)
            self._request_compaction()

    async def close(self) -> None:
        """Commit what was accepted, stop the writer, end every watcher."""
        if self._closed:
            return
        self._closed = True
        if self._compactor is not None:
            self._compactor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._compactor
        if self._writer is not None:
            self._writer.stop()
            await asyncio.to_thread(self._writer.join)
            await asyncio.sleep(0)  # let the final batch's callback run
        self._settle_compactions(errors.service_unavailable("storage is closed"))
        self._all.close_all()
        for log in self._logs.values():
            log.close_all()
