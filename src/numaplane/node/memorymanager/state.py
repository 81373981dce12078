"""The memory manager's state: per-NUMA-node memory tables and per-container memory blocks.

Shapes follow upstream ``memorymanager/state`` (and the ``memory_manager_state`` checkpoint):

- ``MemoryTable``: one resource (``memory`` or ``hugepages-<size>``) on one NUMA node, in bytes:
  ``total``, ``system_reserved``, ``allocatable``, ``reserved`` (given to containers) and
  ``free``.
- ``NUMANodeState``: the tables of one node, how many blocks touch it
  (``number_of_assignments``) and ``cells``, the group of nodes it is allocated together with
  (``(id,)`` while the node serves single-node blocks only).
- ``NUMANodeMap``: node id -> ``NUMANodeState`` (the "machine state").
- ``Block``: memory of one resource given to a container, with the nodes it may come from.
- ``ContainerMemoryAssignments``: pod UID -> container name -> blocks.

Every value is immutable; a policy computes a new machine state and stores it. ``StateReader``
and ``State`` are the two views a backend offers; ``InMemoryState`` is the backend of the
simulator and of ``admit`` (the agent's checkpointed backend lives in ``state_checkpoint``).
The ``*_to_json`` / ``*_from_json`` helpers speak the checkpoint's JSON names as plain dicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol, TypeAlias

# The resource names are defined with the conversion of requests; re-exported here for the
# memory manager's modules.
from numaplane.node.requests import HUGEPAGES_PREFIX, MEMORY, is_memory_resource

__all__ = ["HUGEPAGES_PREFIX", "MEMORY", "is_memory_resource"]


@dataclass(frozen=True, slots=True)
class MemoryTable:
    """One resource on one NUMA node, in bytes (upstream ``MemoryTable``)."""

    total: int
    system_reserved: int
    allocatable: int
    reserved: int
    free: int

    def take(self, amount: int) -> tuple[MemoryTable, int]:
        """Move up to ``amount`` from free to reserved; the new table and what is left to take."""
        taken = min(self.free, amount)
        table = MemoryTable(
            self.total,
            self.system_reserved,
            self.allocatable,
            self.reserved + taken,
            self.free - taken,
        )
        return table, amount - taken

    def give_back(self, amount: int) -> tuple[MemoryTable, int]:
        """Move up to ``amount`` from reserved to free; the new table and what is left."""
        returned = min(self.reserved, amount)
        table = MemoryTable(
            self.total,
            self.system_reserved,
            self.allocatable,
            self.reserved - returned,
            self.free + returned,
        )
        return table, amount - returned


def _frozen_tables(tables: Mapping[str, MemoryTable]) -> Mapping[str, MemoryTable]:
    return MappingProxyType(dict(tables))


@dataclass(frozen=True)
class NUMANodeState:
    """The memory of one NUMA node (upstream ``NUMANodeState``)."""

    number_of_assignments: int
    memory_map: Mapping[str, MemoryTable] = field(default_factory=dict)
    cells: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "memory_map", _frozen_tables(self.memory_map))
        object.__setattr__(self, "cells", tuple(self.cells))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NUMANodeState):
            return NotImplemented
        return (
            self.number_of_assignments == other.number_of_assignments
            and dict(self.memory_map) == dict(other.memory_map)
            and self.cells == other.cells
        )

    def __hash__(self) -> int:
        return hash((self.number_of_assignments, tuple(self.memory_map.items()), self.cells))

    def with_table(self, resource: str, table: MemoryTable) -> NUMANodeState:
        """This node with ``resource``'s table replaced (or added)."""
        tables = dict(self.memory_map)
        tables[resource] = table
        return NUMANodeState(self.number_of_assignments, tables, self.cells)


NUMANodeMap: TypeAlias = Mapping[int, NUMANodeState]
"""The machine state: NUMA node id -> its memory."""


@dataclass(frozen=True, slots=True)
class Block:
    """Memory of one resource assigned to a container (upstream ``Block``).

    ``numa_affinity`` lists the NUMA nodes the block may take memory from, ascending.
    """

    numa_affinity: tuple[int, ...]
    type: str
    size: int


ContainerMemoryAssignments: TypeAlias = Mapping[str, Mapping[str, tuple[Block, ...]]]
"""pod UID -> container name -> the container's blocks."""


class StateReader(Protocol):
    """Read access to the memory manager's state (upstream ``state.Reader``)."""

    def get_machine_state(self) -> NUMANodeMap:
        """The machine state (a snapshot the caller may keep)."""
        ...

    def get_memory_blocks(self, pod_uid: str, container_name: str) -> tuple[Block, ...] | None:
        """The container's blocks, or ``None`` when the container has none stored."""
        ...

    def get_memory_assignments(self) -> ContainerMemoryAssignments:
        """Every container's blocks (a snapshot the caller may keep)."""
        ...

    def memory_assignments_view(self) -> ContainerMemoryAssignments:
        """Every container's blocks, live and read-only: for a caller that only reads and
        is done before the next write (no copy)."""
        ...

    @property
    def generation(self) -> int:
        """A number that changes whenever the assignments may have changed: a reader may
        keep what it derived from them while it stays the same."""
        ...


