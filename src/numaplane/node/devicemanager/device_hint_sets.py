"""The Device Manager's hints as a rule (``StructuredHints``), not a list of masks.

The same hints as ``generate_device_topology_hints``: a mask is a hint when it touches a NUMA
node of every reusable device that has topology and the available devices it touches plus the
reusable ones reach the request; preferred when as narrow as the narrowest mask whose devices
(all of them, healthy or not) could hold the request.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from numaplane.node.devicemanager.device import ResourcePool
from numaplane.node.topologymanager.hint_sets import (
    Family,
    StructuredHints,
    Threshold,
    mask_of,
    min_width_meeting,
)


def _grouped(masks: list[int], minimum: int) -> Threshold:
    counts: dict[int, int] = {}
    for mask in masks:
        if mask:
            counts[mask] = counts.get(mask, 0) + 1
    return Threshold(tuple(sorted(counts.items())), minimum)


def device_hint_set(
    numa_nodes: Sequence[int],
    pool: ResourcePool,
    available: AbstractSet[str],
    reusable: AbstractSet[str],
    request: int,
) -> StructuredHints:
    """``generate_device_topology_hints`` as a rule; same hints, same order."""
    devices = pool.devices
    universe = mask_of(numa_nodes)
    # Depends on every device (not on which are free): remembered per device set.
    key = (tuple(numa_nodes), request)
    memo = pool.min_widths
    min_affinity = memo.get(key)
    if min_affinity is None:
        everything = _grouped([mask_of(d.numa_nodes) for d in devices.values()], request)
        min_affinity = memo[key] = min_width_meeting(numa_nodes, [everything], len(numa_nodes))
    hits: list[int] = []
    for device_id in reusable:
        device = devices.get(device_id)
        if device is None or device.numa is None:
            continue
        hits.append(mask_of(device.numa_nodes))
    free = [mask_of(devices[i].numa_nodes) for i in available if i in devices]
    family = Family(universe, (_grouped(free, request - len(hits)),), tuple(sorted(set(hits))))
    return StructuredHints(numa_nodes, [family], (), min_affinity)
