"""Where devices come from: the ``DeviceSource`` Protocol and an in-memory implementation.

A source stands for one registered device plugin: it names its resource, lists its devices with
their health, may suggest which devices to hand out (``GetPreferredAllocation``) and answers the
allocation of chosen devices with an opaque response (``Allocate``; the agent's gRPC source
returns the serialised ``ContainerAllocateResponse``). The manager never does I/O itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.errors import DeviceSourceError

PreferredAllocationFn = Callable[[Sequence[str], Sequence[str], int], Sequence[str] | None]
"""``(available, must_include, size) -> preferred ids | None`` (``None``: no preference)."""


class DeviceSource(Protocol):
    """One device plugin as the Device Manager sees it."""

    @property
    def resource_name(self) -> str:
        """The extended resource it serves, e.g. ``nvidia.com/gpu``."""
        ...

    def devices(self) -> Sequence[Device]:
        """Its current devices (upstream: the latest ``ListAndWatch`` answer)."""
        ...

    def get_preferred_allocation(
        self, available: Sequence[str], must_include: Sequence[str], size: int
    ) -> Sequence[str] | None:
        """The plugin's choice of ``size`` devices, or ``None`` when it offers none.

        Ids that are not in ``available`` are ignored by the caller; failures raise
        ``DeviceSourceError``.
        """
        ...

    def allocate(self, device_ids: Sequence[str]) -> bytes:
        """Tell the plugin these devices go to a container; the opaque response bytes.

        Failures raise ``DeviceSourceError``.
        """
        ...


@dataclass(frozen=True, slots=True)
class PreferredAllocationCall:
    """The arguments of one ``get_preferred_allocation`` call (kept for tests and explanations)."""

    available: tuple[str, ...]
    must_include: tuple[str, ...]
    size: int


class InMemoryDeviceSource:
    """A ``DeviceSource`` held in memory: for ``admit``, the simulator and tests.

    ``preferred`` answers ``get_preferred_allocation`` (``None``: the plugin offers no
    preference); every call is recorded in ``preferred_calls``. ``fail_allocate`` makes
    ``allocate`` fail, to exercise the manager's error path.
    """

    def __init__(
        self,
        resource_name: str,
        devices: Iterable[Device] = (),
        preferred: PreferredAllocationFn | None = None,
        allocate_response: bytes = b"",
    ) -> None:
        self._resource_name = resource_name
        self._devices: dict[str, Device] = {}
        self.set_devices(devices)
        self._preferred = preferred
        self._allocate_response = allocate_response
        self.preferred_calls: list[PreferredAllocationCall] = []
        self.allocations: list[tuple[str, ...]] = []
        self.fail_allocate: str | None = None

    @property
    def resource_name(self) -> str:
        """The resource it serves."""
        return self._resource_name

    def devices(self) -> Sequence[Device]:
        """Its devices in the order they were given."""
        return tuple(self._devices.values())

    def set_devices(self, devices: Iterable[Device]) -> None:
        """Replace the device list (a new ``ListAndWatch`` answer)."""
        self._devices = {d.id: d for d in devices}

    def set_health(self, device_id: str, healthy: bool) -> None:
        """Change one device's health (``KeyError`` for an unknown id)."""
        self._devices[device_id] = self._devices[device_id].with_health(healthy)

    def get_preferred_allocation(
        self, available: Sequence[str], must_include: Sequence[str], size: int
    ) -> Sequence[str] | None:
        """Record the call and answer with ``preferred`` (``None`` when there is none)."""
        self.preferred_calls.append(
            PreferredAllocationCall(tuple(available), tuple(must_include), size)
        )
        if self._preferred is None:
            return None
        return self._preferred(available, must_include, size)

    def allocate(self, device_ids: Sequence[str]) -> bytes:
        """Record the allocation and answer with the configured response bytes."""
        if self.fail_allocate is not None:
            raise DeviceSourceError(self.fail_allocate)
        self.allocations.append(tuple(device_ids))
        return self._allocate_response
