"""The device manager's metrics: a ``prometheus_client`` gauge on a registry it is given.

The kubelet has no per-resource device gauges; numaplane exports its own,
``numaplane_device_manager_devices`` {resource_name, state}, with state ``capacity`` (known
devices), ``allocatable`` (healthy) and ``allocated`` (held by a container). Each series is
read from the manager when collected, so allocations pay nothing for it.
"""

from __future__ import annotations

from typing import Final, Protocol

from prometheus_client import CollectorRegistry, Gauge

from numaplane.node.topologymanager.metrics import private_registry

DEVICES: Final = "numaplane_device_manager_devices"


class DeviceCounts(Protocol):
    """What the gauge reads: the device manager's per-resource views."""

    def capacity(self, resource: str) -> int:
        """Known devices of ``resource``."""
        ...

    def allocatable(self, resource: str) -> frozenset[str]:
        """Healthy devices of ``resource``."""
        ...

    def allocated(self, resource: str) -> frozenset[str]:
        """Devices of ``resource`` held by some container."""
        ...


class DeviceManagerMetrics:
    """The device gauge of one manager, on ``registry`` (a private one when not given)."""

    def __init__(self, devices: DeviceCounts, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else private_registry()
        self._devices = devices
        self.devices = Gauge(
            DEVICES,
            "Devices of each device-plugin resource: capacity (known), allocatable (healthy), "
            "allocated (held by containers).",
            ["resource_name", "state"],
            registry=self.registry,
        )

    def track(self, resource: str) -> None:
        """Export ``resource``'s three series (a resource stays known once registered)."""
        devices = self._devices
        self.devices.labels(resource, "capacity").set_function(lambda: devices.capacity(resource))
        self.devices.labels(resource, "allocatable").set_function(
            lambda: len(devices.allocatable(resource))
        )
        self.devices.labels(resource, "allocated").set_function(
            lambda: len(devices.allocated(resource))
        )
