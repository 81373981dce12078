"""The process supervisor behind ``numaplane up``: children started with their output in a log
file each, tied to the supervisor's life, restarted with backoff when they die, and stopped in
reverse order (SIGTERM, then SIGKILL after a grace period).

Each child runs in a session of its own, so a Ctrl-C in the terminal reaches only the
supervisor, which then stops the children in order (the agents and controllers before the API
server they talk to). Each child also asks the kernel for SIGTERM when the supervisor dies
(``PR_SET_PDEATHSIG``), so even a SIGKILL of the supervisor leaves no child behind.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

#: ``prctl`` option: the signal a child gets when its parent dies (linux/prctl.h).
PR_SET_PDEATHSIG = 1
#: Restart backoff: first wait, doubled after each quick death, capped (the kubelet's
#: CrashLoopBackOff shape, shorter: a control plane on one machine should come back fast).
BACKOFF_START_S = 1.0
BACKOFF_MAX_S = 30.0
#: A child that ran this long before dying starts again from the first backoff step.
BACKOFF_RESET_S = 60.0
#: The exit status of numaplane's input errors (a bad flag or file): restarting cannot help.
INPUT_ERROR_STATUS = 2


#: The C library, loaded in the parent: nothing may be looked up between fork and exec.
_LIBC = ctypes.CDLL(None, use_errno=True)


def _die_with_parent() -> None:
    """In the child, between fork and exec: SIGTERM when the supervisor dies."""
    _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    # The parent may have died between fork and prctl: then no signal would ever come.
    if os.getppid() == 1:
        os._exit(1)


@dataclass(frozen=True)
class Component:
    """One child: its name (also its log's name) and command line."""

    name: str
    argv: tuple[str, ...]


@dataclass
class Child:
    """A started component and its restart bookkeeping."""

    component: Component
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    restarts: int = 0
    backoff_s: float = BACKOFF_START_S
    restart_at: float | None = None
    log_offset: int = 0


def last_line(path: Path, offset: int = 0) -> str:
    """The last non-empty line ``path`` got after ``offset`` ("" when none)."""
    try:
        with path.open("rb") as log:
            log.seek(max(offset, os.path.getsize(path) - 4096))
            text = log.read().decode(errors="replace")
    except OSError:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


@dataclass
class Supervisor:
    """Starts components, watches them, restarts the dead, stops them all.

    ``say`` prints one line for the user; ``env`` is the children's environment.
    """

    log_dir: Path
    say: Callable[[str], None]
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    grace_s: float = 10.0
    children: list[Child] = field(default_factory=list)

    def start(self, component: Component) -> Child:
        """Start ``component`` (its output appended to ``LOG_DIR/<name>.log``)."""
        child = Child(component, self.log_dir / f"{component.name}.log")
        self.children.append(child)
        self._spawn(child)
        return child

    def _spawn(self, child: Child) -> None:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        with child.log_path.open("ab") as log:
            child.log_offset = log.tell()
            child.process = subprocess.Popen(
                child.component.argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        child.started_at = time.monotonic()
        child.restart_at = None

    def check(self) -> Child | None:
        """Look at every child once: report the newly dead and schedule their restart, restart
        those whose backoff has passed. A child that exits with numaplane's input-error status
        is not restarted: it is returned, and the caller stops."""
        now = time.monotonic()
        for child in self.children:
            process = child.process
            if process is None:
                continue
            if child.restart_at is not None:
                if now >= child.restart_at:
                    child.restarts += 1
                    self._spawn(child)
                continue
            code = process.poll()
            if code is None:
                continue
            why = last_line(child.log_path, child.log_offset)
            reason = f"exited with status {code}" if code >= 0 else f"killed by signal {-code}"
            detail = f": {why}" if why else ""
            if code == INPUT_ERROR_STATUS:
                self.say(f"{child.component.name} {reason}{detail} (log: {child.log_path})")
                return child
            if now - child.started_at >= BACKOFF_RESET_S:
                child.backoff_s = BACKOFF_START_S
            self.say(
                f"{child.component.name} {reason}{detail}; restarting in "
                f"{child.backoff_s:g}s (log: {child.log_path})"
            )
            child.restart_at = now + child.backoff_s
            child.backoff_s = min(child.backoff_s * 2, BACKOFF_MAX_S)
        return None

    def stop_all(self) -> None:
        """Stop every child: first all but the first started (the agents and controllers),
        then the first (the API server they talk to); each wave gets SIGTERM, then SIGKILL
        what is left after the grace period. Every child is reaped."""
        for child in self.children:
            child.restart_at = None
        waves = [self.children[1:], self.children[:1]]
        for wave in waves:
            running = [
                c.process for c in wave if c.process is not None and c.process.poll() is None
            ]
            for process in running:
                process.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + self.grace_s
            for process in running:
                try:
                    process.wait(timeout=max(deadline - time.monotonic(), 0.0))
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self.children.clear()
