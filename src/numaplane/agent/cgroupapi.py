"""What the agent asks of a cgroup driver, and the limits it gives each container.

Every driver places containers under ``<parent>/pod<uid>/<container>``; ``cgroups.py`` picks
the driver the host allows (``detect_driver``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from numaplane.agent.errors import CgroupError
from numaplane.cpuset import CPUSet


@dataclass(frozen=True)
class ContainerLimits:
    """The confinement of one container.

    ``mems`` ``None`` means every memory node; ``memory_max`` ``None`` no memory limit;
    ``cpu_quota_us`` ``None`` no CFS quota (the quota is per ``cpu_period_us``).
    """

    cpus: CPUSet
    mems: CPUSet | None = None
    memory_max: int | None = None
    cpu_quota_us: int | None = None
    cpu_period_us: int = 100_000


class CgroupDriver(Protocol):
    """Creates, tunes, joins and removes the cgroups of pods and their containers."""

    #: ``"v2"``, ``"v1"`` or ``"affinity"``.
    name: str

    def ensure_pod(self, pod_uid: str) -> None:
        """Create the pod's cgroup if absent."""
        ...

    def ensure_container(self, pod_uid: str, container: str, limits: ContainerLimits) -> None:
        """Create (or retune) the container's cgroup, and the pod's if absent."""
        ...

    def update_cpus(self, pod_uid: str, container: str, cpus: CPUSet) -> None:
        """Change the container's CPUs (its processes move with it)."""
        ...

    def attach(self, pod_uid: str, container: str, pid: int) -> None:
        """Put ``pid`` (and its future children) in the container's cgroup."""
        ...

    def pids(self, pod_uid: str, container: str) -> list[int]:
        """The processes in the container's cgroup, sorted."""
        ...

    def remove_container(self, pod_uid: str, container: str) -> None:
        """Remove the container's cgroup; nothing if absent; ``CgroupBusyError`` if in use."""
        ...

    def remove_pod(self, pod_uid: str) -> None:
        """Remove the pod's cgroup and its containers'; ``CgroupBusyError`` if in use."""
        ...

    def cpus_of(self, pod_uid: str, container: str) -> CPUSet | None:
        """The container's CPUs as written; ``None`` if it has no cgroup."""
        ...


def check_component(kind: str, value: str) -> str:
    """``value`` if it can name one directory level; else ``CgroupError``.

    Pod uids and container names come from manifests: refusing ``/`` and ``..`` keeps them
    from escaping the agent's cgroup tree.
    """
    if not value or value in (".", "..") or "/" in value or "\0" in value:
        raise CgroupError(f"{kind} {value!r} cannot name a cgroup")
    return value
