"""The default machine state: what every NUMA node offers before any container runs (§9.2).

Per node and per hugepage size, resource ``hugepages-<size>`` gets total = pages x page size,
allocatable = free = total - its system reservation. Regular ``memory`` gets total = the node's
memory and allocatable = free = total - its system reservation - every hugepage byte of the node
(hugepages are carved out of the node's memory). Each node starts alone in its group.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias

from numaplane.node.memorymanager.state import MEMORY, MemoryTable, NUMANodeState
from numaplane.topology.model import Machine

SystemReserved: TypeAlias = Mapping[int, Mapping[str, int]]
"""NUMA node id -> resource name -> bytes reserved for the system on that node."""


def reserved_on(system_reserved: SystemReserved, node_id: int, resource: str) -> int:
    """The system reservation of ``resource`` on ``node_id`` (0 when none is configured)."""
    return system_reserved.get(node_id, {}).get(resource, 0)


def default_machine_state(
    machine: Machine, system_reserved: SystemReserved
) -> dict[int, NUMANodeState]:
    """Upstream ``getDefaultMachineState``: every node empty, hugepage sizes included."""
    state: dict[int, NUMANodeState] = {}
    for node in machine.numa_nodes:
        tables: dict[str, MemoryTable] = {}
        hugepage_bytes = 0
        for pages in node.hugepages:
            name = pages.resource_name
            total = pages.total * pages.size_bytes
            reserved = reserved_on(system_reserved, node.id, name)
            tables[name] = _empty_table(total, reserved, total - reserved)
            hugepage_bytes += total
        reserved = reserved_on(system_reserved, node.id, MEMORY)
        allocatable = node.memory_bytes - reserved - hugepage_bytes
        tables[MEMORY] = _empty_table(node.memory_bytes, reserved, allocatable)
        state[node.id] = NUMANodeState(number_of_assignments=0, memory_map=tables, cells=(node.id,))
    return state


def _empty_table(total: int, system_reserved: int, allocatable: int) -> MemoryTable:
    return MemoryTable(
        total=total,
        system_reserved=system_reserved,
        allocatable=allocatable,
        reserved=0,
        free=allocatable,
    )
