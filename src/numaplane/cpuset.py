"""``CPUSet``: an immutable set of logical CPU ids in the kernel's list syntax.

The kernel (``/sys/devices/system/cpu/online``, ``cpuset.cpus``) and the kubelet's checkpoints
write CPU sets as comma-separated ids and inclusive ranges: ``0-3,8,10-11``. ``CPUSet.parse``
reads exactly that (the empty string is the empty set) and ``str`` writes the canonical form
back, so ``str(CPUSet.parse(s))`` is ``s`` for every canonical ``s``.

A set of ids below ``MASK_LIMIT`` (every real machine's) is held as an integer bitmask (bit
``i`` for CPU ``i``): the set algebra the CPU manager does per admission is then a few integer
operations instead of hashing every id. A set naming a larger id (only hand-written input can)
is held as a ``frozenset``, so no id can make a huge integer.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import compress
from typing import Final

from numaplane.errors import NumaplaneError

MASK_LIMIT: Final = 1 << 16
"""Sets whose ids are all below this are bitmasks; others fall back to a ``frozenset``."""

# ``(1).__lshift__`` maps an id to its bit in C: ``sum(map(_BIT, ids))`` is the mask of ids.
_BIT: Final = (1).__lshift__
# Turns ``bin()``'s ASCII digits into 0/1 bytes, the selectors of ``itertools.compress``.
_BINARY_DIGITS: Final = bytes.maketrans(b"01", b"\x00\x01")


class CPUSetParseError(NumaplaneError, ValueError):
    """A string is not a CPU list in the kernel's syntax."""


class CPUSet:
    """An immutable, hashable set of non-negative CPU ids.

    Iteration is in ascending order. Set algebra returns new sets; nothing mutates.
    """

    __slots__ = ("_ids", "_mask", "_sorted")

    # Invariant: ``_mask`` is None exactly when some id is >= MASK_LIMIT, and then ``_ids``
    # is set; otherwise ``_ids`` and ``_sorted`` are derived from the mask on first use.
    _ids: frozenset[int] | None
    _mask: int | None
    _sorted: tuple[int, ...] | None

    def __init__(self, ids: Iterable[int] = ()) -> None:
        if type(ids) is CPUSet:
            _init(self, ids._ids, ids._mask, ids._sorted)
            return
        frozen = ids if type(ids) is frozenset else frozenset(ids)
        mask: int | None = 0
        if frozen:
            _check_ids(frozen)
            mask = sum(map(_BIT, frozen)) if max(frozen) < MASK_LIMIT else None
        _init(self, frozen, mask, None)

    @classmethod
    def from_mask(cls, mask: int) -> CPUSet:
        """The set whose ids are the set bits of ``mask`` (bit ``i`` is CPU ``i``)."""
        if mask < 0:
            raise CPUSetParseError(f"a CPU mask must be non-negative, got {mask}")
        if mask.bit_length() > MASK_LIMIT:
            return cls(set_bits(mask))
        return _of_mask(mask)

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

    # -- representation -------------------------------------------------------------------

    def mask(self) -> int | None:
        """The bitmask of the set (bit ``i`` for CPU ``i``); None when an id is too large."""
        return self._mask

    def _frozen(self) -> frozenset[int]:
        ids = self._ids
        if ids is None:
            ids = frozenset(self.sorted())
            object.__setattr__(self, "_ids", ids)
        return ids

    # -- set protocol ---------------------------------------------------------------------

    def __iter__(self) -> Iterator[int]:
        return iter(self.sorted())

    def __len__(self) -> int:
        mask = self._mask
        if mask is not None:
            return mask.bit_count()
        return len(self._frozen())

    def __contains__(self, cpu: object) -> bool:
        mask = self._mask
        if mask is not None and type(cpu) is int:
            return cpu >= 0 and (mask >> cpu) & 1 == 1
        return cpu in self._frozen()

    def __bool__(self) -> bool:
        return self._mask != 0

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CPUSet):
            if self._mask is not None or other._mask is not None:
                return self._mask == other._mask
            return self._frozen() == other._frozen()
        return NotImplemented

    def __hash__(self) -> int:
        # Equal sets share a representation (the invariant), so either hash is consistent.
        mask = self._mask
        return hash(mask) if mask is not None else hash(self._frozen())

    def __repr__(self) -> str:
        return f"CPUSet({str(self)!r})"

    def __str__(self) -> str:
        return format_cpu_list(self.sorted())

    def __or__(self, other: CPUSet) -> CPUSet:
        a, b = self._mask, other._mask
        if a is not None and b is not None:
            return _of_mask(a | b)
        return self.union(other)

    def __and__(self, other: CPUSet) -> CPUSet:
        a, b = self._mask, other._mask
        if a is not None and b is not None:
            return _of_mask(a & b)
        return self.intersection(other)

    def __sub__(self, other: CPUSet) -> CPUSet:
        a, b = self._mask, other._mask
        if a is not None and b is not None:
            return _of_mask(a & ~b)
        return self.difference(other)

    def __xor__(self, other: CPUSet) -> CPUSet:
        a, b = self._mask, other._mask
        if a is not None and b is not None:
            return _of_mask(a ^ b)
        return CPUSet(self._frozen() ^ other._frozen())

    def __le__(self, other: CPUSet) -> bool:
        return self.is_subset_of(other)

    def __lt__(self, other: CPUSet) -> bool:
        return self.is_subset_of(other) and self != other

    def __ge__(self, other: CPUSet) -> bool:
        return other.is_subset_of(self)

    def __gt__(self, other: CPUSet) -> bool:
        return other.is_subset_of(self) and self != other

    # -- algebra --------------------------------------------------------------------------

    def union(self, *others: Iterable[int]) -> CPUSet:
        """CPUs in this set or any of ``others``."""
        mask = self._mask
        masks = _masks_of(others)
        if mask is None or masks is None:
            return CPUSet(self._frozen().union(*map(_as_ids, others)))
        for other in masks:
            mask |= other
        return self if mask == self._mask else _of_mask(mask)

    def intersection(self, *others: Iterable[int]) -> CPUSet:
        """CPUs in this set and in every one of ``others``."""
        mask = self._mask
        masks = _masks_of(others)
        if mask is None or masks is None:
            return CPUSet(self._frozen().intersection(*map(_as_ids, others)))
        for other in masks:
            mask &= other
        return self if mask == self._mask else _of_mask(mask)

    def difference(self, *others: Iterable[int]) -> CPUSet:
        """CPUs in this set and in none of ``others``."""
        mask = self._mask
        masks = _masks_of(others)
        if mask is None or masks is None:
            return CPUSet(self._frozen().difference(*map(_as_ids, others)))
        for other in masks:
            mask &= ~other
        return self if mask == self._mask else _of_mask(mask)

    def is_subset_of(self, other: CPUSet) -> bool:
        """Whether every CPU of this set is in ``other``."""
        a, b = self._mask, other._mask
        if a is not None and b is not None:
            return a & ~b == 0
        return self._frozen() <= other._frozen()

    def is_disjoint(self, other: CPUSet) -> bool:
        """Whether no CPU is in both sets."""
        a, b = self._mask, other._mask
        if a is not None and b is not None:
            return a & b == 0
        return self._frozen().isdisjoint(other._frozen())

    def sorted(self) -> tuple[int, ...]:
        """The ids in ascending order."""
        ordered = self._sorted
        if ordered is None:
            mask = self._mask
            ordered = set_bits(mask) if mask is not None else tuple(sorted(self._frozen()))
            object.__setattr__(self, "_sorted", ordered)
        return ordered

    def to_list(self) -> list[int]:
        """The ids in ascending order, as a new list."""
        return list(self.sorted())

    def min(self) -> int:
        """The smallest id; ``ValueError`` on the empty set."""
        mask = self._mask
        if mask is None:
            return min(self._frozen())
        if not mask:
            raise ValueError("min() of an empty CPUSet")
        return (mask & -mask).bit_length() - 1


