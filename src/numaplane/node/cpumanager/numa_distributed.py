"""Spreading a request evenly over NUMA nodes: upstream ``takeByTopologyNUMADistributed``.

Used by the ``distribute-cpus-across-numa`` option. Among the fewest NUMA nodes that can hold
the request in groups of ``cpu_group_size`` (whole cores under ``full-pcpus-only``), it picks
the combination, and the nodes that take the remainder, leaving the free CPUs per NUMA node
most even (smallest standard deviation). Each node's share is then taken packed.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from numaplane.node.cpumanager.cpu_assignment import (
    CPUAccumulator,
    CPUSortingStrategy,
    not_enough_cpus,
    take_by_topology_numa_packed,
)
from numaplane.node.cpumanager.topology import CPUTopology
from numaplane.node.errors import NodeError
from numaplane.topology.cpuset import CPUSet


def _go_round(x: float) -> float:
    # Go's math.Round rounds half away from zero; Python's round() rounds half to even.
    return math.floor(abs(x) + 0.5) * (1 if x >= 0 else -1)


def _round3(x: float) -> float:
    return _go_round(x * 1000) / 1000


def standard_deviation(values: Sequence[int]) -> float:
    """Population standard deviation with mean and result rounded to 3 decimals (upstream)."""
    mean = _round3(sum(float(v) for v in values) / len(values))
    var = sum((float(v) - mean) ** 2 for v in values) / len(values)
    return _round3(math.sqrt(var))


def _combinations(items: Sequence[int], k: int) -> Iterator[tuple[int, ...]]:
    # Lexicographic order of positions, as upstream's recursive iterateCombinations.
    if k < 1 or k > len(items):
        return
    stack: list[int] = []

    def rec(start: int) -> Iterator[tuple[int, ...]]:
        if len(stack) == k:
            yield tuple(items[i] for i in stack)
            return
        for i in range(start, len(items) - (k - len(stack)) + 1):
            stack.append(i)
            yield from rec(i + 1)
            stack.pop()

    yield from rec(0)


def _numa_range(acc: CPUAccumulator, group: int) -> tuple[int, int]:
    total_numa = len(acc.topology.details.numa_nodes())
    total_groups = -(-len(acc.topology.details) // group)
    groups_per_numa = -(-total_groups // total_numa)
    groups_needed = -(-acc.num_cpus_needed // group)
    min_k = -(-groups_needed // groups_per_numa)
    max_k = min(groups_needed, len(acc.details.numa_nodes()))
    return min_k, max_k


def _hand_out_remainder(
    after: dict[int, int], subset: Sequence[int], remainder: int, group: int
) -> None:
    while remainder > 0:
        progressed = False
        for numa in subset:
            if remainder == 0:
                break
            if after[numa] < group:
                continue
            after[numa] -= group
            remainder -= group
            progressed = True
        if not progressed:
            # Upstream would loop forever here; no subset that reaches this can be chosen.
            after[subset[0]] = -(10**9)
            return


def _best_combo(
    acc: CPUAccumulator, numas: Sequence[int], k: int, num_cpus: int, group: int
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    d = acc.details
    best_balance = math.inf
    best: tuple[tuple[int, ...], tuple[int, ...]] | None = None
    for combo in _combinations(numas, k):
        if best_balance == 0:
            break
        if len(d.cpus_in_numa_nodes(*combo)) < num_cpus:
            continue
        if sum(d.count_in_numa_node(n) // group for n in combo) * group < num_cpus:
            continue
        distribution = num_cpus // k // group * group
        if any(d.count_in_numa_node(n) < distribution for n in combo):
            continue
        after = {n: d.count_in_numa_node(n) for n in numas}
        for n in combo:
            after[n] -= distribution
        remainder = num_cpus - distribution * k
        local_balance = math.inf
        local_subset: tuple[int, ...] = ()
        if remainder == 0:
            local_balance = standard_deviation(list(after.values()))
        else:
            for subset in _combinations(combo, remainder // group):
                if sum(after[n] for n in subset) < remainder:
                    continue
                trial = dict(after)
                _hand_out_remainder(trial, subset, remainder, group)
                balance = standard_deviation(list(trial.values()))
                if balance < local_balance:
                    local_balance = balance
                    local_subset = subset
        if local_balance < best_balance:
            best_balance = local_balance
            best = (combo, local_subset)
    return best


def take_by_topology_numa_distributed(
    topology: CPUTopology,
    available: CPUSet,
    num_cpus: int,
    cpu_group_size: int,
    strategy: CPUSortingStrategy = CPUSortingStrategy.PACKED,
) -> CPUSet:
    """``num_cpus`` CPUs spread evenly, in groups of ``cpu_group_size``, over NUMA nodes.

    Falls back to the packed take when the request is not a multiple of the group size or no
    combination of NUMA nodes can hold it evenly.
    """
    group = cpu_group_size
    if group < 1 or num_cpus % group != 0:
        return take_by_topology_numa_packed(topology, available, num_cpus, strategy)
    acc = CPUAccumulator(topology, available, num_cpus, strategy)
    if acc.is_satisfied():
        return acc.result
    if acc.is_failed():
        raise not_enough_cpus(num_cpus, len(available))
    numas = acc.sort_available_numa_nodes()
    min_k, max_k = _numa_range(acc, group)
    for k in range(min_k, max_k + 1):
        chosen = _best_combo(acc, numas, k, num_cpus, group)
        if chosen is None:
            continue
        combo, remainder_set = chosen
        distribution = num_cpus // k // group * group
        for numa in combo:
            acc.take(_packed_from_node(acc, numa, distribution, strategy))
        remainder = num_cpus - distribution * k
        while remainder > 0:
            progressed = False
            for numa in remainder_set:
                if remainder == 0:
                    break
                if acc.details.count_in_numa_node(numa) < group:
                    continue
                acc.take(_packed_from_node(acc, numa, group, strategy))
                remainder -= group
                progressed = True
            if not progressed:
                break
        if acc.num_cpus_needed > 0:
            raise NodeError(
                f"accounting error, not enough CPUs allocated, remaining: {acc.num_cpus_needed}"
            )
        if acc.num_cpus_needed < 0:
            raise NodeError(
                f"accounting error, too many CPUs allocated, remaining: {acc.num_cpus_needed}"
            )
        return acc.result
    return take_by_topology_numa_packed(topology, available, num_cpus, strategy)


def _packed_from_node(
    acc: CPUAccumulator, numa: int, n: int, strategy: CPUSortingStrategy
) -> CPUSet:
    # Upstream ignores this take's error (and then reports an accounting error).
    try:
        return take_by_topology_numa_packed(
            acc.topology, acc.details.cpus_in_numa_nodes(numa), n, strategy
        )
    except NodeError:
        return CPUSet()