class State(StateReader, Protocol):
    """Read and write access to the memory manager's state (upstream ``state.State``)."""

    def set_machine_state(self, machine_state: NUMANodeMap) -> None:
        """Replace the machine state."""
        ...

    def set_memory_blocks(self, pod_uid: str, container_name: str, blocks: Iterable[Block]) -> None:
        """Store (replace) one container's blocks."""
        ...

    def set_memory_assignments(self, assignments: ContainerMemoryAssignments) -> None:
        """Replace every container's blocks."""
        ...

    def delete(self, pod_uid: str, container_name: str) -> None:
        """Forget a container's blocks, and its pod once the pod has none left."""
        ...

    def clear_state(self) -> None:
        """Forget the machine state and every assignment."""
        ...


class InMemoryState:
    """A ``State`` held in memory (upstream ``stateMemory``)."""

    def __init__(
        self,
        machine_state: NUMANodeMap | None = None,
        assignments: ContainerMemoryAssignments | None = None,
    ) -> None:
        self._machine_state: dict[int, NUMANodeState] = dict(machine_state or {})
        self._assignments: dict[str, dict[str, tuple[Block, ...]]] = copy_assignments(
            assignments or {}
        )
        self._generation = 0

    def get_machine_state(self) -> NUMANodeMap:
        """The machine state (a snapshot)."""
        return dict(self._machine_state)

    def get_memory_blocks(self, pod_uid: str, container_name: str) -> tuple[Block, ...] | None:
        """The container's blocks, or ``None``."""
        return self._assignments.get(pod_uid, {}).get(container_name)

    def get_memory_assignments(self) -> ContainerMemoryAssignments:
        """Every container's blocks (a snapshot)."""
        # Stored blocks are tuples already: copying the two dict levels is the deep copy.
        return {pod: dict(containers) for pod, containers in self._assignments.items()}

    def memory_assignments_view(self) -> ContainerMemoryAssignments:
        """Every container's blocks, live (valid until the next write)."""
        return self._assignments

    @property
    def generation(self) -> int:
        """Counts the writes to the assignments."""
        return self._generation

    def set_machine_state(self, machine_state: NUMANodeMap) -> None:
        """Replace the machine state."""
        self._machine_state = dict(machine_state)

    def set_memory_blocks(self, pod_uid: str, container_name: str, blocks: Iterable[Block]) -> None:
        """Store one container's blocks."""
        self._assignments.setdefault(pod_uid, {})[container_name] = tuple(blocks)
        self._generation += 1

    def set_memory_assignments(self, assignments: ContainerMemoryAssignments) -> None:
        """Replace every container's blocks."""
        self._assignments = copy_assignments(assignments)
        self._generation += 1

    def delete(self, pod_uid: str, container_name: str) -> None:
        """Forget a container's blocks (and its pod once empty)."""
        containers = self._assignments.get(pod_uid)
        if containers is None:
            return
        containers.pop(container_name, None)
        if not containers:
            del self._assignments[pod_uid]
        self._generation += 1

    def clear_state(self) -> None:
        """Forget everything."""
        self._machine_state = {}
        self._assignments = {}
        self._generation += 1


def copy_assignments(
    assignments: ContainerMemoryAssignments,
) -> dict[str, dict[str, tuple[Block, ...]]]:
    """A deep copy of ``assignments`` as plain dicts (blocks are immutable and shared)."""
    return {
        pod: {name: tuple(blocks) for name, blocks in containers.items()}
        for pod, containers in assignments.items()
    }


# -- comparison ------------------------------------------------------------------------------


def machine_states_equal(first: NUMANodeMap, second: NUMANodeMap) -> bool:
    """Upstream ``areMachineStatesEqual``.

    Same nodes; per node the same number of assignments, the same cells (as sets) and the same
    resources with equal total, system reserved and allocatable. Free and reserved are compared
    as sums over the node's cells group (taken from ``first``), because how a multi-node block
    splits between the nodes of its group depends on Go's map order upstream.
    """
    if set(first) != set(second):
        return False
    for node_id, node1 in first.items():
        node2 = second[node_id]
        if node1.number_of_assignments != node2.number_of_assignments:
            return False
        if sorted(node1.cells) != sorted(node2.cells):
            return False
        if set(node1.memory_map) != set(node2.memory_map):
            return False
        for resource, table1 in node1.memory_map.items():
            table2 = node2.memory_map[resource]
            if (table1.total, table1.system_reserved, table1.allocatable) != (
                table2.total,
                table2.system_reserved,
                table2.allocatable,
            ):
                return False
            if _group_sums(first, node1.cells, resource) != _group_sums(
                second, node1.cells, resource
            ):
                return False
    return True


def _group_sums(state: NUMANodeMap, cells: Iterable[int], resource: str) -> tuple[int, int]:
    free = reserved = 0
    for cell in cells:
        node = state.get(cell)
        table = None if node is None else node.memory_map.get(resource)
        if table is not None:
            free += table.free
            reserved += table.reserved
    return free, reserved
