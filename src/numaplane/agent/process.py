"""Processes as the agent sees them: identity in ``/proc``, spawning, signalling, waiting.

A pid alone does not name a process across an agent restart (pids are reused), so the agent
pairs it with the process's start time: field 22 of ``/proc/<pid>/stat``, in clock ticks since
boot. ``(pid, start_time)`` names one process for the life of the machine.

Two kinds of process are watched: ``ChildProcess`` (spawned by this agent; its exit status is
known) and ``AdoptedProcess`` (spawned by a previous agent; not our child, so it is watched by
polling ``/proc`` and its exit status is unknown).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

#: Clock ticks per second of ``/proc/<pid>/stat`` times.
CLK_TCK = os.sysconf("SC_CLK_TCK")

#: Exit code reported for a container that could not be started (as runc/containerd: 128).
START_ERROR_EXIT_CODE = 128

_PROC = Path("/proc")


def _read_small(path: str) -> bytes | None:
    """The content of a small ``/proc`` file, or ``None`` if it cannot be read.

    Plain ``os`` calls on purpose: this also runs in a forked child before ``exec``, where
    Python-level locks held by other threads of the parent could deadlock.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)


def _stat_fields(pid: int) -> list[bytes] | None:
    """Fields 3.. of ``/proc/<pid>/stat`` (index 0 is the state), or ``None`` if gone."""
    data = _read_small(f"/proc/{pid}/stat")
    if not data:
        return None
    # The command name (field 2) is in parentheses and may itself hold spaces and ')'.
    end = data.rfind(b")")
    fields = data[end + 2 :].split()
    return fields if len(fields) > 19 else None


def process_start_time(pid: int) -> int | None:
    """Field 22 of ``/proc/<pid>/stat`` (clock ticks since boot); ``None`` if no such process."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields is not None else None


def process_cpu_seconds(pid: int) -> float | None:
    """User plus system CPU time process ``pid`` has used so far (fields 14 and 15 of
    ``/proc/<pid>/stat``), seconds; ``None`` if no such process."""
    fields = _stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / CLK_TCK if fields is not None else None


def process_alive(pid: int, start_time: int) -> bool:
    """Whether the process ``(pid, start_time)`` exists and has not exited (zombies have)."""
    fields = _stat_fields(pid)
    if fields is None:
        return False
    return fields[0] not in (b"Z", b"X") and int(fields[19]) == start_time


def process_age_seconds(start_time: int) -> float:
    """Seconds since a process started ``start_time`` ticks after boot."""
    data = _read_small("/proc/uptime")
    uptime = float(data.split()[0]) if data else 0.0
    return max(0.0, uptime - start_time / CLK_TCK)


def threads_of(pid: int) -> list[int]:
    """Thread ids of ``pid`` (``[pid]`` when ``/proc/<pid>/task`` cannot be listed)."""
    try:
        return sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return [pid]


def descendants_of(pids: Iterable[int]) -> set[int]:
    """Every live process descending from ``pids`` (not including them)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir(_PROC):
        if not entry.isdigit():
            continue
        fields = _stat_fields(int(entry))
        if fields is not None:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    todo = list(pids)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def signal_group(pid: int, sig: int) -> None:
    """Send ``sig`` to the process group ``pid`` leads, else to ``pid``; gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            os.kill(pid, sig)


def exit_code_of(returncode: int) -> int:
    """The kubelet's exit code: the status, or 128 + the signal for a killed process."""
    return 128 - returncode if returncode < 0 else returncode


class StartError(Exception):
    """A container's process could not be started; ``str()`` is the kubelet-like message."""


class Watched(Protocol):
    """A container's main process, whoever spawned it."""

    @property
    def pid(self) -> int:
        """The process id (also its process group id)."""
        ...

    @property
    def start_time(self) -> int:
        """Field 22 of its ``/proc/<pid>/stat``."""
        ...

    def poll(self) -> tuple[bool, int | None]:
        """``(exited, exit_code)``; the code is ``None`` while running or when unknown."""
        ...


@dataclass
class ChildProcess:
    """A process this agent spawned: exit status known, reaped by ``poll``."""

    popen: subprocess.Popen[bytes]
    start_time: int

    @property
    def pid(self) -> int:
        """The process id."""
        return self.popen.pid

    def poll(self) -> tuple[bool, int | None]:
        """``(exited, exit_code)``, reaping the process when it has exited."""
        rc = self.popen.poll()
        return (False, None) if rc is None else (True, exit_code_of(rc))


