"""The CPU manager's checkpointed state: ``InMemoryState`` mirrored to ``cpu_manager_state``.

Upstream ``stateCheckpoint``: reads go to the in-memory cache; every write updates the cache and
then rewrites the whole checkpoint (V2 layout) atomically. Opening restores from an existing
file (V2, else V1 migrated through the runtime's container map) and refuses a corrupt file or
one written for another policy, with the kubelet's advice to drain the node and delete the file.
A missing file is a first start: the empty state is written at once.

A failed write after a change is logged and the change kept, as upstream: the in-memory state
stays authoritative and the next successful write catches the file up.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from numaplane.node.checkpoint import CheckpointError, CheckpointRestoreError, CheckpointStore
from numaplane.node.cpumanager.checkpoint import (
    CPU_MANAGER_CHECKPOINT,
    checkpoint_of,
    restore_state,
)
from numaplane.node.cpumanager.state import ContainerCPUAssignments, InMemoryState
from numaplane.node.gocodec import go_percent_q
from numaplane.topology.cpuset import CPUSet

_log = logging.getLogger(__name__)


def restore_hint(path: Path) -> str:
    """What the kubelet tells the operator to do when the CPU manager checkpoint is unusable."""
    return (
        "please drain this node and delete the CPU manager checkpoint file "
        f"{go_percent_q(str(path))} before restarting Kubelet"
    )


class CheckpointState:
    """A CPU manager ``State`` persisted to ``cpu_manager_state`` after every change."""

    def __init__(self, store: CheckpointStore, policy_name: str, cache: InMemoryState) -> None:
        """Wrap ``cache``; use ``open`` to restore from (or create) the file."""
        self._store = store
        self._policy_name = policy_name
        self._cache = cache

    @classmethod
    def open(
        cls,
        state_dir: Path,
        policy_name: str,
        *,
        initial_containers: Mapping[str, tuple[str, str]] | None = None,
    ) -> CheckpointState:
        """Restore the state of ``policy_name`` from ``state_dir`` (``NewCheckpointState``).

        ``initial_containers`` maps container IDs to ``(pod UID, container name)`` for migrating
        a V1 file. Raises ``CheckpointRestoreError`` (``source`` = the file) when the file is
        unreadable, corrupt, of another policy, or when the initial file cannot be written.
        """
        store = CheckpointStore(state_dir)
        path = store.path(CPU_MANAGER_CHECKPOINT)
        try:
            data = store.read(CPU_MANAGER_CHECKPOINT)
            restored = restore_state(
                data, policy_name=policy_name, source=str(path), containers=initial_containers
            )
        except CheckpointRestoreError as exc:
            raise CheckpointRestoreError(
                exc.cause, hint=restore_hint(path), source=str(path)
            ) from exc
        except CheckpointError as exc:
            raise CheckpointRestoreError(
                str(exc), hint=restore_hint(path), source=str(path)
            ) from exc
        cache = InMemoryState(restored.assignments, restored.default_cpu_set)
        state = cls(store, policy_name, cache)
        if data is None:
            try:
                state._write()
            except CheckpointError as exc:
                raise CheckpointRestoreError(
                    str(exc), hint=restore_hint(path), source=str(path)
                ) from exc
        return state

    @property
    def path(self) -> Path:
        """The checkpoint file."""
        return self._store.path(CPU_MANAGER_CHECKPOINT)

    @property
    def policy_name(self) -> str:
        """The policy this state belongs to (written into every checkpoint)."""
        return self._policy_name

    def __repr__(self) -> str:
        return f"CheckpointState(path={str(self.path)!r}, cache={self._cache!r})"

    def _write(self) -> None:
        checkpoint = checkpoint_of(
            self._policy_name, self._cache.get_default_cpu_set(), self._cache.get_cpu_assignments()
        )
        self._store.write(CPU_MANAGER_CHECKPOINT, checkpoint.to_bytes())

    def _store_state(self) -> None:
        try:
            self._write()
        except CheckpointError as exc:
            _log.error("failed to store state to checkpoint %s: %s", self.path, exc)

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
