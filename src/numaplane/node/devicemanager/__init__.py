"""The Device Manager: device plugins' resources, their topology hints and allocation.

Pure core (no I/O); the agent connects real device plugins through ``DeviceSource``.
"""

from __future__ import annotations

from numaplane.node.devicemanager.allocation import devices_to_allocate, filter_by_affinity
from numaplane.node.devicemanager.device import NODE_WITHOUT_TOPOLOGY, Device, ResourcePool
from numaplane.node.devicemanager.errors import (
    DeviceManagerError,
    DeviceSourceError,
    InventoryError,
)
from numaplane.node.devicemanager.inventory import (
    DEFAULT_PCI_RULES,
    PCIRule,
    devices_from_machine,
    parse_inventory,
    sources_of,
)
from numaplane.node.devicemanager.manager import DeviceManager
from numaplane.node.devicemanager.source import (
    DeviceSource,
    InMemoryDeviceSource,
    PreferredAllocationCall,
)
from numaplane.node.devicemanager.state import (
    DeviceAllocation,
    InMemoryState,
    PodDevicesEntry,
    State,
    StateReader,
)

__all__ = [
    "DEFAULT_PCI_RULES",
    "NODE_WITHOUT_TOPOLOGY",
    "Device",
    "DeviceAllocation",
    "DeviceManager",
    "DeviceManagerError",
    "DeviceSource",
    "DeviceSourceError",
    "InMemoryDeviceSource",
    "InMemoryState",
    "InventoryError",
    "PCIRule",
    "PodDevicesEntry",
    "PreferredAllocationCall",
    "ResourcePool",
    "State",
    "StateReader",
    "devices_from_machine",
    "devices_to_allocate",
    "filter_by_affinity",
    "parse_inventory",
    "sources_of",
]
