"""The kubelet's Memory Manager: NUMA-aware placement of memory and hugepages (§9).

``MemoryManager`` (``manager``) is the hint provider; ``StaticPolicy`` (``policy_static``) and
``NonePolicy`` (``policy_none``) place memory; ``state`` holds the machine state and the
containers' blocks.
"""

from numaplane.node.memorymanager.errors import (
    MemoryAllocationError,
    MemoryConfigurationError,
    MemoryManagerError,
    MemoryStateError,
    ReservedMemoryError,
)
from numaplane.node.memorymanager.machine_state import SystemReserved, default_machine_state
from numaplane.node.memorymanager.manager import MemoryManager, new_policy
from numaplane.node.memorymanager.metrics import MemoryManagerMetrics
from numaplane.node.memorymanager.policy import Policy
from numaplane.node.memorymanager.policy_none import NonePolicy
from numaplane.node.memorymanager.policy_static import StaticPolicy
from numaplane.node.memorymanager.reserved import (
    MemoryReservation,
    convert_reserved,
    system_reserved_memory,
    validate_reserved_memory,
)
from numaplane.node.memorymanager.state import (
    Block,
    ContainerMemoryAssignments,
    InMemoryState,
    MemoryTable,
    NUMANodeMap,
    NUMANodeState,
    State,
    StateReader,
)

__all__ = [
    "Block",
    "ContainerMemoryAssignments",
    "InMemoryState",
    "MemoryAllocationError",
    "MemoryConfigurationError",
    "MemoryManager",
    "MemoryManagerError",
    "MemoryManagerMetrics",
    "MemoryReservation",
    "MemoryStateError",
    "MemoryTable",
    "NUMANodeMap",
    "NUMANodeState",
    "NonePolicy",
    "Policy",
    "ReservedMemoryError",
    "State",
    "StateReader",
    "StaticPolicy",
    "SystemReserved",
    "convert_reserved",
    "default_machine_state",
    "new_policy",
    "system_reserved_memory",
    "validate_reserved_memory",
]
