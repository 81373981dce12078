"""The optimum's input: node capacities and pod demands, read from the real node engine.

``build_instance`` turns machines, a kubelet configuration and pods into plain integers: what
each NUMA node, device pool and node offers, and what each pod's containers need, phase by
phase. Both solvers of the bound (CP-SAT in ``bound``, enumeration in ``bruteforce``) read this
one description, so they answer the same question; ``bound``'s module doc states the model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from numaplane.api.kubeletconfig import KubeletConfiguration
from numaplane.api.pod import Pod, QOSClass
from numaplane.errors import InputError
from numaplane.node.admission import Node
from numaplane.node.cpumanager.policy_static import StaticPolicy as StaticCPUPolicy
from numaplane.node.devicemanager.source import DeviceSource
from numaplane.node.predicate import fit_requests, is_scalar_resource
from numaplane.node.requests import (
    MemoryRequestError,
    container_device_requests,
    guaranteed_cpus,
    memory_requests,
    scheduler_requests,
)
from numaplane.topology.model import Machine

__all__ = [
    "ALIGNED",
    "CPU",
    "SPLIT",
    "ContainerDemand",
    "Instance",
    "NodeCapacity",
    "PodDemand",
    "PodOnNode",
    "build_instance",
    "resolve_nodes",
]

CPU = "cpu"
ALIGNED = "aligned"
"""Every container's aligned resources on one NUMA node (``single-numa-node``)."""
SPLIT = "split"
"""Any split across NUMA nodes (``restricted``, ``best-effort``, ``none``)."""


@dataclass(frozen=True)
class NodeCapacity:
    """What one node offers.

    ``numa`` maps NUMA id -> resource (``cpu`` = exclusive CPUs, ``memory``,
    ``hugepages-*``) -> allocatable amount. ``device_pools`` maps a device resource -> the NUMA
    ids of a set of devices (empty: no locality) -> how many healthy devices share it.
    ``allocatable`` is node allocatable as the predicate checks it (millicores for CPU).
    """

    name: str
    numa_ids: tuple[int, ...]
    numa: Mapping[int, Mapping[str, int]]
    device_pools: Mapping[str, Mapping[tuple[int, ...], int]]
    allocatable: Mapping[str, int]

    def pool_capacity(self, locality: tuple[int, ...], resource: str) -> int:
        """The capacity of one pool: a NUMA node's resource, or a device locality set."""
        if resource in self.device_pools:
            return self.device_pools[resource].get(locality, 0)
        (numa,) = locality
        return self.numa.get(numa, {}).get(resource, 0)

    def totals(self) -> dict[str, int]:
        """Every aligned resource summed over NUMA nodes and device pools."""
        out: dict[str, int] = {}
        for resources in self.numa.values():
            for resource, amount in resources.items():
                out[resource] = out.get(resource, 0) + amount
        for resource, pools in self.device_pools.items():
            out[resource] = sum(pools.values())
        return out

    def reachable(self, resource: str, numa: int) -> int:
        """Devices of ``resource`` a container on NUMA node ``numa`` may take."""
        pools = self.device_pools.get(resource, {})
        return sum(count for loc, count in pools.items() if not loc or numa in loc)


@dataclass(frozen=True)
class ContainerDemand:
    """One container's aligned demand: resource -> amount (zero amounts left out)."""

    name: str
    aligned: Mapping[str, int]


