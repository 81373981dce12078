"""Choosing which CPUs to hand out: upstream ``cpu_assignment.go``.

``take_by_topology_numa_packed`` fills the smallest topology units first (whole NUMA nodes or
sockets, then optionally whole uncore caches, whole cores, single threads), always preferring
the units with the fewest available CPUs so that large free units stay intact for large
requests. ``numa_distributed`` builds the ``distribute-cpus-across-numa`` take on top of it.

Takes work through a ``CPUAccumulator``: the topology restricted to the still-available CPUs,
the CPUs taken so far, and how many are still needed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import StrEnum

from numaplane.node.cpumanager.topology import CPUDetails, CPUTopology
from numaplane.node.errors import NodeError
from numaplane.topology.cpuset import CPUSet


class CPUSortingStrategy(StrEnum):
    """How single CPUs are ordered when whole units no longer fit."""

    PACKED = "packed"
    """Fill cores: siblings of one core, core after core."""
    SPREAD = "spread"
    """Spread over cores: ascending CPU ids socket by socket (one thread per core first)."""


def not_enough_cpus(requested: int, available: int) -> NodeError:
    """The error of a take asking for more CPUs than are available."""
    return NodeError(
        "not enough cpus available to satisfy request: "
        f"requested={requested}, available={available}"
    )


class CPUAccumulator:
    """The working state of one take: remaining topology, result so far, CPUs still needed."""

    def __init__(
        self,
        topology: CPUTopology,
        available: CPUSet,
        num_cpus: int,
        strategy: CPUSortingStrategy = CPUSortingStrategy.PACKED,
    ) -> None:
        self.topology = topology
        self.details: CPUDetails = topology.details.keep_only(available)
        self.num_cpus_needed = num_cpus
        self.result = CPUSet()
        self.strategy = strategy
        # NUMA nodes "contain" sockets when there are at least as many sockets; then NUMA nodes
        # are the outer level of the walk, otherwise sockets are.
        self.numa_first = topology.num_sockets >= topology.num_numa_nodes
        # The take orders depend only on ``details``; a step asks for the same ones again
        # (cores are ordered within sorted sockets within sorted NUMA nodes), so they are kept
        # while the details stay the same object (a take replaces them).
        self._orders: dict[str, tuple[int, ...]] = {}
        self._orders_of = self.details

    # -- bookkeeping -----------------------------------------------------------------------

    def take(self, cpus: CPUSet) -> None:
        """Add ``cpus`` to the result and remove them from the available details."""
        self.result = self.result | cpus
        # The result so far is already gone from the details: drop only the new CPUs.
        self.details = self.details.without(cpus)
        self.num_cpus_needed -= len(cpus)

    def needs_at_least(self, n: int) -> bool:
        """Whether at least ``n`` more CPUs are needed."""
        return self.num_cpus_needed >= n

    def is_satisfied(self) -> bool:
        """Whether nothing more is needed."""
        return self.num_cpus_needed < 1

    def is_failed(self) -> bool:
        """Whether more is needed than is still available."""
        return self.num_cpus_needed > len(self.details)

    # -- ordering --------------------------------------------------------------------------

    def _order(self, name: str) -> tuple[int, ...] | None:
        if self._orders_of is not self.details:
            self._orders.clear()
            self._orders_of = self.details
        return self._orders.get(name)

    def _sorted(self, ids: Sequence[int], count: Callable[[int], int]) -> list[int]:
        # Fewest available CPUs first keeps big free units for big requests; ties by id.
        return sorted(ids, key=lambda i: (count(i), i))

    def sort_available_numa_nodes(self) -> list[int]:
        """NUMA nodes with available CPUs, in take order."""
        order = self._order("numa_nodes")
        if order is None:
            order = self._orders["numa_nodes"] = tuple(self._sort_available_numa_nodes())
        return list(order)

    def _sort_available_numa_nodes(self) -> list[int]:
        d = self.details
        if self.numa_first:
            return self._sorted(d.numa_nodes(), d.count_in_numa_node)
        result: list[int] = []
        for socket in self.sort_available_sockets():
            result += self._sorted(d.numa_nodes_in_sockets(socket), d.count_in_numa_node)
        return result

    def sort_available_sockets(self) -> list[int]:
        """Sockets with available CPUs, in take order."""
        order = self._order("sockets")
        if order is None:
            order = self._orders["sockets"] = tuple(self._sort_available_sockets())
        return list(order)

    def _sort_available_sockets(self) -> list[int]:
        d = self.details
        if not self.numa_first:
            return self._sorted(d.sockets(), d.count_in_socket)
        result: list[int] = []
        for numa in self.sort_available_numa_nodes():
            result += self._sorted(d.sockets_in_numa_nodes(numa), d.count_in_socket)
        return result

    def sort_available_cores(self) -> list[int]:
        """Cores with available CPUs, in take order (within the sorted outer units)."""
        order = self._order("cores")
        if order is None:
            order = self._orders["cores"] = tuple(self._sort_available_cores())
        return list(order)

    def _sort_available_cores(self) -> list[int]:
        d = self.details
        result: list[int] = []
        if self.numa_first:
            for socket in self.sort_available_sockets():
                result += self._sorted(d.cores_in_sockets(socket), d.count_in_core)
        else:
            for numa in self.sort_available_numa_nodes():
                result += self._sorted(d.cores_in_numa_nodes(numa), d.count_in_core)
        return result

    def sort_available_uncore_caches(self) -> list[int]:
        """Uncore caches with available CPUs, listed per sorted NUMA node."""
        order = self._order("uncore_caches")
        if order is None:
            order = self._orders["uncore_caches"] = tuple(self._sort_available_uncore_caches())
        return list(order)

    def _sort_available_uncore_caches(self) -> list[int]:
        d = self.details
        result: list[int] = []
        for numa in self.sort_available_numa_nodes():
            result += self._sorted(d.uncore_in_numa_nodes(numa), d.count_in_uncore_cache)
        return result

    def sort_available_cpus(self) -> list[int]:
        """Single available CPUs in the order of the sorting strategy."""
        d = self.details
        result: list[int] = []
        if self.strategy is CPUSortingStrategy.SPREAD:
            for socket in self.sort_available_sockets():
                result += d.cpus_in_sockets(socket).sorted()
        else:
            for core in self.sort_available_cores():
                result += d.cpus_in_cores(core).sorted()
        return result

    # -- free units ------------------------------------------------------------------------

    def is_numa_node_free(self, numa: int) -> bool:
        """Whether every CPU of the NUMA node is available."""
        return self.details.count_in_numa_node(numa) == self.topology.details.count_in_numa_node(
            numa
        )

    def is_socket_free(self, socket: int) -> bool:
        """Whether every CPU of the socket is available."""
        return self.details.count_in_socket(socket) == self.topology.cpus_per_socket()

    def is_core_free(self, core: int) -> bool:
        """Whether every thread of the core is available."""
        return self.details.count_in_core(core) == self.topology.cpus_per_core()

    def is_uncore_cache_free(self, uncore: int) -> bool:
        """Whether every CPU sharing the uncore cache is available."""
        total = self.topology.details.count_in_uncore_cache(uncore)
        return self.details.count_in_uncore_cache(uncore) == total

    def free_numa_nodes(self) -> list[int]:
        """Fully available NUMA nodes, in take order."""
        return [n for n in self.sort_available_numa_nodes() if self.is_numa_node_free(n)]

    def free_sockets(self) -> list[int]:
        """Fully available sockets, in take order."""
        return [s for s in self.sort_available_sockets() if self.is_socket_free(s)]

    def free_cores(self) -> list[int]:
        """Fully available cores, in take order."""
        return [c for c in self.sort_available_cores() if self.is_core_free(c)]

    def free_uncore_caches(self) -> list[int]:
        """Fully available uncore caches, in take order."""
        return [u for u in self.sort_available_uncore_caches() if self.is_uncore_cache_free(u)]

    def free_cpus(self) -> list[int]:
        """Available CPUs in the order single CPUs are taken."""
        return self.sort_available_cpus()

    # -- takes -----------------------------------------------------------------------------

    def take_full_numa_nodes(self) -> None:
        """Take every free NUMA node that fits in what is still needed."""
        for numa in self.free_numa_nodes():
            cpus = self.topology.details.cpus_in_numa_nodes(numa)
            if self.needs_at_least(len(cpus)):
                self.take(cpus)

    def take_full_sockets(self) -> None:
        """Take every free socket that fits in what is still needed."""
        for socket in self.free_sockets():
            cpus = self.topology.details.cpus_in_sockets(socket)
            if self.needs_at_least(len(cpus)):
                self.take(cpus)

    def take_full_first_level(self) -> None:
        """Whole units of the outer level (NUMA nodes when NUMA-first, else sockets)."""
        if self.numa_first:
            self.take_full_numa_nodes()
        else:
            self.take_full_sockets()

    def take_full_second_level(self) -> None:
        """Whole units of the inner level."""
        if self.numa_first:
            self.take_full_sockets()
        else:
            self.take_full_numa_nodes()

    def take_full_uncore(self) -> None:
        """Take every free uncore cache that fits in what is still needed."""
        for uncore in self.free_uncore_caches():
            cpus = self.topology.details.cpus_in_uncore_caches(uncore)
            if self.needs_at_least(len(cpus)):
                self.take(cpus)

    def take_partial_uncore(self, uncore: int) -> None:
        """Take the rest of the request from one uncore cache, if it fits there exactly."""
        per_core = self.topology.cpus_per_core()
        needed = self.num_cpus_needed
        num_cores = -(-needed // per_core) if per_core else needed
        cores = self.details.cores_needed_in_uncore_cache(num_cores, uncore)
        cpus = self.details.cpus_in_cores(*cores)
        # An odd request on SMT leaves one thread of the last core to someone else.
        if needed % 2 != 0 and per_core > 1 and len(cpus) > needed:
            cpus = cpus - CPUSet([cpus.sorted()[-1]])
        if len(cpus) == needed:
            self.take(cpus)

    def take_uncore_cache(self) -> None:
        """Prefer CPUs sharing a last-level cache: whole caches, then one cache's worth."""
        per_uncore = self.topology.cpus_per_uncore()
        for uncore in self.sort_available_uncore_caches():
            if self.needs_at_least(per_uncore):
                self.take_full_uncore()
            if self.is_satisfied():
                return
            self.take_partial_uncore(uncore)
            if self.is_satisfied():
                return

    def take_full_cores(self) -> None:
        """Take every free core that fits in what is still needed."""
        for core in self.free_cores():
            cpus = self.topology.details.cpus_in_cores(core)
            if self.needs_at_least(len(cpus)):
                self.take(cpus)

    def take_remaining_cpus(self) -> None:
        """Take single CPUs in strategy order until satisfied."""
        for cpu in self.sort_available_cpus():
            if not self.needs_at_least(1):
                break
            self.take(CPUSet([cpu]))


def take_by_topology_numa_packed(
    topology: CPUTopology,
    available: CPUSet,
    num_cpus: int,
    strategy: CPUSortingStrategy = CPUSortingStrategy.PACKED,
    prefer_align_by_uncore_cache: bool = False,
) -> CPUSet:
    """``num_cpus`` CPUs from ``available``, packed into as few topology units as possible.

    Raises ``NodeError`` ("not enough cpus available to satisfy request: ...") when fewer CPUs
    are available than requested.
    """
    if num_cpus < 1:
        return CPUSet()  # nothing to take: skip restricting the topology
    acc = CPUAccumulator(topology, available, num_cpus, strategy)
    if acc.is_failed():
        raise not_enough_cpus(num_cpus, len(available))
    steps: list[Callable[[], None]] = [acc.take_full_first_level, acc.take_full_second_level]
    if prefer_align_by_uncore_cache:
        steps.append(acc.take_uncore_cache)
    if strategy is not CPUSortingStrategy.SPREAD:
        steps.append(acc.take_full_cores)
    steps.append(acc.take_remaining_cpus)
    for step in steps:
        step()
        if acc.is_satisfied():
            return acc.result
    raise NodeError("failed to allocate cpus")
