"""The node's ``NodeResourceTopology`` (``topology.node.k8s.io/v1alpha2``), as NFD's
topology-updater publishes it, plus numaplane's exact node snapshot.

One zone per NUMA node (``node-<id>``, type ``Node``) with its distances as ``costs`` and, per
resource, ``capacity``/``allocatable``/``available`` computed the way the topology-updater
computes them from the kubelet's pod-resources API:

- ``cpu``: allocatable = the zone's CPUs the CPU manager may hand out (static policy: all but
  the reserved ones); capacity = allocatable + the zone's reserved CPUs; available = allocatable
  minus CPUs assigned exclusively (the pod-resources API lists only exclusive CPUs). Under the
  ``none`` CPU policy the kubelet lists no allocatable CPUs and NFD then omits ``cpu``;
  numaplane reports every online CPU of the zone instead, so that a scheduler estimating from
  zones still sees them.
- ``memory`` and ``hugepages-<size>``: only under the ``Static`` memory policy (the kubelet
  lists allocatable memory for no other): capacity = the zone's total, allocatable = the memory
  manager's allocatable, available = what the memory manager has free there (NFD subtracts each
  container's blocks in ascending NUMA order; the memory manager's own table is the exact
  figure).
- device resources: capacity = allocatable = the healthy devices attached to the zone (a device
  on several NUMA nodes counts in each), available = those no container holds.

``attributes`` carry the kubelet's ``topologyManagerPolicy`` and ``topologyManagerScope``;
``topologyPolicies`` (deprecated, still read by older schedulers) the combined name NFD derives
from them. The annotation ``numaplane.io/node-snapshot`` holds ``NodeSnapshot.to_json()``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Final

from numaplane.api.quantity import Quantity, QuantityFormat
from numaplane.node.admission import Node
from numaplane.node.snapshot import snapshot_of

__all__ = [
    "NRT_API_VERSION",
    "NRT_KIND",
    "NRT_RESOURCE",
    "SNAPSHOT_ANNOTATION",
    "nrt_object",
    "nrt_zones",
    "topology_policy_name",
]

NRT_GROUP: Final = "topology.node.k8s.io"
NRT_API_VERSION: Final = f"{NRT_GROUP}/v1alpha2"
NRT_KIND: Final = "NodeResourceTopology"
NRT_RESOURCE: Final = "noderesourcetopologies"
SNAPSHOT_ANNOTATION: Final = "numaplane.io/node-snapshot"

# NFD's names of (policy, scope) (topologypolicy.DetectTopologyPolicy).
_POLICY_WORDS: Final = {
    "best-effort": "BestEffort",
    "restricted": "Restricted",
    "single-numa-node": "SingleNUMANode",
}


def topology_policy_name(policy: str, scope: str) -> str:
    """The deprecated ``topologyPolicies`` entry: ``SingleNUMANodeContainerLevel``,
    ``BestEffortPodLevel``, ... and ``None`` for the ``none`` policy."""
    word = _POLICY_WORDS.get(policy)
    if word is None:
        return "None"
    return word + ("PodLevel" if scope == "pod" else "ContainerLevel")


def _quantity(amount: int) -> str:
    # NFD builds every figure with resource.NewQuantity(n, DecimalSI).
    return str(Quantity(Fraction(amount), QuantityFormat.DECIMAL_SI))


def _resource(name: str, capacity: int, allocatable: int, available: int) -> dict[str, str]:
    return {
        "name": name,
        "capacity": _quantity(capacity),
        "allocatable": _quantity(allocatable),
        "available": _quantity(max(available, 0)),
    }


def nrt_zones(node: Node) -> list[dict[str, Any]]:
    """One zone per NUMA node, ascending (read ``node`` under the agent's lock)."""
    machine = node.machine
    cpu = node.cpu_manager
    static_cpu = node.config.cpu_manager_policy == "static"
    handed_out = cpu.allocatable_cpus() if static_cpu else machine.all_cpu_ids
    exclusive: set[int] = set()
    for containers in cpu.exclusive_assignments().values():
        for cpus in containers.values():
            exclusive.update(cpus)
    static_memory = node.config.memory_manager_policy == "Static"
    memory_state = node.memory_manager.state.get_machine_state() if static_memory else {}
    devices = node.device_manager
    zones: list[dict[str, Any]] = []
    for numa in machine.numa_nodes:
        online = numa.cpus & machine.all_cpu_ids
        allocatable = online & handed_out
        resources = []
        if online:
            resources.append(
                _resource(
                    "cpu",
                    len(online),
                    len(allocatable),
                    len([c for c in allocatable if c not in exclusive]),
                )
            )
        tables = memory_state.get(numa.id)
        if tables is not None:
            for name, table in sorted(tables.memory_map.items()):
                if table.total:
                    resources.append(_resource(name, table.total, table.allocatable, table.free))
        for resource in sorted(devices.resources()):
            healthy = {
                d.id for d in devices.devices(resource) if d.healthy and numa.id in d.numa_nodes
            }
            if healthy:
                free = healthy & devices.available(resource)
                resources.append(_resource(resource, len(healthy), len(healthy), len(free)))
        zones.append(
            {
                "name": f"node-{numa.id}",
                "type": "Node",
                "costs": [
                    {"name": f"node-{other}", "value": dist} for other, dist in numa.distances
                ],
                "resources": resources,
            }
        )
    return zones


def nrt_object(
    name: str,
    node: Node,
    snapshot: bool = True,
    *,
    owner_uid: str | None = None,
) -> dict[str, Any]:
    """The NodeResourceTopology of node ``name`` (read ``node`` under the agent's lock);
    ``snapshot`` adds the exact node snapshot annotation; ``owner_uid``, the Node's uid, makes
    the Node its owner (deleting the Node deletes it)."""
    config = node.config
    metadata: dict[str, Any] = {"name": name}
    if snapshot:
        metadata["annotations"] = {SNAPSHOT_ANNOTATION: snapshot_of(node).to_json()}
    if owner_uid:
        metadata["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Node", "name": name, "uid": owner_uid}
        ]
    return {
        "apiVersion": NRT_API_VERSION,
        "kind": NRT_KIND,
        "metadata": metadata,
        "topologyPolicies": [
            topology_policy_name(config.topology_manager_policy, config.topology_manager_scope)
        ],
        "attributes": [
            {"name": "topologyManagerPolicy", "value": config.topology_manager_policy},
            {"name": "topologyManagerScope", "value": config.topology_manager_scope},
        ],
        "zones": nrt_zones(node),
    }
