"""The CPU manager's view of a machine: ``CPUTopology``, counts plus ``CPUDetails``.

This is upstream's ``cpumanager/topology`` package; the per-CPU details and their queries are
in ``cpu_details``.

The ``num_*`` counters are kept as declared rather than recomputed: upstream test fixtures leave
some of them 0 (for example ``NumNUMANodes``) and the allocator's choices depend on that (a 0
NUMA count makes the allocator walk NUMA nodes before sockets).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

from numaplane.node.cpumanager.cpu_details import NUMA, UNCORE, CPUDetails, CPUInfo
from numaplane.node.errors import NodeError
from numaplane.node.topologymanager.hint_rules import RuleMemo
from numaplane.topology.cpuset import CPUSet
from numaplane.topology.model import Machine

MEMO_LIMIT = 4096
"""Rules kept per topology before its memo starts afresh (keys are small; this bounds memory)."""


@dataclass(frozen=True)
class CPUTopology:
    """Counts and per-CPU details of a machine, as the CPU manager sees it.

    ``num_cpus`` counts logical CPUs, ``num_cores`` physical cores; ``num_numa_nodes`` and
    ``num_uncore_cache`` may be 0 when unknown (upstream fixtures leave them unset).
    """

    num_cpus: int
    num_sockets: int
    num_cores: int
    details: CPUDetails
    num_numa_nodes: int = 0
    num_uncore_cache: int = 0
    _cpus: CPUSet = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_cpus", self.details.cpus())

    # -- immutable facts, computed once ----------------------------------------------------

    @cached_property
    def numa_of_cpu(self) -> Mapping[int, int]:
        """The NUMA node of every CPU."""
        return MappingProxyType({cpu: self.details[cpu].numa for cpu in self.details})

    @cached_property
    def numa_masks(self) -> Mapping[int, int]:
        """The CPUs of every NUMA node (having any) as a bitmask, ascending node ids."""
        details = self.details
        masks = details.index.by_kind[NUMA]
        return MappingProxyType({n: masks[n] & details.mask for n in details.numa_nodes()})

    @cached_property
    def memo(self) -> RuleMemo[Hashable, object]:
        """Hint rules built from this (immutable) topology, keyed by everything else they
        depend on (``cpu_hint_sets``: the request, free CPUs per node, reusable CPUs): one memo
        per topology, so that every node of a simulation with this machine shares it."""
        return RuleMemo("CPU hint rules of one topology", MEMO_LIMIT)

    @cached_property
    def cpus_per_numa_node(self) -> Mapping[int, int]:
        """How many CPUs each NUMA node (having any) holds."""
        details = self.details
        return MappingProxyType({n: details.count_in_numa_node(n) for n in details.numa_nodes()})

    # -- derived counts (integer division, 0 when the divisor is unknown) ------------------

    def cpus_per_core(self) -> int:
        """Logical CPUs per physical core."""
        return self.num_cpus // self.num_cores if self.num_cores else 0

    def cpus_per_socket(self) -> int:
        """Logical CPUs per socket."""
        return self.num_cpus // self.num_sockets if self.num_sockets else 0

    def cpus_per_uncore(self) -> int:
        """Logical CPUs per uncore cache."""
        return self.num_cpus // self.num_uncore_cache if self.num_uncore_cache else 0

    @property
    def all_cpus(self) -> CPUSet:
        """Every CPU in the details."""
        return self._cpus

    def cpu_core_id(self, cpu: int) -> int:
        """The core of ``cpu``; ``NodeError`` for an unknown CPU."""
        return self._info(cpu).core

    def is_aligned_at_uncore_cache(self, cpus: Iterable[int]) -> bool:
        """Whether the CPUs share one uncore cache (trivially so for at most one CPU)."""
        mask = cpus.mask() if isinstance(cpus, CPUSet) else None
        if mask is not None:
            # One cache holds them all when none lies outside the lowest one's cache.
            if mask & (mask - 1) == 0:
                return True
            details = self.details
            if mask & ~details.mask:
                return False
            lowest = details[(mask & -mask).bit_length() - 1]
            return mask & ~details.index.by_kind[UNCORE][lowest.uncore_cache] == 0
        listed = list(cpus)
        if len(listed) <= 1:
            return True
        if any(c not in self.details for c in listed):
            return False
        return len({self.details[c].uncore_cache for c in listed}) == 1

    def _info(self, cpu: int) -> CPUInfo:
        try:
            return self.details[cpu]
        except KeyError:
            raise NodeError(f"unknown CPU ID: {cpu}") from None

    # -- construction ----------------------------------------------------------------------

    @classmethod
    def from_machine(cls, machine: Machine) -> CPUTopology:
        """The topology ``topology.Discover`` derives from cAdvisor's view of ``machine``.

        Only online CPUs count. The core id is the lowest thread id of the physical core. When
        the machine reports no uncore caches (every CPU says 0) the socket stands in for the
        uncore cache, as upstream falls back when cAdvisor lists none.
        """
        online = machine.online_cpus
        if not online:
            raise NodeError("could not detect number of cpus")
        no_uncore = all(c.uncore_cache == 0 for c in online)
        details = CPUDetails.of(
            (
                c.id,
                CPUInfo(
                    numa=c.numa,
                    socket=c.socket,
                    core=c.physical_core,
                    uncore_cache=c.socket if no_uncore else c.uncore_cache,
                ),
            )
            for c in online
        )
        return cls(
            num_cpus=len(online),
            num_sockets=len({c.socket for c in online}),
            num_cores=len({(c.numa, c.physical_core) for c in online}),
            details=details,
            num_numa_nodes=len(details.numa_nodes()),
            num_uncore_cache=len(details.uncore_caches()),
        )
