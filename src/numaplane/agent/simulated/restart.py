"""What a (re)started simulator makes of the pods already bound to its nodes.

The first list of the pod watch arrives in name order, not in the order the pods were bound
and admitted, so it is sorted before anything is admitted:

1. pods ``Running`` (a previous simulator admitted them): in their start order (``startTime``,
   then creation, then name), taking their times from their status: the current run's start
   (the latest ``startedAt`` of a running container), restart count, last run;
2. pods not yet handled (``Pending``): in resourceVersion order, which is the order of their
   bindings when nothing wrote them after the binding (the kubelet would have been the next
   writer);
3. pods that ended (``Succeeded``, ``Failed``): remembered only, to delete them for good when
   they are deleted gracefully.

Events that arrive while the list is being taken back wait in the backlog, in their order.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from numaplane.agent.simulated.pods import TERMINAL, Run

__all__ = [
    "Backlog",
    "InitialOrder",
    "RunningTimes",
    "initial_order",
    "parse_time",
    "running_times",
]


@dataclass
class Backlog:
    """Events held back until the first list is taken back: ``listed`` the first list's
    objects, ``later`` the events after it, in order."""

    listed: list[dict[str, Any]] = field(default_factory=list)
    later: list[tuple[dict[str, Any], bool]] = field(default_factory=list)

    def add(self, obj: dict[str, Any], deleted: bool, *, listed: bool) -> None:
        """Hold one event (``listed``: part of the first list)."""
        if listed and not deleted:
            self.listed.append(obj)
        else:
            self.later.append((obj, deleted))


@dataclass(frozen=True)
class InitialOrder:
    """The first list's pods on our nodes, grouped and ordered as the module doc says."""

    running: list[dict[str, Any]]
    pending: list[dict[str, Any]]
    terminal: list[dict[str, Any]]


def parse_time(text: object) -> float | None:
    """An API time (``2026-01-01T00:00:00Z``) as wall seconds; ``None`` when absent or bad."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _rv(obj: dict[str, Any]) -> tuple[int, str]:
    text = str((obj.get("metadata") or {}).get("resourceVersion") or "")
    return (int(text), text) if text.isdigit() else (0, text)


def _start_key(obj: dict[str, Any]) -> tuple[float, float, str]:
    meta = obj.get("metadata") or {}
    start = parse_time((obj.get("status") or {}).get("startTime"))
    created = parse_time(meta.get("creationTimestamp"))
    return (
        start if start is not None else 0.0,
        created if created is not None else 0.0,
        str(meta.get("name") or ""),
    )


def initial_order(listed: list[dict[str, Any]], nodes: Container[str]) -> InitialOrder:
    """The listed pods bound to one of ``nodes``, grouped and ordered."""
    running: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    terminal: list[dict[str, Any]] = []
    for obj in listed:
        if (obj.get("spec") or {}).get("nodeName") not in nodes:
            continue
        phase = (obj.get("status") or {}).get("phase")
        if phase == "Running":
            running.append(obj)
        elif phase in TERMINAL:
            terminal.append(obj)
        else:
            pending.append(obj)
    running.sort(key=_start_key)
    pending.sort(key=_rv)
    return InitialOrder(running, pending, terminal)


@dataclass(frozen=True)
class RunningTimes:
    """A running pod's times as its status shows them (wall seconds)."""

    start_time: float | None = None
    started_at: float | None = None
    restart_count: int = 0
    last_run: Run | None = None


def running_times(obj: dict[str, Any]) -> RunningTimes:
    """The pod's ``startTime``, its containers' latest ``startedAt``, their highest restart
    count and the last run of the container that restarted most."""
    status = obj.get("status") or {}
    started: list[float] = []
    restarts = 0
    last: Run | None = None
    for item in status.get("containerStatuses") or []:
        if not isinstance(item, dict):
            continue
        running = (item.get("state") or {}).get("running") or {}
        moment = parse_time(running.get("startedAt"))
        if moment is not None:
            started.append(moment)
        count = item.get("restartCount")
        if isinstance(count, int) and count >= restarts:
            restarts = count
            ended = (item.get("lastState") or {}).get("terminated") or {}
            begin, end = parse_time(ended.get("startedAt")), parse_time(ended.get("finishedAt"))
            last = Run(begin, end) if begin is not None and end is not None else last
    return RunningTimes(
        parse_time(status.get("startTime")), max(started) if started else None, restarts, last
    )
