"""Readers of upstream test fixtures and of the memory state's checkpoint JSON names.

Only the tests and the conformance drivers read these shapes; numaplane itself builds its CPU
topology and machine from ``numaplane.topology`` and writes checkpoints through the Go value
model (``numaplane.node.*.checkpoint``).

- ``cpu_topology_from_fixture``: a ``CPUTopology`` from a vector's topology (declared counters,
  or a cAdvisor topology discovered as upstream's ``topology.Discover`` does);
- ``machine_from_cadvisor``: a CPU-less ``Machine`` from cAdvisor's memory fields;
- ``*_to_json`` / ``*_from_json``: the memory manager's state under the checkpoint's names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from numaplane.node.cpumanager.cpu_details import CPUDetails, CPUInfo
from numaplane.node.cpumanager.topology import CPUTopology
from numaplane.node.errors import NodeError
from numaplane.node.memorymanager.state import (
    Block,
    ContainerMemoryAssignments,
    MemoryTable,
    NUMANodeMap,
    NUMANodeState,
)
from numaplane.topology.cpuset import CPUSet
from numaplane.topology.model import HugePages, Machine, NUMANode

# -- CPU topologies ---------------------------------------------------------------------------


def cpu_topology_from_fixture(data: Mapping[str, Any]) -> CPUTopology:
    """A topology from a vector fixture.

    Two shapes are accepted: ``topologies.json`` entries (``num_cpus`` ... and ``cpus``:
    ``[{cpu, core, socket, numa[, uncore_cache]}]``, counters taken as declared, ``None`` =
    0) and cAdvisor topologies (``cadvisor_topology``: ``[{numa, cores: [{socket, id,
    threads[, uncore_cache]}]}]``), which are discovered as ``topology.Discover`` does.
    """
    if "cadvisor_topology" in data:
        return _cpu_topology_from_cadvisor(data["cadvisor_topology"])
    details = CPUDetails.of(
        (
            int(e["cpu"]),
            CPUInfo(
                numa=int(e["numa"]),
                socket=int(e["socket"]),
                core=int(e["core"]),
                uncore_cache=int(e.get("uncore_cache") or 0),
            ),
        )
        for e in data["cpus"]
    )
    return CPUTopology(
        num_cpus=int(data.get("num_cpus") or 0),
        num_sockets=int(data.get("num_sockets") or 0),
        num_cores=int(data.get("num_cores") or 0),
        details=details,
        num_numa_nodes=int(data.get("num_numa_nodes") or 0),
        num_uncore_cache=int(data.get("num_uncore_cache") or 0),
    )


def _cpu_topology_from_cadvisor(nodes: Iterable[Mapping[str, Any]]) -> CPUTopology:
    info: dict[int, CPUInfo] = {}
    num_cores = 0
    sockets: set[int] = set()
    for node in nodes:
        cores = node.get("cores") or ()
        num_cores += len(cores)
        for core in cores:
            threads = [int(t) for t in core["threads"]]
            if not threads:
                raise NodeError("no cpus provided")
            if len(set(threads)) != len(threads):
                raise NodeError("cpus provided are not unique")
            socket = int(core["socket"])
            sockets.add(socket)
            uncore = core.get("uncore_cache")
            for cpu in threads:
                info[cpu] = CPUInfo(
                    numa=int(node["numa"]),
                    socket=socket,
                    core=min(threads),
                    uncore_cache=socket if uncore is None else int(uncore),
                )
    details = CPUDetails.of(info)
    return CPUTopology(
        num_cpus=len(info),
        num_sockets=len(sockets),
        num_cores=num_cores,
        details=details,
        num_numa_nodes=len(details.numa_nodes()),
        num_uncore_cache=len(details.uncore_caches()),
    )


# -- machines --------------------------------------------------------------------------------


def machine_from_cadvisor(data: Mapping[str, Any] | None, name: str = "cadvisor") -> Machine:
    """A CPU-less ``Machine`` from cAdvisor's ``MachineInfo`` memory fields.

    ``data`` is ``{"topology": [{"id", "memory"?, "hugepages"?: [{"page_size_kb",
    "num_pages"}]}]}``; ``None`` gives a machine without NUMA nodes.
    """
    nodes = []
    for entry in (data or {}).get("topology") or ():
        pages = tuple(
            HugePages(
                size_kib=int(hp["page_size_kb"]),
                total=int(hp["num_pages"]),
                free=int(hp["num_pages"]),
            )
            for hp in entry.get("hugepages") or ()
        )
        nodes.append(
            NUMANode(
                id=int(entry["id"]),
                cpus=CPUSet(),
                memory_bytes=int(entry.get("memory", 0)),
                hugepages=pages,
            )
        )
    return Machine(name=name, cpus=(), numa_nodes=tuple(nodes), source=f"synthetic:{name}")


# -- memory state under the checkpoint's JSON names -------------------------------------------


def memory_table_to_json(table: MemoryTable) -> dict[str, int]:
    """A table with the checkpoint's names, in the checkpoint's field order."""
    return {
        "total": table.total,
        "systemReserved": table.system_reserved,
        "allocatable": table.allocatable,
        "reserved": table.reserved,
        "free": table.free,
    }


def memory_table_from_json(data: Mapping[str, Any]) -> MemoryTable:
    """A table from the checkpoint's names (missing numbers read as 0, like Go)."""
    return MemoryTable(
        total=int(data.get("total", 0)),
        system_reserved=int(data.get("systemReserved", 0)),
        allocatable=int(data.get("allocatable", 0)),
        reserved=int(data.get("reserved", 0)),
        free=int(data.get("free", 0)),
    )


