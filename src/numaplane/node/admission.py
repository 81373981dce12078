"""``Node``: the kubelet's resource managers wired together, and ``admit(pod)``.

The wiring follows the kubelet's container manager on Linux: the Topology Manager gets its
hint providers in upstream's registration order (device manager, CPU manager, memory manager,
spec §3.1). That order is the order of every explanation's provider records and of ``allocate``:
it decides which error a pod gets when several providers would fail, and what the earlier
providers already allocated when a later one fails.

A pod is admitted by the resource-allocation admit handler first (Topology Manager ``Admit``,
which calls every provider's ``allocate``), then by the predicate handler (``node.predicate``,
spec §14) that checks the pod's requests against node allocatable (reason ``OutOf<resource>``),
then by the pod-features handler (pod-level resources need the PodLevelResources gate), in that
order, as upstream registers them. The answer's views are in ``node.placement``.

A rejected pod keeps nothing: upstream leaves partial allocations until the managers' stale-state
cleanup at the next admission, which is the same as releasing them at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from numaplane.api.kubeletconfig import KubeletConfiguration
from numaplane.api.pod import Pod
from numaplane.api.quantity import Quantity
from numaplane.node.cpumanager import state as cpu_state
from numaplane.node.cpumanager.manager import CPUManager
from numaplane.node.cpumanager.topology import CPUTopology
from numaplane.node.devicemanager import state as device_state
from numaplane.node.devicemanager.manager import DeviceManager
from numaplane.node.devicemanager.source import DeviceSource
from numaplane.node.errors import ConfigurationError, NodeError
from numaplane.node.memorymanager import state as memory_state
from numaplane.node.memorymanager.manager import MemoryManager
from numaplane.node.placement import (
    Admission,
    ContainerPlacement,
    MemoryBlockView,
    memory_views,
)
from numaplane.node.predicate import (
    InsufficientResource,
    first_insufficient,
    fit_requests,
    node_allocatable,
)
from numaplane.node.requests import scheduler_requests, scheduler_units
from numaplane.node.topologymanager.bitmask import MAX_BITS
from numaplane.node.topologymanager.manager import TopologyManager
from numaplane.node.topologymanager.metrics import private_registry
from numaplane.node.utilization import ManagersUtilization
from numaplane.topology.model import Machine

CPU = "cpu"
MEMORY = "memory"
POD_LEVEL_RESOURCES_GATE = "PodLevelResources"
POD_LEVEL_RESOURCES_NOT_SUPPORTED = "PodLevelResourcesNotSupported"

# The views of an admission live in ``node.placement``; callers import them from here too.
__all__ = [
    "Admission",
    "ContainerPlacement",
    "MemoryBlockView",
    "Node",
    "NodeStates",
    "PodAlreadyAdmittedError",
    "UnsupportedMachineError",
    "check_numa_ids",
]


class PodAlreadyAdmittedError(NodeError):
    """A pod with this uid already holds resources on the node."""


class UnsupportedMachineError(ConfigurationError):
    """The machine cannot be modelled with the configured managers."""


def check_numa_ids(machine: Machine, config: KubeletConfiguration) -> None:
    """Refuse NUMA node ids the kubelet's 64-bit affinity mask cannot hold, when a manager
    that builds such masks is configured (a Topology Manager policy other than ``none``, or
    the ``Static`` memory policy). Upstream ignores the bitmask's error there and works with
    wrong masks; numaplane says so instead (GPU memory nodes get ids such as 250)."""
    users = []
    if config.topology_manager_policy != "none":
        users.append(f"topology manager policy {config.topology_manager_policy}")
    if config.memory_manager_policy == "Static":
        users.append("memory manager policy Static")
    above = [n for n in machine.numa_ids if n >= MAX_BITS]
    if above and users:
        raise UnsupportedMachineError(
            f"machine {machine.name}: NUMA node {above[0]} is above {MAX_BITS - 1}, the highest "
            f"NUMA node id the kubelet's NUMA affinity bitmask holds (upstream bitmask: \"bit "
            f'number must be in range 0-{MAX_BITS - 1}"), which the {" and the ".join(users)} '
            "needs"
        )


@dataclass
class NodeStates:
    """The three managers' states; in memory by default, checkpointed by the agent."""

    cpu: cpu_state.State = field(default_factory=cpu_state.InMemoryState)
    memory: memory_state.State = field(default_factory=memory_state.InMemoryState)
    devices: device_state.State = field(default_factory=device_state.InMemoryState)


