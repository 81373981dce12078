"""NUMA info from a machine or cAdvisor-like nodes; distances, Narrowest and Closest."""

from __future__ import annotations

import pytest

from numaplane.node.errors import ConfigurationError
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.numa_info import NUMAInfo
from numaplane.topology.cpuset import CPUSet
from numaplane.topology.model import CPU, Machine, NUMANode


def _machine(with_distances: bool) -> Machine:
    rows = {0: ((0, 10), (1, 21)), 1: ((0, 21), (1, 10))}
    nodes = tuple(
        NUMANode(i, CPUSet([i]), 1 << 30, distances=rows[i] if with_distances else ())
        for i in (0, 1)
    )
    cpus = tuple(CPU(id=i, core=i, socket=i, numa=i) for i in (0, 1))
    return Machine("two-node", cpus, nodes)


def test_from_machine_loads_distances_only_when_asked() -> None:
    """Rows are indexed by node id and kept only with prefer-closest."""
    info = NUMAInfo.from_machine(_machine(True), prefer_closest=True)
    assert info.nodes == (0, 1)
    assert dict(info.distances) == {0: (10, 21), 1: (21, 10)}
    plain = NUMAInfo.from_machine(_machine(True), prefer_closest=False)
    assert dict(plain.distances) == {0: None, 1: None}


def test_missing_distances_with_prefer_closest_is_an_error() -> None:
    """Upstream's message, so callers can match it."""
    with pytest.raises(ConfigurationError, match="error getting NUMA distances from cadvisor"):
        NUMAInfo.from_machine(_machine(False), prefer_closest=True)


def test_default_affinity_is_every_node() -> None:
    """Non-contiguous ids included; no nodes gives the empty mask."""
    assert NUMAInfo((0, 2, 5)).default_affinity == BitMask(0, 2, 5)
    assert NUMAInfo(()).default_affinity.is_empty()


def test_average_uses_rows_as_given_even_asymmetric() -> None:
    """Ordered pairs, self pairs included; d[0][1] and d[1][0] both count."""
    info = NUMAInfo((0, 1), {0: (10, 12), 1: (14, 10)})
    assert info.average_distance(BitMask(0, 1)) == (10 + 12 + 14 + 10) / 4
    assert info.average_distance(BitMask()) == 0


def test_closest_prefers_fewer_nodes_then_distance_then_value() -> None:
    """Width first; equal width: nearer pair; equal distance: smaller value."""
    rows = {0: (10, 20, 11), 1: (20, 10, 20), 2: (11, 20, 10)}
    info = NUMAInfo((0, 1, 2), rows)
    assert info.closest(BitMask(0, 1, 2), BitMask(1)) == BitMask(1)
    assert info.closest(BitMask(0, 1), BitMask(0, 2)) == BitMask(0, 2)
    flat = NUMAInfo((0, 1, 2), dict.fromkeys(range(3), (10, 10, 10)))
    assert flat.closest(BitMask(1, 2), BitMask(0, 2)) == BitMask(0, 2)
    assert info.narrowest(BitMask(1, 2), BitMask(0, 2)) == BitMask(0, 2)
