"""A simulated pod's life: what the simulator knows of one pod bound to one of its nodes.

A pod is admitted (or rejected) once, when first seen; an admitted pod's containers "run"
from admission on (init containers complete at once, sidecars run beside the app
containers) until the pod's ``numaplane.io/simulated-duration`` has passed, then exit 0. Under
``restartPolicy: Always`` they start again at once (restart count plus one; the kubelet's
restart backoff is not simulated: nothing crashed); otherwise the pod ``Succeeded``.

``version`` counts the changes the API should see; the status writer sends the status of the
newest version and records it in ``written``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from numaplane.api.kubeletvalues import parse_go_duration
from numaplane.api.pod import Pod
from numaplane.errors import NumaplaneError

__all__ = [
    "DURATION_ANNOTATION",
    "Run",
    "SimPod",
    "pod_duration",
]

DURATION_ANNOTATION: Final = "numaplane.io/simulated-duration"
"""How long a simulated container runs (a Go duration, ``30s``); absent: until deleted."""

PENDING: Final = "Pending"
RUNNING: Final = "Running"
SUCCEEDED: Final = "Succeeded"
FAILED: Final = "Failed"
TERMINAL: Final = frozenset({SUCCEEDED, FAILED})


def pod_duration(obj: dict[str, Any]) -> tuple[float | None, str | None]:
    """The pod's simulated duration in seconds (``None``: runs until deleted) and, when the
    annotation is not a duration of zero or more, why it is ignored."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    text = annotations.get(DURATION_ANNOTATION)
    if text is None:
        return None, None
    try:
        seconds = parse_go_duration(str(text)).total_seconds()
    except (NumaplaneError, ValueError, OverflowError) as err:
        return None, f"annotation {DURATION_ANNOTATION}: {err}; the pod runs until deleted"
    if seconds < 0:
        return None, f"annotation {DURATION_ANNOTATION}: {text!r} is negative; runs until deleted"
    return seconds, None


@dataclass(frozen=True)
class Run:
    """One finished run of the containers (``lastState``): start and end, wall seconds."""

    started_at: float
    finished_at: float


@dataclass(eq=False)
class SimPod:
    """One pod bound to a simulated node. ``obj`` is the newest API object seen."""

    uid: str
    node_name: str
    obj: dict[str, Any]
    phase: str = PENDING
    pod: Pod | None = None
    held: bool = False
    reason: str | None = None
    message: str | None = None
    start_time: float | None = None
    started_at: float | None = None
    finished_at: float | None = None
    restart_count: int = 0
    last_run: Run | None = None
    duration: float | None = None
    timer: Any = None
    delete_requested: bool = False
    version: int = 0
    written: int = 0
    rejected: bool = field(default=False)

    @property
    def namespace(self) -> str:
        """The pod's namespace."""
        return str(self.obj["metadata"].get("namespace") or "")

    @property
    def name(self) -> str:
        """The pod's name."""
        return str(self.obj["metadata"]["name"])

    @property
    def restart_policy(self) -> str:
        """``Always`` (the API's default), ``OnFailure`` or ``Never``."""
        return str((self.obj.get("spec") or {}).get("restartPolicy") or "Always")

    @property
    def deadline(self) -> float | None:
        """When the current run ends (``None``: it does not end on its own)."""
        if self.duration is None or self.started_at is None or self.phase != RUNNING:
            return None
        return self.started_at + self.duration

    def changed(self) -> None:
        """The API should see a new status."""
        self.version += 1

    def start(self, now: float) -> None:
        """Admitted: the containers run from ``now``."""
        self.phase = RUNNING
        self.held = True
        self.start_time = self.start_time if self.start_time is not None else now
        self.started_at = now
        self.changed()

    def reject(self, reason: str, message: str) -> None:
        """Refused by the node: ``Failed`` with the kubelet's reason and message."""
        self.phase = FAILED
        self.rejected = True
        self.reason = reason
        self.message = message
        self.changed()

    def exited(self, now: float) -> bool:
        """The containers exited 0 at ``now``: restarted under ``restartPolicy: Always``
        (``False``), else the pod succeeded (``True``: its resources are to be released)."""
        assert self.started_at is not None
        if self.restart_policy == "Always":
            self.last_run = Run(self.started_at, now)
            self.restart_count += 1
            self.started_at = now
            self.changed()
            return False
        self.phase = SUCCEEDED
        self.finished_at = now
        self.changed()
        return True
