"""The values a pod's runtime reports and persists: specs, statuses, process records.

``ContainerStatus`` and ``PodStatus`` use the kubelet's vocabulary: a container is ``waiting``,
``running`` or ``terminated`` with a reason (``ContainerCreating``, ``PodInitializing``,
``CrashLoopBackOff``, ``Completed``, ``Error``, ``StartError``, ``ContainerStatusUnknown``);
a pod is ``Pending``, ``Running``, ``Succeeded`` or ``Failed``.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Restart policies of a pod.
RESTART_POLICIES = ("Always", "OnFailure", "Never")


@dataclass(frozen=True)
class ContainerSpec:
    """What the runtime runs for one container.

    The program is ``command + args`` (there are no images: ``command`` is what runs).
    ``restartable`` marks a sidecar: an init container that keeps running beside the app.
    """

    name: str
    command: tuple[str, ...]
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    working_dir: str | None = None
    init: bool = False
    restartable: bool = False


@dataclass(frozen=True)
class ContainerStatus:
    """One container's state.

    A ``waiting`` container that ran before (``CrashLoopBackOff``) keeps the ``exit_code`` and
    ``finished_at`` of its last termination, whose reason is ``last_reason`` (``StartError``,
    ``Error``, ...). Times are those of the runtime's clock.
    """

    name: str
    state: str
    reason: str | None = None
    exit_code: int | None = None
    restart_count: int = 0
    pid: int | None = None
    started_at: float | None = None
    finished_at: float | None = None
    message: str | None = None
    last_reason: str | None = None


@dataclass(frozen=True)
class PodStatus:
    """A pod's phase and its containers' states (init containers apart, in spec order)."""

    phase: str
    containers: tuple[ContainerStatus, ...]
    init_containers: tuple[ContainerStatus, ...]
    message: str | None = None


@dataclass(frozen=True)
class ProcessRecord:
    """A running container process, as the agent persists it to adopt it after a restart.

    ``start_time`` is field 22 of ``/proc/<pid>/stat``: with the pid, it names the process even
    after the pid is reused.
    """

    pod_uid: str
    container: str
    pid: int
    start_time: int
