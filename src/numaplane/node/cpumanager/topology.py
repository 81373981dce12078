"""The CPU manager's view of a machine: ``CPUTopology`` and ``CPUDetails``.

This is upstream's ``cpumanager/topology`` package. Every logical CPU carries four ids: its NUMA
node, socket, physical core and uncore (last-level) cache. Core ids are unique per machine (the
lowest thread id of the core, as ``topology.Discover`` derives them), so a core id never names
two cores on different sockets.

The ``num_*`` counters are kept as declared rather than recomputed: upstream test fixtures leave
some of them 0 (for example ``NumNUMANodes``) and the allocator's choices depend on that (a 0
NUMA count makes the allocator walk NUMA nodes before sockets).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

from numaplane.node.errors import NodeError
from numaplane.topology.cpuset import CPUSet
from numaplane.topology.model import Machine


@dataclass(frozen=True, slots=True)
class CPUInfo:
    """The NUMA node, socket, physical core and uncore cache of one logical CPU."""

    numa: int
    socket: int
    core: int
    uncore_cache: int = 0


class CPUDetails(Mapping[int, CPUInfo]):
    """An immutable map from CPU id to ``CPUInfo`` with upstream's query helpers.

    Id queries (``sockets()``, ``cores_in_numa_nodes(...)``) answer with ascending tuples of
    distinct ids; CPU queries answer with ``CPUSet``. Indexes are built once per instance, so
    repeated queries on the same details are cheap.
    """

    __slots__ = ("_by_core", "_by_numa", "_by_socket", "_by_uncore", "_info")

    def __init__(self, info: Mapping[int, CPUInfo] | Iterable[tuple[int, CPUInfo]] = ()) -> None:
        items = dict(info.items() if isinstance(info, Mapping) else info)
        self._info: dict[int, CPUInfo] = dict(sorted(items.items()))
        self._index()

    def _index(self) -> None:
        # One pass over the (ascending) CPUs fills the four indexes.
        by_numa: dict[int, list[int]] = {}
        by_socket: dict[int, list[int]] = {}
        by_core: dict[int, list[int]] = {}
        by_uncore: dict[int, list[int]] = {}
        for cpu, i in self._info.items():
            by_numa.setdefault(i.numa, []).append(cpu)
            by_socket.setdefault(i.socket, []).append(cpu)
            by_core.setdefault(i.core, []).append(cpu)
            by_uncore.setdefault(i.uncore_cache, []).append(cpu)
        self._by_numa = {k: tuple(v) for k, v in by_numa.items()}
        self._by_socket = {k: tuple(v) for k, v in by_socket.items()}
        self._by_core = {k: tuple(v) for k, v in by_core.items()}
        self._by_uncore = {k: tuple(v) for k, v in by_uncore.items()}

    # -- mapping protocol ------------------------------------------------------------------

    def __getitem__(self, cpu: int) -> CPUInfo:
        return self._info[cpu]

    def __iter__(self) -> Iterator[int]:
        return iter(self._info)

    def __len__(self) -> int:
        return len(self._info)

    def __repr__(self) -> str:
        return f"CPUDetails({len(self._info)} cpus)"

    # -- restriction -----------------------------------------------------------------------

    def keep_only(self, cpus: Iterable[int]) -> CPUDetails:
        """The details of only those CPUs in ``cpus`` (unknown ids are ignored)."""
        wanted = set(cpus)
        return self.without([c for c in self._info if c not in wanted])

    def without(self, cpus: Iterable[int]) -> CPUDetails:
        """The details of every CPU here except those in ``cpus`` (unknown ids are ignored)."""
        drop = {c for c in cpus if c in self._info}
        if not drop:
            return self
        rest = CPUDetails.__new__(CPUDetails)
        rest._info = {c: i for c, i in self._info.items() if c not in drop}
        if len(drop) > len(rest._info):
            rest._index()  # few CPUs left: indexing them is cheaper than editing every group
            return rest
        # Only the groups of the dropped CPUs change: cheaper than filtering every group.
        infos = [self._info[c] for c in drop]
        rest._by_numa = _drop(self._by_numa, {i.numa for i in infos}, drop)
        rest._by_socket = _drop(self._by_socket, {i.socket for i in infos}, drop)
        rest._by_core = _drop(self._by_core, {i.core for i in infos}, drop)
        rest._by_uncore = _drop(self._by_uncore, {i.uncore_cache for i in infos}, drop)
        return rest

    # -- whole-set queries -----------------------------------------------------------------

    def cpus(self) -> CPUSet:
        """Every CPU id."""
        return CPUSet(self._info)

    def numa_nodes(self) -> tuple[int, ...]:
        """NUMA node ids having a CPU here."""
        return tuple(sorted(self._by_numa))

    def sockets(self) -> tuple[int, ...]:
        """Socket ids having a CPU here."""
        return tuple(sorted(self._by_socket))

    def cores(self) -> tuple[int, ...]:
        """Core ids having a CPU here."""
        return tuple(sorted(self._by_core))

    def uncore_caches(self) -> tuple[int, ...]:
        """Uncore cache ids having a CPU here."""
        return tuple(sorted(self._by_uncore))

    # -- CPUs of units ---------------------------------------------------------------------

    def cpus_in_numa_nodes(self, *ids: int) -> CPUSet:
        """CPUs in any of the NUMA nodes."""
        return _cpus_of(self._by_numa, ids)

    def cpus_in_sockets(self, *ids: int) -> CPUSet:
        """CPUs in any of the sockets."""
        return _cpus_of(self._by_socket, ids)

    def cpus_in_cores(self, *ids: int) -> CPUSet:
        """CPUs in any of the cores."""
        return _cpus_of(self._by_core, ids)

    def cpus_in_uncore_caches(self, *ids: int) -> CPUSet:
        """CPUs sharing any of the uncore caches."""
        return _cpus_of(self._by_uncore, ids)

    def count_in_numa_node(self, numa: int) -> int:
        """How many CPUs are in one NUMA node (without building a set)."""
        return len(self._by_numa.get(numa, ()))

    def count_in_socket(self, socket: int) -> int:
        """How many CPUs are in one socket."""
        return len(self._by_socket.get(socket, ()))

    def count_in_core(self, core: int) -> int:
        """How many CPUs are in one core."""
        return len(self._by_core.get(core, ()))

    def count_in_uncore_cache(self, uncore: int) -> int:
        """How many CPUs share one uncore cache."""
        return len(self._by_uncore.get(uncore, ()))

    # -- units of units --------------------------------------------------------------------

    def numa_nodes_in_sockets(self, *ids: int) -> tuple[int, ...]:
        """NUMA nodes having a CPU in any of the sockets."""
        return self._ids_of(self._by_socket, ids, lambda i: i.numa)

    def sockets_in_numa_nodes(self, *ids: int) -> tuple[int, ...]:
        """Sockets having a CPU in any of the NUMA nodes."""
        return self._ids_of(self._by_numa, ids, lambda i: i.socket)

    def cores_in_numa_nodes(self, *ids: int) -> tuple[int, ...]:
        """Cores having a CPU in any of the NUMA nodes."""
        return self._ids_of(self._by_numa, ids, lambda i: i.core)

    def cores_in_sockets(self, *ids: int) -> tuple[int, ...]:
        """Cores having a CPU in any of the sockets."""
        return self._ids_of(self._by_socket, ids, lambda i: i.core)

    def uncore_in_numa_nodes(self, *ids: int) -> tuple[int, ...]:
        """Uncore caches having a CPU in any of the NUMA nodes."""
        return self._ids_of(self._by_numa, ids, lambda i: i.uncore_cache)

    def uncore_caches_in_sockets(self, *ids: int) -> tuple[int, ...]:
        """Uncore caches having a CPU in any of the sockets."""
        return self._ids_of(self._by_socket, ids, lambda i: i.uncore_cache)

    def cores_in_uncore_caches(self, *ids: int) -> tuple[int, ...]:
        """Cores having a CPU that shares any of the uncore caches."""
        return self._ids_of(self._by_uncore, ids, lambda i: i.core)

    def cores_needed_in_uncore_cache(self, num_cores: int, *ids: int) -> tuple[int, ...]:
        """The ``num_cores`` lowest core ids in the uncore caches (all of them if fewer)."""
        return self.cores_in_uncore_caches(*ids)[: max(num_cores, 0)]

    def are_numa_nodes_in_same_socket(self, numa_nodes: Iterable[int]) -> bool:
        """Whether all the (known) NUMA nodes lie in at most one socket."""
        wanted = tuple(numa_nodes)
        if any(n not in self._by_numa for n in wanted):
            return False
        return len(self.sockets_in_numa_nodes(*wanted)) <= 1

    def _ids_of(
        self, index: Mapping[int, tuple[int, ...]], ids: Iterable[int], key: Any
    ) -> tuple[int, ...]:
        found = {key(self._info[c]) for i in set(ids) for c in index.get(i, ())}
        return tuple(sorted(found))


def _drop(
    index: Mapping[int, tuple[int, ...]], keys: set[int], drop: set[int]
) -> dict[int, tuple[int, ...]]:
    out = dict(index)
    for key in keys:
        kept = tuple(c for c in index[key] if c not in drop)
        if kept:
            out[key] = kept
        else:
            del out[key]
    return out


def _cpus_of(index: Mapping[int, tuple[int, ...]], ids: Iterable[int]) -> CPUSet:
    cpus: list[int] = []
    for i in set(ids):
        cpus.extend(index.get(i, ()))
    return CPUSet(cpus)


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

    def cpu_socket_id(self, cpu: int) -> int:
        """The socket of ``cpu``; ``NodeError`` for an unknown CPU."""
        return self._info(cpu).socket

    def cpu_numa_node_id(self, cpu: int) -> int:
        """The NUMA node of ``cpu``; ``NodeError`` for an unknown CPU."""
        return self._info(cpu).numa

    def is_aligned_at_uncore_cache(self, cpus: Iterable[int]) -> bool:
        """Whether the CPUs share one uncore cache (trivially so for at most one CPU)."""
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
        details = CPUDetails(
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

    @classmethod
    def from_fixture(cls, data: Mapping[str, Any]) -> CPUTopology:
        """A topology from a vector fixture.

        Two shapes are accepted: ``topologies.json`` entries (``num_cpus`` ... and ``cpus``:
        ``[{cpu, core, socket, numa[, uncore_cache]}]``, counters taken as declared, ``None`` =
        0) and cAdvisor topologies (``cadvisor_topology``: ``[{numa, cores: [{socket, id,
        threads[, uncore_cache]}]}]``), which are discovered as ``topology.Discover`` does.
        """
        if "cadvisor_topology" in data:
            return cls._from_cadvisor(data["cadvisor_topology"])
        details = CPUDetails(
            (
                int(e["cpu"]),
                CPUInfo(
                    numa=int(e["numa"]),
                    socket=int(e["socket"]),
                    core=int(e["core"]),
                    uncore_cache=int(e.get("uncore_cache") or 0),
                ),
            )
            for e in data["cpus"]
        )
        return cls(
            num_cpus=int(data.get("num_cpus") or 0),
            num_sockets=int(data.get("num_sockets") or 0),
            num_cores=int(data.get("num_cores") or 0),
            details=details,
            num_numa_nodes=int(data.get("num_numa_nodes") or 0),
            num_uncore_cache=int(data.get("num_uncore_cache") or 0),
        )

    @classmethod
    def _from_cadvisor(cls, nodes: Iterable[Mapping[str, Any]]) -> CPUTopology:
        info: dict[int, CPUInfo] = {}
        num_cores = 0
        sockets: set[int] = set()
        for node in nodes:
            cores = node.get("cores") or ()
            num_cores += len(cores)
            for core in cores:
                threads = [int(t) for t in core["threads"]]
                if not threads:
                    raise NodeError("no cpus provided")
                if len(set(threads)) != len(threads):
                    raise NodeError("cpus provided are not unique")
                socket = int(core["socket"])
                sockets.add(socket)
                uncore = core.get("uncore_cache")
                for cpu in threads:
                    info[cpu] = CPUInfo(
                        numa=int(node["numa"]),
                        socket=socket,
                        core=min(threads),
                        uncore_cache=socket if uncore is None else int(uncore),
                    )
        details = CPUDetails(info)
        return cls(
            num_cpus=len(info),
            num_sockets=len(sockets),
            num_cores=num_cores,
            details=details,
            num_numa_nodes=len(details.numa_nodes()),
            num_uncore_cache=len(details.uncore_caches()),
        )
