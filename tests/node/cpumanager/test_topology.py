"""CPUTopology: discovery from a Machine and from fixtures, and the query helpers."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.node.cpumanager.cpu_details import CPUDetails, CPUInfo
from numaplane.node.cpumanager.topology import CPUTopology
from numaplane.node.errors import NodeError
from numaplane.testing.upstream_fixtures import cpu_topology_from_fixture
from numaplane.topology.cpuset import CPUSet
from numaplane.topology.model import CPU, Machine, NUMANode
from tests.node.cpumanager.topos import DUAL_SOCKET_MULTI_NUMA_HT


def _machine(with_uncore: bool) -> Machine:
    # Two sockets; the kernel's core_id repeats per socket; CPU 7 is offline.
    cpus = []
    for cpu in range(8):
        socket = cpu % 2
        core = (cpu // 2) % 2
        physical = min(c for c in range(8) if c % 2 == socket and (c // 2) % 2 == core)
        cpus.append(
            CPU(
                id=cpu,
                core=core,
                socket=socket,
                numa=socket,
                uncore_cache=(10 + socket) if with_uncore else 0,
                online=cpu != 7,
                physical_core=physical,
            )
        )
    nodes = (
        NUMANode(0, CPUSet([0, 2, 4, 6]), 1 << 30),
        NUMANode(1, CPUSet([1, 3, 5, 7]), 1 << 30),
    )
    return Machine("m", tuple(cpus), nodes)


def test_from_machine_uses_unique_core_ids_and_online_cpus() -> None:
    topo = CPUTopology.from_machine(_machine(with_uncore=True))
    assert topo.num_cpus == 7
    assert topo.num_sockets == 2
    assert topo.num_cores == 4
    assert topo.num_numa_nodes == 2
    assert topo.details.cores() == (0, 1, 2, 3)
    assert topo.details.cpus_in_cores(1) == CPUSet([1, 5])
    assert topo.details.cpus_in_cores(3) == CPUSet([3])
    assert topo.details.uncore_caches() == (10, 11)
    assert topo.cpus_per_core() == 1  # 7 // 4, integer division as upstream


def test_from_machine_falls_back_to_socket_for_uncore() -> None:
    topo = CPUTopology.from_machine(_machine(with_uncore=False))
    assert topo.details.cpus_in_uncore_caches(1) == topo.details.cpus_in_sockets(1)
    assert topo.num_uncore_cache == 2


def test_from_fixture_cadvisor_shape() -> None:
    topo = cpu_topology_from_fixture(
        {
            "cadvisor_topology": [
                {"numa": 0, "cores": [{"socket": 0, "id": 0, "threads": [4, 0]}]},
                {"numa": 1, "cores": [{"socket": 1, "id": 0, "threads": [1, 5]}]},
            ]
        }
    )
    assert topo.details[4].core == 0
    assert topo.details[5].core == 1
    assert (topo.num_cpus, topo.num_cores, topo.num_sockets) == (4, 2, 2)


def test_from_fixture_keeps_declared_zero_counts() -> None:
    topo = cpu_topology_from_fixture(
        {
            "num_cpus": 2,
            "num_sockets": 1,
            "num_cores": 1,
            "num_numa_nodes": None,
            "cpus": [
                {"cpu": 0, "core": 0, "socket": 0, "numa": 0},
                {"cpu": 1, "core": 0, "socket": 0, "numa": 0},
            ],
        }
    )
    assert topo.num_numa_nodes == 0
    assert topo.cpus_per_uncore() == 0
    assert topo.cpus_per_core() == 2


@dataclass(frozen=True)
class QueryCase:
    name: str
    got: object
    want: object


QUERY_CASES = [
    QueryCase(
        "numa of socket 1", DUAL_SOCKET_MULTI_NUMA_HT.details.numa_nodes_in_sockets(1), (2, 3)
    ),
    QueryCase(
        "sockets of numa 1,2", DUAL_SOCKET_MULTI_NUMA_HT.details.sockets_in_numa_nodes(1, 2), (0, 1)
    ),
    QueryCase(
        "cores of numa 3",
        DUAL_SOCKET_MULTI_NUMA_HT.details.cores_in_numa_nodes(3),
        (12, 13, 14, 15),
    ),
    QueryCase(
        "cpus of numa 0",
        DUAL_SOCKET_MULTI_NUMA_HT.details.cpus_in_numa_nodes(0),
        CPUSet.parse("0-3,16-19"),
    ),
    QueryCase(
        "same socket yes",
        DUAL_SOCKET_MULTI_NUMA_HT.details.are_numa_nodes_in_same_socket([0, 1]),
        True,
    ),
    QueryCase(
        "same socket no",
        DUAL_SOCKET_MULTI_NUMA_HT.details.are_numa_nodes_in_same_socket([1, 2]),
        False,
    ),
    QueryCase(
        "unknown numa", DUAL_SOCKET_MULTI_NUMA_HT.details.are_numa_nodes_in_same_socket([9]), False
    ),
    QueryCase(
        "cores needed", DUAL_SOCKET_MULTI_NUMA_HT.details.cores_needed_in_uncore_cache(2, 1), (4, 5)
    ),
    QueryCase(
        "keep only", DUAL_SOCKET_MULTI_NUMA_HT.details.keep_only([0, 99]).cpus(), CPUSet([0])
    ),
]


@pytest.mark.parametrize("case", QUERY_CASES, ids=lambda c: c.name)
def test_queries(case: QueryCase) -> None:
    assert case.got == case.want


def test_unknown_cpu_is_a_node_error() -> None:
    with pytest.raises(NodeError, match="unknown CPU ID: 99"):
        DUAL_SOCKET_MULTI_NUMA_HT.cpu_core_id(99)


def test_uncore_alignment() -> None:
    details = CPUDetails.of(
        {0: CPUInfo(0, 0, 0, 0), 1: CPUInfo(0, 0, 1, 0), 2: CPUInfo(0, 0, 2, 1)}
    )
    topo = CPUTopology(3, 1, 3, details)
    assert topo.is_aligned_at_uncore_cache([0, 1])
    assert not topo.is_aligned_at_uncore_cache([0, 2])
    assert topo.is_aligned_at_uncore_cache([2])
    assert not topo.is_aligned_at_uncore_cache([0, 7])
