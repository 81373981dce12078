"""Watch streaming as k8s.io/apiserver's ``WatchServer`` does it over plain HTTP: a 200 with
``Transfer-Encoding: chunked``, one JSON ``{"type": ..., "object": ...}`` line per event, flushed
as it comes; the stream ends when the watch times out (``timeoutSeconds``, else upstream's random
30-60 minutes), when the server shuts down, or when the client goes away.

An error met once the stream is open (``410 Expired`` for a resourceVersion compacted away,
a watcher ended for falling behind) is sent as an ``ERROR`` event carrying the ``Status``, which
is what client-go's reflector expects.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import types
from collections.abc import AsyncIterator, Callable, Generator
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from numaplane.apiserver.errors import StatusError, bad_request

#: Upstream's ``--min-request-timeout`` (1800 s): a watch without ``timeoutSeconds`` lasts a
#: random duration between it and twice it, so that watches do not all end together.
MIN_REQUEST_TIMEOUT_S = 1800.0

WatchEvents = AsyncIterator[tuple[str, dict[str, Any]]]
#: Turns an event's object into what the client asked for (a Table row, partial metadata).
Transform = Callable[[str, dict[str, Any]], dict[str, Any]]


def watch_timeout(timeout_seconds: str | None, rng: random.Random | None = None) -> float:
    """The watch's lifetime: ``timeoutSeconds`` when given, else 30-60 minutes at random."""
    if timeout_seconds:
        try:
            value = int(timeout_seconds)
        except ValueError as err:
            raise bad_request(
                f'strconv.ParseInt: parsing "{timeout_seconds}": invalid syntax'
            ) from err
        if value > 0:
            return float(value)
    return MIN_REQUEST_TIMEOUT_S * ((rng or random).random() + 1.0)


#: The last lines framed, by event type and object identity, each with its object (kept alive
#: so that its id is not reused): every watcher of a resource is sent the same store object,
#: which is encoded once for all of them. Objects from the store are never changed.
_FRAMED: dict[tuple[str, int], tuple[dict[str, Any], bytes]] = {}
_FRAMED_LIMIT = 256


def frame(event_type: str, obj: dict[str, Any]) -> bytes:
    """One event as its newline-terminated JSON line (upstream's JSON framer)."""
    return orjson.dumps({"type": event_type, "object": obj}) + b"\n"


def shared_frame(event_type: str, obj: dict[str, Any]) -> bytes:
    """:func:`frame` of an object from the store, encoded once for every watcher sent it."""
    key = (event_type, id(obj))
    found = _FRAMED.get(key)
    if found is not None and found[0] is obj:
        return found[1]
    line = frame(event_type, obj)
    if len(_FRAMED) >= _FRAMED_LIMIT:
        _FRAMED.clear()
    _FRAMED[key] = (obj, line)
    return line


#: Events already waiting are written together up to about this many bytes.
FLUSH_BYTES = 256 * 1024


def _poll(step: Any, error: BaseException | None = None) -> tuple[bool, Any]:
    """Run the awaitable ``step`` (an ``__anext__`` call) up to its next suspension, sending it
    ``error`` if given: ``(True, its result)`` when it finished without one, else ``(False,
    what it yielded)``."""
    try:
        yielded = step.send(None) if error is None else step.throw(error)
    except StopIteration as stop:
        return True, stop.value
    return False, yielded


@types.coroutine
def _finish(step: Any, yielded: Any) -> Generator[Any, Any, Any]:
    """Await the rest of ``step``, which :func:`_poll` started and which yielded ``yielded``
    (the task running this passes on what ``step`` waits for, and the outcome or a
    cancellation back)."""
    value = yielded
    while True:
        try:
            sent = yield value
        except BaseException as exc:  # a cancellation (or any throw) goes to the step
            try:
                value = step.throw(exc)
            except StopIteration as stop:
                return stop.value
        else:
            try:
                value = step.send(sent)
            except StopIteration as stop:
                return stop.value


@dataclass
class _PumpState:
    writing: bool = False
    stop: bool = False


async def prime(events: WatchEvents) -> tuple[asyncio.Task[tuple[str, dict[str, Any]]], bool]:
    """Start fetching the first event and give the source a turn to fail before anything is
    sent: returns the pending fetch and whether it is already done (so a request error, such as
    a bad selector, can still be answered with its own status code)."""
    first: asyncio.Task[tuple[str, dict[str, Any]]] = asyncio.ensure_future(anext(events))
    for _ in range(3):
        if first.done():
            break
        await asyncio.sleep(0)
    return first, first.done()


async def stream_events(
    request: web.Request,
    events: WatchEvents,
    first: asyncio.Task[tuple[str, dict[str, Any]]],
    *,
    timeout_s: float,
    shutting_down: asyncio.Event,
    transform: Transform | None = None,
    headers: dict[str, str] | None = None,
) -> web.StreamResponse:
    """Serve ``events`` (whose first item ``first`` is already being fetched) as a chunked
    watch response until the timeout, the server's shutdown or the end of the events."""
    response = web.StreamResponse(status=200)
    response.content_type = "application/json"
    response.enable_chunked_encoding()
    for key, value in (headers or {}).items():
        response.headers[key] = value
    await response.prepare(request)
    state = _PumpState()

    buffered: list[bytes] = []

    async def flush() -> None:
        if not buffered:
            return
        data = b"".join(buffered)
        buffered.clear()
        state.writing = True
        try:
            await response.write(data)
        finally:
            state.writing = False

    async def pump() -> None:
        pending: asyncio.Task[tuple[str, dict[str, Any]]] | None = first
        size = 0
        while True:
            step: Any = None
            try:
                if pending is not None:
                    event_type, obj = await pending
                    pending = None
                else:
                    # Events already there go out in one write (one TLS record and one chunk
                    # for a store commit's batch, not one each); what is buffered is written
                    # before the stream waits for more.
                    step = events.__anext__()
                    ready, value = _poll(step)
                    if not ready:
                        try:
                            await flush()
                        except asyncio.CancelledError:
                            # Nothing else cancels the pump while it writes (the stream's end
                            # waits for the write): this is the step's own timer (the bookmark
                            # interval), and the step is where it goes.
                            ready, value = _poll(step, asyncio.CancelledError())
                        size = 0
                        if state.stop:
                            return
                        if not ready:
                            value = await _finish(step, value)
                    step = None
                    event_type, obj = value
            except StopAsyncIteration:
                await flush()
                return
            except StatusError as err:
                event_type, obj = "ERROR", err.status()
            finally:
                if step is not None:
                    step.close()
            if event_type in ("ERROR", "BOOKMARK"):
                line = frame(event_type, obj)
            elif transform is not None:
                line = frame(event_type, transform(event_type, obj))
            else:
                line = shared_frame(event_type, obj)
            buffered.append(line)
            size += len(line)
            if event_type == "ERROR" or state.stop or size >= FLUSH_BYTES:
                await flush()
                size = 0
            if event_type == "ERROR" or state.stop:
                return

    pump_task = asyncio.ensure_future(pump())
    stop_task = asyncio.ensure_future(shutting_down.wait())
    try:
        await asyncio.wait({pump_task, stop_task}, timeout=timeout_s, return_when="FIRST_COMPLETED")
    finally:
        stop_task.cancel()
        if not pump_task.done():
            state.stop = True
            if not state.writing:
                pump_task.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError, RuntimeError):
            await pump_task
        if not first.done():
            first.cancel()
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(Exception):
                await aclose()
    with contextlib.suppress(ConnectionError, RuntimeError):
        await response.write_eof()
    return response
