"""Choosing the devices of one resource for one container (upstream ``devicesToAllocate``).

The order of preference, as upstream:

1. a container that already holds devices keeps them (a different count is an error);
2. devices the pod's init containers held and released (``reusable``) are taken first;
3. when the remaining need fits strictly inside the devices aligned with the container's
   topology hint, the plugin's preferred allocation among those aligned devices is taken,
   then the rest of the aligned devices;
4. otherwise all aligned devices are taken, then the plugin's preferred allocation among every
   available device, then unaligned devices, then devices without NUMA locality.

Upstream walks Go sets, so within each group its order is unspecified; numaplane fixes one:
aligned devices by NUMA node (hint nodes with fewer free devices first, as upstream sorts its
node list), then by natural id order. Deviation: reusable devices that are no longer healthy
are not handed out again (upstream would reuse them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from numaplane.gofmt import go_quote
from numaplane.node.devicemanager.device import (
    NODE_WITHOUT_TOPOLOGY,
    DeviceIndex,
    ResourcePool,
    device_id_key,
    sorted_ids,
)
from numaplane.node.devicemanager.errors import DeviceManagerError, DeviceSourceError
from numaplane.node.devicemanager.source import PreferredAllocationFn
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint


def filter_by_affinity(
    pool: ResourcePool, available: AbstractSet[str], hint: TopologyHint
) -> tuple[list[str], list[str], list[str]]:
    """Split ``available`` into (aligned, unaligned, without NUMA locality), each ordered.

    Without a hint affinity, or for a resource with no NUMA information, every device is in the
    third group. A device on several NUMA nodes goes to the group of the first of its nodes in
    the node order (hint nodes, then other nodes, then ``-1``; fewer free devices first).
    """
    split = _Split(pool, available, hint)
    return split.group(ALIGNED), split.group(UNALIGNED), split.group(WITHOUT)


#: The groups of ``filter_by_affinity``, in its node order.
ALIGNED, UNALIGNED, WITHOUT = 0, 1, 2


class _Split:
    """``filter_by_affinity``, one group at a time: allocation mostly needs the aligned group
    alone, so the others are only built when asked for.

    Devices are counted by the node tuple they are filed under (``Device.numa_keys``): the node
    order and each device's group follow from those few tuples, and each tuple's devices are
    kept in natural order by the pool's index, so nothing is sorted device by device.
    """

    def __init__(self, pool: ResourcePool, available: AbstractSet[str], hint: TopologyHint):
        self._index = pool.index
        self._available = available
        self._ready: tuple[list[str], list[str], list[str]] | None = None
        self._plan: list[tuple[int, tuple[tuple[int, ...], ...]]] = []
        affinity = hint.numa_affinity
        if affinity is None or not pool.has_topology:
            self._ready = ([], [], sorted_ids(available))
            return
        if available is pool.available:
            counts: Mapping[tuple[int, ...], int] | None = pool.free_by_keys
        else:
            counts = self._index.count_by_keys(available)
        if counts is None:
            self._ready = filter_per_device(pool, available, affinity)
            return
        self._plan = _plan(counts, affinity.value, self._index.single_node)

    def group(self, group: int) -> list[str]:
        """The ordered ids of one group (``ALIGNED``, ``UNALIGNED`` or ``WITHOUT``)."""
        if self._ready is not None:
            return self._ready[group]
        by_keys, available = self._index.by_keys, self._available
        ids: list[str] = []
        for node_group, tuples in self._plan:
            if node_group != group:
                continue
            if len(tuples) == 1:
                ids += [d for d in by_keys[tuples[0]] if d in available]
            else:
                # Devices of several tuples go under this node: natural order across them.
                part = [d for keys in tuples for d in by_keys[keys] if d in available]
                part.sort(key=device_id_key)
                ids.extend(part)
        return ids


def _plan(
    counts: Mapping[tuple[int, ...], int], affinity: int, single_node: bool
) -> list[tuple[int, tuple[tuple[int, ...], ...]]]:
    # Per node in upstream's order (hint nodes, other nodes, then -1; fewer free devices first,
    # then the lower id): its group and the node tuples whose devices go under it.
    if single_node:
        # Every device is filed under one node: each tuple is a node, no tie to break.
        entries = [(_group(keys[0], affinity), count, keys) for keys, count in counts.items()]
        entries.sort()
        return [(group, (keys,)) for group, _, keys in entries]
    per_node: dict[int, int] = {}
    for keys, count in counts.items():
        # A node listed twice by one device still counts that device once.
        for node in dict.fromkeys(keys):
            per_node[node] = per_node.get(node, 0) + count
    order = sorted((_group(n, affinity), c, n) for n, c in per_node.items())
    rank = {node: pos for pos, (_, _, node) in enumerate(order)}
    # Each tuple goes under the first of its nodes in that order.
    tuples_of: dict[int, list[tuple[int, ...]]] = {}
    for keys in counts:
        tuples_of.setdefault(min(keys, key=rank.__getitem__), []).append(keys)
    return [(g, tuple(tuples_of[n])) for g, _, n in order if n in tuples_of]


def _group(node: int, affinity: int) -> int:
    if 0 <= node < 64 and affinity >> node & 1:
        return ALIGNED
    return WITHOUT if node == NODE_WITHOUT_TOPOLOGY else UNALIGNED


def filter_per_device(
    pool: ResourcePool, available: AbstractSet[str], affinity: BitMask
) -> tuple[list[str], list[str], list[str]]:
    """``filter_by_affinity`` for a non-nil affinity on a resource with NUMA information,
    device by device: the definition the counting fast path is tested against, and the path
    taken when ``available`` names ids the pool does not know (only direct callers can); those
    count as devices without NUMA locality."""

    def nodes_of(device_id: str) -> tuple[int, ...]:
        device = pool.devices.get(device_id)
        return device.numa_keys() if device is not None else (NODE_WITHOUT_TOPOLOGY,)

    per_node: dict[int, set[str]] = {}
    for device_id in available:
        for node in nodes_of(device_id):
            per_node.setdefault(node, set()).add(device_id)

    def node_order(node: int) -> tuple[int, int, int]:
        if affinity.is_set(node):
            group = 0
        elif node == NODE_WITHOUT_TOPOLOGY:
            group = 2
        else:
            group = 1
        return group, len(per_node[node]), node

    rank = {node: pos for pos, node in enumerate(sorted(per_node, key=node_order))}
    first_node = {d: min(nodes_of(d), key=rank.__getitem__) for d in available}

    aligned: list[str] = []
    unaligned: list[str] = []
    without: list[str] = []
    for device_id in sorted(available, key=lambda d: (rank[first_node[d]], device_id_key(d))):
        node = first_node[device_id]
        if node == NODE_WITHOUT_TOPOLOGY:
            without.append(device_id)
        elif affinity.is_set(node):
            aligned.append(device_id)
        else:
            unaligned.append(device_id)
    return aligned, unaligned, without


class _Picker:
    """The devices chosen so far and how many are still needed."""

    def __init__(self, needed: int) -> None:
        self.needed = needed
        self.chosen: list[str] = []
        self._chosen_set: set[str] = set()

    def take(self, candidates: Iterable[str]) -> bool:
        """Take candidates not chosen yet until none is needed; whether that point is reached."""
        for device_id in candidates:
            if device_id in self._chosen_set:
                continue
            self.chosen.append(device_id)
            self._chosen_set.add(device_id)
            self.needed -= 1
            if self.needed == 0:
                return True
        return False

    @property
    def chosen_set(self) -> AbstractSet[str]:
        return self._chosen_set


def _preferred(
    preferred: PreferredAllocationFn | None,
    index: DeviceIndex,
    available: AbstractSet[str],
    must_include: Sequence[str],
    size: int,
) -> list[str]:
    if preferred is None:
        return []
    try:
        answer = preferred(index.natural(available), list(must_include), size)
    except DeviceSourceError as err:
        raise DeviceManagerError(
            f"device plugin GetPreferredAllocation rpc failed with err: {err}"
        ) from err
    return list(answer or ())


def devices_to_allocate(
    pool: ResourcePool | None,
    *,
    pod_uid: str,
    container_name: str,
    resource: str,
    required: int,
    existing: AbstractSet[str] | None,
    reusable: AbstractSet[str],
    hint: TopologyHint,
    preferred: PreferredAllocationFn | None,
) -> tuple[str, ...]:
    """The devices to give the container now, in the order chosen; ``()`` when none are needed.

    ``pool`` is ``None`` for a resource no plugin registered; ``existing`` is what the
    container already holds (``None``: nothing recorded); ``preferred`` is the plugin's
    ``GetPreferredAllocation`` (``None`` when it has none). Raises ``DeviceManagerError`` with
    upstream's messages.
    """
    needed = required
    if existing is not None:
        needed -= len(existing)
        if needed != 0:
            # A pod's resources do not change once admitted, so a mismatch is an error.
            raise DeviceManagerError(
                f"pod {go_quote(pod_uid)} container {go_quote(container_name)} changed request"
                f" for resource {go_quote(resource)} from {len(existing)} to {required}"
            )
    if pool is None:
        raise DeviceManagerError(f"cannot allocate unregistered device {resource}")
    healthy = pool.healthy
    if not healthy:
        raise DeviceManagerError(
            f"no healthy devices present; cannot allocate unhealthy devices {resource}"
        )
    if existing is not None and not existing <= healthy:
        raise DeviceManagerError(
            "previously allocated devices are no longer healthy; "
            f"cannot allocate unhealthy devices {resource}"
        )
    if needed <= 0:
        return ()

    picker = _Picker(needed)
    if reusable and picker.take(sorted_ids(reusable & healthy)):
        return tuple(picker.chosen)

    # The pool's own free set when nothing was reused: it carries counts filter_by_affinity
    # would otherwise recount.
    available = pool.available - picker.chosen_set if picker.chosen else pool.available
    if len(available) < picker.needed:
        raise DeviceManagerError(
            f"requested number of devices unavailable for {resource}. "
            f"Requested: {picker.needed}, Available: {len(available)}"
        )

    split = _Split(pool, available, hint)
    aligned = split.group(ALIGNED)
    aligned_set = frozenset(aligned)
    if picker.needed < len(aligned):
        # Everything still needed fits in the aligned devices: let the plugin choose among them.
        choice = _preferred(
            preferred, pool.index, aligned_set | picker.chosen_set, picker.chosen, required
        )
        if picker.take(d for d in choice if d in aligned_set):
            return tuple(picker.chosen)
        if picker.take(aligned):
            return tuple(picker.chosen)
    else:
        # Honour the hint first with every aligned device, then let the plugin pick the rest.
        if picker.take(aligned):
            return tuple(picker.chosen)
        choice = _preferred(
            preferred, pool.index, available | picker.chosen_set, picker.chosen, required
        )
        if picker.take(d for d in choice if d in available):
            return tuple(picker.chosen)
        if picker.take(split.group(UNALIGNED)) or picker.take(split.group(WITHOUT)):
            return tuple(picker.chosen)
    raise DeviceManagerError(
        "unexpectedly allocated less resources than required. "
        f"Requested: {required}, Got: {required - picker.needed}"
    )
