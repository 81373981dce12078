"""``Device``: one device a device plugin advertises, with its NUMA locality and health.

``numa`` keeps upstream's two kinds of "no locality" apart because the hint and allocation code
treats them differently: ``None`` is a device without ``Topology`` at all; ``()`` is a device
whose ``Topology`` lists no NUMA node. Both count as "without topology" for alignment, but only
``None`` is skipped when hints check the devices a pod may reuse.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint_rules import Threshold, mask_of, min_width_meeting

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


def device_id_key(device_id: str) -> tuple[tuple[tuple[int, int | str], ...], str]:
    """A sort key that orders ids naturally ("dev2" before "dev10"), total over all strings."""
    parts = re.split(r"([0-9]+)", device_id)
    natural = tuple((0, int(p)) if p.isascii() and p.isdigit() else (1, p) for p in parts if p)
    # The id itself breaks ties such as "07" against "7".
    return natural, device_id


def sorted_ids(ids: Iterable[str]) -> list[str]:
    """Device ids in natural order (the deterministic order numaplane fills devices in)."""
    return sorted(ids, key=device_id_key)


class DeviceIndex:
    """Facts about a fixed set of devices that every pool sharing those devices reuses.

    A pool changes at every admission (which devices are held), its devices rarely (a plugin's
    new list): hints and allocation read these facts many times per admission, so they are
    computed once per device set. Immutable; ``min_width`` remembers its answers, a pure
    function of the devices.
    """

    __slots__ = (
        "_groups",
        "_min_widths",
        "by_keys",
        "has_topology",
        "healthy",
        "keys",
        "order",
        "position",
        "single_node",
    )

    def __init__(self, devices: Mapping[str, Device]) -> None:
        #: Ids of healthy devices.
        self.healthy = frozenset(i for i, d in devices.items() if d.healthy)
        #: Whether any device names a NUMA node (upstream ``deviceHasTopologyAlignment``).
        self.has_topology = any(d.has_topology for d in devices.values())
        #: Every id in natural order (``sorted_ids``).
        self.order = tuple(sorted_ids(devices))
        #: Per id: its place in ``order``.
        self.position = {device_id: pos for pos, device_id in enumerate(self.order)}
        #: Per id: the NUMA nodes it is filed under (``Device.numa_keys``).
        self.keys = {i: devices[i].numa_keys() for i in self.order}
        by_keys: dict[tuple[int, ...], list[str]] = {}
        for device_id in self.order:
            by_keys.setdefault(self.keys[device_id], []).append(device_id)
        #: Per ``numa_keys`` tuple: its devices' ids in natural order.
        self.by_keys = {keys: tuple(ids) for keys, ids in by_keys.items()}
        #: Whether every device is filed under exactly one node (``-1`` included).
        self.single_node = all(len(keys) == 1 for keys in by_keys)
        # Every device (healthy or not) per NUMA mask, for ``min_width``.
        groups: dict[int, int] = {}
        for device in devices.values():
            mask = mask_of(device.numa_nodes)
            if mask:
                groups[mask] = groups.get(mask, 0) + 1
        self._groups = tuple(sorted(groups.items()))
        # ``min_width`` answers by (NUMA nodes, request): they depend on the devices alone.
        self._min_widths: dict[tuple[tuple[int, ...], int], int] = {}

    def min_width(self, numa_nodes: tuple[int, ...], request: int) -> int:
        """Width of the narrowest mask of ``numa_nodes`` whose devices (all of them, healthy
        or not) could hold ``request`` (upstream's minimum affinity size; every node when none
        can)."""
        key = (numa_nodes, request)
        found = self._min_widths.get(key)
        if found is None:
            everything = Threshold(self._groups, request)
            found = min_width_meeting(numa_nodes, [everything], len(numa_nodes))
            self._min_widths[key] = found
        return found

    def natural(self, ids: Collection[str]) -> list[str]:
        """``sorted_ids(ids)``, by each device's place instead of its id's sort key."""
        position = self.position
        if all(i in position for i in ids):
            return sorted(ids, key=position.__getitem__)
        return sorted_ids(ids)

    def count_by_keys(self, ids: Iterable[str]) -> dict[tuple[int, ...], int] | None:
        """How many of ``ids`` each ``numa_keys`` tuple holds; ``None`` if one is unknown."""
        keys = self.keys
        counts: dict[tuple[int, ...], int] = {}
        for device_id in ids:
            found = keys.get(device_id)
            if found is None:
                return None
            counts[found] = counts.get(found, 0) + 1
        return counts


class ResourcePool:
    """What allocation and hint generation see of one registered resource (immutable).

    ``devices`` are all its devices by id (healthy or not); ``in_use`` the ids any container
    holds (upstream ``allocatedDevices[resource]``). What depends on the devices alone lives in
    ``index``, shared by every pool ``with_in_use`` derives; the free-device counts are worked
    out at construction.
    """

    __slots__ = ("available", "devices", "free_by_keys", "free_groups", "in_use", "index", "name")

    name: str
    devices: Mapping[str, Device]
    in_use: frozenset[str]
    #: Facts about the devices alone, shared by every pool with the same devices.
    index: DeviceIndex
    #: Healthy devices no container holds (upstream ``getAvailableDevices``).
    available: frozenset[str]
    #: How many ``available`` devices each ``numa_keys`` tuple holds (no zero counts).
    free_by_keys: Mapping[tuple[int, ...], int]
    #: ``(NUMA mask, available devices)`` per non-empty mask, ascending by mask: the capacity
    #: groups of the available devices (devices without a node are left out).
    free_groups: tuple[tuple[int, int], ...]

    def __init__(
        self,
        name: str,
        devices: Mapping[str, Device],
        in_use: Iterable[str] = frozenset(),
        *,
        index: DeviceIndex | None = None,
        free_by_keys: Mapping[tuple[int, ...], int] | None = None,
    ) -> None:
        """``index`` and ``free_by_keys``, when given, must be what this pool would work out
        itself (``with_in_use`` passes on what it already knows, in a dict nobody else holds);
        ``devices`` are then taken as given, already frozen."""
        held = frozenset(in_use)
        if index is None:
            devices = MappingProxyType(dict(devices))
            index = DeviceIndex(devices)
        available = index.healthy - held
        if free_by_keys is None:
            free_by_keys = index.count_by_keys(available)
            assert free_by_keys is not None  # available ids are ids of devices
        groups: dict[int, int] = {}
        for keys, count in free_by_keys.items():
            mask = mask_of(keys)
            if mask:
                groups[mask] = groups.get(mask, 0) + count
        # The one place fields are set (``__setattr__`` refuses afterwards).
        set_field = object.__setattr__
        set_field(self, "name", name)
        set_field(self, "devices", devices)
        set_field(self, "in_use", held)
        set_field(self, "index", index)
        set_field(self, "available", available)
        set_field(self, "free_by_keys", MappingProxyType(free_by_keys))
        set_field(self, "free_groups", tuple(sorted(groups.items())))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

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

    def __repr__(self) -> str:
        devices = dict(self.devices)
        return f"ResourcePool(name={self.name!r}, devices={devices!r}, in_use={self.in_use!r})"

    @classmethod
    def of(cls, name: str, devices: Iterable[Device], in_use: Iterable[str] = ()) -> ResourcePool:
        """A pool from a device list."""
        return cls(name, {d.id: d for d in devices}, frozenset(in_use))

    def with_in_use(self, in_use: frozenset[str]) -> ResourcePool:
        """The same devices with other held ids. The device map and ``index`` are shared, not
        rebuilt, and the free-device counts are updated by the few ids that changed hands
        rather than recounted."""
        in_use = frozenset(in_use)
        index = self.index
        counts = dict(self.free_by_keys)
        healthy, keys = index.healthy, index.keys
        for device_id in self.in_use - in_use:
            if device_id in healthy:
                found = keys[device_id]
                counts[found] = counts.get(found, 0) + 1
        for device_id in in_use - self.in_use:
            if device_id in healthy:
                found = keys[device_id]
                left = counts[found] - 1
                if left:
                    counts[found] = left
                else:
                    del counts[found]
        return ResourcePool(self.name, self.devices, in_use, index=index, free_by_keys=counts)

    @property
    def healthy(self) -> frozenset[str]:
        """Ids of healthy devices."""
        return self.index.healthy

    @property
    def has_topology(self) -> bool:
        """Whether any device names a NUMA node (upstream ``deviceHasTopologyAlignment``)."""
        return self.index.has_topology
