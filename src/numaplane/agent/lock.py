"""One agent per state directory: an exclusive ``flock`` on ``numaplane_agent.lock``.

Two agents on one state directory would each believe they own every CPU the checkpoints
record and overwrite each other's files. The agent takes the lock before it reads or touches
anything and holds it for its lifetime; the kernel drops a ``flock`` when its holder dies, so
a SIGKILLed agent leaves no stale lock behind (the file stays, the lock does not). The holder
writes its pid into the file so that a refused agent can name it.

The agent also holds the lock that ``numaplane admit``/``release --state-dir`` take (a ``flock``
on the directory itself, ``numaplane.node.statedir.locked``), so that a command cannot rewrite
the checkpoints of a running agent, nor an agent start in the middle of a command's commit.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from numaplane.errors import InputError

#: The lock file in the state directory (never removed: removing it would let a second agent
#: lock a new file while the first still holds the old one).
LOCK_FILE = "numaplane_agent.lock"


class StateDirLockedError(InputError):
    """Another agent holds the state directory's lock."""


class StateDirLock:
    """The held lock of one state directory; ``release`` (or the process's death) drops it."""

    def __init__(self, path: Path, fd: int, dir_fd: int) -> None:
        self.path = path
        self._fds: tuple[int, ...] = (fd, dir_fd)

    def release(self) -> None:
        """Drop the lock (idempotent)."""
        fds, self._fds = self._fds, ()
        for fd in fds:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def lock_state_dir(state_dir: Path) -> StateDirLock:
    """Take the state directory's lock, or raise ``StateDirLockedError`` naming the holder.

    The directory must exist. Raises an ``InputError`` naming the lock file when it cannot be
    opened.
    """
    path = state_dir / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as err:
        raise InputError(str(path), f"cannot open the agent's lock file: {err.strerror}") from err
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        holder = _read_pid(fd)
        os.close(fd)
        if isinstance(err, BlockingIOError):
            who = f"another agent (pid {holder})" if holder is not None else "another agent"
            raise StateDirLockedError(
                str(path),
                f"{who} holds this state directory; stop it or give this agent another --state-dir",
            ) from err
        raise InputError(str(path), f"cannot lock the state directory: {err.strerror}") from err
    try:
        dir_fd = _lock_directory(state_dir)
    except BaseException:
        os.close(fd)
        raise
    # Record our pid for the next agent's message; a failure here costs only that.
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return StateDirLock(path, fd, dir_fd)


def _lock_directory(state_dir: Path) -> int:
    """The directory lock of ``admit``/``release --state-dir``, held like the agent's own."""
    try:
        fd = os.open(state_dir, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_DIRECTORY", 0))
    except OSError as err:
        raise InputError(
            str(state_dir), f"cannot open the state directory: {err.strerror}"
        ) from err
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        os.close(fd)
        raise StateDirLockedError(
            str(state_dir),
            "a numaplane command (admit or release) is using this state directory; "
            "start the agent when it is done",
        ) from err
    return fd


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() and 0 < len(text) < 11 else None
