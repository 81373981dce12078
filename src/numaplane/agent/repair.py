"""Mending checkpoints that a crash left between two writes of one admission or release.

The CPU and memory managers record an admission in several checkpoint writes (an assignment,
then the pool or machine state it changed; a release the other way round), so an agent killed
between two of them leaves a file its policy refuses at the next start. The pod records are
written after an admission completes and before a release starts, so only a pod the records do
not name can be caught half-written: each repair drops what such pods hold and recomputes the
derived part (the CPU manager's shared pool, the memory manager's machine state) from the
recorded pods. A state that no interrupted write explains (CPUs or NUMA nodes the machine lacks,
other totals or reservations, recorded pods that overlap or overcommit) is left alone, for the
policy to refuse with its own message.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from numaplane.api.kubeletconfig import KubeletConfiguration
from numaplane.api.quantity import Quantity
from numaplane.cpuset import CPUSet
from numaplane.errors import NumaplaneError
from numaplane.node.admission import Node
from numaplane.node.cpumanager import state as cpu_state
from numaplane.node.devicemanager import state as device_state
from numaplane.node.memorymanager import state as memory_state
from numaplane.node.memorymanager.accounting import expected_machine_state
from numaplane.node.memorymanager.machine_state import default_machine_state
from numaplane.node.memorymanager.reserved import system_reserved_memory
from numaplane.node.stale_state import active_containers
from numaplane.topology.model import Machine

_log = logging.getLogger(__name__)


def repair_torn_cpu_state(
    state: cpu_state.State,
    recorded: set[str],
    machine: Machine,
    config: KubeletConfiguration,
) -> bool:
    """Mend a CPU checkpoint that a crash left between two of the static policy's writes.

    The policy records an assignment and the shrunken shared pool in two writes (and a release
    in two more), so a crash between them leaves a CPU in both, or in neither. The assignments
    of unrecorded pods are dropped and the pool recomputed from the recorded ones. A state
    naming CPUs the machine does not have, or whose recorded assignments overlap, is left for
    the policy to refuse. Returns whether anything changed.
    """
    strict = config.cpu_manager_policy_options.get("strict-cpu-reservation") == "true"
    if strict and not config.reserved_system_cpus:
        return False  # the reserved set is the policy's choice: nothing to recompute from
    default = state.get_default_cpu_set()
    assignments = state.get_cpu_assignments()
    if not default:
        return False  # a first start, or a state the policy refuses with its own message
    every = default
    kept: list[int] = []
    for pod_uid, containers in assignments.items():
        for cpus in containers.values():
            every = every | cpus
            if pod_uid in recorded:
                kept.extend(cpus)
    if not every <= machine.all_cpu_ids or len(kept) != len(set(kept)):
        return False
    expected = machine.all_cpu_ids - CPUSet(kept)
    if strict:
        expected = expected - config.reserved_system_cpus
    stale = [(u, n) for u, cs in assignments.items() if u not in recorded for n in cs]
    if not stale and expected == default:
        return False
    _log.warning(
        "repairing the CPU checkpoint after an interrupted write: shared pool %s -> %s, "
        "dropping %d assignment(s) of unrecorded pods",
        default,
        expected,
        len(stale),
    )
    for pod_uid, name in stale:
        state.delete(pod_uid, name)
    state.set_default_cpu_set(expected)
    return True


def repair_torn_memory_state(
    state: memory_state.State,
    recorded: set[str],
    machine: Machine,
    config: KubeletConfiguration,
) -> bool:
    """Mend a ``Static`` memory checkpoint that a crash left between two of its writes.

    An allocation stores the new machine state, then the container's blocks (a release the
    other way round), so a crash between them leaves memory reserved without blocks, or blocks
    without memory, and the policy's start finds "the expected machine state is different from
    the real one". The blocks of unrecorded pods are dropped and the machine state rebuilt as
    the policy's start computes the expected one: the default state with every remaining block
    replayed onto it. Only when the stored state has exactly the default state's nodes,
    resources, totals, system reservations and allocatable memory, and the recorded blocks fit,
    is anything written. Returns whether anything changed.
    """
    stored = state.get_machine_state()
    if not stored:
        return False  # a first start, or a state the policy refuses with its own message
    try:
        default = default_machine_state(machine, _system_reserved(machine, config))
    except NumaplaneError:
        return False  # a bad reservation: building the node reports it
    if not _same_layout(stored, default):
        return False
    assignments = state.get_memory_assignments()
    kept = {uid: containers for uid, containers in assignments.items() if uid in recorded}
    try:
        expected = expected_machine_state(default, kept)
    except NumaplaneError:
        return False  # a block on a node or resource the machine lacks
    wanted: dict[str, int] = {}
    for containers in kept.values():
        for blocks in containers.values():
            for block in blocks:
                wanted[block.type] = wanted.get(block.type, 0) + block.size
    if _reserved_per_resource(expected) != {r: n for r, n in wanted.items() if n}:
        return False  # the recorded blocks do not fit: no interrupted write does that
    stale = len(assignments) - len(kept)
    if not stale and memory_state.machine_states_equal(stored, expected):
        return False
    _log.warning(
        "repairing the memory checkpoint after an interrupted write: rebuilding the machine "
        "state from %d recorded pod(s), dropping the blocks of %d unrecorded pod(s)",
        len(kept),
        stale,
    )
    if stale:
        state.set_memory_assignments(kept)
    state.set_machine_state(expected)
    return True


def drop_unrecorded_devices(state: device_state.State, recorded: set[str]) -> bool:
    """Forget the device checkpoint's entries of pods the records do not name (an admission
    interrupted after the device manager's write). Returns whether anything changed."""
    stale = sorted(state.pod_uids() - recorded)
    if not stale:
        return False
    _log.warning("dropping the devices of %d unrecorded pod(s) from the checkpoint", len(stale))
    state.remove_pods(stale)
    return True


