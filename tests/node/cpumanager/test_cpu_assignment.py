"""The allocator beyond the vectors: uncore steps, spread order, distribution fallbacks."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.node.cpumanager.cpu_assignment import (
    CPUAccumulator,
    CPUSortingStrategy,
    take_by_topology_numa_packed,
)
from numaplane.node.cpumanager.numa_distributed import (
    standard_deviation,
    take_by_topology_numa_distributed,
)
from numaplane.node.cpumanager.topology import CPUTopology
from numaplane.node.errors import NodeError
from numaplane.topology.cpuset import CPUSet
from tests.node.cpumanager.topos import (
    DUAL_SOCKET_HT,
    DUAL_SOCKET_MULTI_NUMA_HT,
    SINGLE_SOCKET_UNCORE_HT,
)


@dataclass(frozen=True)
class PackedCase:
    name: str
    topo: CPUTopology
    available: str
    n: int
    want: str
    strategy: CPUSortingStrategy = CPUSortingStrategy.PACKED
    uncore: bool = False


PACKED_CASES = [
    PackedCase(
        "uncore: odd request on SMT drops the last thread of the last core",
        SINGLE_SOCKET_UNCORE_HT,
        "0-15",
        3,
        "0-1,8",
        uncore=True,
    ),
    PackedCase(
        # Uncore 0 (cores 0-3) has 4 free CPUs left: too few, so uncore 1 serves all 6.
        "uncore: a cache too small for the request is skipped",
        SINGLE_SOCKET_UNCORE_HT,
        "2-7,10-15",
        6,
        "4-6,12-14",
        uncore=True,
    ),
    PackedCase(
        "no uncore preference: cores of the fuller socket first",
        SINGLE_SOCKET_UNCORE_HT,
        "2-7,10-15",
        4,
        "2-3,10-11",
    ),
    PackedCase(
        "whole NUMA node taken before cores",
        DUAL_SOCKET_MULTI_NUMA_HT,
        "0-31",
        8,
        "0-3,16-19",
    ),
    PackedCase(
        "spread: one thread per core across the socket",
        DUAL_SOCKET_MULTI_NUMA_HT,
        "0-31",
        4,
        "0-3",
        strategy=CPUSortingStrategy.SPREAD,
    ),
    PackedCase(
        "partially used socket is preferred for single CPUs",
        DUAL_SOCKET_HT,
        "1-5,7-11",
        3,
        "1,7,2",
    ),
]


@pytest.mark.parametrize("case", PACKED_CASES, ids=lambda c: c.name)
def test_take_packed(case: PackedCase) -> None:
    got = take_by_topology_numa_packed(
        case.topo, CPUSet.parse(case.available), case.n, case.strategy, case.uncore
    )
    assert got == CPUSet.parse(case.want)


def test_take_packed_not_enough_names_both_counts() -> None:
    with pytest.raises(NodeError, match=r"requested=5, available=4"):
        take_by_topology_numa_packed(DUAL_SOCKET_HT, CPUSet.parse("0-3"), 5)


def test_distributed_falls_back_to_packed_for_odd_groups() -> None:
    available = CPUSet.parse("0-31")
    got = take_by_topology_numa_distributed(DUAL_SOCKET_MULTI_NUMA_HT, available, 3, 2)
    assert got == take_by_topology_numa_packed(DUAL_SOCKET_MULTI_NUMA_HT, available, 3)


def test_distributed_spreads_evenly() -> None:
    got = take_by_topology_numa_distributed(DUAL_SOCKET_MULTI_NUMA_HT, CPUSet.parse("0-31"), 16, 2)
    per_numa = [
        len(got & DUAL_SOCKET_MULTI_NUMA_HT.details.cpus_in_numa_nodes(n)) for n in range(4)
    ]
    assert sorted(per_numa) in ([0, 0, 8, 8], [4, 4, 4, 4])
    assert len(got) == 16


def test_take_keeps_details_and_result_disjoint() -> None:
    acc = CPUAccumulator(DUAL_SOCKET_HT, CPUSet.parse("0-11"), 4)
    acc.take(CPUSet([0, 6]))
    assert acc.details.cpus().is_disjoint(acc.result)
    assert acc.num_cpus_needed == 2
    assert not acc.is_satisfied()
    assert acc.free_cores() == [1, 2, 3, 4, 5]


@dataclass(frozen=True)
class StdDevCase:
    name: str
    values: tuple[int, ...]
    want: float


STDDEV_CASES = [
    StdDevCase("equal values", (4, 4, 4), 0.0),
    StdDevCase("two values", (0, 2), 1.0),
    StdDevCase("rounded to three decimals", (0, 1, 1), 0.471),
    StdDevCase("mean rounded first", (1, 2, 2), 0.471),
]


@pytest.mark.parametrize("case", STDDEV_CASES, ids=lambda c: c.name)
def test_standard_deviation(case: StdDevCase) -> None:
    assert standard_deviation(case.values) == case.want
