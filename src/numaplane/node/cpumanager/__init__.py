"""The kubelet's CPU Manager: ``none`` and ``static`` policies, allocator, hints, state."""

from numaplane.node.cpumanager.cpu_assignment import (
    CPUAccumulator,
    CPUSortingStrategy,
    take_by_topology_numa_packed,
)
from numaplane.node.cpumanager.cpu_details import CPUDetails, CPUInfo
from numaplane.node.cpumanager.errors import SMTAlignmentError
from numaplane.node.cpumanager.manager import CPUManager, new_policy
from numaplane.node.cpumanager.metrics import CPUManagerMetrics
from numaplane.node.cpumanager.numa_distributed import take_by_topology_numa_distributed
from numaplane.node.cpumanager.policy import Policy
from numaplane.node.cpumanager.policy_none import NonePolicy
from numaplane.node.cpumanager.policy_options import FeatureGates, GateReader, StaticPolicyOptions
from numaplane.node.cpumanager.policy_static import StaticPolicy
from numaplane.node.cpumanager.state import InMemoryState, State, StateReader
from numaplane.node.cpumanager.topology import CPUTopology

__all__ = [
    "CPUAccumulator",
    "CPUDetails",
    "CPUInfo",
    "CPUManager",
    "CPUManagerMetrics",
    "CPUSortingStrategy",
    "CPUTopology",
    "FeatureGates",
    "GateReader",
    "InMemoryState",
    "NonePolicy",
    "Policy",
    "SMTAlignmentError",
    "State",
    "StateReader",
    "StaticPolicy",
    "StaticPolicyOptions",
    "new_policy",
    "take_by_topology_numa_distributed",
    "take_by_topology_numa_packed",
]
