"""Bookkeeping of memory blocks on the machine state: reserve, release, replay.

A block of ``size`` bytes over nodes ``n1 < n2 < ...`` counts once on every one of its nodes and
makes those nodes one group (``cells``). Its bytes are taken from the nodes' free memory in
node order (as much as each has), and given back from their reserved memory in the same order;
so within a group only the group's sums are meaningful, as upstream.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from numaplane.node.memorymanager.errors import MemoryStateError
from numaplane.node.memorymanager.state import (
    Block,
    ContainerMemoryAssignments,
    MemoryTable,
    NUMANodeMap,
    NUMANodeState,
)


def reserve(
    machine_state: NUMANodeMap, nodes: tuple[int, ...], resource: str, size: int
) -> dict[int, NUMANodeState]:
    """Upstream ``updateMachineState``: count one more block on every node of ``nodes``, make
    ``nodes`` their group, and take ``size`` bytes from their free memory in node order."""
    updated = dict(machine_state)
    remaining = size
    for node_id in nodes:
        node = updated.get(node_id)
        if node is None:
            continue
        tables = node.memory_map
        table = tables.get(resource)
        if remaining > 0 and table is not None and table.free > 0:
            table, remaining = table.take(remaining)
            tables = {**tables, resource: table}
        updated[node_id] = NUMANodeState(node.number_of_assignments + 1, tables, nodes)
    return updated


def reserve_blocks(
    machine_state: NUMANodeMap, nodes: tuple[int, ...], sizes: Sequence[tuple[str, int]]
) -> dict[int, NUMANodeState]:
    """``reserve`` of every ``(resource, size)`` of ``sizes`` in turn (one container's
    blocks over the same ``nodes``, distinct ids: a mask's bits), building each node's new
    state once."""
    updated = dict(machine_state)
    if not sizes:
        return updated  # no block: nothing counts, no group forms
    remaining = [size for _, size in sizes]
    for node_id in nodes:
        node = updated.get(node_id)
        if node is None:
            continue
        tables: Mapping[str, MemoryTable] = node.memory_map
        changed: dict[str, MemoryTable] | None = None
        for index, (resource, _) in enumerate(sizes):
            table = (tables if changed is None else changed).get(resource)
            if remaining[index] > 0 and table is not None and table.free > 0:
                table, remaining[index] = table.take(remaining[index])
                if changed is None:
                    changed = dict(tables)
                changed[resource] = table
        updated[node_id] = NUMANodeState(
            node.number_of_assignments + len(sizes),
            tables if changed is None else changed,
            nodes,
        )
    return updated


def release(machine_state: NUMANodeMap, block: Block) -> dict[int, NUMANodeState]:
    """Undo one block: one block less on each of its nodes (a node left without blocks is
    alone in its group again) and ``block.size`` bytes back from reserved, in node order."""
    updated = dict(machine_state)
    remaining = block.size
    for node_id in block.numa_affinity:
        node = updated.get(node_id)
        if node is None:
            continue
        count = node.number_of_assignments - 1
        tables = node.memory_map
        table = tables.get(block.type)
        if remaining > 0 and table is not None and table.reserved > 0:
            table, remaining = table.give_back(remaining)
            tables = {**tables, block.type: table}
        cells = (node_id,) if count == 0 else node.cells
        updated[node_id] = NUMANodeState(count, tables, cells)
    return updated


def release_blocks(machine_state: NUMANodeMap, blocks: Iterable[Block]) -> dict[int, NUMANodeState]:
    """``release`` of every block in turn, building each touched node's new state once."""
    updated = dict(machine_state)
    # node id -> [number of assignments, tables, cells] while blocks are given back
    pending: dict[int, list[Any]] = {}
    for block in blocks:
        remaining = block.size
        for node_id in block.numa_affinity:
            work = pending.get(node_id)
            if work is None:
                node = updated.get(node_id)
                if node is None:
                    continue
                work = pending[node_id] = [node.number_of_assignments, node.memory_map, node.cells]
            count = work[0] - 1
            tables = work[1]
            table = tables.get(block.type)
            if remaining > 0 and table is not None and table.reserved > 0:
                table, remaining = table.give_back(remaining)
                tables = {**tables, block.type: table}
            work[0], work[1] = count, tables
            if count == 0:
                work[2] = (node_id,)
    for node_id, (count, tables, cells) in pending.items():
        updated[node_id] = NUMANodeState(count, tables, cells)
    return updated


def replay(
    expected: NUMANodeMap, block: Block, pod_uid: str, container_name: str
) -> dict[int, NUMANodeState]:
    """Carve one stored block out of ``expected`` as ``Allocate`` did (``validateState``);
    raises ``MemoryStateError`` for a node or resource the machine lacks."""
    updated = dict(expected)
    remaining = block.size
    for node_id in block.numa_affinity:
        node = updated.get(node_id)
        if node is None:
            raise MemoryStateError(
                f"[memorymanager] (pod: {pod_uid}, container: {container_name}) the memory "
                "assignment uses the NUMA that does not exist"
            )
        node = replace(
            node, number_of_assignments=node.number_of_assignments + 1, cells=block.numa_affinity
        )
        table = node.memory_map.get(block.type)
        if table is None:
            raise MemoryStateError(
                f"[memorymanager] (pod: {pod_uid}, container: {container_name}) the memory "
                "assignment uses memory resource that does not exist"
            )
        if remaining > 0:
            table, remaining = table.take(remaining)
            node = node.with_table(block.type, table)
        updated[node_id] = node
    return updated


def expected_machine_state(
    default: NUMANodeMap, assignments: ContainerMemoryAssignments
) -> NUMANodeMap:
    """The machine state ``assignments`` explain: every stored block replayed onto ``default``
    (pods, containers and blocks in their stored order), as the ``Static`` policy's start
    checks it. Raises ``MemoryStateError`` for a block on a node or resource the machine
    lacks."""
    expected = default
    for pod_uid, containers in assignments.items():
        for container_name, blocks in containers.items():
            for block in blocks:
                expected = replay(expected, block, pod_uid, container_name)
    return expected
