"""Running a pod's containers as processes, the way the kubelet runs them in a runtime.

``PodRuntime`` supervises one pod from a background thread:

- init containers run one by one, in order, each to exit 0; a failing one is run again after a
  back-off unless the restart policy is ``Never`` (then the pod fails);
- a sidecar (restartable init container) is started in its place among the init containers,
  the next one starting once it runs; it is restarted whenever it exits, whatever the policy,
  and is stopped after the app containers have all finished;
- app containers then all start, and restart per the policy (``Always``, ``OnFailure`` on a
  non-zero exit, ``Never``) after an exponential back-off: 10 s doubling up to 300 s, reset
  once a run lasted 10 minutes, as the kubelet's.

Each process starts in its own session (its process group is the container), confined by the
cgroup driver between ``fork`` and ``exec``, with the container's env over ``extra_env`` (device
plugin variables) over ``PATH``/``HOME`` defaults (``$(VAR)`` expanded as the kubelet does, see
``environment``), and its output appended to
``<log_dir>/<container>.log``. When a main process exits, what it left in its group and cgroup
is killed, as a container ends with its init process. The agent creates the cgroups (with
limits) before ``start`` and removes them after ``stop``.

After an agent restart, ``adopt`` resumes a pod from the processes of ``records()``: live ones
are watched through ``/proc`` (their exit status is lost: ``ContainerStatusUnknown``); init
containers before the furthest one recorded are taken as completed (Kubernetes requires init
containers to be idempotent, so an interrupted one simply runs again).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from numaplane.agent.cgroupapi import CgroupDriver
from numaplane.agent.environment import container_argv, container_env
from numaplane.agent.errors import AgentError
from numaplane.agent.podstatus import (
    RESTART_POLICIES,
    ContainerSpec,
    ContainerStatus,
    PodStatus,
    ProcessRecord,
)
from numaplane.agent.process import (
    START_ERROR_EXIT_CODE,
    AdoptedProcess,
    StartError,
    Watched,
    process_age_seconds,
    process_alive,
    process_start_time,
    signal_group,
    spawn,
    terminate,
)
from numaplane.agent.supervision import Backoff, Container, Stage, resume

__all__ = [
    "ContainerSpec",
    "ContainerStatus",
    "PodRuntime",
    "PodStatus",
    "ProcessRecord",
    "process_start_time",
]


class PodRuntime:
    """Runs and supervises the containers of one pod (see the module docstring)."""

    def __init__(
        self,
        pod_uid: str,
        containers: Sequence[ContainerSpec],
        restart_policy: str,
        grace_seconds: int,
        *,
        cgroups: CgroupDriver,
        log_dir: Path,
        extra_env: Callable[[str], Mapping[str, str]] = lambda name: {},
        clock: Callable[[], float] = time.monotonic,
        on_change: Callable[[], None] = lambda: None,
        backoff: Backoff | None = None,
        poll_interval: float = 0.1,
        restart_counts: Mapping[str, int] | None = None,
    ) -> None:
        if restart_policy not in RESTART_POLICIES:
            raise AgentError(f"pod {pod_uid}: unknown restart policy {restart_policy!r}")
        self.pod_uid = pod_uid
        self.restart_policy = restart_policy
        self.grace_seconds = grace_seconds
        self._cgroups = cgroups
        self._log_dir = log_dir
        self._extra_env = extra_env
        self._clock = clock
        self._on_change = on_change
        self._backoff = backoff if backoff is not None else Backoff()
        self._poll = poll_interval
        self._init = [Container(s) for s in containers if s.init]
        self._apps = [Container(s) for s in containers if not s.init]
        self._by_name = {c.spec.name: c for c in (*self._init, *self._apps)}
        # A pod adopted after an agent restart keeps counting from where it was.
        for name, count in (restart_counts or {}).items():
            if name in self._by_name:
                self._by_name[name].restart_count = count
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._stage = Stage.NEW
        self._cursor = 0  # the init container being waited for
        self._init_failed = False
        self._message: str | None = None  # why the pod failed, or what went wrong

    # Lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        """Start supervising from the first init container; returns at once."""
        with self._lock:
            self._launch()

    def adopt(self, records: Sequence[ProcessRecord]) -> list[str]:
        """Resume from a previous agent's processes; the names whose process is gone."""
        now = self._clock()
        dead: list[str] = []
        recorded: set[str] = set()
        with self._lock:
            if self._thread is not None:
                raise AgentError(f"pod {self.pod_uid}: already started")
            for record in records:
                c = self._by_name.get(record.container)
                if record.pod_uid != self.pod_uid or c is None:
                    continue
                recorded.add(c.spec.name)
                if process_alive(record.pid, record.start_time):
                    age = process_age_seconds(record.start_time)
                    c.adopt(AdoptedProcess(record.pid, record.start_time), now - age)
                else:
                    dead.append(c.spec.name)
            self._stage, self._cursor = resume(
                self._init, self._apps, recorded, set(dead), self.restart_policy, now
            )
            self._launch()
        self._on_change()
        return sorted(dead)

    def stop(self) -> None:
        """Stop gracefully: app (and running init) containers first, then sidecars in reverse.

        Each group gets SIGTERM, then SIGKILL after ``grace_seconds``; returns once every
        process is gone and the supervising thread has ended.
        """
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
        deadline = time.monotonic() + self.grace_seconds
        sidecars = [c for c in self._init if c.spec.restartable]
        first = [c for c in (*self._init, *self._apps) if not c.spec.restartable]
        self._terminate(first, self.grace_seconds)
        for c in reversed(sidecars):
            # Sidecars share what is left of the grace period, but always get a moment.
            left = max(deadline - time.monotonic(), min(self.grace_seconds, 2.0))
            self._terminate([c], left)
        with self._lock:
            self._stage = Stage.DONE
        self._on_change()

    def detach(self) -> None:
        """Stop supervising and leave every process running (the agent exits; a later agent
        adopts them from ``records()``)."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()

    def status(self) -> PodStatus:
        """The pod's phase and its containers' states."""
        with self._lock:
            pending = self._stage in (Stage.NEW, Stage.INIT)
            init = tuple(c.status(pending) for c in self._init)
            apps = tuple(c.status(pending) for c in self._apps)
            return PodStatus(self._phase(apps), apps, init, self._message)

    def restart_counts(self) -> dict[str, int]:
        """Each container's restart count, to persist for a later ``restart_counts=``."""
        with self._lock:
            return {c.spec.name: c.restart_count for c in (*self._init, *self._apps)}

    def records(self) -> list[ProcessRecord]:
        """The running processes, to persist for ``adopt``."""
        with self._lock:
            return [
                ProcessRecord(self.pod_uid, c.spec.name, c.proc.pid, c.proc.start_time)
                for c in (*self._init, *self._apps)
                if c.proc is not None
            ]

    # Supervision ----------------------------------------------------------------------------

    def _launch(self) -> None:
        if self._thread is not None:
            raise AgentError(f"pod {self.pod_uid}: already started")
        if self._stage is Stage.NEW:
            self._stage = Stage.INIT
        self._thread = threading.Thread(
            target=self._supervise, name=f"pod-{self.pod_uid}", daemon=True
        )
        self._thread.start()

    def _supervise(self) -> None:
        try:
            while not self._stopping.is_set():
                with self._lock:
                    changed = self._tick(self._clock())
                    finishing = self._stage is Stage.FINISHING
                if finishing:
                    self._finish()
                    changed = True
                if changed:
                    self._on_change()
                if self._stage is Stage.DONE:
                    return
                self._stopping.wait(self._poll)
        except Exception as err:
            # Never let the thread die silently: the failure shows in the pod's status.
            with self._lock:
                self._message = f"supervision failed: {type(err).__name__}: {err}"
            self._on_change()

    def _tick(self, now: float) -> bool:
        changed = False
        for c in (*self._init, *self._apps):
            if c.proc is not None:
                exited, code = c.proc.poll()
                if exited:
                    self._exited(c, code, now)
                    changed = True
        for _ in range(len(self._init) + 2):
            changed |= self._advance(now)
            started = False
            if self._stage in (Stage.FINISHING, Stage.DONE):
                break
            for c in (*self._init, *self._apps):
                if c.next_start is not None and c.next_start <= now:
                    self._start(c, now)
                    started = changed = True
            if not started:
                break
        return changed

    def _advance(self, now: float) -> bool:
        """Move through the init containers; start the apps; notice the end."""
        changed = False
        while self._stage is Stage.INIT:
            if self._cursor == len(self._init):
                self._stage = Stage.APPS
                for c in self._apps:
                    c.next_start = now
                return True
            c = self._init[self._cursor]
            if not c.attempted:
                if c.next_start is None:
                    c.next_start = now
                    changed = True
                return changed
            done = c.state == "running" if c.spec.restartable else c.final and c.exit_code == 0
            if not done:
                return changed
            self._cursor += 1
            changed = True
        if self._stage is Stage.APPS and all(c.final for c in self._apps):
            self._stage = Stage.FINISHING
            return True
        return changed

    def _start(self, c: Container, now: float) -> None:
        spec = c.spec
        # ``extra_env`` belongs to the agent and may take the agent's locks, while the agent may
        # ask for ``status()`` under them: call it without holding ours. Only this thread
        # changes containers while it runs, so nothing moves meanwhile.
        self._lock.release()
        try:
            extra: Mapping[str, str] | Exception = dict(self._extra_env(spec.name))
        except Exception as err:
            extra = err
        finally:
            self._lock.acquire()
        if isinstance(extra, Exception):
            c.begin_attempt()
            message = f"cannot get the container's device environment: {extra}"
            self._exited(c, START_ERROR_EXIT_CODE, now, reason="StartError", message=message)
            return
        env = container_env(spec, extra)
        argv = container_argv(spec, env)

        def join() -> None:
            self._cgroups.attach(self.pod_uid, spec.name, os.getpid())

        c.begin_attempt()
        try:
            proc = spawn(argv, env, spec.working_dir, self._log_dir / f"{spec.name}.log", join)
        except StartError as err:
            c.started_at = None
            self._exited(c, START_ERROR_EXIT_CODE, now, reason="StartError", message=str(err))
            return
        # Again from here: a driver without kernel state (affinity) learns the pid only here.
        with contextlib.suppress(AgentError):
            self._cgroups.attach(self.pod_uid, spec.name, proc.pid)
        c.running(proc, now)

    def _exited(
        self,
        c: Container,
        code: int | None,
        now: float,
        *,
        reason: str | None = None,
        message: str | None = None,
    ) -> None:
        """Record a termination and decide what follows it."""
        if c.proc is not None:
            self._kill_leftovers(c, c.proc)
        c.terminated(code, now, reason, message, self._backoff)
        if self._stopping.is_set() or self._stage in (Stage.FINISHING, Stage.DONE):
            c.final = True
            return
        spec = c.spec
        if spec.restartable:
            restart = True
        elif spec.init:
            # An adopted init container's exit status is lost: run it again, as Kubernetes
            # requires init containers to be idempotent.
            restart = code != 0 and (self.restart_policy != "Never" or code is None)
            if code is None:
                c.next_start = now
                return
            if code != 0 and not restart:
                self._init_failed = True
                self._message = f"init container {spec.name} failed ({c.reason})"
                self._stage = Stage.FINISHING
        else:
            restart = self.restart_policy == "Always" or (
                self.restart_policy == "OnFailure" and code != 0
            )
        if restart:
            c.back_off(now, self._backoff, self.pod_uid)
        else:
            c.final = True

    def _kill_leftovers(self, c: Container, proc: Watched) -> None:
        signal_group(proc.pid, signal.SIGKILL)
        with contextlib.suppress(AgentError, OSError):
            for pid in self._cgroups.pids(self.pod_uid, c.spec.name):
                if pid != os.getpid():
                    os.kill(pid, signal.SIGKILL)

    def _finish(self) -> None:
        """After the apps (or a failed init): stop the sidecars, last started first."""
        for c in reversed([c for c in self._init if c.spec.restartable]):
            self._terminate([c], self.grace_seconds)
        with self._lock:
            for c in self._init:
                c.next_start = None
            self._stage = Stage.DONE

    def _terminate(self, containers: Sequence[Container], grace: float) -> None:
        with self._lock:
            owners = {id(c.proc): c for c in containers if c.proc is not None}
            procs = [c.proc for c in containers if c.proc is not None]
            for c in containers:
                c.next_start = None

        def gone(proc: Watched, code: int | None) -> None:
            with self._lock:
                c = owners[id(proc)]
                self._kill_leftovers(c, proc)
                c.terminated(code, self._clock(), None, None, self._backoff)
                c.final = True

        terminate(procs, grace, on_exit=gone)

    def _phase(self, apps: Sequence[ContainerStatus]) -> str:
        if self._init_failed:
            return "Failed"
        if self._stage in (Stage.NEW, Stage.INIT):
            return "Pending"
        if all(c.final for c in self._apps):
            return "Succeeded" if all(s.exit_code == 0 for s in apps) else "Failed"
        # Stopped with an app that never ran or was waiting to restart: it will not run now.
        return "Failed" if self._stage is Stage.DONE else "Running"
