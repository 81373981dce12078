"""Choosing which CPUs to hand out: upstream ``cpu_assignment.go``.

``take_by_topology_numa_packed`` fills the smallest topology units first (whole NUMA nodes or
sockets, then optionally whole uncore caches, whole cores, single threads), always preferring
the units with the fewest available CPUs so that large free units stay intact for large
requests. ``numa_distributed`` builds the ``distribute-cpus-across-numa`` take on top of it.

Takes work through a ``CPUAccumulator``: the topology restricted to the still-available CPUs,
the CPUs taken so far, and how many are still needed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from enum import StrEnum

from numaplane.node.cpumanager.cpu_details import CORE, NUMA, SOCKET, UNCORE, CPUDetails
from numaplane.node.cpumanager.topology import CPUTopology
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
    """The working state of one take: remaining topology, result so far, CPUs still needed.

    The remaining CPUs and the result are bitmasks over the topology's per-unit masks
    (``UnitIndex``): a take is an integer operation and a unit's free CPUs one ``&``.
    """

    def __init__(
        self,
        topology: CPUTopology,
        available: CPUSet,
        num_cpus: int,
        strategy: CPUSortingStrategy = CPUSortingStrategy.PACKED,
    ) -> None:
        self.topology = topology
        all_details = topology.details
        self._index = all_details.index
        self._units = self._index.by_kind
        # What is available: the topology's CPUs among ``available`` (``keep_only``).
        self._available = all_details.keep_only(available).mask
        self._result = 0
        self.num_cpus_needed = num_cpus
        self.strategy = strategy
        # NUMA nodes "contain" sockets when there are at least as many sockets; then NUMA nodes
        # are the outer level of the walk, otherwise sockets are.
        self.numa_first = topology.num_sockets >= topology.num_numa_nodes
        # The take orders depend only on what is available; a step asks for the same ones
        # again (cores are ordered within sorted sockets within sorted NUMA nodes), so they
        # are kept while nothing is taken.
        self._orders: dict[str, tuple[int, ...]] = {}
        self._orders_of = self._available

    @property
    def details(self) -> CPUDetails:
        """The topology restricted to the CPUs still available."""
        return self.topology.details.keep_only_mask(self._available)

    @property
    def result(self) -> CPUSet:
        """The CPUs taken so far."""
        return CPUSet.from_mask(self._result)

    # -- bookkeeping -----------------------------------------------------------------------

    def take(self, cpus: CPUSet) -> None:
        """Add ``cpus`` to the result and remove them from the available details."""
        mask = cpus.mask()
        if mask is None:  # an id too large for a mask: none of the topology's CPUs
            mask = sum(1 << cpu for cpu in cpus)
        self._take(mask, len(cpus))

    def _take(self, mask: int, count: int) -> None:
        self._result |= mask
        self._available &= ~mask
        self.num_cpus_needed -= count

    def needs_at_least(self, n: int) -> bool:
        """Whether at least ``n`` more CPUs are needed."""
        return self.num_cpus_needed >= n

    def is_satisfied(self) -> bool:
        """Whether nothing more is needed."""
        return self.num_cpus_needed < 1

    def is_failed(self) -> bool:
        """Whether more is needed than is still available."""
        return self.num_cpus_needed > self._available.bit_count()

    # -- ordering --------------------------------------------------------------------------

    def _order(self, name: str) -> tuple[int, ...] | None:
        if self._orders_of != self._available:
            self._orders.clear()
            self._orders_of = self._available
        return self._orders.get(name)

    def _sorted(self, kind: str, ids: Sequence[int], available: int | None = None) -> list[int]:
        # Fewest available CPUs first keeps big free units for big requests; ties by id.
        units = self._units[kind]
        free = self._available if available is None else available
        return sorted(ids, key=lambda i: ((units[i] & free).bit_count(), i))

    def _within(self, outer: str, unit: int, inner: str) -> tuple[int, ...]:
        return self._index.within(outer, (unit,), inner, self._available)

    def sort_available_numa_nodes(self) -> list[int]:
        """NUMA nodes with available CPUs, in take order."""
        order = self._order("numa_nodes")
        if order is None:
            order = self._orders["numa_nodes"] = tuple(self._sort_available_numa_nodes())
        return list(order)

    def _sort_available_numa_nodes(self) -> list[int]:
        if self.numa_first:
            return self._sorted(NUMA, self._index.units(NUMA, self._available))
        result: list[int] = []
        for socket in self.sort_available_sockets():
            result += self._sorted(NUMA, self._within(SOCKET, socket, NUMA))
        return result

    def sort_available_sockets(self) -> list[int]:
        """Sockets with available CPUs, in take order."""
        order = self._order("sockets")
        if order is None:
            order = self._orders["sockets"] = tuple(self._sort_available_sockets())
        return list(order)

    def _sort_available_sockets(self) -> list[int]:
        if not self.numa_first:
            return self._sorted(SOCKET, self._index.units(SOCKET, self._available))
        result: list[int] = []
        for numa in self.sort_available_numa_nodes():
            result += self._sorted(SOCKET, self._within(NUMA, numa, SOCKET))
        return result

    def sort_available_cores(self) -> list[int]:
        """Cores with available CPUs, in take order (within the sorted outer units)."""
        order = self._order("cores")
        if order is None:
            order = self._orders["cores"] = tuple(self._sort_available_cores())
        return list(order)

    def _sort_available_cores(self) -> list[int]:
        result: list[int] = []
        for group in self._core_groups(self._available):
            result += self._sorted(CORE, group)
        return result

    def _core_groups(self, available: int) -> Iterator[tuple[int, ...]]:
        # The cores with CPUs in ``available``, outer unit by outer unit in take order (cores
        # are ordered within sockets when NUMA-first, else within NUMA nodes); each group
        # ascending by id. Lazily: a take that is satisfied early sorts no further group.
        if self.numa_first:
            outer, outers = SOCKET, self.sort_available_sockets()
        else:
            outer, outers = NUMA, self.sort_available_numa_nodes()
        within = self._index.within
        for unit in outers:
            yield within(outer, (unit,), CORE, available)

    def sort_available_uncore_caches(self) -> list[int]:
        """Uncore caches with available CPUs, listed per sorted NUMA node."""
        order = self._order("uncore_caches")
        if order is None:
            order = self._orders["uncore_caches"] = tuple(self._sort_available_uncore_caches())
        return list(order)

    def _sort_available_uncore_caches(self) -> list[int]:
        result: list[int] = []
        for numa in self.sort_available_numa_nodes():
            result += self._sorted(UNCORE, self._within(NUMA, numa, UNCORE))
        return result

    def sort_available_cpus(self) -> list[int]:
        """Single available CPUs in the order of the sorting strategy."""
        result: list[int] = []
        for mask in self._cpu_groups():
            result += CPUSet.from_mask(mask).sorted()
        return result

    def _cpu_groups(self) -> list[int]:
        # The masks whose ascending CPUs, one group after the other, are the single-CPU order.
        available = self._available
        if self.strategy is CPUSortingStrategy.SPREAD:
            sockets = self._units[SOCKET]
            return [sockets[s] & available for s in self.sort_available_sockets()]
        cores = self._units[CORE]
        return [cores[c] & available for c in self.sort_available_cores()]

    # -- free units ------------------------------------------------------------------------

    def _count(self, kind: str, unit: int) -> int:
        return (self._units[kind].get(unit, 0) & self._available).bit_count()

    def is_numa_node_free(self, numa: int) -> bool:
        """Whether every CPU of the NUMA node is available."""
        return self._count(NUMA, numa) == self.topology.details.count_in_numa_node(numa)

    def is_socket_free(self, socket: int) -> bool:
        """Whether every CPU of the socket is available."""
        return self._count(SOCKET, socket) == self.topology.cpus_per_socket()

    def is_core_free(self, core: int) -> bool:
        """Whether every thread of the core is available."""
        return self._count(CORE, core) == self.topology.cpus_per_core()

    def is_uncore_cache_free(self, uncore: int) -> bool:
        """Whether every CPU sharing the uncore cache is available."""
        total = self.topology.details.count_in_uncore_cache(uncore)
        return self._count(UNCORE, uncore) == total

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

    def _take_free_units(self, kind: str, free: list[int]) -> None:
        # A free unit is taken whole when the request still needs all of its CPUs. The list
        # is computed before the first take; units are disjoint, so it stays right.
        everything = self.topology.details.mask
        units = self._units[kind]
        for unit in free:
            cpus = units[unit] & everything
            count = cpus.bit_count()
            if self.num_cpus_needed >= count:
                self._take(cpus, count)

    def take_full_numa_nodes(self) -> None:
        """Take every free NUMA node that fits in what is still needed."""
        # A node is taken with all of its CPUs: none fits a request below the smallest node.
        smallest = min(self.topology.cpus_per_numa_node.values(), default=0)
        if self.num_cpus_needed >= smallest:
            self._take_free_units(NUMA, self.free_numa_nodes())

    def take_full_sockets(self) -> None:
        """Take every free socket that fits in what is still needed."""
        # A free socket has cpus_per_socket() CPUs at least: none fits a smaller request.
        if self.num_cpus_needed >= self.topology.cpus_per_socket():
            self._take_free_units(SOCKET, self.free_sockets())

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
        self._take_free_units(UNCORE, self.free_uncore_caches())

    def take_partial_uncore(self, uncore: int) -> None:
        """Take the rest of the request from one uncore cache, if it fits there exactly."""
        per_core = self.topology.cpus_per_core()
        needed = self.num_cpus_needed
        num_cores = -(-needed // per_core) if per_core else needed
        cores = self._within(UNCORE, uncore, CORE)[: max(num_cores, 0)]
        mask = self._index.mask_in(CORE, cores) & self._available
        count = mask.bit_count()
        # An odd request on SMT leaves one thread of the last core to someone else.
        if needed % 2 != 0 and per_core > 1 and count > needed:
            mask ^= 1 << (mask.bit_length() - 1)
            count -= 1
        if count == needed:
            self._take(mask, count)

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
        # A free core has all cpus_per_core() of its threads available, and in the take order
        # (fewest available first, then by id) the free cores of an outer unit come in id
        # order: they are found without sorting. Each has cpus_per_core() CPUs at least, so
        # once less is needed no further core fits.
        per_core = self.topology.cpus_per_core()
        if self.num_cpus_needed < per_core:
            return
        available = self._available  # the free cores are those of the step's start
        everything = self.topology.details.mask
        cores = self._units[CORE]
        for group in self._core_groups(available):
            for core in group:
                if (cores[core] & available).bit_count() != per_core:
                    continue
                cpus = cores[core] & everything
                count = cpus.bit_count()
                if self.num_cpus_needed >= count:
                    self._take(cpus, count)
                    if self.num_cpus_needed < per_core:
                        return

    def take_remaining_cpus(self) -> None:
        """Take single CPUs in strategy order until satisfied."""
        needed = self.num_cpus_needed
        if needed < 1:
            return
        available = self._available  # the order is that of the step's start
        if self.strategy is CPUSortingStrategy.SPREAD:
            sockets = self._units[SOCKET]
            groups: Iterable[int] = (sockets[s] & available for s in self.sort_available_sockets())
        else:
            cores = self._units[CORE]
            groups = (
                cores[core] & available
                for group in self._core_groups(available)
                for core in self._sorted(CORE, group, available)
            )
        for cpus in groups:
            # The lowest CPUs of each group first, as many as are still needed.
            while cpus:
                low = cpus & -cpus
                self._take(low, 1)
                needed -= 1
                if needed < 1:
                    return
                cpus ^= low


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
    acc.take_full_first_level()
    if acc.is_satisfied():
        return acc.result
    acc.take_full_second_level()
    if acc.is_satisfied():
        return acc.result
    if prefer_align_by_uncore_cache:
        acc.take_uncore_cache()
        if acc.is_satisfied():
            return acc.result
    if strategy is not CPUSortingStrategy.SPREAD:
        acc.take_full_cores()
        if acc.is_satisfied():
            return acc.result
    acc.take_remaining_cpus()
    if acc.is_satisfied():
        return acc.result
    raise NodeError("failed to allocate cpus")