@dataclass(frozen=True)
class AdoptedProcess:
    """A process of a previous agent: watched through ``/proc``; its exit status is lost."""

    pid: int
    start_time: int

    def poll(self) -> tuple[bool, int | None]:
        """``(exited, None)``: whether it is gone; its exit code cannot be known."""
        return (not process_alive(self.pid, self.start_time), None)


def spawn(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: str | None,
    log_path: Path,
    join: Callable[[], None],
) -> ChildProcess:
    """Start ``argv`` in a new session, output appended to ``log_path``.

    ``join`` runs in the child between ``fork`` and ``exec`` (it puts the child in its cgroup
    or pins it), so the user's program never runs unconfined. Raises ``StartError`` with the
    message the kubelet shows for a missing executable, working directory or cgroup; when
    ``join`` fails, with its error.
    """
    if not argv:
        raise StartError("no command specified")
    # ``subprocess`` only tells the parent "Exception occurred in preexec_fn": the child
    # writes the real cause to this pipe (and to the log). Both ends are close-on-exec, so a
    # started program never holds the pipe.
    cause_read, cause_write = os.pipe()

    def in_child() -> None:
        try:
            join()
        except BaseException as err:
            cause = f"cannot confine the process: {err}".encode()
            os.write(2, b"numaplane: " + cause + b"\n")
            with contextlib.suppress(OSError):
                os.write(cause_write, cause[:_CAUSE_LIMIT])
            raise

    try:
        return _spawn(argv, env, cwd, log_path, in_child, cause_read)
    finally:
        os.close(cause_read)
        os.close(cause_write)


#: The most bytes of a child's start failure kept (one pipe write is atomic up to 4096).
_CAUSE_LIMIT = 4000


def _spawn(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: str | None,
    log_path: Path,
    in_child: Callable[[], None],
    cause_read: int,
) -> ChildProcess:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        try:
            popen = subprocess.Popen(
                list(argv),
                env=dict(env),
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
                preexec_fn=in_child,
            )
        except FileNotFoundError as err:
            if cwd is not None and err.filename == cwd:
                raise StartError(
                    f'chdir to cwd ("{cwd}") set in config.json failed: no such file or directory'
                ) from err
            missing = "no such file or directory" if "/" in argv[0] else _NOT_IN_PATH
            raise StartError(f'exec: "{argv[0]}": {missing}') from err
        except PermissionError as err:
            raise StartError(f'exec: "{argv[0]}": permission denied') from err
        except (OSError, subprocess.SubprocessError) as err:
            cause = _child_cause(cause_read)
            if cause:
                raise StartError(cause) from err
            raise StartError(f"cannot start {argv[0]!r}: {err} (see the container log)") from err
    start = process_start_time(popen.pid)
    return ChildProcess(popen, start if start is not None else 0)


def _child_cause(cause_read: int) -> str:
    """What a failed child wrote to the cause pipe, if anything (the child wrote before it
    failed, and ``Popen`` has waited for it: nothing more is coming)."""
    os.set_blocking(cause_read, False)
    try:
        data = os.read(cause_read, _CAUSE_LIMIT)
    except OSError:
        return ""
    return data.decode("utf-8", "replace").strip()


_NOT_IN_PATH = "executable file not found in $PATH"

#: How long ``terminate`` waits for killed processes to be gone.
_KILL_WAIT_SECONDS = 10.0


def terminate(
    processes: Sequence[Watched],
    grace_seconds: float,
    *,
    on_exit: Callable[[Watched, int | None], None] = lambda proc, code: None,
    poll_interval: float = 0.02,
) -> None:
    """SIGTERM every process group, SIGKILL what is left after ``grace_seconds``; wait for all.

    ``on_exit(process, exit_code)`` is called once for each as it is seen gone.
    """
    for proc in processes:
        signal_group(proc.pid, signal.SIGTERM)
    left = list(processes)
    deadline = time.monotonic() + grace_seconds
    killed = False
    # A process stuck in the kernel may outlive SIGKILL for a while; do not hang on it forever.
    give_up = deadline + _KILL_WAIT_SECONDS
    while left and time.monotonic() < give_up:
        still: list[Watched] = []
        for proc in left:
            exited, code = proc.poll()
            if exited:
                # Whatever the main process left behind in its group goes with it.
                signal_group(proc.pid, signal.SIGKILL)
                on_exit(proc, code)
            else:
                still.append(proc)
        left = still
        if not left:
            break
        if not killed and time.monotonic() >= deadline:
            for proc in left:
                signal_group(proc.pid, signal.SIGKILL)
            killed = True
        time.sleep(poll_interval)
