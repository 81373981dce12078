"""The CPU manager's state: exclusive assignments and the shared (default) pool.

``StateReader`` is what readers (metrics, explanations) need; ``State`` adds the writes a policy
makes. ``InMemoryState`` is the backend of the simulator and ``numaplane admit``; a checkpointed
backend (the agent's ``cpu_manager_state`` file) implements the same Protocol.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Protocol, TypeAlias

from numaplane.topology.cpuset import CPUSet

ContainerCPUAssignments: TypeAlias = Mapping[str, Mapping[str, CPUSet]]
"""Pod UID -> container name -> exclusive CPUs."""


class StateReader(Protocol):
    """Read access to the CPU manager's state."""

    def get_cpu_set(self, pod_uid: str, container_name: str) -> CPUSet | None:
        """The container's exclusive CPUs, ``None`` when it has none."""
        ...

    def get_default_cpu_set(self) -> CPUSet:
        """The shared pool."""
        ...

    def get_cpu_set_or_default(self, pod_uid: str, container_name: str) -> CPUSet:
        """The container's exclusive CPUs, else the shared pool."""
        ...

    def get_cpu_assignments(self) -> dict[str, dict[str, CPUSet]]:
        """A copy of every exclusive assignment."""
        ...

    def get_pod_cpu_sets(self, pod_uid: str) -> Mapping[str, CPUSet]:
        """The pod's exclusive assignments (container name -> CPUs; empty when none).

        A read-only view, valid until the next write: readers that only look at one pod need
        not copy every assignment.
        """
        ...


class State(StateReader, Protocol):
    """Read and write access to the CPU manager's state."""

    def set_cpu_set(self, pod_uid: str, container_name: str, cpus: CPUSet) -> None:
        """Record the container's exclusive CPUs."""
        ...

    def set_default_cpu_set(self, cpus: CPUSet) -> None:
        """Replace the shared pool."""
        ...

    def set_cpu_assignments(self, assignments: ContainerCPUAssignments) -> None:
        """Replace every exclusive assignment."""
        ...

    def delete(self, pod_uid: str, container_name: str) -> None:
        """Forget the container's assignment (dropping the pod when it has none left)."""
        ...

    def clear_state(self) -> None:
        """Forget every assignment and empty the shared pool."""
        ...


def copy_assignments(assignments: ContainerCPUAssignments) -> dict[str, dict[str, CPUSet]]:
    """A deep copy (``CPUSet`` values are immutable, so two dict levels suffice)."""
    return {pod: dict(containers) for pod, containers in assignments.items()}


_NO_CONTAINERS: Mapping[str, CPUSet] = MappingProxyType({})


class InMemoryState:
    """A ``State`` held in memory (upstream ``stateMemory``)."""

    def __init__(
        self,
        assignments: ContainerCPUAssignments | None = None,
        default_cpu_set: CPUSet | None = None,
    ) -> None:
        self._assignments = copy_assignments(assignments or {})
        self._default = default_cpu_set if default_cpu_set is not None else CPUSet()

    def __repr__(self) -> str:
        return f"InMemoryState(default={self._default!s}, assignments={self._assignments!r})"

    def get_cpu_set(self, pod_uid: str, container_name: str) -> CPUSet | None:
        """The container's exclusive CPUs, ``None`` when it has none."""
        return self._assignments.get(pod_uid, {}).get(container_name)

    def get_default_cpu_set(self) -> CPUSet:
        """The shared pool."""
        return self._default

    def get_cpu_set_or_default(self, pod_uid: str, container_name: str) -> CPUSet:
        """The container's exclusive CPUs, else the shared pool."""
        cpus = self.get_cpu_set(pod_uid, container_name)
        return self._default if cpus is None else cpus

    def get_cpu_assignments(self) -> dict[str, dict[str, CPUSet]]:
        """A copy of every exclusive assignment."""
        return copy_assignments(self._assignments)

    def get_pod_cpu_sets(self, pod_uid: str) -> Mapping[str, CPUSet]:
        """The pod's exclusive assignments, as a read-only view (empty when none)."""
        containers = self._assignments.get(pod_uid)
        return _NO_CONTAINERS if containers is None else MappingProxyType(containers)

    def set_cpu_set(self, pod_uid: str, container_name: str, cpus: CPUSet) -> None:
        """Record the container's exclusive CPUs."""
        self._assignments.setdefault(pod_uid, {})[container_name] = cpus

    def set_default_cpu_set(self, cpus: CPUSet) -> None:
        """Replace the shared pool."""
        self._default = cpus

    def set_cpu_assignments(self, assignments: ContainerCPUAssignments) -> None:
        """Replace every exclusive assignment."""
        self._assignments = copy_assignments(assignments)

    def delete(self, pod_uid: str, container_name: str) -> None:
        """Forget the container's assignment (dropping the pod when it has none left)."""
        containers = self._assignments.get(pod_uid)
        if containers is None:
            return
        containers.pop(container_name, None)
        if not containers:
            del self._assignments[pod_uid]

    def clear_state(self) -> None:
        """Forget every assignment and empty the shared pool."""
        self._assignments = {}
        self._default = CPUSet()
