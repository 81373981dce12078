"""The memory manager's checkpointed state: ``InMemoryState`` mirrored to ``memory_manager_state``.

Upstream ``stateCheckpoint``: reads go to the in-memory cache; every write updates the cache and
then rewrites the checkpoint atomically. Opening restores from an existing file (any layout the
newest kubelet reads: V3, then V2, then V1) and refuses a corrupt file or one of another policy
with the kubelet's advice to drain the node and delete the file. A missing file is a first
start: the empty state is written at once.

Files are written in the V1 layout (``policyName``, ``machineState``, ``entries``,
``checksum``): it is what every released kubelet writes without pod-level resource managers,
and every reader, old or new, accepts it. A failed write after a change is logged and the change
kept, as upstream (the mechanics are ``numaplane.node.checkpoint.PolicyCheckpointedState``'s).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from numaplane.node.checkpoint import PolicyCheckpointedState, drain_hint
from numaplane.node.memorymanager import checkpoint as codec
from numaplane.node.memorymanager import state
from numaplane.node.memorymanager.checkpoint import (
    MEMORY_MANAGER_CHECKPOINT,
    MemoryManagerCheckpoint,
    restore_state,
)
from numaplane.node.memorymanager.state import (
    Block,
    ContainerMemoryAssignments,
    InMemoryState,
    NUMANodeMap,
)


def restore_hint(path: Path) -> str:
    """What the kubelet tells the operator to do when the memory checkpoint is unusable."""
    return drain_hint("memory manager", str(path))


# -- conversion between the codec's values and the state's ----------------------------------


def _table_to_codec(table: state.MemoryTable) -> codec.MemoryTable:
    return codec.MemoryTable(
        table.total, table.system_reserved, table.allocatable, table.reserved, table.free
    )


def _table_from_codec(table: codec.MemoryTable) -> state.MemoryTable:
    return state.MemoryTable(
        table.total, table.system_reserved, table.allocatable, table.reserved, table.free
    )


def _blocks_to_codec(blocks: Iterable[Block]) -> tuple[codec.Block, ...]:
    return tuple(codec.Block(b.numa_affinity, b.type, b.size) for b in blocks)


def _blocks_from_codec(blocks: Iterable[codec.Block]) -> tuple[Block, ...]:
    return tuple(Block(tuple(b.numa_affinity), b.type, b.size) for b in blocks)


def checkpoint_of(
    policy_name: str, machine_state: NUMANodeMap, assignments: ContainerMemoryAssignments
) -> MemoryManagerCheckpoint:
    """The checkpoint ``storeState`` writes for a state."""
    nodes = {
        node_id: codec.NUMANodeState(
            node.number_of_assignments,
            {name: _table_to_codec(t) for name, t in node.memory_map.items()},
            tuple(node.cells),
        )
        for node_id, node in machine_state.items()
    }
    entries = {
        pod: {name: _blocks_to_codec(blocks) for name, blocks in containers.items()}
        for pod, containers in assignments.items()
    }
    return MemoryManagerCheckpoint(policy_name, nodes, entries)


def machine_state_of(nodes: codec.MachineState) -> dict[int, state.NUMANodeState]:
    """The state's machine state from the checkpoint's (a nil ``cells`` reads as empty)."""
    return {
        node_id: state.NUMANodeState(
            node.number_of_assignments,
            {name: _table_from_codec(t) for name, t in node.memory_map.items()},
            tuple(node.cells or ()),
        )
        for node_id, node in nodes.items()
    }


def assignments_of(entries: codec.ContainerAssignments) -> dict[str, dict[str, tuple[Block, ...]]]:
    """The state's assignments from the checkpoint's ``entries``."""
    return {
        pod: {name: _blocks_from_codec(blocks) for name, blocks in containers.items()}
        for pod, containers in entries.items()
    }


class CheckpointState(PolicyCheckpointedState[InMemoryState]):
    """A memory manager ``State`` persisted to ``memory_manager_state`` after every change."""

    checkpoint_name = MEMORY_MANAGER_CHECKPOINT

    @classmethod
    def open(cls, state_dir: Path, policy_name: str) -> CheckpointState:
        """Restore the state of ``policy_name`` from ``state_dir`` (``NewCheckpointState``).

        Raises ``CheckpointRestoreError`` (``source`` = the file) when the file is unreadable,
        corrupt, of another policy, or when the initial file cannot be written.
        """

        def restore(data: bytes | None, source: str) -> InMemoryState:
            restored = restore_state(data, policy_name=policy_name, source=source)
            return InMemoryState(
                machine_state_of(restored.machine_state), assignments_of(restored.assignments)
            )

        return cls._restore(state_dir, policy_name, restore)

    @classmethod
    def _restore_hint(cls, path: Path) -> str:
        return restore_hint(path)

    def _encode(self) -> bytes:
        checkpoint = checkpoint_of(
            self._policy_name,
            self._cache.get_machine_state(),
            self._cache.get_memory_assignments(),
        )
        return checkpoint.to_bytes(1)

    # -- reads ----------------------------------------------------------------------------

    def get_machine_state(self) -> NUMANodeMap:
        """The machine state (a snapshot)."""
        return self._cache.get_machine_state()

    def get_memory_blocks(self, pod_uid: str, container_name: str) -> tuple[Block, ...] | None:
        """The container's blocks, or ``None``."""
        return self._cache.get_memory_blocks(pod_uid, container_name)

    def get_memory_assignments(self) -> ContainerMemoryAssignments:
        """Every container's blocks (a snapshot)."""
        return self._cache.get_memory_assignments()

    def memory_assignments_view(self) -> ContainerMemoryAssignments:
        """Every container's blocks, live (valid until the next write)."""
        return self._cache.memory_assignments_view()

    @property
    def generation(self) -> int:
        """Counts the writes to the assignments."""
        return self._cache.generation

    # -- writes ---------------------------------------------------------------------------

    def set_machine_state(self, machine_state: NUMANodeMap) -> None:
        """Replace the machine state, then checkpoint."""
        self._cache.set_machine_state(machine_state)
        self._store_state()

    def set_memory_blocks(self, pod_uid: str, container_name: str, blocks: Iterable[Block]) -> None:
        """Store one container's blocks, then checkpoint."""
        self._cache.set_memory_blocks(pod_uid, container_name, blocks)
        self._store_state()

    def set_memory_assignments(self, assignments: ContainerMemoryAssignments) -> None:
        """Replace every container's blocks, then checkpoint."""
        self._cache.set_memory_assignments(assignments)
        self._store_state()

    def delete(self, pod_uid: str, container_name: str) -> None:
        """Forget a container's blocks (and its pod once empty), then checkpoint."""
        self._cache.delete(pod_uid, container_name)
        self._store_state()

    def clear_state(self) -> None:
        """Forget everything, then checkpoint."""
        self._cache.clear_state()
        self._store_state()
