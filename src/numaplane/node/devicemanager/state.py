"""The Device Manager's state: which devices each container holds, and what is registered.

Shape (upstream ``podDevices`` and the ``kubelet_internal_checkpoint`` data):
pod uid -> container name -> resource -> ``DeviceAllocation`` (device ids per NUMA node, ``-1``
for devices without NUMA locality, plus the plugin's opaque allocate response), and the
registered (healthy) device ids per resource.

``StateReader`` is what hint generation and accessors need; ``State`` adds the writes the
manager makes. ``InMemoryState`` is the backend of ``admit``, the simulator and tests; the
agent's checkpointed backend lives in ``checkpoint.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from numaplane.node.devicemanager.device import Device, sorted_ids


@dataclass(frozen=True, slots=True)
class DeviceAllocation:
    """The devices of one resource given to one container.

    ``per_numa`` holds ``(NUMA node, device ids)`` pairs sorted by node (``-1``: no locality);
    a device on several nodes appears under each. Ids keep the order given (duplicates
    dropped), because the checkpoint's checksum renders them in order. ``alloc_resp`` is the
    plugin's allocate response, kept opaque (a serialised ``ContainerAllocateResponse``).
    """

    per_numa: tuple[tuple[int, tuple[str, ...]], ...]
    alloc_resp: bytes = b""
    # Derived from per_numa (so left out of equality, hash and repr): asked for at every
    # allocation, release and reuse check.
    _device_ids: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        merged: dict[int, list[str]] = {}
        for node, ids in self.per_numa:
            bucket = merged.setdefault(node, [])
            bucket.extend(i for i in ids if i not in bucket)
        per_numa = tuple((node, tuple(merged[node])) for node in sorted(merged))
        object.__setattr__(self, "per_numa", per_numa)
        object.__setattr__(self, "_device_ids", frozenset(i for _, ids in per_numa for i in ids))

    @classmethod
    def of(cls, per_numa: Mapping[int, Iterable[str]], alloc_resp: bytes = b"") -> DeviceAllocation:
        """From a mapping ``NUMA node -> ids``."""
        return cls(tuple((node, tuple(ids)) for node, ids in per_numa.items()), alloc_resp)

    @classmethod
    def of_devices(cls, devices: Iterable[Device], alloc_resp: bytes = b"") -> DeviceAllocation:
        """From devices, each filed under every NUMA node it names (or ``-1``)."""
        per_numa: dict[int, list[str]] = {}
        for device in devices:
            for node in device.numa_keys():
                per_numa.setdefault(node, []).append(device.id)
        return cls.of(per_numa, alloc_resp)

    @property
    def by_numa(self) -> dict[int, tuple[str, ...]]:
        """``per_numa`` as a mapping."""
        return dict(self.per_numa)

    @property
    def device_ids(self) -> frozenset[str]:
        """Every device id, once (upstream ``DevicesPerNUMA.Devices()``)."""
        return self._device_ids


@dataclass(frozen=True, slots=True)
class PodDevicesEntry:
    """One row of the state: a container's devices of one resource (checkpoint entry)."""

    pod_uid: str
    container_name: str
    resource_name: str
    allocation: DeviceAllocation


class StateReader(Protocol):
    """Read access to device assignments and registered devices."""

    def container_devices(
        self, pod_uid: str, container_name: str, resource: str
    ) -> frozenset[str] | None:
        """The container's devices of ``resource``; ``None`` when nothing is recorded."""
        ...

    def container_allocations(
        self, pod_uid: str, container_name: str
    ) -> Mapping[str, DeviceAllocation]:
        """Every resource's allocation of the container (empty when none)."""
        ...

    def pod_devices(self, pod_uid: str, resource: str) -> frozenset[str]:
        """The union of the pod's containers' devices of ``resource``."""
        ...

    def pod_uids(self) -> frozenset[str]:
        """Pods holding at least one allocation."""
        ...

    def container_names(self, pod_uid: str) -> tuple[str, ...]:
        """Containers of the pod holding at least one allocation, in insertion order."""
        ...

    def allocated_devices(self) -> Mapping[str, frozenset[str]]:
        """Every resource's devices held by any container (upstream ``podDevices.devices()``)."""
        ...

    def entries(self) -> tuple[PodDevicesEntry, ...]:
        """All rows, in insertion order."""
        ...

    def registered_devices(self) -> Mapping[str, tuple[str, ...]]:
        """Registered healthy device ids per resource (the checkpoint's ``RegisteredDevices``)."""
        ...


class State(StateReader, Protocol):
    """Read and write access; the manager is the only writer."""

    def set_allocation(
        self, pod_uid: str, container_name: str, resource: str, allocation: DeviceAllocation
    ) -> None:
        """Record (or replace) a container's devices of one resource."""
        ...

    def remove_container(self, pod_uid: str, container_name: str) -> None:
        """Forget a container's devices; the pod goes when it has no containers left."""
        ...

    def remove_pods(self, pod_uids: Iterable[str]) -> None:
        """Forget every allocation of these pods."""
        ...

    def set_registered_devices(self, resource: str, device_ids: Iterable[str]) -> None:
        """Record the registered healthy devices of a resource."""
        ...

    def remove_registered_devices(self, resource: str) -> None:
        """Forget a resource's registered devices."""
        ...


