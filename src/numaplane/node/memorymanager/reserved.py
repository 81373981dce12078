"""Reserved memory configuration (``--reserved-memory``) checks and conversion (§9.5).

The kubelet's ``reservedMemory`` lists, per NUMA node, how much of each memory resource the
system keeps. ``validate_reserved_memory`` checks it against the machine and the Node
Allocatable reservation (their sums must agree per resource), ``convert_reserved`` turns it into
bytes per node and resource; ``system_reserved_memory`` does both, as upstream
``getSystemReservedMemory`` does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from numaplane.api.kubeletvalues import MemoryReservation
from numaplane.api.quantity import Quantity
from numaplane.node.memorymanager.errors import ReservedMemoryError
from numaplane.node.memorymanager.machine_state import SystemReserved
from numaplane.node.memorymanager.state import is_memory_resource
from numaplane.topology.model import Machine

_INT64_MAX = (1 << 63) - 1

__all__ = [
    "MemoryReservation",
    "convert_reserved",
    "system_reserved_memory",
    "validate_reserved_memory",
]


def _total_reserved_per_type(
    machine: Machine, reserved_memory: Sequence[MemoryReservation]
) -> dict[str, Quantity]:
    known = set(machine.numa_ids)
    totals: dict[str, Quantity] = {}
    for reservation in reserved_memory:
        if reservation.numa_node not in known:
            raise ReservedMemoryError(
                "the reserved memory configuration references a NUMA node "
                f"{reservation.numa_node} that does not exist on this machine"
            )
        for resource, quantity in reservation.limits.items():
            # Upstream adds the running total to the new entry, so the entry's format wins.
            totals[resource] = quantity + totals[resource] if resource in totals else quantity
    return totals


def validate_reserved_memory(
    machine: Machine,
    node_allocatable_reservation: Mapping[str, Quantity],
    reserved_memory: Sequence[MemoryReservation],
) -> None:
    """Upstream ``validateReservedMemory``; raises ``ReservedMemoryError`` on a mismatch.

    Every resource named by a reservation, and every memory or hugepage resource of the Node
    Allocatable reservation, must sum to the same amount on both sides.
    """
    totals = _total_reserved_per_type(machine, reserved_memory)
    types = list(totals)
    types += [
        name
        for name in node_allocatable_reservation
        if is_memory_resource(name) and name not in totals
    ]
    for resource in types:
        allocatable = Quantity.zero()
        if resource in node_allocatable_reservation:
            allocatable = allocatable + node_allocatable_reservation[resource]
        reserved = Quantity.zero()
        if resource in totals:
            reserved = reserved + totals[resource]
        if allocatable != reserved:
            raise ReservedMemoryError(
                f'the total amount "{reserved}" of type "{resource}" is not equal to the value '
                f'"{allocatable}" determined by Node Allocatable feature'
            )


def convert_reserved(
    machine: Machine, reserved_memory: Sequence[MemoryReservation]
) -> dict[int, dict[str, int]]:
    """Upstream ``convertReserved``: bytes per node (every node present) and resource."""
    converted: dict[int, dict[str, int]] = {node_id: {} for node_id in machine.numa_ids}
    for reservation in reserved_memory:
        for resource, quantity in reservation.limits.items():
            exact = quantity.amount
            if exact.denominator != 1 or not -_INT64_MAX - 1 <= exact.numerator <= _INT64_MAX:
                raise ReservedMemoryError("could not covert a variable of type Quantity to int64")
            converted.setdefault(reservation.numa_node, {})[resource] = exact.numerator
    return converted


def system_reserved_memory(
    machine: Machine,
    node_allocatable_reservation: Mapping[str, Quantity],
    reserved_memory: Sequence[MemoryReservation],
) -> SystemReserved:
    """Upstream ``getSystemReservedMemory``: validate, then convert."""
    validate_reserved_memory(machine, node_allocatable_reservation, reserved_memory)
    return convert_reserved(machine, reserved_memory)
