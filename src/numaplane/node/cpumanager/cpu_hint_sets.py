"""The static CPU policy's hints as a rule (``StructuredHints``), not a list of masks.

Upstream's ``generateCPUTopologyHints`` (written the upstream way in
``numaplane.testing.upstream_hints``) as a rule: a mask of the NUMA nodes with CPUs is a hint
when it holds every reusable CPU's node and its available CPUs plus the reusable ones reach the
request; preferred when as narrow as the narrowest mask whose *total* CPUs reach the request, or
(align-by-socket) when it spans the fewest sockets.

The rule depends on the topology and only on the request, the free CPUs per NUMA node, how many
CPUs are reusable and which nodes they lie in: the same rule recurs from admission to admission
(small requests on a machine that fills and drains), so it is built once per such key and
shared (a ``StructuredHints`` is an immutable value; what consumers derive from it lazily is
shared too).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import cast

from numaplane.node.cpumanager.topology import CPUTopology
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.node.topologymanager.hint_rules import Family, Threshold, min_width_meeting
from numaplane.node.topologymanager.hint_sets import StructuredHints
from numaplane.topology.cpuset import CPUSet


def cpu_hint_set(
    topology: CPUTopology,
    available: CPUSet,
    reusable: CPUSet,
    request: int,
    align_by_socket: bool = False,
) -> StructuredHints:
    """Upstream ``generateCPUTopologyHints`` as a rule; it lists the same hints in the same
    order."""
    reusable_nodes = _per_node_counts(topology, reusable)
    num_reusable = sum(reusable_nodes.values())
    # Every reusable CPU's node must be in the mask (ids 64+ only make the rule unsatisfiable).
    hits = tuple(sorted({1 << n if 0 <= n < 64 else 0 for n in reusable_nodes}))
    # The free CPUs must reach what the reusable ones leave. A node's free CPUs beyond that
    # change no mask's answer (a mask holding such a node reaches it either way), so they
    # are capped there: every answer of the rule stays the same, and more loads share a key.
    need = max(request - num_reusable, 0)
    free = {n: min(c, need) for n, c in _per_node_counts(topology, available).items()}
    key: Hashable = (
        "hints",
        request,
        tuple(sorted(free.items())),
        num_reusable,
        hits,
        align_by_socket,
    )
    memo = topology.memo
    found = memo.get(key)
    if found is not None:
        return cast(StructuredHints, found)
    hints = _build(topology, free, num_reusable, hits, request, align_by_socket)
    memo.put(key, hints)
    return hints


def is_hint_socket_aligned(topology: CPUTopology, hint: TopologyHint, min_affinity: int) -> bool:
    """Whether the hint's NUMA nodes span exactly the fewest sockets the request needs."""
    if hint.numa_affinity is None or topology.num_sockets == 0:
        return False
    numa_per_socket = topology.num_numa_nodes // topology.num_sockets
    if numa_per_socket == 0:
        return False
    min_sockets = -(-min_affinity // numa_per_socket)
    sockets = topology.details.sockets_in_numa_nodes(*hint.numa_affinity.bits)
    return len(sockets) == min_sockets


def _min_affinity(topology: CPUTopology, request: int) -> int:
    # Width of the narrowest mask whose total CPUs reach the request: a function of the
    # topology and the request only.
    key = ("min_affinity", request)
    found = topology.memo.get(key)
    if found is None:
        numa_nodes = tuple(topology.numa_masks)
        found = topology.memo.put(
            key,
            min_width_meeting(
                numa_nodes,
                [Threshold.per_node(topology.cpus_per_numa_node, request)],
                len(numa_nodes),
            ),
        )
    return cast(int, found)


def _build(
    topology: CPUTopology,
    free: Mapping[int, int],
    num_reusable: int,
    hits: tuple[int, ...],
    request: int,
    align_by_socket: bool,
) -> StructuredHints:
    numa_nodes = tuple(topology.numa_masks)
    universe = 0
    for node in numa_nodes:
        universe |= 1 << node
    min_affinity = _min_affinity(topology, request)
    family = Family(universe, (Threshold.per_node(free, request - num_reusable),), hits)
    aligned = None
    if align_by_socket:

        def aligned(mask: int) -> bool:
            hint = TopologyHint(BitMask.from_int(mask), False)
            return is_hint_socket_aligned(topology, hint, min_affinity)

    return StructuredHints(numa_nodes, [family], (), min_affinity, aligned)


def _per_node_counts(topology: CPUTopology, cpus: CPUSet) -> dict[int, int]:
    """How many of ``cpus`` lie in each NUMA node (nodes with none left out); a CPU outside
    the topology counts for node 0, as the exhaustive definition's ``numa_of.get(cpu, 0)``."""
    mask = cpus.mask()
    if mask is None:  # an id too large for a mask: count one by one
        numa_of = topology.numa_of_cpu
        counts: dict[int, int] = {}
        for cpu in cpus:
            node = numa_of.get(cpu, 0)
            counts[node] = counts.get(node, 0) + 1
        return counts
    counts = {}
    if not mask:
        return counts
    for node, node_mask in topology.numa_masks.items():
        count = (node_mask & mask).bit_count()
        if count:
            counts[node] = count
    outside = (mask & ~topology.details.mask).bit_count()
    if outside:
        counts[0] = counts.get(0, 0) + outside
    return counts