class Node:
    """One node's resource managers, admitting pods in order as the kubelet does."""

    def __init__(
        self,
        machine: Machine,
        config: KubeletConfiguration,
        *,
        device_sources: Iterable[DeviceSource] = (),
        states: NodeStates | None = None,
    ) -> None:
        check_numa_ids(machine, config)
        self.machine = machine
        self.config = config
        self.states = states if states is not None else NodeStates()
        self._pods: dict[str, Pod] = {}
        # The PodLevelResources gate: pod-level requests count, and such pods are admitted.
        self._pod_level_resources = config.feature_gates.enabled(POD_LEVEL_RESOURCES_GATE)
        # The pod under admission counts as active, as in the kubelet (the pod manager knows
        # it before the admit handlers run): otherwise the managers' stale-state cleanup would
        # free its init containers' resources while its app containers are being allocated.
        self._admitting: Pod | None = None
        # The containers of the admitted pods by pod uid, kept with ``_pods``; and what
        # ``_active_containers`` answers, remembered until the admitted pods or the pod under
        # admission change: the managers' stale-state cleanups ask for it on every call.
        self._admitted_containers: dict[str, frozenset[str]] = {}
        self._active: dict[str, frozenset[str]] | None = None
        # The predicate's bookkeeping, in the scheduler's integer units (millicores for CPU,
        # whole units otherwise): requests of admitted pods, and allocatable of the resources
        # that do not change while the node runs (everything but devices).
        self._used: dict[str, int] = {}
        self._requests: dict[str, dict[str, int]] = {}
        self._static_allocatable: dict[str, int] | None = None
        gates = config.feature_gates
        # One registry for the four managers' metrics (the agent exposes it).
        self.registry = private_registry()
        self.topology_manager = TopologyManager(
            machine,
            config.topology_manager_policy,
            config.topology_manager_scope,
            dict(config.topology_manager_policy_options),
            gates,
            registry=self.registry,
        )
        affinity = self.topology_manager
        reserved = config.reserved_system_cpus
        self.cpu_manager = CPUManager.create(
            config.cpu_manager_policy,
            CPUTopology.from_machine(machine),
            num_reserved_cpus=config.reserved_cpu_count(),
            reserved_cpus=reserved if len(reserved) else None,
            affinity=affinity,
            options=dict(config.cpu_manager_policy_options),
            gates=gates,
            topology_manager_policy=config.topology_manager_policy,
            state=self.states.cpu,
            registry=self.registry,
            aligned=self.topology_manager.metrics.aligned,
        )
        self.memory_manager = MemoryManager.create(
            config.memory_manager_policy,
            machine,
            affinity,
            node_allocatable_reservation=config.node_allocatable_reservation(self.capacity()),
            reserved_memory=config.reserved_memory,
            state=self.states.memory,
            active_pods=self._active_containers,
            registry=self.registry,
        )
        self.device_manager = DeviceManager(
            machine.numa_ids or (0,),
            affinity,
            self.states.devices,
            active_pods=self._active_containers,
            registry=self.registry,
        )
        for source in device_sources:
            self.device_manager.add_source(source)
        self.cpu_manager.start()
        self.memory_manager.start()
        self.topology_manager.set_utilization(
            ManagersUtilization(self.cpu_manager, self.memory_manager)
        )
        # Upstream's order on Linux (container_manager_linux.go): devices, CPU, memory.
        self.topology_manager.add_hint_provider(self.device_manager, "devices")
        self.topology_manager.add_hint_provider(self.cpu_manager, "cpu")
        self.topology_manager.add_hint_provider(self.memory_manager, "memory")

    # -- capacity -------------------------------------------------------------------------

    def capacity(self) -> dict[str, Quantity]:
        """Node capacity as cAdvisor reports it: online CPUs, memory, hugepages, devices."""
        cap: dict[str, Quantity] = {
            CPU: Quantity.parse(len(self.machine.all_cpu_ids)),
            MEMORY: Quantity.parse(self.machine.memory_bytes),
        }
        hugepages: dict[str, int] = {}
        for node in self.machine.numa_nodes:
            for pages in node.hugepages:
                hugepages[pages.resource_name] = (
                    hugepages.get(pages.resource_name, 0) + pages.total * pages.size_bytes
                )
        for name, total in hugepages.items():
            cap[name] = Quantity.parse(total)
        # The memory manager asks for capacity before the device manager exists.
        devices: DeviceManager | None = getattr(self, "device_manager", None)
        if devices is not None:
            for resource in devices.resources():
                cap[resource] = Quantity.parse(devices.capacity(resource))
        return cap

    def allocatable(self) -> dict[str, Quantity]:
        """Node allocatable as node status reports it (spec §14.2): capacity minus kube/system
        reservations and the hard eviction threshold, memory also minus the huge page pools;
        device resources count their healthy devices."""
        capacity = self.capacity()
        out = node_allocatable(capacity, self.config.node_allocatable_reservation(capacity))
        if self.device_manager.resources():
            for resource in self.device_manager.resources():
                out[resource] = Quantity.parse(len(self.device_manager.allocatable(resource)))
        return out

    def _allocatable_units(self, resource: str) -> int | None:
        # Allocatable of one resource in predicate units; None when the node has none.
        if self.device_manager.is_device_resource(resource):
            return len(self.device_manager.allocatable(resource))
        if self._static_allocatable is None:
            self._static_allocatable = {
                name: scheduler_units(name, q)
                for name, q in self.allocatable().items()
                if not self.device_manager.is_device_resource(name)
            }
        return self._static_allocatable.get(resource)

    # -- pods -----------------------------------------------------------------------------

    @property
    def pods(self) -> tuple[Pod, ...]:
        """Admitted pods, in admission order."""
        return tuple(self._pods.values())

    def admit(self, pod: Pod) -> Admission:
        """Run the kubelet's admission for ``pod``; on success the pod holds its resources."""
        if pod.uid in self._pods:
            raise PodAlreadyAdmittedError(f"pod {pod.key} (uid {pod.uid}) is already admitted")
        self._set_admitting(pod)
        try:
            topology = self.topology_manager.admit(pod)
        finally:
            self._set_admitting(None)
        reason, message = topology.reason, topology.message
        admitted = topology.admitted
        requests: dict[str, int] | None = None
        if admitted:
            requests = scheduler_requests(pod, pod_level_resources=self._pod_level_resources)
            shortfall = self._insufficient_resource(pod, requests)
            if shortfall is not None:
                admitted = False
                reason, message = shortfall.reason, shortfall.message
        if admitted and not self._pod_level_resources and pod.has_pod_level_resources:
            # The pod-features admit handler, registered after the predicate one.
            admitted = False
            reason = POD_LEVEL_RESOURCES_NOT_SUPPORTED
            message = "PodLevelResources feature gate is disabled"
        if not admitted:
            self._release_containers(pod)
            return Admission(pod.name, pod.namespace, pod.uid, False, reason, message, topology, ())
        self._add_pod(pod)
        self._account(pod, requests)
        init_names = _init_names(pod)
        return Admission(
            pod.name,
            pod.namespace,
            pod.uid,
            True,
            None,
            None,
            topology,
            tuple(self._placement(pod, c.name, init_names) for c in pod.all_containers()),
        )

    def _active_containers(self) -> dict[str, frozenset[str]]:
        active = self._active
        if active is None:
            # Admitted pods have distinct uids, and a pod whose uid is admitted is refused
            # before it is under admission: no two pods share an entry.
            active = dict(self._admitted_containers)
            if self._admitting is not None:
                active[self._admitting.uid] = self._admitting.container_names
            self._active = active
        return active

    def _set_admitting(self, pod: Pod | None) -> None:
        self._admitting = pod
        self._active = None

    def _add_pod(self, pod: Pod) -> None:
        self._pods[pod.uid] = pod
        self._admitted_containers[pod.uid] = pod.container_names
        self._active = None

    def adopt(self, pod: Pod) -> None:
        """Count ``pod`` as admitted without allocating: its resources are already in the
        restored state (a state directory or checkpoints read back after a restart)."""
        self._add_pod(pod)
        self._account(pod)

    def release(self, pod_uid: str) -> Pod:
        """Remove an admitted pod and free everything it holds (``KeyError`` if unknown)."""
        pod = self._pods.pop(pod_uid)
        del self._admitted_containers[pod_uid]
        self._active = None
        for name, amount in self._requests.pop(pod_uid, {}).items():
            self._used[name] -= amount
        self._release_containers(pod)
        return pod

    def placement(self, pod: Pod, container_name: str) -> ContainerPlacement:
        """What a container of an admitted pod holds now."""
        return self._placement(pod, container_name, _init_names(pod))

    def _placement(
        self, pod: Pod, container_name: str, init_names: frozenset[str]
    ) -> ContainerPlacement:
        container = pod.container(container_name)
        uid = pod.uid
        affinity = self.topology_manager.state.find_affinity(uid, container_name)
        blocks = self.memory_manager.get_memory(uid, container_name)
        memory, numa = memory_views(blocks) if blocks else ((), None)
        devices = self.device_manager.container_devices(uid, container_name)
        return ContainerPlacement(
            container_name,
            container_name in init_names,
            container.is_restartable,
            affinity,
            self.cpu_manager.exclusive_cpus(uid, container_name),
            self.cpu_manager.cpu_affinity(uid, container_name),
            memory,
            numa,
            {r: tuple(sorted(ids)) for r, ids in sorted(devices.items())} if devices else {},
        )

    def _release_containers(self, pod: Pod) -> None:
        for container in pod.all_containers():
            self.cpu_manager.remove_container(pod.uid, container.name)
            self.memory_manager.remove_container(pod.uid, container.name)
            self.device_manager.remove_container(pod.uid, container.name)
        self.topology_manager.remove_pod(pod.uid)

    def _account(self, pod: Pod, requests: dict[str, int] | None = None) -> None:
        # Other pods count with their whole requests, as the kubelet's node info sums them.
        if requests is None:
            requests = scheduler_requests(pod, pod_level_resources=self._pod_level_resources)
        self._requests[pod.uid] = requests
        for name, amount in requests.items():
            self._used[name] = self._used.get(name, 0) + amount

    def _insufficient_resource(
        self, pod: Pod, requests: Mapping[str, int]
    ) -> InsufficientResource | None:
        # The predicate admit handler (spec §14): requests without the extended resources the
        # node does not report, checked against allocatable minus what admitted pods request.
        # Node allocatable lists the node's own resources and the device resources registered
        # or still held (upstream sanitizes allocatable to include those).
        allocatable: dict[str, int] = {}
        for name in requests:
            units = self._allocatable_units(name)
            if units is not None:
                allocatable[name] = units
        fit = fit_requests(pod, requests, allocatable.__contains__)
        return first_insufficient(fit, self._used, allocatable)


def _init_names(pod: Pod) -> frozenset[str]:
    return frozenset([c.name for c in pod.init_containers]) if pod.init_containers else _NO_NAMES


_NO_NAMES: frozenset[str] = frozenset()
