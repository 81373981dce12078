"""The static CPU policy's hints as a rule (``StructuredHints``), not a list of masks.

The same hints as ``generate_cpu_topology_hints``: a mask of the NUMA nodes with CPUs is a hint
when it holds every reusable CPU's node and its available CPUs plus the reusable ones reach the
request; preferred when as narrow as the narrowest mask whose *total* CPUs reach the request, or
(align-by-socket) when it spans the fewest sockets.
"""

from __future__ import annotations

from numaplane.node.cpumanager.topology import CPUTopology
from numaplane.node.cpumanager.topology_hints import is_hint_socket_aligned
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.node.topologymanager.hint_sets import (
    Family,
    StructuredHints,
    Threshold,
    min_width_meeting,
)
from numaplane.topology.cpuset import CPUSet


def cpu_hint_set(
    topology: CPUTopology,
    available: CPUSet,
    reusable: CPUSet,
    request: int,
    align_by_socket: bool = False,
) -> StructuredHints:
    """``generate_cpu_topology_hints`` as a rule; it lists the same hints in the same order."""
    details = topology.details
    numa_nodes = details.numa_nodes()
    universe = 0
    for node in numa_nodes:
        universe |= 1 << node
    numa_of = topology.numa_of_cpu
    totals = topology.cpus_per_numa_node
    min_affinity = min_width_meeting(
        numa_nodes, [Threshold.per_node(totals, request)], len(numa_nodes)
    )
    free: dict[int, int] = {}
    for cpu in available:
        node = numa_of.get(cpu, 0)
        free[node] = free.get(node, 0) + 1
    reusable_nodes = [numa_of.get(cpu, 0) for cpu in reusable]
    hits = tuple(sorted({1 << n if 0 <= n < 64 else 0 for n in reusable_nodes}))
    family = Family(
        universe,
        (Threshold.per_node(free, request - len(reusable_nodes)),),
        hits,
    )
    aligned = None
    if align_by_socket:

        def aligned(mask: int) -> bool:
            hint = TopologyHint(BitMask.from_int(mask), False)
            return is_hint_socket_aligned(topology, hint, min_affinity)

    return StructuredHints(numa_nodes, [family], (), min_affinity, aligned)
