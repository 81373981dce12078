"""The Device Manager's hints as a rule (``StructuredHints``), not a list of masks.

Upstream's ``generateDeviceTopologyHints`` (written the upstream way in
``numaplane.testing.upstream_hints``) as a rule: a mask is a hint when it touches a NUMA
node of every reusable device that has topology and the available devices it touches plus the
reusable ones reach the request; preferred when as narrow as the narrowest mask whose devices
(all of them, healthy or not) could hold the request.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from numaplane.node.devicemanager.device import ResourcePool
from numaplane.node.topologymanager.hint_rules import (
    Family,
    RuleMemo,
    Threshold,
    mask_of,
)
from numaplane.node.topologymanager.hint_sets import StructuredHints


def device_hint_set(
    numa_nodes: Sequence[int],
    pool: ResourcePool,
    available: AbstractSet[str],
    reusable: AbstractSet[str],
    request: int,
) -> StructuredHints:
    """Upstream ``generateDeviceTopologyHints`` as a rule; same hints, same order."""
    devices = pool.devices
    nodes = tuple(numa_nodes)
    min_affinity = pool.index.min_width(nodes, request)
    hits: list[int] = []
    for device_id in reusable:
        device = devices.get(device_id)
        if device is None or device.numa is None:
            continue
        hits.append(mask_of(device.numa_nodes))
    if available is pool.available or available == pool.available:
        # The pool keeps its free devices' groups (updated as devices change hands).
        free = pool.free_groups
    else:
        counts: dict[int, int] = {}
        for device_id in available:
            if device_id in devices:
                mask = mask_of(devices[device_id].numa_nodes)
                if mask:
                    counts[mask] = counts.get(mask, 0) + 1
        free = tuple(sorted(counts.items()))
    hit_masks = tuple(sorted(set(hits))) if hits else ()
    rule_key = (nodes, free, request - len(hits), hit_masks, min_affinity)
    rule = _RULES.get(rule_key)
    if rule is None:
        rule = _RULES.put(rule_key, _hint_set(*rule_key))
    return rule


#: Device rules by everything ``_hint_set`` reads: node ids, the free devices per NUMA mask,
#: how many more are needed beyond the reused ones, the reused devices' masks and the preferred
#: width. These repeat from admission to admission (the same request against the same counts).
_RULES: RuleMemo[
    tuple[tuple[int, ...], tuple[tuple[int, int], ...], int, tuple[int, ...], int],
    StructuredHints,
] = RuleMemo("device hint rules", 8192)


def _hint_set(
    numa_nodes: tuple[int, ...],
    free: tuple[tuple[int, int], ...],
    minimum: int,
    hits: tuple[int, ...],
    min_affinity: int,
) -> StructuredHints:
    family = Family(mask_of(numa_nodes), (Threshold(free, minimum),), hits)
    return StructuredHints(numa_nodes, [family], (), min_affinity)
