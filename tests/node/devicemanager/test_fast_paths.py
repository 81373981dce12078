"""The Device Manager's incremental facts and caches equal a recomputation from scratch.

- a pool derived with ``with_in_use`` (free counts updated by the ids that changed hands) has
  the same free devices, free groups and health as a pool built fresh;
- ``filter_by_affinity`` (counting by node tuple, no per-device sort) splits exactly as the
  device-by-device definition;
- ``device_hint_set`` (rules shared between admissions) lists the exhaustive hints on
  derived pools too;
- ``DeviceAllocation.of_devices`` (built canonical) equals the constructor's result;
- ``InMemoryState.pod_uids`` (kept until a pod comes or goes) equals the recorded pods.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.node.devicemanager.allocation import filter_by_affinity, filter_per_device
from numaplane.node.devicemanager.device import (
    Device,
    ResourcePool,
    sorted_ids,
)
from numaplane.node.devicemanager.device_hint_sets import device_hint_set
from numaplane.node.devicemanager.state import DeviceAllocation, InMemoryState
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.testing.upstream_hints import generate_device_topology_hints

NODES = (0, 1, 2, 3)

_numa = st.one_of(
    st.none(),
    st.just(()),
    st.sampled_from(NODES).map(lambda n: (n,)),
    # Several nodes, a node listed twice, a node no mask can hold.
    st.lists(st.sampled_from((*NODES, 70)), min_size=1, max_size=3).map(tuple),
)
_devices = st.lists(st.tuples(_numa, st.booleans()), min_size=1, max_size=9).map(
    lambda specs: [Device(f"d{i}", numa, healthy) for i, (numa, healthy) in enumerate(specs)]
)
_subsets = st.lists(st.sets(st.integers(0, 9)), min_size=1, max_size=6)


def _ids(picks: AbstractSet[int]) -> frozenset[str]:
    # d9 may name no device: held ids the pool does not know.
    return frozenset(f"d{i}" for i in picks)


def _fresh_free(pool: ResourcePool) -> tuple[dict[tuple[int, ...], int], list[tuple[int, int]]]:
    by_keys: dict[tuple[int, ...], int] = {}
    by_mask: dict[int, int] = {}
    for device_id in pool.healthy - pool.in_use:
        device = pool.devices[device_id]
        keys = device.numa_keys()
        by_keys[keys] = by_keys.get(keys, 0) + 1
        mask = sum({1 << n for n in device.numa_nodes if 0 <= n < 64})
        if mask:
            by_mask[mask] = by_mask.get(mask, 0) + 1
    return by_keys, sorted(by_mask.items())


@given(_devices, _subsets, st.lists(st.booleans(), min_size=6, max_size=6))
def test_derived_pools_equal_fresh_pools(
    devices: list[Device], in_use_seq: list[set[int]], touch: list[bool]
) -> None:
    pool = ResourcePool.of("r", devices)
    for step, picks in enumerate(in_use_seq):
        if touch[step]:
            # Counts are carried over only when the previous pool had them.
            assert pool.free_groups is not None
        pool = pool.with_in_use(_ids(picks))
        fresh = ResourcePool.of("r", devices, _ids(picks))
        assert pool == fresh
        assert pool.healthy == fresh.healthy
        assert pool.available == fresh.available
        assert pool.has_topology == fresh.has_topology
        by_keys, groups = _fresh_free(fresh)
        assert dict(pool.free_by_keys) == by_keys
        assert list(pool.free_groups) == groups
        assert dict(fresh.free_by_keys) == by_keys


def _reference_filter(
    pool: ResourcePool, available: AbstractSet[str], hint: TopologyHint
) -> tuple[list[str], list[str], list[str]]:
    # The device-by-device definition (numaplane's first version of filter_by_affinity).
    affinity = hint.numa_affinity
    if affinity is None or not any(d.has_topology for d in pool.devices.values()):
        return [], [], sorted_ids(available)
    return filter_per_device(pool, available, affinity)


@given(
    _devices,
    st.sets(st.integers(0, 9)),
    st.sets(st.integers(0, 9)),
    st.one_of(st.none(), st.sets(st.sampled_from(NODES), min_size=1)),
)
def test_filter_by_affinity_matches_the_definition(
    devices: list[Device], held: set[int], picks: set[int], nodes: set[int] | None
) -> None:
    pool = ResourcePool.of("r", devices).with_in_use(_ids(held))
    hint = TopologyHint(None if nodes is None else BitMask(*nodes), True)
    # The pool's own free set (counts kept by the pool), and any set (unknown ids included).
    for available in (pool.available, _ids(picks)):
        assert filter_by_affinity(pool, available, hint) == _reference_filter(pool, available, hint)


@given(_devices, _subsets, st.integers(0, 4), st.sets(st.integers(0, 9), max_size=2))
def test_rules_on_derived_pools_list_the_exhaustive_hints(
    devices: list[Device], in_use_seq: list[set[int]], request: int, reused: set[int]
) -> None:
    pool = ResourcePool.of("r", devices)
    reusable = _ids(reused)
    for picks in in_use_seq:
        pool = pool.with_in_use(_ids(picks))
        # Twice: the second answer is the shared rule.
        for _ in range(2):
            rule = device_hint_set(NODES, pool, pool.available, reusable, request)
            listed = generate_device_topology_hints(NODES, pool, pool.available, reusable, request)
            assert list(rule) == listed


@given(_devices, st.lists(st.integers(0, 8), max_size=5))
def test_of_devices_equals_the_constructor(devices: list[Device], picks: list[int]) -> None:
    chosen = [devices[i % len(devices)] for i in picks]
    built = DeviceAllocation.of_devices(chosen, b"resp")
    per_numa: list[tuple[int, tuple[str, ...]]] = []
    for device in chosen:
        for node in device.numa_keys():
            per_numa.append((node, (device.id,)))
    expected = DeviceAllocation(tuple(per_numa), b"resp")
    assert built == expected
    assert built.per_numa == expected.per_numa
    assert hash(built) == hash(expected)
    assert repr(built) == repr(expected)
    assert built.device_ids == frozenset(d.id for d in chosen)


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["set", "remove", "remove_pod"]),
            st.sampled_from(["p1", "p2", "p3"]),
            st.sampled_from(["init", "app"]),
        ),
        max_size=14,
    )
)
def test_pod_uids_follow_every_write(writes: list[tuple[str, str, str]]) -> None:
    state = InMemoryState()
    for kind, pod, container in writes:
        if kind == "set":
            state.set_allocation(pod, container, "r", DeviceAllocation.of({0: ["d0"]}))
        elif kind == "remove":
            state.remove_container(pod, container)
        else:
            state.remove_pods([pod])
        assert state.pod_uids() == frozenset(e.pod_uid for e in state.entries())


@given(_devices, st.sets(st.integers(0, 9)))
def test_natural_order_is_sorted_ids(devices: list[Device], picks: set[int]) -> None:
    index = ResourcePool.of("r", devices).index
    assert index.natural(_ids(picks)) == sorted_ids(_ids(picks))
    assert list(index.order) == sorted_ids(d.id for d in devices)


def test_a_pool_is_immutable() -> None:
    pool = ResourcePool.of("gpu", [Device("a", (0,)), Device("b", (1,))], ["a"])
    derived = pool.with_in_use(frozenset({"b"}))
    assert derived == ResourcePool.of("gpu", [Device("a", (0,)), Device("b", (1,))], ["b"])
    assert (derived.available, derived.free_groups) == (frozenset({"a"}), ((1, 1),))
    with pytest.raises(AttributeError):
        derived.in_use = frozenset()
