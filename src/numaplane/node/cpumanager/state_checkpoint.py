"""The CPU manager's checkpointed state: ``InMemoryState`` mirrored to ``cpu_manager_state``.

Upstream ``stateCheckpoint``: reads go to the in-memory cache; every write updates the cache and
then rewrites the whole checkpoint (V2 layout) atomically. Opening restores from an existing
file (V2, else V1 migrated through the runtime's container map) and refuses a corrupt file or
one written for another policy, with the kubelet's advice to drain the node and delete the file.
A missing file is a first start: the empty state is written at once.

A failed write after a change is logged and the change kept, as upstream (the mechanics are
``numaplane.node.checkpoint.PolicyCheckpointedState``'s).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from numaplane.node.checkpoint import ContainerMap, PolicyCheckpointedState, drain_hint
from numaplane.node.cpumanager.checkpoint import (
    CPU_MANAGER_CHECKPOINT,
    checkpoint_of,
    restore_state,
)
from numaplane.node.cpumanager.state import ContainerCPUAssignments, InMemoryState
from numaplane.topology.cpuset import CPUSet


def restore_hint(path: Path) -> str:
    """What the kubelet tells the operator to do when the CPU manager checkpoint is unusable."""
    return drain_hint("CPU manager", str(path))


class CheckpointState(PolicyCheckpointedState[InMemoryState]):
    """A CPU manager ``State`` persisted to ``cpu_manager_state`` after every change."""

    checkpoint_name = CPU_MANAGER_CHECKPOINT

    @classmethod
    def open(
        cls,
        state_dir: Path,
        policy_name: str,
        *,
        initial_containers: ContainerMap | None = None,
    ) -> CheckpointState:
        """Restore the state of ``policy_name`` from ``state_dir`` (``NewCheckpointState``).

        ``initial_containers`` maps container IDs to ``(pod UID, container name)`` for migrating
        a V1 file. Raises ``CheckpointRestoreError`` (``source`` = the file) when the file is
        unreadable, corrupt, of another policy, or when the initial file cannot be written.
        """

        def restore(data: bytes | None, source: str) -> InMemoryState:
            restored = restore_state(
                data, policy_name=policy_name, source=source, containers=initial_containers
            )
            return InMemoryState(restored.assignments, restored.default_cpu_set)

        return cls._restore(state_dir, policy_name, restore)

    @classmethod
    def _restore_hint(cls, path: Path) -> str:
        return restore_hint(path)

    def __repr__(self) -> str:
        return f"CheckpointState(path={str(self.path)!r}, cache={self._cache!r})"

    def _encode(self) -> bytes:
        checkpoint = checkpoint_of(
            self._policy_name, self._cache.get_default_cpu_set(), self._cache.get_cpu_assignments()
        )
        return checkpoint.to_bytes()

    # -- reads ----------------------------------------------------------------------------

    def get_cpu_set(self, pod_uid: str, container_name: str) -> CPUSet | None:
        """The container's exclusive CPUs, ``None`` when it has none."""
        return self._cache.get_cpu_set(pod_uid, container_name)

    def get_default_cpu_set(self) -> CPUSet:
        """The shared pool."""
        return self._cache.get_default_cpu_set()

    def get_cpu_set_or_default(self, pod_uid: str, container_name: str) -> CPUSet:
        """The container's exclusive CPUs, else the shared pool."""
        return self._cache.get_cpu_set_or_default(pod_uid, container_name)

    def get_cpu_assignments(self) -> dict[str, dict[str, CPUSet]]:
        """A copy of every exclusive assignment."""
        return self._cache.get_cpu_assignments()

    def get_pod_cpu_sets(self, pod_uid: str) -> Mapping[str, CPUSet]:
        """The pod's exclusive assignments, as a read-only view (empty when none)."""
        return self._cache.get_pod_cpu_sets(pod_uid)

    # -- writes ---------------------------------------------------------------------------

    def set_cpu_set(self, pod_uid: str, container_name: str, cpus: CPUSet) -> None:
        """Record the container's exclusive CPUs, then checkpoint."""
        self._cache.set_cpu_set(pod_uid, container_name, cpus)
        self._store_state()

    def set_default_cpu_set(self, cpus: CPUSet) -> None:
        """Replace the shared pool, then checkpoint."""
        self._cache.set_default_cpu_set(cpus)
        self._store_state()

    def set_cpu_assignments(self, assignments: ContainerCPUAssignments) -> None:
        """Replace every exclusive assignment, then checkpoint."""
        self._cache.set_cpu_assignments(assignments)
        self._store_state()

    def delete(self, pod_uid: str, container_name: str) -> None:
        """Forget the container's assignment, then checkpoint."""
        self._cache.delete(pod_uid, container_name)
        self._store_state()

    def clear_state(self) -> None:
        """Forget every assignment and empty the shared pool, then checkpoint."""
        self._cache.clear_state()
        self._store_state()
