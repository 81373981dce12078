"""NUMA utilization read from the CPU and memory managers, for prefer-most-allocated-numa-node.

``ManagersUtilization`` implements the Topology Manager's ``NUMAUtilization`` Protocol over the
managers' read-only views; it holds no state of its own, so every merge sees the allocations of
the moment (the pod being admitted has not allocated yet when its hints are merged).

- CPU (static policy only; ``None`` under ``none``): per NUMA node, the node's CPUs minus the
  reserved CPUs are its allocatable CPUs; the CPUs of every exclusive assignment (counted once
  even when an app container reuses an init container's CPUs) that fall among them are its
  assigned CPUs; score = assigned x 100 / allocatable.
- memory (``Static`` policy only; ``None`` under ``None``): per NUMA node, the regular
  ``memory`` table of the machine state: score = reserved x 100 / allocatable, where allocatable
  already leaves out that node's system reservation. Hugepages are not counted.

Scores are exact ``Fraction`` values; a node with nothing allocatable scores 0.
"""

from __future__ import annotations

from fractions import Fraction

from numaplane.node.cpumanager.manager import CPUManager
from numaplane.node.cpumanager.policy_none import POLICY_NONE as CPU_POLICY_NONE
from numaplane.node.memorymanager.manager import MemoryManager
from numaplane.node.memorymanager.policy_static import POLICY_STATIC as MEMORY_POLICY_STATIC
from numaplane.node.memorymanager.state import MEMORY
from numaplane.node.topologymanager.numa_utilization import Scores
from numaplane.topology.cpuset import CPUSet


def percent(used: int, allocatable: int) -> Fraction:
    """``used x 100 / allocatable`` exactly; 0 when nothing is allocatable."""
    if allocatable <= 0:
        return Fraction(0)
    return Fraction(used * 100, allocatable)


def cpu_scores(cpu_manager: CPUManager) -> Scores | None:
    """Exclusive-CPU utilization per NUMA node, or ``None`` under the ``none`` policy."""
    if cpu_manager.policy.name == CPU_POLICY_NONE:
        return None
    assigned = CPUSet()
    for containers in cpu_manager.exclusive_assignments().values():
        for cpus in containers.values():
            assigned = assigned | cpus
    allocatable = cpu_manager.allocatable_cpus()
    details = cpu_manager.topology.details
    scores: dict[int, Fraction] = {}
    for node in details.numa_nodes():
        node_allocatable = details.cpus_in_numa_nodes(node) & allocatable
        scores[node] = percent(len(assigned & node_allocatable), len(node_allocatable))
    return scores


def memory_scores(memory_manager: MemoryManager) -> Scores | None:
    """Regular-memory utilization per NUMA node, or ``None`` unless the policy is ``Static``."""
    if memory_manager.policy_name != MEMORY_POLICY_STATIC:
        return None
    scores: dict[int, Fraction] = {}
    for node, node_state in memory_manager.state.get_machine_state().items():
        table = node_state.memory_map.get(MEMORY)
        scores[node] = Fraction(0) if table is None else percent(table.reserved, table.allocatable)
    return scores


class ManagersUtilization:
    """``NUMAUtilization`` over a CPU manager and a memory manager (read-only)."""

    def __init__(self, cpu_manager: CPUManager, memory_manager: MemoryManager) -> None:
        self.cpu_manager = cpu_manager
        self.memory_manager = memory_manager

    def cpu_scores(self) -> Scores | None:
        """See ``cpu_scores``."""
        return cpu_scores(self.cpu_manager)

    def memory_scores(self) -> Scores | None:
        """See ``memory_scores``."""
        return memory_scores(self.memory_manager)