def _init(
    cpus: CPUSet, ids: frozenset[int] | None, mask: int | None, ordered: tuple[int, ...] | None
) -> None:
    setattr_ = object.__setattr__
    setattr_(cpus, "_ids", ids)
    setattr_(cpus, "_mask", mask)
    setattr_(cpus, "_sorted", ordered)


def _of_mask(mask: int) -> CPUSet:
    # A set from a non-negative mask of a valid set (ids stay below MASK_LIMIT).
    cpus = object.__new__(CPUSet)
    _init(cpus, None, mask, None)
    return cpus


def _masks_of(others: tuple[Iterable[int], ...]) -> list[int] | None:
    # The masks of ``others`` when all are CPUSets held as masks, else None.
    masks: list[int] = []
    for other in others:
        if not isinstance(other, CPUSet) or other._mask is None:
            return None
        masks.append(other._mask)
    return masks


def _as_ids(other: Iterable[int]) -> Iterable[int]:
    return other._frozen() if isinstance(other, CPUSet) else other


def set_bits(mask: int) -> tuple[int, ...]:
    """Set bits of a non-negative integer ``mask``, ascending (CPU ids of a CPU mask, NUMA node
    ids of a NUMA mask)."""
    if mask.bit_count() <= 8:
        # Few bits: peel the lowest one at a time.
        out: list[int] = []
        while mask:
            low = mask & -mask
            out.append(low.bit_length() - 1)
            mask ^= low
        return tuple(out)
    # Many bits: select positions by the binary digits, least significant first, all in C.
    digits = bin(mask)[:1:-1].encode("ascii").translate(_BINARY_DIGITS)
    return tuple(compress(range(len(digits)), digits))


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
