"""Each manager's hint generation written the upstream way: every NUMA mask visited and listed.

The oracle the rule-based hints (``cpu_hint_sets``, ``memory_hint_sets``, ``device_hint_sets``)
are compared against: the same masks, in ``IterateBitMasks`` order, with the same preferred
flags. Exponential in the number of NUMA nodes; for tests and benchmarks only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from numaplane.node.cpumanager.cpu_hint_sets import is_hint_socket_aligned
from numaplane.node.cpumanager.topology import CPUTopology
from numaplane.node.devicemanager.device import ResourcePool
from numaplane.node.memorymanager.memory_hint_sets import ReusableLookup, respects_grouping
from numaplane.node.memorymanager.state import NUMANodeMap
from numaplane.node.topologymanager.bitmask import BitMask, bit_mask_subsets
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.topology.cpuset import CPUSet


def generate_cpu_topology_hints(
    topology: CPUTopology,
    available: CPUSet,
    reusable: CPUSet,
    request: int,
    align_by_socket: bool = False,
) -> list[TopologyHint]:
    """One hint per NUMA-node mask that can hold ``request`` CPUs (upstream order of masks).

    Every reusable CPU must lie inside the mask. Preferred: masks as narrow as the narrowest
    one whose *total* CPUs could hold the request, and (``align_by_socket``) socket-aligned ones.
    """
    details = topology.details
    numa_nodes = details.numa_nodes()
    min_affinity = len(numa_nodes)
    numa_of = {cpu: details[cpu].numa for cpu in details}
    reusable_numas = [numa_of.get(c, 0) for c in reusable]
    available_numas = [numa_of.get(c, 0) for c in available]
    masks: list[BitMask] = []
    for mask in bit_mask_subsets(numa_nodes):
        bits = set(mask.bits)
        if len(details.cpus_in_numa_nodes(*bits)) >= request and mask.count() < min_affinity:
            min_affinity = mask.count()
        if any(n not in bits for n in reusable_numas):
            continue
        matching = len(reusable_numas) + sum(1 for n in available_numas if n in bits)
        if matching >= request:
            masks.append(mask)
    hints: list[TopologyHint] = []
    for mask in masks:
        hint = TopologyHint(mask, False)
        preferred = mask.count() == min_affinity or (
            align_by_socket and is_hint_socket_aligned(topology, hint, min_affinity)
        )
        hints.append(TopologyHint(mask, preferred))
    return hints


def generate_device_topology_hints(
    numa_nodes: Sequence[int],
    pool: ResourcePool,
    available: AbstractSet[str],
    reusable: AbstractSet[str],
    request: int,
) -> list[TopologyHint]:
    """One hint per NUMA mask holding ``request`` devices out of ``available`` and ``reusable``.

    A mask qualifies only if it contains every reusable device that has topology information;
    ``Preferred`` marks the masks as narrow as the narrowest whose devices (counting every
    device, healthy or not, free or not) could hold the request.
    """
    min_affinity_size = len(numa_nodes)
    found: list[TopologyHint] = []
    devices = pool.devices
    for mask in bit_mask_subsets(numa_nodes):
        in_mask = sum(1 for d in devices.values() if d.in_mask(mask))
        if in_mask >= request and mask.count() < min_affinity_size:
            min_affinity_size = mask.count()

        matching = 0
        fits = True
        for device_id in reusable:
            device = devices.get(device_id)
            # Only a device without any Topology is skipped; one with an empty node list
            # rules every mask out, as upstream.
            if device is None or device.numa is None:
                continue
            if not device.in_mask(mask):
                fits = False
                break
            matching += 1
        if not fits:
            continue
        for device_id in available:
            device = devices.get(device_id)
            if device is not None and device.in_mask(mask):
                matching += 1
        if matching >= request:
            found.append(TopologyHint(mask, False))
    return [
        TopologyHint(h.numa_affinity, True)
        if h.numa_affinity is not None and h.numa_affinity.count() == min_affinity_size
        else h
        for h in found
    ]


def _table_sums(machine_state: NUMANodeMap, nodes: Iterable[int], resource: str) -> tuple[int, int]:
    """(free, allocatable) of ``resource`` over ``nodes``; absent nodes or tables count 0."""
    free = allocatable = 0
    for node_id in nodes:
        node = machine_state.get(node_id)
        table = None if node is None else node.memory_map.get(resource)
        if table is not None:
            free += table.free
            allocatable += table.allocatable
    return free, allocatable


def calculate_memory_hints(
    machine_state: NUMANodeMap,
    requests: Mapping[str, int],
    reusable: ReusableLookup | None = None,
) -> dict[str, list[TopologyHint]]:
    """Upstream ``calculateHints``: every mask visited and listed (``IterateBitMasks`` order).

    A mask qualifies when its allocatable memory covers every request, it respects the
    single/cross-NUMA grouping rule, and its free memory (plus this pod's reusable
    init-container memory on that exact mask) covers every request. Preferred marks the masks
    as narrow as the narrowest mask with enough *allocatable* memory.
    """
    node_ids = sorted(machine_state)
    min_affinity_size = len(node_ids)
    hints: dict[str, list[TopologyHint]] = {}
    for mask in bit_mask_subsets(node_ids):
        bits = mask.bits
        if any(_table_sums(machine_state, bits, r)[1] < size for r, size in requests.items()):
            continue
        min_affinity_size = min(min_affinity_size, mask.count())
        if not respects_grouping(machine_state, bits):
            continue
        if any(
            _table_sums(machine_state, bits, r)[0]
            + (reusable(mask, r) if reusable is not None else 0)
            < size
            for r, size in requests.items()
        ):
            continue
        for resource in requests:
            hints.setdefault(resource, []).append(TopologyHint(mask, preferred=False))
    return {
        resource: [
            TopologyHint(
                h.numa_affinity,
                h.numa_affinity is not None and h.numa_affinity.count() == min_affinity_size,
            )
            for h in found
        ]
        for resource, found in hints.items()
    }


def find_best_hint(hints: Iterable[TopologyHint]) -> TopologyHint | None:
    """Upstream ``findBestHint``: preferred first, then narrower; the first wins ties."""
    best: TopologyHint | None = None
    for hint in hints:
        current = None if best is None else best.numa_affinity
        if best is None or current is None:
            best = hint
            continue
        if hint.preferred and not best.preferred:
            best = hint
            continue
        if (
            hint.preferred == best.preferred
            and hint.numa_affinity is not None
            and hint.numa_affinity.is_narrower_than(current)
        ):
            best = hint
    return best


def best_hint_containing(hints: Sequence[TopologyHint], mask: BitMask) -> TopologyHint | None:
    """``find_best_hint`` over the hints whose nodes include every node of ``mask``."""
    return find_best_hint(
        h for h in hints if h.numa_affinity is not None and mask.is_subset_of(h.numa_affinity)
    )