class InMemoryState:
    """A ``State`` kept in dictionaries."""

    def __init__(self) -> None:
        self._pods: dict[str, dict[str, dict[str, DeviceAllocation]]] = {}
        self._registered: dict[str, tuple[str, ...]] = {}
        # Hint generation asks for the allocated devices several times per admission: keep,
        # per resource, how many allocations hold each device (a device can be held by an
        # init container and the app container reusing it), updated on every write.
        self._holders: dict[str, dict[str, int]] = {}
        self._allocated: dict[str, frozenset[str]] | None = None
        # The stale-pod check asks for the pod uids at every hint and allocation: kept until a
        # pod comes or goes.
        self._uids: frozenset[str] | None = None

    # -- reads ----------------------------------------------------------------------------

    def container_devices(
        self, pod_uid: str, container_name: str, resource: str
    ) -> frozenset[str] | None:
        """See ``StateReader``."""
        allocation = self._pods.get(pod_uid, {}).get(container_name, {}).get(resource)
        return None if allocation is None else allocation.device_ids

    def container_allocations(
        self, pod_uid: str, container_name: str
    ) -> Mapping[str, DeviceAllocation]:
        """See ``StateReader``."""
        return dict(self._pods.get(pod_uid, {}).get(container_name, {}))

    def pod_devices(self, pod_uid: str, resource: str) -> frozenset[str]:
        """See ``StateReader``."""
        found: set[str] = set()
        for resources in self._pods.get(pod_uid, {}).values():
            allocation = resources.get(resource)
            if allocation is not None:
                found |= allocation.device_ids
        return frozenset(found)

    def pod_uids(self) -> frozenset[str]:
        """See ``StateReader``."""
        if self._uids is None:
            self._uids = frozenset(self._pods)
        return self._uids

    def container_names(self, pod_uid: str) -> tuple[str, ...]:
        """See ``StateReader``."""
        return tuple(self._pods.get(pod_uid, {}))

    def allocated_devices(self) -> Mapping[str, frozenset[str]]:
        """See ``StateReader``."""
        if self._allocated is None:
            self._allocated = {
                resource: frozenset(holders) for resource, holders in self._holders.items()
            }
        return dict(self._allocated)

    def entries(self) -> tuple[PodDevicesEntry, ...]:
        """See ``StateReader``."""
        return tuple(
            PodDevicesEntry(pod_uid, container, resource, allocation)
            for pod_uid, containers in self._pods.items()
            for container, resources in containers.items()
            for resource, allocation in resources.items()
        )

    def registered_devices(self) -> Mapping[str, tuple[str, ...]]:
        """See ``StateReader``."""
        return dict(self._registered)

    # -- writes ---------------------------------------------------------------------------

    def set_allocation(
        self, pod_uid: str, container_name: str, resource: str, allocation: DeviceAllocation
    ) -> None:
        """See ``State``."""
        if pod_uid not in self._pods:
            self._uids = None
        resources = self._pods.setdefault(pod_uid, {}).setdefault(container_name, {})
        previous = resources.get(resource)
        if previous is not None:
            self._forget(resource, previous)
        resources[resource] = allocation
        holders = self._holders.setdefault(resource, {})
        for device_id in allocation.device_ids:
            holders[device_id] = holders.get(device_id, 0) + 1
        self._allocated = None

    def remove_container(self, pod_uid: str, container_name: str) -> None:
        """See ``State``."""
        containers = self._pods.get(pod_uid)
        if containers is None:
            return
        resources = containers.pop(container_name, None)
        if resources is not None:
            for resource, allocation in resources.items():
                self._forget(resource, allocation)
        if not containers:
            del self._pods[pod_uid]
            self._uids = None

    def remove_pods(self, pod_uids: Iterable[str]) -> None:
        """See ``State``."""
        for uid in pod_uids:
            containers = self._pods.pop(uid, None)
            if containers is not None:
                self._uids = None
            for resources in (containers or {}).values():
                for resource, allocation in resources.items():
                    self._forget(resource, allocation)

    def _forget(self, resource: str, allocation: DeviceAllocation) -> None:
        holders = self._holders[resource]
        for device_id in allocation.device_ids:
            left = holders[device_id] - 1
            if left:
                holders[device_id] = left
            else:
                del holders[device_id]
        if not holders:
            del self._holders[resource]
        self._allocated = None

    def set_registered_devices(self, resource: str, device_ids: Iterable[str]) -> None:
        """See ``State``."""
        self._registered[resource] = tuple(sorted_ids(set(device_ids)))

    def remove_registered_devices(self, resource: str) -> None:
        """See ``State``."""
        self._registered.pop(resource, None)
