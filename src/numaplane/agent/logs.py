"""A container's output over HTTP, at the kubelet's path
``/containerLogs/{namespace}/{pod}/{container}`` (what ``kubectl logs`` reaches through the API
server's ``pods/log`` proxy).

The output is the runtime's log file of the container (``<state>/logs/<pod uid>/<name>.log``),
which every run of the container appends to. The kubelet's query parameters:

- ``follow=true``: keep sending what the container writes until it stops running;
- ``tailLines=N``: only the last N lines; ``limitBytes=N``: at most N bytes;
- ``previous=true``: a container that never restarted has no previous run (400, as the
  kubelet); one that did gets the file, which holds every run;
- ``timestamps=true``: each line starts with a time (RFC 3339): the file keeps no time per
  line, so lines already written carry the file's modification time, lines followed the time
  they were read;
- ``sinceSeconds=N``: nothing when the file was last written more than N seconds ago (the
  same lack of per-line times).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from numaplane.agent.agent import Agent
from numaplane.agent.errors import AgentError

#: The kubelet's path of container logs.
LOGS_PREFIX = "/containerLogs/"

#: Seconds between looks at a followed file.
FOLLOW_POLL = 0.2


class LogsError(AgentError):
    """A log request that cannot be served: ``status`` is the HTTP answer."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class LogRequest:
    """One ``/containerLogs`` request."""

    namespace: str
    pod: str
    container: str
    follow: bool = False
    tail_lines: int | None = None
    timestamps: bool = False
    previous: bool = False
    limit_bytes: int | None = None
    since_seconds: int | None = None

    @classmethod
    def parse(cls, target: str) -> LogRequest:
        """The request of a path with its query; ``LogsError`` (400) when malformed."""
        split = urlsplit(target)
        parts = [unquote(p) for p in split.path[len(LOGS_PREFIX) :].split("/")]
        if len(parts) != 3 or not all(parts):
            raise LogsError(
                HTTPStatus.BAD_REQUEST, "expected /containerLogs/{namespace}/{pod}/{container}"
            )
        query = {k: v[-1] for k, v in parse_qs(split.query).items()}

        def flag(name: str) -> bool:
            return query.get(name, "false").lower() in ("true", "1")

        def number(name: str) -> int | None:
            text = query.get(name)
            if text is None:
                return None
            if not text.lstrip("-").isdigit():
                raise LogsError(
                    HTTPStatus.BAD_REQUEST, f"{name}: expected an integer, got {text!r}"
                )
            return int(text)

        return cls(
            parts[0],
            parts[1],
            parts[2],
            follow=flag("follow"),
            tail_lines=number("tailLines"),
            timestamps=flag("timestamps"),
            previous=flag("previous"),
            limit_bytes=number("limitBytes"),
            since_seconds=number("sinceSeconds"),
        )


@dataclass(frozen=True)
class ContainerLog:
    """A container's log file, and whether the container still runs."""

    path: Path
    running: Callable[[], bool]


def find_log(agent: Agent, request: LogRequest) -> ContainerLog:
    """The log of the requested container; ``LogsError`` naming what is missing."""
    with agent.lock:
        found = [
            e
            for e in agent.pods.values()
            if e.pod.namespace == request.namespace and e.pod.name == request.pod
        ]
    if not found:
        raise LogsError(HTTPStatus.NOT_FOUND, f'pod "{request.pod}" not found on this node')
    entry = found[0]
    if request.container not in entry.pod.container_names:
        raise LogsError(
            HTTPStatus.BAD_REQUEST,
            f"container {request.container} is not valid for pod {request.pod}",
        )

    def status_state() -> tuple[str | None, int]:
        runtime = entry.runtime
        if runtime is None or agent.pods.get(entry.pod.uid) is not entry:
            return None, 0
        status = runtime.status()
        for c in (*status.init_containers, *status.containers):
            if c.name == request.container:
                return c.state, c.restart_count
        return None, 0

    _, restarts = status_state()
    if request.previous and restarts == 0:
        raise LogsError(
            HTTPStatus.BAD_REQUEST,
            f'previous terminated container "{request.container}" in pod "{request.pod}" not found',
        )
    path = agent.options.state_dir / "logs" / entry.pod.uid / f"{request.container}.log"
    return ContainerLog(path, lambda: status_state()[0] == "running")


def _stamp(moment: float) -> bytes:
    text = datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return text.encode() + b" "


def stream_log(
    log: ContainerLog,
    request: LogRequest,
    write: Callable[[bytes], object],
    flush: Callable[[], None],
    *,
    poll: float = FOLLOW_POLL,
) -> None:
    """Write the log as ``request`` asks (see the module docstring)."""
    budget = request.limit_bytes if request.limit_bytes and request.limit_bytes > 0 else None

    def send(data: bytes, moment: float) -> bool:
        nonlocal budget
        if request.timestamps and data:
            lines = data.splitlines(keepends=True)
            data = b"".join(_stamp(moment) + line for line in lines)
        if budget is not None:
            data = data[:budget]
            budget -= len(data)
        if data:
            write(data)
            flush()
        return budget is None or budget > 0

    try:
        handle = open(log.path, "rb")  # noqa: SIM115 (held open while following)
    except FileNotFoundError:
        return
    with handle:
        stat = os.fstat(handle.fileno())
        data = handle.read()
        if (
            request.since_seconds is not None
            and time.time() - stat.st_mtime > request.since_seconds
        ):
            data = b""
        if request.tail_lines is not None and request.tail_lines >= 0:
            lines = data.splitlines(keepends=True)
            data = b"".join(lines[-request.tail_lines :]) if request.tail_lines else b""
        if not send(data, stat.st_mtime) or not request.follow:
            return
        pending = b""
        while True:
            running = log.running()
            chunk = handle.read()
            if chunk:
                pending += chunk
                # Whole lines only while following (a timestamp starts each).
                complete, _, pending = pending.rpartition(b"\n")
                if complete and not send(complete + b"\n", time.time()):
                    return
            if not running:
                send(pending, time.time())
                return
            time.sleep(poll)