def drop_stale_allocations(node: Node) -> None:
    """Release what the checkpoints hold for pods the node does not know (a crash between a
    checkpoint write and the pod records' write)."""
    known = {pod.uid for pod in node.pods}
    for pod_uid, containers in node.cpu_manager.exclusive_assignments().items():
        if pod_uid not in known:
            for name in containers:
                node.cpu_manager.remove_container(pod_uid, name)
    active = active_containers(node.pods)
    node.memory_manager.remove_stale_state(active)
    node.device_manager.remove_stale_state(active)
    for pod_uid in set(node.device_manager.state.pod_uids()) - known:
        node.device_manager.remove_pod(pod_uid)


def _system_reserved(
    machine: Machine, config: KubeletConfiguration
) -> Mapping[int, Mapping[str, int]]:
    # The reservation the node's memory manager starts with: Node Allocatable's memory part
    # (against the machine's memory and hugepage capacity, as ``Node.capacity`` reports them)
    # checked against ``reservedMemory``.
    capacity: dict[str, Quantity] = {"memory": Quantity.parse(machine.memory_bytes)}
    hugepages: dict[str, int] = {}
    for numa in machine.numa_nodes:
        for pages in numa.hugepages:
            name = pages.resource_name
            hugepages[name] = hugepages.get(name, 0) + pages.total * pages.size_bytes
    for name, total in hugepages.items():
        capacity[name] = Quantity.parse(total)
    reservation = config.node_allocatable_reservation(capacity)
    return system_reserved_memory(machine, reservation, config.reserved_memory)


def _same_layout(stored: memory_state.NUMANodeMap, default: memory_state.NUMANodeMap) -> bool:
    if set(stored) != set(default):
        return False
    for node_id, node in default.items():
        tables = stored[node_id].memory_map
        if set(tables) != set(node.memory_map):
            return False
        for resource, table in node.memory_map.items():
            other = tables[resource]
            if (other.total, other.system_reserved, other.allocatable) != (
                table.total,
                table.system_reserved,
                table.allocatable,
            ):
                return False
    return True


def _reserved_per_resource(machine_state: memory_state.NUMANodeMap) -> dict[str, int]:
    totals: dict[str, int] = {}
    for node in machine_state.values():
        for resource, table in node.memory_map.items():
            if table.reserved:
                totals[resource] = totals.get(resource, 0) + table.reserved
    return totals
