"""Recording core/v1 Events about objects, as client-go's ``record.EventRecorder`` does.

An event names the object it is about (``involvedObject``), a ``type`` (``Normal`` or
``Warning``), a ``reason`` (``FailedScheduling``) and a ``message``; ``source.component`` and
``reportingComponent`` say who reported it. As client-go's event correlator, a repeat of an
identical event (same object, type, reason, message, source) within the cache's life is not a
new object: the existing Event's ``count`` and ``lastTimestamp`` are bumped with a PATCH.

(client-go's correlator also folds *similar* events — same object and reason, different
messages — into one "(combined from similar events)" Event after 10 within 10 minutes, and
drops a source's events past a token bucket; numaplane's controllers emit few events, so this
simple form keeps only the exact-repeat aggregation.)

:meth:`EventRecorder.event` never blocks and never fails the caller: events are sent in the
background, in order, and a failure to send is logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from numaplane.kube.client import KubeClient
from numaplane.kube.errors import ApiError, KubeError

log = logging.getLogger(__name__)

#: client-go's correlator remembers this many distinct events (an LRU cache).
CACHE_SIZE = 4096


def rfc3339(when: float) -> str:
    """``when`` (seconds since the epoch) as a metav1.Time string (second precision, UTC)."""
    return datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class _Seen:
    namespace: str
    name: str
    count: int
    first: str


class EventRecorder:
    """Creates core/v1 Events (``reportingComponent``/``source.component`` = ``component``);
    identical repeats bump ``count`` and ``lastTimestamp`` of the first one."""

    def __init__(
        self,
        client: KubeClient,
        component: str,
        *,
        host: str = "",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.component = component
        self.host = host
        self._clock = clock
        self._queue: asyncio.Queue[dict[str, Any] | None] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._seen: OrderedDict[tuple[str, ...], _Seen] = OrderedDict()
        self._serial = 0

    def event(self, obj: dict[str, Any], type: str, reason: str, message: str) -> None:
        """Record an event about ``obj`` (queued; sent in the background). Call it from the
        event loop's thread."""
        meta = obj.get("metadata") or {}
        involved = {
            "kind": obj.get("kind", ""),
            "namespace": meta.get("namespace", ""),
            "name": meta.get("name", ""),
            "uid": meta.get("uid", ""),
            "apiVersion": obj.get("apiVersion", ""),
            "resourceVersion": meta.get("resourceVersion", ""),
        }
        record = {
            "involvedObject": {k: v for k, v in involved.items() if v},
            "type": type,
            "reason": reason,
            "message": message,
            "time": self._clock(),
        }
        if self._queue is None:
            self._queue = asyncio.Queue()
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._send_all())
        self._queue.put_nowait(record)

    async def flush(self) -> None:
        """Wait until every event recorded so far was sent (or failed to be)."""
        if self._queue is not None and self._worker is not None and not self._worker.done():
            await self._queue.join()

    async def close(self, timeout: float | None = None) -> None:
        """Send what is queued, then stop the background sender. With ``timeout``, events still
        queued after that many seconds are dropped (client-go's broadcaster also drops what it
        has not sent when it shuts down), so a stopping controller is not held by a backlog."""
        try:
            await asyncio.wait_for(self.flush(), timeout)
        except TimeoutError:
            left = self._queue.qsize() if self._queue is not None else 0
            log.warning("stopping: %d queued event(s) not recorded", left)
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
            self._worker = None

    async def _send_all(self) -> None:
        assert self._queue is not None
        while True:
            record = await self._queue.get()
            try:
                if record is not None:
                    await self._send(record)
            except (KubeError, OSError) as err:
                log.warning("event %s not recorded: %s", record and record.get("reason"), err)
            except Exception:
                log.exception("event not recorded")
            finally:
                self._queue.task_done()

    def _key(self, record: dict[str, Any]) -> tuple[str, ...]:
        involved = record["involvedObject"]
        return (
            self.component,
            self.host,
            involved.get("kind", ""),
            involved.get("namespace", ""),
            involved.get("name", ""),
            involved.get("uid", ""),
            involved.get("apiVersion", ""),
            record["type"],
            record["reason"],
            record["message"],
        )

    async def _send(self, record: dict[str, Any]) -> None:
        now = rfc3339(record["time"])
        key = self._key(record)
        seen = self._seen.get(key)
        if seen is not None:
            self._seen.move_to_end(key)
            seen.count += 1
            patch = {"count": seen.count, "lastTimestamp": now, "message": record["message"]}
            try:
                await self.client.patch(
                    "v1", "events", seen.name, patch, seen.namespace, decode=False
                )
                return
            except ApiError as err:
                if not err.is_not_found:
                    raise
                # The Event expired (events have a TTL) or was deleted: create it afresh, as
                # client-go does when its PATCH finds nothing.
        involved = record["involvedObject"]
        # An event about a cluster-scoped object lives in "default" (client-go's rule).
        namespace = involved.get("namespace") or "default"
        self._serial += 1
        # client-go names an Event "<object name>.<hex of the time in nanoseconds>"; the serial
        # keeps two events recorded within one clock tick apart.
        name = f"{involved.get('name') or 'event'}.{int(record['time'] * 1e9) + self._serial:x}"
        count = seen.count if seen is not None else 1
        first = seen.first if seen is not None else now
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": involved,
            "reason": record["reason"],
            "message": record["message"],
            "type": record["type"],
            "source": {"component": self.component, **({"host": self.host} if self.host else {})},
            "firstTimestamp": first,
            "lastTimestamp": now,
            "count": count,
            "reportingComponent": self.component,
            "reportingInstance": self.host,
        }
        await self.client.create("v1", "events", body, namespace, decode=False)
        self._seen[key] = _Seen(namespace, name, count, first)
        while len(self._seen) > CACHE_SIZE:
            self._seen.popitem(last=False)