@dataclass(frozen=True)
class PodOnNode:
    """What a pod needs on one particular node.

    ``containers`` lists every container (init ones first); ``phases`` the sets of container
    indexes that run at the same time; ``groups`` the sets of containers that must share one
    NUMA node under alignment (one per container, or one per pod in pod scope; containers
    without aligned demand are in none). ``node_requests`` are the effective requests the
    predicate checks on this node. ``admissible`` is false when the node's static policies
    reject the pod whatever the placement.
    """

    containers: tuple[ContainerDemand, ...]
    phases: tuple[frozenset[int], ...]
    groups: tuple[tuple[int, ...], ...]
    node_requests: Mapping[str, int]
    admissible: bool = True
    _peak: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def peak(self) -> Mapping[str, int]:
        """The largest phase total per aligned resource."""
        if not self._peak:
            for phase in self.phases:
                totals: dict[str, int] = {}
                for c in phase:
                    for resource, amount in self.containers[c].aligned.items():
                        totals[resource] = totals.get(resource, 0) + amount
                for resource, amount in totals.items():
                    self._peak[resource] = max(self._peak.get(resource, 0), amount)
        return self._peak

    def group_fits(self, group: int, node: NodeCapacity, numa: int) -> bool:
        """Whether each container of the group alone fits NUMA node ``numa`` of ``node``."""
        for c in self.groups[group]:
            for resource, amount in self.containers[c].aligned.items():
                if resource in node.device_pools:
                    if node.reachable(resource, numa) < amount:
                        return False
                elif node.numa.get(numa, {}).get(resource, 0) < amount:
                    return False
        return True


@dataclass(frozen=True)
class PodDemand:
    """A pod and what it needs on each node of the instance (same order as the nodes)."""

    uid: str
    demands: tuple[PodOnNode, ...]


@dataclass(frozen=True)
class Instance:
    """Nodes, pods and the alignment rule (``ALIGNED`` or ``SPLIT``)."""

    nodes: tuple[NodeCapacity, ...]
    pods: tuple[PodDemand, ...]
    alignment: str
    pod_scope: bool

    @cached_property
    def max_numa(self) -> int:
        """The most NUMA nodes of any node."""
        return max((len(n.numa_ids) for n in self.nodes), default=0)


def resolve_nodes(nodes: Machine | Sequence[Machine]) -> tuple[Machine, ...]:
    """One machine or several, as a tuple; ``InputError`` when there are none."""
    machines = (nodes,) if isinstance(nodes, Machine) else tuple(nodes)
    if not machines:
        raise InputError("optimum", "it needs at least one node")
    return machines


def build_instance(
    machines: Sequence[Machine],
    config: KubeletConfiguration,
    pods: Sequence[Pod],
    device_sources: Sequence[Sequence[DeviceSource]] | None = None,
) -> Instance:
    """Read capacities and demands from a fresh ``Node`` per machine (see ``bound``)."""
    if device_sources is not None and len(device_sources) != len(machines):
        raise InputError(
            "optimum", f"device_sources has {len(device_sources)} entries for {len(machines)} nodes"
        )
    uids = [pod.uid for pod in pods]
    if len(set(uids)) != len(uids):
        raise InputError("optimum", "pod uids must be unique for the optimum")
    engines = [
        Node(m, config, device_sources=device_sources[i] if device_sources else ())
        for i, m in enumerate(machines)
    ]
    capacities = tuple(_capacity(engine) for engine in engines)
    demands = tuple(
        PodDemand(pod.uid, tuple(_pod_on_node(engine, pod, config) for engine in engines))
        for pod in pods
    )
    alignment = ALIGNED if config.topology_manager_policy == "single-numa-node" else SPLIT
    return Instance(capacities, demands, alignment, config.topology_manager_scope == "pod")


