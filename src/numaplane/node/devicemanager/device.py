"""``Device``: one device a device plugin advertises, with its NUMA locality and health.

``numa`` keeps upstream's two kinds of "no locality" apart because the hint and allocation code
treats them differently: ``None`` is a device without ``Topology`` at all; ``()`` is a device
whose ``Topology`` lists no NUMA node. Both count as "without topology" for alignment, but only
``None`` is skipped when hints check the devices a pod may reuse.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from types import MappingProxyType

from numaplane.node.topologymanager.bitmask import BitMask

#: The pseudo NUMA node upstream files devices without locality under (``nodeWithoutTopology``).
NODE_WITHOUT_TOPOLOGY = -1


@dataclass(frozen=True, slots=True)
class Device:
    """A device of one resource: its id, NUMA nodes (see module doc) and health."""

    id: str
    numa: tuple[int, ...] | None = None
    healthy: bool = True

    def __post_init__(self) -> None:
        if self.numa is not None:
            object.__setattr__(self, "numa", tuple(self.numa))

    @property
    def has_topology(self) -> bool:
        """Whether the device names at least one NUMA node."""
        return bool(self.numa)

    @property
    def numa_nodes(self) -> tuple[int, ...]:
        """The NUMA nodes (empty when none are known)."""
        return self.numa or ()

    def in_mask(self, mask: BitMask) -> bool:
        """Whether any of the device's NUMA nodes is in ``mask`` (upstream ``AnySet``)."""
        return mask.any_set(self.numa_nodes)

    def numa_keys(self) -> tuple[int, ...]:
        """The NUMA nodes its id is filed under in pod devices (``-1`` when it has none)."""
        return self.numa_nodes if self.numa_nodes else (NODE_WITHOUT_TOPOLOGY,)

    def with_health(self, healthy: bool) -> Device:
        """The same device with another health."""
        return Device(self.id, self.numa, healthy)


# The same few ids are sorted at every allocation: remember their keys.
@lru_cache(maxsize=65536)
def device_id_key(device_id: str) -> tuple[tuple[tuple[int, int | str], ...], str]:
    """A sort key that orders ids naturally ("dev2" before "dev10"), total over all strings."""
    parts = re.split(r"([0-9]+)", device_id)
    natural = tuple((0, int(p)) if p.isascii() and p.isdigit() else (1, p) for p in parts if p)
    # The id itself breaks ties such as "07" against "7".
    return natural, device_id


def sorted_ids(ids: Iterable[str]) -> list[str]:
    """Device ids in natural order (the deterministic order numaplane fills devices in)."""
    return sorted(ids, key=device_id_key)


@dataclass(frozen=True)
class ResourcePool:
    """What allocation and hint generation see of one registered resource.

    ``devices`` are all its devices by id (healthy or not); ``in_use`` the ids any container
    holds (upstream ``allocatedDevices[resource]``).
    """

    name: str
    devices: Mapping[str, Device]
    in_use: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "devices", MappingProxyType(dict(self.devices)))
        object.__setattr__(self, "in_use", frozenset(self.in_use))

    def __hash__(self) -> int:
        return hash((self.name, frozenset(self.devices.items()), self.in_use))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ResourcePool):
            return NotImplemented
        return (self.name, dict(self.devices), self.in_use) == (
            other.name,
            dict(other.devices),
            other.in_use,
        )

    @classmethod
    def of(cls, name: str, devices: Iterable[Device], in_use: Iterable[str] = ()) -> ResourcePool:
        """A pool from a device list."""
        return cls(name, {d.id: d for d in devices}, frozenset(in_use))

    def with_in_use(self, in_use: frozenset[str]) -> ResourcePool:
        """The same devices with other held ids; the device map and the memo of facts that
        depend on the devices alone (``min_widths``) are shared, not rebuilt."""
        pool = object.__new__(ResourcePool)
        object.__setattr__(pool, "name", self.name)
        object.__setattr__(pool, "devices", self.devices)
        object.__setattr__(pool, "in_use", frozenset(in_use))
        pool.__dict__["min_widths"] = self.min_widths
        return pool

    @cached_property
    def min_widths(self) -> dict[tuple[tuple[int, ...], int], int]:
        """Memo for hint generation: ``(NUMA nodes, request)`` to the narrowest width whose
        devices (all of them, healthy or not) could hold the request."""
        return {}

    @cached_property
    def healthy(self) -> frozenset[str]:
        """Ids of healthy devices."""
        return frozenset(i for i, d in self.devices.items() if d.healthy)

    @cached_property
    def available(self) -> frozenset[str]:
        """Healthy devices no container holds (upstream ``getAvailableDevices``)."""
        return self.healthy - self.in_use

    @cached_property
    def has_topology(self) -> bool:
        """Whether any device names a NUMA node (upstream ``deviceHasTopologyAlignment``)."""
        return any(d.has_topology for d in self.devices.values())
