"""The bookkeeping behind ``PodRuntime``: one container's lifecycle, back-off, pod stages.

Nothing here touches processes; ``runtime`` does, and records what happened through the
``Container`` methods so that the status vocabulary lives in one place.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence, Set
from dataclasses import dataclass

from numaplane.agent.podstatus import ContainerSpec, ContainerStatus
from numaplane.agent.process import Watched


class Stage(enum.Enum):
    """Where a pod is in its life."""

    NEW = "new"
    INIT = "init"  # running init containers (and starting sidecars) in order
    APPS = "apps"  # app containers started
    FINISHING = "finishing"  # apps done (or an init container failed): stopping sidecars
    DONE = "done"


@dataclass(frozen=True)
class Backoff:
    """The restart back-off: ``base`` doubling per restart up to ``cap``, in seconds.

    A run of at least ``reset_after`` seconds clears it (the kubelet's: 10 s, 300 s, 10 min).
    """

    base: float = 10.0
    cap: float = 300.0
    reset_after: float = 600.0

    def delay(self, restarts: int) -> float:
        """The wait before restart number ``restarts + 1`` since the last reset."""
        return min(self.base * 2.0 ** min(restarts, 64), self.cap)


@dataclass
class Container:
    """The mutable state of one container; the runtime holds its lock around every change."""

    spec: ContainerSpec
    state: str = "waiting"
    reason: str | None = None
    exit_code: int | None = None
    restart_count: int = 0
    started_at: float | None = None
    finished_at: float | None = None
    message: str | None = None
    last_reason: str | None = None
    proc: Watched | None = None
    next_start: float | None = None  # when to (re)start it, on the runtime's clock
    attempted: bool = False  # started (or tried to) at least once
    final: bool = False  # terminated, and nothing will start it again
    backoffs: int = 0  # restarts since the back-off was last reset

    def status(self, pending: bool) -> ContainerStatus:
        """The container's status; ``pending`` while the pod is still initializing."""
        reason = self.reason
        if self.state == "waiting" and reason is None:
            reason = "PodInitializing" if pending else "ContainerCreating"
        return ContainerStatus(
            name=self.spec.name,
            state=self.state,
            reason=reason,
            exit_code=self.exit_code,
            restart_count=self.restart_count,
            pid=self.proc.pid if self.proc is not None else None,
            started_at=self.started_at,
            finished_at=self.finished_at,
            message=self.message,
            last_reason=self.last_reason,
        )

    def begin_attempt(self) -> None:
        """A start is being tried: every try after the first is a restart."""
        if self.attempted:
            self.restart_count += 1
        self.attempted = True
        self.next_start = None

    def running(self, proc: Watched, now: float) -> None:
        """The process started."""
        self.proc = proc
        self.state = "running"
        self.reason = self.message = None
        self.exit_code = self.finished_at = None
        self.started_at = now

    def adopt(self, proc: Watched, started_at: float) -> None:
        """A previous agent's process runs it."""
        self.attempted = True
        self.running(proc, started_at)

    def terminated(
        self,
        code: int | None,
        now: float,
        reason: str | None,
        message: str | None,
        backoff: Backoff,
    ) -> None:
        """The process ended with ``code`` (``None``: unknown), or never started (``reason``)."""
        if self.started_at is not None and now - self.started_at >= backoff.reset_after:
            self.backoffs = 0
        if reason is None:
            reason = "Completed" if code == 0 else "Error"
            if code is None:
                reason = "ContainerStatusUnknown"
                message = "the process was adopted from a previous agent; its exit code is lost"
        self.proc = None
        self.state = "terminated"
        self.exit_code = code
        self.finished_at = now
        self.reason = self.last_reason = reason
        self.message = message

    def back_off(self, now: float, backoff: Backoff, pod_uid: str) -> None:
        """Wait before the next start (the kubelet's ``CrashLoopBackOff``)."""
        delay = backoff.delay(self.backoffs)
        self.backoffs += 1
        self.next_start = now + delay
        last = f"{self.last_reason}: {self.message}" if self.message else self.last_reason
        self.state = "waiting"
        self.reason = "CrashLoopBackOff"
        self.message = (
            f"back-off {delay:g}s restarting failed container={self.spec.name} pod={pod_uid}"
            f" (last termination: {last})"
        )

    def completed_before(self, now: float) -> None:
        """An init container a previous agent ran to completion."""
        self.attempted = self.final = True
        self.state = "terminated"
        self.reason = self.last_reason = "Completed"
        self.exit_code = 0
        self.finished_at = now

    def lost(self, now: float) -> None:
        """A container whose process was gone when the agent came back, not to be rerun."""
        self.attempted = self.final = True
        self.state = "terminated"
        self.reason = self.last_reason = "ContainerStatusUnknown"
        self.exit_code = None
        self.finished_at = now
        self.message = "the process was gone when the agent restarted; its exit code is lost"


def resume(
    init: Sequence[Container],
    apps: Sequence[Container],
    recorded: Set[str],
    dead: Set[str],
    restart_policy: str,
    now: float,
) -> tuple[Stage, int]:
    """Where a pod adopted from a previous agent stands: its stage and init cursor.

    ``recorded`` names the containers with a process record (live ones already adopted),
    ``dead`` those whose recorded process is gone. A recorded app container means the init
    containers all completed; otherwise the furthest recorded init container is where the pod
    was, the regular ones before it completed. Sidecars and the current init container without
    a live process start now; app containers without one start now, except under ``Never``,
    where they may have run already: their status is lost.
    """
    apps_ran = any(c.spec.name in recorded for c in apps)
    furthest = max((i for i, c in enumerate(init) if c.spec.name in recorded), default=-1)
    if apps_ran:
        furthest = len(init)
    for c in init[: max(furthest, 0)]:
        if c.proc is not None:
            continue
        if c.spec.restartable:
            c.next_start = now
        else:
            c.completed_before(now)
    for c in (*init, *apps):
        if c.spec.name in dead:
            c.attempted = True  # its next start is a restart
    if not apps_ran:
        if furthest >= 0 and init[furthest].proc is None:
            init[furthest].next_start = now
        return Stage.INIT, max(furthest, 0)
    for c in apps:
        if c.proc is not None:
            continue
        if restart_policy == "Never":
            c.lost(now)
        else:
            c.next_start = now
    return Stage.APPS, len(init)