def node_state_to_json(node: NUMANodeState) -> dict[str, Any]:
    """One node with the checkpoint's names."""
    return {
        "numberOfAssignments": node.number_of_assignments,
        "memoryMap": {name: memory_table_to_json(t) for name, t in node.memory_map.items()},
        "cells": list(node.cells),
    }


def node_state_from_json(data: Mapping[str, Any]) -> NUMANodeState:
    """One node from the checkpoint's names (``null`` maps and lists read as empty)."""
    tables = data.get("memoryMap") or {}
    return NUMANodeState(
        number_of_assignments=int(data.get("numberOfAssignments", 0)),
        memory_map={name: memory_table_from_json(t) for name, t in tables.items()},
        cells=tuple(int(c) for c in data.get("cells") or ()),
    )


def machine_state_to_json(machine_state: NUMANodeMap) -> dict[str, Any]:
    """The machine state as the checkpoint writes it: node ids as strings, ascending."""
    return {
        str(node_id): node_state_to_json(machine_state[node_id])
        for node_id in sorted(machine_state)
    }


def machine_state_from_json(data: Mapping[str, Any] | None) -> dict[int, NUMANodeState]:
    """The machine state from the checkpoint's JSON (``None`` reads as empty)."""
    return {int(node_id): node_state_from_json(node) for node_id, node in (data or {}).items()}


def block_to_json(block: Block) -> dict[str, Any]:
    """A block with the checkpoint's names."""
    return {"numaAffinity": list(block.numa_affinity), "type": block.type, "size": block.size}


def block_from_json(data: Mapping[str, Any]) -> Block:
    """A block from the checkpoint's names."""
    return Block(
        numa_affinity=tuple(int(n) for n in data.get("numaAffinity") or ()),
        type=str(data.get("type", "")),
        size=int(data.get("size", 0)),
    )


def assignments_to_json(assignments: ContainerMemoryAssignments) -> dict[str, Any]:
    """Assignments as the checkpoint's ``entries``: pod -> container -> list of blocks."""
    return {
        pod: {name: [block_to_json(b) for b in blocks] for name, blocks in containers.items()}
        for pod, containers in assignments.items()
    }


def assignments_from_json(
    data: Mapping[str, Any] | None,
) -> dict[str, dict[str, tuple[Block, ...]]]:
    """Assignments from the checkpoint's ``entries`` (``None`` reads as empty)."""
    return {
        pod: {
            name: tuple(block_from_json(b) for b in blocks or ())
            for name, blocks in (containers or {}).items()
        }
        for pod, containers in (data or {}).items()
    }