def _capacity(node: Node) -> NodeCapacity:
    machine = node.machine
    numa: dict[int, dict[str, int]] = {n: {} for n in machine.numa_ids}
    policy = node.cpu_manager.policy
    if isinstance(policy, StaticCPUPolicy):
        usable = machine.all_cpu_ids - node.cpu_manager.reserved_cpus()
        if policy.options.full_physical_cpus_only:
            usable = usable - policy.reserved_physical_cpus
        for n in machine.numa_ids:
            numa[n][CPU] = len(usable & machine.cpus_in_numa_nodes(n))
    if node.config.memory_manager_policy == "Static":
        state = node.memory_manager.state.get_machine_state()
        for n, node_state in state.items():
            for resource, table in node_state.memory_map.items():
                numa.setdefault(n, {})[resource] = table.allocatable
    pools: dict[str, dict[tuple[int, ...], int]] = {}
    devices = node.device_manager
    for resource in devices.resources():
        healthy = devices.allocatable(resource)
        for device in devices.devices(resource):
            if device.id in healthy:
                key = tuple(sorted(device.numa_nodes))
                pools.setdefault(resource, {})[key] = pools.get(resource, {}).get(key, 0) + 1
    allocatable = {
        name: (q.milli_value() if name == CPU else q.value())
        for name, q in node.allocatable().items()
    }
    return NodeCapacity(
        name=machine.name,
        numa_ids=machine.numa_ids,
        numa={n: dict(sorted(r.items())) for n, r in sorted(numa.items())},
        device_pools={r: dict(sorted(p.items())) for r, p in sorted(pools.items())},
        allocatable=dict(sorted(allocatable.items())),
    )


def _pod_on_node(node: Node, pod: Pod, config: KubeletConfiguration) -> PodOnNode:
    admissible = True
    policy = node.cpu_manager.policy
    static_cpu = isinstance(policy, StaticCPUPolicy)
    static_memory = (
        config.memory_manager_policy == "Static"
        and pod.qos_class == QOSClass.GUARANTEED
        and not pod.has_pod_level_resources
    )
    containers: list[ContainerDemand] = []
    for container in pod.all_containers():
        aligned: dict[str, int] = {}
        if static_cpu:
            cpus = guaranteed_cpus(pod, container)
            assert isinstance(policy, StaticCPUPolicy)
            if cpus and policy.options.full_physical_cpus_only and cpus % policy.cpu_group_size:
                admissible = False
            if cpus:
                aligned[CPU] = cpus
        if static_memory:
            try:
                aligned.update({r: s for r, s in memory_requests(container).items() if s})
            except MemoryRequestError:
                admissible = False
        for resource, count in container_device_requests(
            container, node.device_manager.is_device_resource
        ).items():
            if count > 0:
                aligned[resource] = count
        containers.append(ContainerDemand(container.name, dict(sorted(aligned.items()))))
    phases = _phases(pod)
    with_demand = tuple(i for i, c in enumerate(containers) if c.aligned)
    if config.topology_manager_scope == "pod":
        groups: tuple[tuple[int, ...], ...] = (with_demand,) if with_demand else ()
    else:
        groups = tuple((i,) for i in with_demand)
    requests, fits = _predicate_requests(node, pod)
    return PodOnNode(
        containers=tuple(containers),
        phases=phases,
        groups=groups,
        node_requests=requests,
        admissible=admissible and fits,
    )


def _phases(pod: Pod) -> tuple[frozenset[int], ...]:
    # Containers are indexed as in pod.all_containers(): init containers first.
    phases: list[frozenset[int]] = []
    sidecars: list[int] = []
    for i, init in enumerate(pod.init_containers):
        if init.is_restartable:
            sidecars.append(i)
        else:
            phases.append(frozenset([*sidecars, i]))
    offset = len(pod.init_containers)
    phases.append(frozenset([*sidecars, *range(offset, offset + len(pod.containers))]))
    return tuple(phases)


def _predicate_requests(node: Node, pod: Pod) -> tuple[dict[str, int], bool]:
    # The predicate admit handler's view (Node._insufficient_resource): extended resources the
    # node does not report are dropped; any other scalar resource it does not report has zero
    # allocatable, so the pod never fits.
    allocatable = node.allocatable()
    devices = node.device_manager
    requests = fit_requests(
        pod,
        scheduler_requests(pod),
        lambda name: name in allocatable or devices.is_device_resource(name),
    )
    out: dict[str, int] = {}
    fits = True
    for name, amount in sorted(requests.items()):
        if name not in allocatable:
            fits = fits and not is_scalar_resource(name)
            continue
        out[name] = amount
    return out, fits
