"""``CPUDetails``: which NUMA node, socket, core and uncore cache each CPU of a machine is in.

Upstream's ``topology.CPUDetails`` with its query helpers. Every logical CPU carries four ids;
core ids are unique per machine (the lowest thread id of the core, as ``topology.Discover``
derives them), so a core id never names two cores on different sockets.

The per-unit CPU sets are integer bitmasks (bit ``c`` for CPU ``c``) built once per machine in a
``UnitIndex`` that every restriction shares: the allocator restricts and re-queries details on
every take, and then a restriction is one ``&`` instead of rebuilding four indexes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from numaplane.topology.cpuset import CPUSet


@dataclass(frozen=True, slots=True)
class CPUInfo:
    """The NUMA node, socket, physical core and uncore cache of one logical CPU."""

    numa: int
    socket: int
    core: int
    uncore_cache: int = 0


NUMA = "numa"
SOCKET = "socket"
CORE = "core"
UNCORE = "uncore_cache"
_KINDS = (NUMA, SOCKET, CORE, UNCORE)


_NO_PAIRS: tuple[int, tuple[tuple[int, int], ...]] = (0, ())


class UnitIndex:
    """Per-unit CPU bitmasks of one set of ``CPUInfo``, shared by every restriction of it.

    Bit ``c`` of a mask is CPU ``c``. A unit kind is ``NUMA``, ``SOCKET``, ``CORE`` or
    ``UNCORE``; ``by_kind[kind]`` maps each unit id, ascending, to the mask of its CPUs, so
    filtering it keeps the ascending order queries answer in. Read-only once built.
    """

    __slots__ = ("by_kind", "full", "info", "inner_of", "pairs_of")

    def __init__(self, info: dict[int, CPUInfo]) -> None:
        self.info = info
        # CPUSet validates the ids (non-negative ints) and gives their mask.
        self.full = _mask_of_ids(CPUSet(info))
        by_kind: dict[str, dict[int, int]] = {kind: {} for kind in _KINDS}
        for cpu, i in info.items():
            bit = 1 << cpu
            for kind, unit in zip(_KINDS, (i.numa, i.socket, i.core, i.uncore_cache), strict=True):
                units = by_kind[kind]
                units[unit] = units.get(unit, 0) | bit
        self.by_kind = {kind: dict(sorted(units.items())) for kind, units in by_kind.items()}
        # (outer kind, inner kind) -> outer id -> inner ids having a CPU in it (ascending),
        # filled on first use: the candidates a restricted query filters by its mask.
        self.inner_of: dict[tuple[str, str], dict[int, tuple[int, ...]]] = {}
        self.pairs_of: dict[
            tuple[str, str], dict[int, tuple[int, tuple[tuple[int, int], ...]]]
        ] = {}

    def mask_of(self, cpus: Iterable[int]) -> int:
        """The mask of the known CPUs among ``cpus``."""
        if isinstance(cpus, CPUSet):
            mask = cpus.mask()
            if mask is not None:
                return mask & self.full
        info = self.info
        return sum(1 << c for c in set(cpus) if c in info)

    def mask_in(self, kind: str, ids: Iterable[int]) -> int:
        """The CPUs of any of the ``kind`` units ``ids`` (unknown ids add nothing)."""
        units = self.by_kind[kind]
        mask = 0
        for i in ids:
            mask |= units.get(i, 0)
        return mask

    def units(self, kind: str, mask: int) -> tuple[int, ...]:
        """Ids of the ``kind`` units having a CPU in ``mask``, ascending."""
        return tuple(u for u, m in self.by_kind[kind].items() if m & mask)

    def within(self, outer: str, ids: tuple[int, ...], inner: str, mask: int) -> tuple[int, ...]:
        """Ids of the ``inner`` units having a CPU of ``mask`` in any ``outer`` unit ``ids``."""
        # Candidates from the whole topology, kept when their CPUs meet the mask.
        if len(ids) == 1:
            outer_mask, pairs = self._pairs(outer, inner).get(ids[0], _NO_PAIRS)
            meet = outer_mask & mask
            return tuple(u for u, m in pairs if m & meet) if meet else ()
        meet = self.mask_in(outer, ids) & mask
        if not meet:
            return ()
        candidates = sorted({u for i in set(ids) for u in self.inner(outer, inner, i)})
        units = self.by_kind[inner]
        return tuple(u for u in candidates if units[u] & meet)

    def _pairs(self, outer: str, inner: str) -> dict[int, tuple[int, tuple[tuple[int, int], ...]]]:
        # outer id -> (its mask, (inner id, inner mask) of the inner units meeting it).
        table = self.pairs_of.get((outer, inner))
        if table is None:
            outers = self.by_kind[outer]
            units = self.by_kind[inner]
            table = {
                o: (outers[o], tuple((u, units[u]) for u in self.inner(outer, inner, o)))
                for o in outers
            }
            self.pairs_of[(outer, inner)] = table
        return table

    def inner(self, outer: str, inner: str, outer_id: int) -> tuple[int, ...]:
        """Ids of ``inner`` units having a CPU in the ``outer`` unit ``outer_id``."""
        table = self.inner_of.get((outer, inner))
        if table is None:
            found: dict[int, set[int]] = {}
            for i in self.info.values():
                found.setdefault(_unit(i, outer), set()).add(_unit(i, inner))
            table = self.inner_of[(outer, inner)] = {k: tuple(sorted(v)) for k, v in found.items()}
        return table.get(outer_id, ())


def _unit(info: CPUInfo, kind: str) -> int:
    unit: int = getattr(info, kind)
    return unit


def _mask_of_ids(cpus: CPUSet) -> int:
    mask = cpus.mask()
    return mask if mask is not None else sum(1 << c for c in cpus)


class CPUDetails(Mapping[int, CPUInfo]):
    """An immutable map from CPU id to ``CPUInfo`` with upstream's query helpers.

    Id queries (``sockets()``, ``cores_in_numa_nodes(...)``) answer with ascending tuples of
    distinct ids; CPU queries answer with ``CPUSet``. A details is a bitmask of CPUs over
    per-unit bitmasks built once (``UnitIndex``) and shared by every ``keep_only``/``without``
    restriction, so restricting is an integer operation and a query a few of them.
    """

    __slots__ = ("_index", "_mask")

    def __init__(self, index: UnitIndex, mask: int | None = None) -> None:
        """The CPUs of ``index`` whose bit is set in ``mask`` (all of them by default)."""
        self._index = index
        self._mask = index.full if mask is None else mask

    @classmethod
    def of(cls, info: Mapping[int, CPUInfo] | Iterable[tuple[int, CPUInfo]] = ()) -> CPUDetails:
        """The details of the CPUs in ``info`` (CPU id -> ``CPUInfo``)."""
        items = dict(info.items() if isinstance(info, Mapping) else info)
        return cls(UnitIndex(dict(sorted(items.items()))))

    def _restricted(self, mask: int) -> CPUDetails:
        return self if mask == self._mask else CPUDetails(self._index, mask)

    # -- mapping protocol ------------------------------------------------------------------

    def __getitem__(self, cpu: int) -> CPUInfo:
        info = self._index.info[cpu]
        if not (self._mask >> cpu) & 1:
            raise KeyError(cpu)
        return info

    def __contains__(self, cpu: object) -> bool:
        return cpu in self._index.info and (self._mask >> cpu) & 1 == 1

    def __iter__(self) -> Iterator[int]:
        if self._mask == self._index.full:
            return iter(self._index.info)
        return iter(CPUSet.from_mask(self._mask))

    def __len__(self) -> int:
        return self._mask.bit_count()

    def __repr__(self) -> str:
        return f"CPUDetails({len(self)} cpus)"

    # -- restriction -----------------------------------------------------------------------

    def keep_only(self, cpus: Iterable[int]) -> CPUDetails:
        """The details of only those CPUs in ``cpus`` (unknown ids are ignored)."""
        return self._restricted(self._mask & self._index.mask_of(cpus))

    def without(self, cpus: Iterable[int]) -> CPUDetails:
        """The details of every CPU here except those in ``cpus`` (unknown ids are ignored)."""
        return self._restricted(self._mask & ~self._index.mask_of(cpus))

    def keep_only_mask(self, mask: int) -> CPUDetails:
        """The details of only those CPUs whose bit is set in ``mask``."""
        return self._restricted(self._mask & mask)

    @property
    def mask(self) -> int:
        """The CPUs here as a bitmask (bit ``c`` for CPU ``c``)."""
        return self._mask

    @property
    def index(self) -> UnitIndex:
        """The per-unit masks of the unrestricted details (intersect them with ``mask``)."""
        return self._index

    # -- whole-set queries -----------------------------------------------------------------

    def cpus(self) -> CPUSet:
        """Every CPU id."""
        return CPUSet.from_mask(self._mask)

    def _units(self, kind: str) -> tuple[int, ...]:
        return self._index.units(kind, self._mask)

    def numa_nodes(self) -> tuple[int, ...]:
        """NUMA node ids having a CPU here."""
        return self._units(NUMA)

    def sockets(self) -> tuple[int, ...]:
        """Socket ids having a CPU here."""
        return self._units(SOCKET)

    def cores(self) -> tuple[int, ...]:
        """Core ids having a CPU here."""
        return self._units(CORE)

    def uncore_caches(self) -> tuple[int, ...]:
        """Uncore cache ids having a CPU here."""
        return self._units(UNCORE)

    # -- CPUs of units ---------------------------------------------------------------------

    def _mask_in(self, kind: str, ids: Iterable[int]) -> int:
        return self._index.mask_in(kind, ids) & self._mask

    def cpus_in_numa_nodes(self, *ids: int) -> CPUSet:
        """CPUs in any of the NUMA nodes."""
        return CPUSet.from_mask(self._mask_in(NUMA, ids))

    def cpus_in_sockets(self, *ids: int) -> CPUSet:
        """CPUs in any of the sockets."""
        return CPUSet.from_mask(self._mask_in(SOCKET, ids))

    def cpus_in_cores(self, *ids: int) -> CPUSet:
        """CPUs in any of the cores."""
        return CPUSet.from_mask(self._mask_in(CORE, ids))

    def cpus_in_uncore_caches(self, *ids: int) -> CPUSet:
        """CPUs sharing any of the uncore caches."""
        return CPUSet.from_mask(self._mask_in(UNCORE, ids))

    def count_in_numa_node(self, numa: int) -> int:
        """How many CPUs are in one NUMA node (without building a set)."""
        return (self._index.by_kind[NUMA].get(numa, 0) & self._mask).bit_count()

    def count_in_core(self, core: int) -> int:
        """How many CPUs are in one core."""
        return (self._index.by_kind[CORE].get(core, 0) & self._mask).bit_count()

    def count_in_uncore_cache(self, uncore: int) -> int:
        """How many CPUs share one uncore cache."""
        return (self._index.by_kind[UNCORE].get(uncore, 0) & self._mask).bit_count()

    # -- units of units --------------------------------------------------------------------

    def numa_nodes_in_sockets(self, *ids: int) -> tuple[int, ...]:
        """NUMA nodes having a CPU in any of the sockets."""
        return self._ids_of(SOCKET, ids, NUMA)

    def sockets_in_numa_nodes(self, *ids: int) -> tuple[int, ...]:
        """Sockets having a CPU in any of the NUMA nodes."""
        return self._ids_of(NUMA, ids, SOCKET)

    def cores_in_numa_nodes(self, *ids: int) -> tuple[int, ...]:
        """Cores having a CPU in any of the NUMA nodes."""
        return self._ids_of(NUMA, ids, CORE)

    def cores_in_uncore_caches(self, *ids: int) -> tuple[int, ...]:
        """Cores having a CPU that shares any of the uncore caches."""
        return self._ids_of(UNCORE, ids, CORE)

    def cores_needed_in_uncore_cache(self, num_cores: int, *ids: int) -> tuple[int, ...]:
        """The ``num_cores`` lowest core ids in the uncore caches (all of them if fewer)."""
        return self.cores_in_uncore_caches(*ids)[: max(num_cores, 0)]

    def are_numa_nodes_in_same_socket(self, numa_nodes: Iterable[int]) -> bool:
        """Whether all the (known) NUMA nodes lie in at most one socket."""
        wanted = tuple(numa_nodes)
        if any(not self.count_in_numa_node(n) for n in wanted):
            return False
        return len(self.sockets_in_numa_nodes(*wanted)) <= 1

    def _ids_of(self, outer: str, ids: tuple[int, ...], inner: str) -> tuple[int, ...]:
        return self._index.within(outer, ids, inner, self._mask)
