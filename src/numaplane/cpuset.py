"""``CPUSet``: an immutable set of logical CPU ids in the kernel's list syntax.

The kernel (``/sys/devices/system/cpu/online``, ``cpuset.cpus``) and the kubelet's checkpoints
write CPU sets as comma-separated ids and inclusive ranges: ``0-3,8,10-11``. ``CPUSet.parse``
reads exactly that (the empty string is the empty set) and ``str`` writes the canonical form
back, so ``str(CPUSet.parse(s))`` is ``s`` for every canonical ``s``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final

from numaplane.errors import NumaplaneError


class CPUSetParseError(NumaplaneError, ValueError):
    """A string is not a CPU list in the kernel's syntax."""


class CPUSet:
    """An immutable, hashable set of non-negative CPU ids.

    Iteration is in ascending order. Set algebra returns new sets; nothing mutates.
    """

    __slots__ = ("_ids", "_sorted")

    _ids: frozenset[int]
    _sorted: tuple[int, ...] | None

    def __init__(self, ids: Iterable[int] = ()) -> None:
        frozen = ids if type(ids) is frozenset else frozenset(ids)
        if frozen:
            _check_ids(frozen)
        _set_ids(self, frozen)
        # Sorted on first use: most sets built by set algebra are only tested and combined.
        _set_sorted(self, None)

    @classmethod
    def _of(cls, ids: frozenset[int]) -> CPUSet:
        # A set whose ids are already known valid (a subset or union of CPUSets).
        cpus = object.__new__(cls)
        _set_ids(cpus, ids)
        _set_sorted(cpus, None)
        return cpus

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("CPUSet is immutable")

    # -- construction -------------------------------------------------------------------

    @classmethod
    def parse(cls, text: str) -> CPUSet:
        """Parse the kernel's list syntax (``"0-3,8"``); whitespace around items is ignored.

        Raises ``CPUSetParseError`` naming the offending item.
        """
        stripped = text.strip()
        if not stripped:
            return EMPTY
        ids: set[int] = set()
        for raw in stripped.split(","):
            item = raw.strip()
            if not item:
                raise CPUSetParseError(f"empty item in CPU list {text!r}")
            lo_text, sep, hi_text = item.partition("-")
            lo = _parse_id(lo_text, text)
            if not sep:
                ids.add(lo)
                continue
            hi = _parse_id(hi_text, text)
            if hi < lo:
                raise CPUSetParseError(f"invalid range {item!r} in CPU list {text!r}: end < start")
            ids.update(range(lo, hi + 1))
        return cls(ids)

    @classmethod
    def range(cls, start: int, stop: int) -> CPUSet:
        """The CPUs ``start`` .. ``stop - 1`` (like ``range``)."""
        return cls(range(start, stop))

    # -- set protocol ---------------------------------------------------------------------

    def __iter__(self) -> Iterator[int]:
        return iter(self.sorted())

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, cpu: object) -> bool:
        return cpu in self._ids

    def __bool__(self) -> bool:
        return bool(self._ids)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CPUSet):
            return self._ids == other._ids
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._ids)

    def __repr__(self) -> str:
        return f"CPUSet({str(self)!r})"

    def __str__(self) -> str:
        return format_cpu_list(self.sorted())

    def __or__(self, other: CPUSet) -> CPUSet:
        return self.union(other)

    def __and__(self, other: CPUSet) -> CPUSet:
        return self.intersection(other)

    def __sub__(self, other: CPUSet) -> CPUSet:
        return self.difference(other)

    def __xor__(self, other: CPUSet) -> CPUSet:
        return CPUSet._of(self._ids ^ other._ids)

    def __le__(self, other: CPUSet) -> bool:
        return self._ids <= other._ids

    def __lt__(self, other: CPUSet) -> bool:
        return self._ids < other._ids

    def __ge__(self, other: CPUSet) -> bool:
        return self._ids >= other._ids

    def __gt__(self, other: CPUSet) -> bool:
        return self._ids > other._ids

    # -- algebra --------------------------------------------------------------------------

    def union(self, *others: Iterable[int]) -> CPUSet:
        """CPUs in this set or any of ``others``."""
        ids = [o._ids for o in others if isinstance(o, CPUSet)]
        if len(ids) == len(others):
            # A union of valid sets is valid.
            return CPUSet._of(self._ids.union(*ids))
        return CPUSet(self._ids.union(*others))

    def intersection(self, *others: Iterable[int]) -> CPUSet:
        """CPUs in this set and in every one of ``others``."""
        # A subset of a valid set is valid.
        return CPUSet._of(self._ids.intersection(*others))

    def difference(self, *others: Iterable[int]) -> CPUSet:
        """CPUs in this set and in none of ``others``."""
        return CPUSet._of(self._ids.difference(*others))

    def is_subset_of(self, other: CPUSet) -> bool:
        """Whether every CPU of this set is in ``other``."""
        return self._ids <= other._ids

    def is_disjoint(self, other: CPUSet) -> bool:
        """Whether no CPU is in both sets."""
        return self._ids.isdisjoint(other._ids)

    def sorted(self) -> tuple[int, ...]:
        """The ids in ascending order."""
        ordered = self._sorted
        if ordered is None:
            ordered = tuple(sorted(self._ids))
            _set_sorted(self, ordered)
        return ordered

    def to_list(self) -> list[int]:
        """The ids in ascending order, as a new list."""
        return list(self.sorted())

    def min(self) -> int:
        """The smallest id; ``ValueError`` on the empty set."""
        if not self._ids:
            raise ValueError("min() of an empty CPUSet")
        return min(self._ids)


def _set_ids(cpus: CPUSet, ids: frozenset[int]) -> None:
    object.__setattr__(cpus, "_ids", ids)


def _set_sorted(cpus: CPUSet, ordered: tuple[int, ...] | None) -> None:
    object.__setattr__(cpus, "_sorted", ordered)


def _check_ids(ids: frozenset[int]) -> None:
    # Plain ints (the usual case) are checked in C; anything else one by one.
    if set(map(type, ids)) == {int} and min(ids) >= 0:
        return
    for cpu in ids:
        if not isinstance(cpu, int) or isinstance(cpu, bool) or cpu < 0:
            raise CPUSetParseError(f"CPU id must be a non-negative integer, got {cpu!r}")


def _parse_id(text: str, whole: str) -> int:
    item = text.strip()
    if not item.isdigit():
        raise CPUSetParseError(f"invalid CPU id {item!r} in CPU list {whole!r}")
    return int(item)


def format_cpu_list(ids: Iterable[int]) -> str:
    """Render ascending ids in the kernel's list syntax, merging runs of 2+ into ranges."""
    parts: list[str] = []
    run_start: int | None = None
    prev = -2
    for cpu in ids:
        if run_start is not None and cpu == prev + 1:
            prev = cpu
            continue
        if run_start is not None:
            parts.append(str(run_start) if run_start == prev else f"{run_start}-{prev}")
        run_start = prev = cpu
    if run_start is not None:
        parts.append(str(run_start) if run_start == prev else f"{run_start}-{prev}")
    return ",".join(parts)


EMPTY: Final[CPUSet] = CPUSet()
