"""``DeviceManager``: device plugins' resources, topology hints and allocation (upstream
``devicemanager/manager.go``), without I/O.

Sources (device plugins) register a resource and report devices and their health; the manager
answers the Topology Manager's hint requests and allocates devices to containers with the
affinity the Topology Manager stored. Devices given to a regular init container are handed to
the next containers of the same pod first (upstream ``devicesToReuse``); app containers and
restartable init containers keep theirs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from prometheus_client import CollectorRegistry

from numaplane.api.pod import Container, Pod
from numaplane.node.devicemanager.allocation import devices_to_allocate
from numaplane.node.devicemanager.device import Device, ResourcePool
from numaplane.node.devicemanager.errors import DeviceManagerError, DeviceSourceError
from numaplane.node.devicemanager.metrics import DeviceManagerMetrics
from numaplane.node.devicemanager.source import DeviceSource
from numaplane.node.devicemanager.state import DeviceAllocation, InMemoryState, State, StateReader
from numaplane.node.devicemanager.topology_hints import (
    DeviceHints,
    container_topology_hints,
    pod_topology_hints,
)
from numaplane.node.requests import container_device_requests, pod_device_requests
from numaplane.node.stale_state import ActiveContainers, ActivePods, stale_pods
from numaplane.node.topologymanager.provider import AffinityReader


class DeviceManager:
    """The Device Manager of one node; implements ``HintProvider``.

    ``numa_nodes`` are the machine's NUMA node ids; ``affinity`` is where the Topology Manager
    stores each container's merged hint; ``state`` defaults to an in-memory one (registered
    resources found in a restored state come back with no devices until their plugin
    re-registers, as upstream); ``active_pods``, when given, lists the active pods so devices
    of other pods are released before hints and allocation (upstream
    ``UpdateAllocatedDevices``); ``registry`` receives the manager's metrics. The device manager
    has no policy: its only argument before the state is the machine's NUMA node ids.
    """

    def __init__(
        self,
        numa_nodes: Sequence[int],
        affinity: AffinityReader,
        state: State | None = None,
        *,
        active_pods: ActivePods | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self._numa_nodes = tuple(numa_nodes)
        self._affinity = affinity
        self._state: State = state if state is not None else InMemoryState()
        self._active_pods = active_pods
        self._metrics = DeviceManagerMetrics(self, registry)
        self._sources: dict[str, DeviceSource] = {}
        self._devices: dict[str, dict[str, Device]] = {}
        # The last pool built per resource (see ``pool``); dropped when the devices change.
        self._pools_built: dict[str, ResourcePool] = {}
        for resource in self._state.registered_devices():
            self._set_devices(resource, {})
        self._reuse: dict[str, dict[str, frozenset[str]]] = {}

    # -- registration ---------------------------------------------------------------------

    def add_source(self, source: DeviceSource) -> None:
        """Register (or re-register) a device plugin and take its current devices."""
        self._sources[source.resource_name] = source
        self.update_devices(source.resource_name, source.devices())

    def remove_source(self, resource: str) -> None:
        """The plugin went away: its devices stay known but none is healthy any more."""
        self._sources.pop(resource, None)
        devices = self._devices.get(resource)
        if devices is None:
            return
        self._set_devices(resource, {i: d.with_health(False) for i, d in devices.items()})
        self._state.set_registered_devices(resource, ())

    def update_devices(self, resource: str, devices: Iterable[Device]) -> None:
        """Replace a registered resource's devices (a plugin's new device list)."""
        if resource not in self._sources:
            raise DeviceManagerError(f"unknown Device Plugin {resource}")
        self._set_devices(resource, {d.id: d for d in devices})
        self._state.set_registered_devices(resource, self.pool(resource).healthy)

    def _set_devices(self, resource: str, devices: dict[str, Device]) -> None:
        if resource not in self._devices:
            self._metrics.track(resource)
        self._devices[resource] = devices
        self._pools_built.pop(resource, None)

    def set_device_health(self, resource: str, device_id: str, healthy: bool) -> None:
        """Change one device's health (``KeyError`` when the device is unknown)."""
        devices = dict(self._devices[resource])
        devices[device_id] = devices[device_id].with_health(healthy)
        self.update_devices(resource, devices.values())

    # -- hint provider --------------------------------------------------------------------

    def get_topology_hints(self, pod: Pod, container: Container) -> DeviceHints:
        """Container-scope hints per requested device resource."""
        self._remove_stale_state()
        requests = self._container_request(container)
        return container_topology_hints(
            pod.uid,
            container.name,
            requests,
            self._numa_nodes,
            self._pools(requests),
            self._state,
            self._reuse.get(pod.uid, {}),
        )

    def get_pod_topology_hints(self, pod: Pod) -> DeviceHints:
        """Pod-scope hints per requested device resource."""
        self._remove_stale_state()
        requests = pod_device_requests(pod, self.is_device_resource)
        return pod_topology_hints(
            pod.uid, requests, self._numa_nodes, self._pools(requests), self._state
        )

    def allocate(self, pod: Pod, container: Container) -> None:
        """Give the container its devices, aligned with its stored affinity.

        Callers allocate a pod's init containers before its app containers, in order; the
        devices of a finished regular init container are offered to the containers after it.
        """
        reuse = self._reuse.setdefault(pod.uid, {})
        # Only the pod being admitted can reuse devices; older offers are stale.
        for uid in [u for u in self._reuse if u != pod.uid]:
            del self._reuse[uid]
        self._allocate_container(pod, container, reuse)
        init = (
            next((c for c in pod.init_containers if c.name == container.name), None)
            if pod.init_containers
            else None
        )
        offers = init is not None and not init.is_restartable
        held = self._state.container_allocations(pod.uid, container.name)
        for resource, allocation in held.items():
            current = reuse.get(resource, frozenset())
            if not current and not offers:
                # Nothing on offer: nothing to take back (the entry still records the resource).
                reuse[resource] = current
            elif offers:
                # A device an app or sidecar of this pod already holds is not on offer again
                # (only possible when numaplane re-admits part of a pod after remove_container).
                kept = self._held_by_long_running(pod, resource)
                reuse[resource] = current | (allocation.device_ids - kept)
            else:
                reuse[resource] = current - allocation.device_ids

    def _held_by_long_running(self, pod: Pod, resource: str) -> frozenset[str]:
        held: set[str] = set()
        for c in pod.all_containers():
            regular_init = any(i.name == c.name for i in pod.init_containers) and not (
                c.is_restartable
            )
            if not regular_init:
                held.update(self._state.container_devices(pod.uid, c.name, resource) or ())
        return frozenset(held)

    def _allocate_container(
        self, pod: Pod, container: Container, reuse: Mapping[str, frozenset[str]]
    ) -> None:
        requests = self._container_request(container)
        if not requests:
            return
        self._remove_stale_state()
        hint = self._affinity.get_affinity(pod.uid, container.name)
        for resource, required in requests.items():
            pool = self.pool(resource) if resource in self._devices else None
            source = self._sources.get(resource)
            chosen = devices_to_allocate(
                pool,
                pod_uid=pod.uid,
                container_name=container.name,
                resource=resource,
                required=required,
                existing=self._state.container_devices(pod.uid, container.name, resource),
                reusable=reuse.get(resource, frozenset()),
                hint=hint,
                preferred=source.get_preferred_allocation if source is not None else None,
            )
            if not chosen:
                continue
            if source is None or pool is None:
                raise DeviceManagerError(f"unknown Device Plugin {resource}")
            try:
                response = source.allocate(chosen)
            except DeviceSourceError as err:
                raise DeviceManagerError(str(err)) from err
            devices = [pool.devices[i] for i in chosen]
            self._state.set_allocation(
                pod.uid, container.name, resource, DeviceAllocation.of_devices(devices, response)
            )

    # -- lifecycle ------------------------------------------------------------------------

    def remove_container(self, pod_uid: str, container_name: str) -> None:
        """Release a container's devices (they are no longer offered for reuse either)."""
        held = self._state.container_allocations(pod_uid, container_name)
        reuse = self._reuse.get(pod_uid)
        if reuse is not None:
            for resource, allocation in held.items():
                if resource in reuse:
                    reuse[resource] = reuse[resource] - allocation.device_ids
        self._state.remove_container(pod_uid, container_name)

    def remove_pod(self, pod_uid: str) -> None:
        """Release every device of a pod."""
        self._reuse.pop(pod_uid, None)
        self._state.remove_pods([pod_uid])

    def remove_stale_state(self, active: ActiveContainers) -> None:
        """Release the devices of every pod not in ``active`` (upstream
        ``UpdateAllocatedDevices``)."""
        stale = stale_pods(self._state.pod_uids(), active)
        if stale:
            self._state.remove_pods(stale)

    def _remove_stale_state(self) -> None:
        # With nothing held nothing can be stale: the active pods are not needed.
        if self._active_pods is not None and self._state.pod_uids():
            self.remove_stale_state(self._active_pods())

    # -- read-only accessors --------------------------------------------------------------

    @property
    def state(self) -> StateReader:
        """Read access to the assignments and registered devices (the manager alone writes
        them)."""
        return self._state

    @property
    def metrics(self) -> DeviceManagerMetrics:
        """The manager's series."""
        return self._metrics

    @property
    def numa_nodes(self) -> tuple[int, ...]:
        """The machine's NUMA node ids."""
        return self._numa_nodes

    def resources(self) -> tuple[str, ...]:
        """Registered resources, sorted."""
        return tuple(sorted(self._devices))

    def is_device_resource(self, resource: str) -> bool:
        """Registered, or still held by some container (upstream ``isDevicePluginResource``)."""
        if resource in self._devices:
            return True
        # Plugins can only register extended resources (domain/name): native resources such as
        # cpu, memory and hugepages never are, and need no look at the allocations.
        return "/" in resource and resource in self._state.allocated_devices()

    def _container_request(self, container: Container) -> dict[str, int]:
        return container_device_requests(container, self._may_be_device_resource)

    def _may_be_device_resource(self, resource: str) -> bool:
        # is_device_resource, without a look at the allocations for native resources: only
        # registered resources and extended ones (a "/" in the name) can be device resources.
        return resource in self._devices or ("/" in resource and self.is_device_resource(resource))

    def source(self, resource: str) -> DeviceSource | None:
        """The registered source of a resource."""
        return self._sources.get(resource)

    def pool(self, resource: str) -> ResourcePool:
        """A snapshot of one resource: its devices and which of them are held."""
        in_use = self._state.allocated_devices().get(resource, frozenset())
        devices = self._devices.get(resource)
        if devices is None:
            return ResourcePool(resource, {}, in_use)
        # Pools are immutable snapshots of the devices (the entry is dropped whenever they
        # change) and the held ids (compared here): hints and allocation of one admission share
        # one, and a new set of held ids reuses what depends on the devices alone.
        built = self._pools_built.get(resource)
        if built is None:
            pool = ResourcePool(resource, devices, in_use)
        elif built.in_use == in_use:
            return built
        else:
            pool = built.with_in_use(in_use)
        self._pools_built[resource] = pool
        return pool

    def _pools(self, resources: Iterable[str]) -> dict[str, ResourcePool]:
        return {r: self.pool(r) for r in resources if r in self._devices}

    def devices(self, resource: str) -> tuple[Device, ...]:
        """Every known device of a resource, healthy or not."""
        return tuple(self._devices.get(resource, {}).values())

    def capacity(self, resource: str) -> int:
        """Known devices, healthy or not (the node's capacity)."""
        return len(self._devices.get(resource, {}))

    def allocatable(self, resource: str) -> frozenset[str]:
        """Healthy devices (the node's allocatable)."""
        # Health depends on the devices alone: any pool of the current devices answers.
        built = self._pools_built.get(resource)
        return built.healthy if built is not None else self.pool(resource).healthy

    def allocated(self, resource: str) -> frozenset[str]:
        """Devices held by some container."""
        return self.pool(resource).in_use

    def available(self, resource: str) -> frozenset[str]:
        """Healthy devices no container holds."""
        return self.pool(resource).available

    def allocatable_per_numa(self, resource: str) -> dict[int, int]:
        """Healthy devices per NUMA node (``-1``: without locality)."""
        return self._per_numa(resource, self.allocatable(resource))

    def allocated_per_numa(self, resource: str) -> dict[int, int]:
        """Held devices per NUMA node (``-1``: without locality)."""
        return self._per_numa(resource, self.allocated(resource))

    def available_per_numa(self, resource: str) -> dict[int, int]:
        """Free healthy devices per NUMA node (``-1``: without locality)."""
        return self._per_numa(resource, self.available(resource))

    def _per_numa(self, resource: str, ids: Iterable[str]) -> dict[int, int]:
        known = self._devices.get(resource, {})
        counts: dict[int, int] = {}
        for device_id in ids:
            device = known.get(device_id)
            for node in device.numa_keys() if device is not None else (-1,):
                counts[node] = counts.get(node, 0) + 1
        return dict(sorted(counts.items()))

    def container_devices(self, pod_uid: str, container_name: str) -> dict[str, frozenset[str]]:
        """The container's devices per resource."""
        held = self._state.container_allocations(pod_uid, container_name)
        return {resource: allocation.device_ids for resource, allocation in held.items()}

    def reusable_devices(self, pod_uid: str) -> dict[str, frozenset[str]]:
        """Devices the pod's finished init containers offer to its next containers."""
        return dict(self._reuse.get(pod_uid, {}))
