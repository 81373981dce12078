"""Topology hints of the Device Manager (upstream ``devicemanager/topology_hints.go``).

For every requested device resource: no hint list (``None``, "no preference") when none of its
devices names a NUMA node; the hints regenerated from the devices a container (or pod) already
holds; otherwise one hint per NUMA mask that holds enough available or reusable devices,
preferred when the mask is as narrow as the narrowest one whose *total* devices could satisfy
the request. ``[]`` means the request cannot be placed at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet

from numaplane.node.devicemanager.device import ResourcePool
from numaplane.node.devicemanager.device_hint_sets import device_hint_set
from numaplane.node.devicemanager.state import StateReader
from numaplane.node.topologymanager.hint import TopologyHint

DeviceHints = dict[str, Sequence[TopologyHint] | None]
"""Hints per device resource; ``None`` = no preference, ``[]`` = no possible placement."""


def container_topology_hints(
    pod_uid: str,
    container_name: str,
    requests: Mapping[str, int],
    numa_nodes: Sequence[int],
    pools: Mapping[str, ResourcePool],
    state: StateReader,
    reusable: Mapping[str, AbstractSet[str]],
) -> DeviceHints:
    """Container-scope hints (upstream ``GetTopologyHints``).

    ``requests`` holds the container's device requests; ``pools`` the registered resources;
    ``reusable`` the devices this pod's init containers released, per resource.
    """
    hints: DeviceHints = {}
    for resource, requested in requests.items():
        pool = pools.get(resource)
        if pool is None or not pool.has_topology:
            hints[resource] = None
            continue
        allocated = state.container_devices(pod_uid, container_name, resource)
        if allocated:
            hints[resource] = _regenerated(numa_nodes, pool, allocated, requested)
            continue
        available = pool.available
        offered = reusable.get(resource)
        reuse = frozenset(offered) if offered else frozenset()
        if len(available | reuse if reuse else available) < requested:
            hints[resource] = []
            continue
        hints[resource] = _rule(numa_nodes, pool, available, reuse, requested)
    return hints


def pod_topology_hints(
    pod_uid: str,
    requests: Mapping[str, int],
    numa_nodes: Sequence[int],
    pools: Mapping[str, ResourcePool],
    state: StateReader,
) -> DeviceHints:
    """Pod-scope hints (upstream ``GetPodTopologyHints``); ``requests`` from
    ``pod_device_requests``. Devices held by any container of the pod count as the pod's."""
    hints: DeviceHints = {}
    for resource, requested in requests.items():
        pool = pools.get(resource)
        if pool is None or not pool.has_topology:
            hints[resource] = None
            continue
        allocated = state.pod_devices(pod_uid, resource)
        if allocated:
            hints[resource] = _regenerated(numa_nodes, pool, allocated, requested)
            continue
        available = pool.available
        if len(available) < requested:
            hints[resource] = []
            continue
        hints[resource] = _rule(numa_nodes, pool, available, frozenset(), requested)
    return hints


def _regenerated(
    numa_nodes: Sequence[int], pool: ResourcePool, allocated: AbstractSet[str], requested: int
) -> Sequence[TopologyHint]:
    # Devices already held (e.g. after a restart) give back the same hints; a different count
    # means the request changed, which nothing can satisfy.
    if len(allocated) != requested:
        return []
    return _rule(numa_nodes, pool, allocated, frozenset(), requested)


def _rule(
    numa_nodes: Sequence[int],
    pool: ResourcePool,
    available: AbstractSet[str],
    reusable: AbstractSet[str],
    requested: int,
) -> Sequence[TopologyHint]:
    # The rule lists every qualifying mask without enumerating them.
    hints = device_hint_set(numa_nodes, pool, available, reusable, requested)
    return hints if hints else []
