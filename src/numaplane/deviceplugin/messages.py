"""Conversions between the v1beta1 protobuf messages and numaplane's values.

The Device Manager core knows devices as ``Device(id, numa, healthy)`` and an allocation as
opaque bytes; this module is the only place that maps them to and from the wire messages, so the
registration server and the plugin server agree on every detail (health strings, topology,
the serialised ``ContainerAllocateResponse`` the kubelet keeps in its checkpoint).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from numaplane.deviceplugin.v1beta1 import Healthy, Unhealthy, api_pb2
from numaplane.node.devicemanager.device import Device


def device_from_proto(message: api_pb2.Device) -> Device:
    """A ``Device`` from a ``ListAndWatch`` entry.

    Only the exact string ``Healthy`` counts as healthy, as in the kubelet. A device without
    ``topology`` has no locality (``numa=None``); one whose topology lists no node has ``()``.
    """
    numa = (
        tuple(int(node.ID) for node in message.topology.nodes)
        if message.HasField("topology")
        else None
    )
    return Device(message.ID, numa, message.health == Healthy)


def devices_from_response(response: api_pb2.ListAndWatchResponse) -> tuple[Device, ...]:
    """Every device of one ``ListAndWatch`` answer, in the plugin's order."""
    return tuple(device_from_proto(d) for d in response.devices)


def device_to_proto(device: Device) -> api_pb2.Device:
    """The wire form of a device (``topology`` left unset when its NUMA nodes are unknown)."""
    message = api_pb2.Device(ID=device.id, health=Healthy if device.healthy else Unhealthy)
    if device.numa is not None:
        message.topology.CopyFrom(
            api_pb2.TopologyInfo(nodes=[api_pb2.NUMANode(ID=n) for n in device.numa])
        )
    return message


def list_and_watch_response(devices: Iterable[Device]) -> api_pb2.ListAndWatchResponse:
    """A ``ListAndWatch`` answer carrying ``devices``."""
    return api_pb2.ListAndWatchResponse(devices=[device_to_proto(d) for d in devices])


@dataclass(frozen=True, slots=True)
class PluginOptions:
    """A plugin's ``DevicePluginOptions``."""

    pre_start_required: bool = False
    get_preferred_allocation_available: bool = False

    @classmethod
    def from_proto(cls, message: api_pb2.DevicePluginOptions) -> PluginOptions:
        """The options a plugin answered with."""
        return cls(message.pre_start_required, message.get_preferred_allocation_available)

    def to_proto(self) -> api_pb2.DevicePluginOptions:
        """The wire form."""
        return api_pb2.DevicePluginOptions(
            pre_start_required=self.pre_start_required,
            get_preferred_allocation_available=self.get_preferred_allocation_available,
        )


@dataclass(frozen=True, slots=True)
class MountSpec:
    """A host path to mount into the container (``Mount``)."""

    container_path: str
    host_path: str
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class DeviceSpec:
    """A host device node to expose in the container (``DeviceSpec``)."""

    container_path: str
    host_path: str
    permissions: str = "rw"


def _frozen_map(value: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(value))


@dataclass(frozen=True)
class ContainerAllocation:
    """What a plugin tells the kubelet to give one container (``ContainerAllocateResponse``)."""

    envs: Mapping[str, str] = field(default_factory=dict)
    mounts: tuple[MountSpec, ...] = ()
    devices: tuple[DeviceSpec, ...] = ()
    annotations: Mapping[str, str] = field(default_factory=dict)
    cdi_devices: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "envs", _frozen_map(self.envs))
        object.__setattr__(self, "annotations", _frozen_map(self.annotations))
        object.__setattr__(self, "mounts", tuple(self.mounts))
        object.__setattr__(self, "devices", tuple(self.devices))
        object.__setattr__(self, "cdi_devices", tuple(self.cdi_devices))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ContainerAllocation):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple[object, ...]:
        return (
            tuple(sorted(self.envs.items())),
            self.mounts,
            self.devices,
            tuple(sorted(self.annotations.items())),
            self.cdi_devices,
        )

    @classmethod
    def from_proto(cls, message: api_pb2.ContainerAllocateResponse) -> ContainerAllocation:
        """The allocation a plugin answered with."""
        return cls(
            envs=dict(message.envs),
            mounts=tuple(
                MountSpec(m.container_path, m.host_path, m.read_only) for m in message.mounts
            ),
            devices=tuple(
                DeviceSpec(d.container_path, d.host_path, d.permissions) for d in message.devices
            ),
            annotations=dict(message.annotations),
            cdi_devices=tuple(c.name for c in message.cdi_devices),
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> ContainerAllocation:
        """Parse a serialised ``ContainerAllocateResponse`` (as kept in the checkpoint)."""
        message = api_pb2.ContainerAllocateResponse()
        message.ParseFromString(data)
        return cls.from_proto(message)

    def to_proto(self) -> api_pb2.ContainerAllocateResponse:
        """The wire form."""
        return api_pb2.ContainerAllocateResponse(
            envs=dict(self.envs),
            mounts=[
                api_pb2.Mount(
                    container_path=m.container_path, host_path=m.host_path, read_only=m.read_only
                )
                for m in self.mounts
            ],
            devices=[
                api_pb2.DeviceSpec(
                    container_path=d.container_path,
                    host_path=d.host_path,
                    permissions=d.permissions,
                )
                for d in self.devices
            ],
            annotations=dict(self.annotations),
            cdi_devices=[api_pb2.CDIDevice(name=n) for n in self.cdi_devices],
        )

    def to_bytes(self) -> bytes:
        """The serialised message (deterministic: map entries in key order)."""
        return serialize(self.to_proto())


def serialize(message: api_pb2.ContainerAllocateResponse) -> bytes:
    """Deterministic bytes of a ``ContainerAllocateResponse``, so equal answers store equally."""
    data: bytes = message.SerializeToString(deterministic=True)
    return data
