"""``BitMask``: the kubelet's 64-bit NUMA affinity mask (``topologymanager/bitmask``).

Bit *i* set means NUMA node *i* is in the mask. Values are immutable: every operation returns a
new mask. Orderings follow upstream exactly: ``is_less_than`` compares the raw integer values
(so ``{1,2}`` < ``{0,3}``), and ``is_narrower_than`` compares bit counts first.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Final

from numaplane.cpuset import set_bits
from numaplane.errors import NumaplaneError

MAX_BITS: Final = 64
_ALL: Final = (1 << MAX_BITS) - 1


class BitMaskError(NumaplaneError, ValueError):
    """A bit number outside 0-63 (upstream: "bit number must be in range 0-63")."""

    def __init__(self) -> None:
        super().__init__("bit number must be in range 0-63")


class BitMask:
    """An immutable set of NUMA node ids 0-63 stored as one unsigned 64-bit integer."""

    __slots__ = ("_value",)

    _value: int

    def __init__(self, *bits: int) -> None:
        object.__setattr__(self, "_value", _mask_of(bits))

    @classmethod
    def from_int(cls, value: int) -> BitMask:
        """The mask whose raw 64-bit value is ``value``."""
        if value < 0 or value > _ALL:
            raise BitMaskError()
        # Through the constructor (the bits and back): rare enough not to matter (a few hundred
        # calls per thousand simulated admissions).
        return cls(*set_bits(value))

    @classmethod
    def from_bits(cls, bits: Iterable[int]) -> BitMask:
        """The mask of the given bit numbers (``BitMaskError`` for any outside 0-63)."""
        return cls.from_int(_mask_of(bits))

    @classmethod
    def fill(cls) -> BitMask:
        """All 64 bits set."""
        return cls.from_int(_ALL)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("BitMask is immutable")

    # -- value protocol -------------------------------------------------------------------

    @property
    def value(self) -> int:
        """The raw unsigned 64-bit value."""
        return self._value

    def __int__(self) -> int:
        return self._value

    def __eq__(self, other: object) -> bool:
        if isinstance(other, BitMask):
            return self._value == other._value
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._value)

    def __repr__(self) -> str:
        return f"BitMask({', '.join(map(str, self.bits))})"

    def __str__(self) -> str:
        """Upstream's ``String()``: binary, zero-padded to a minimum even-ish width."""
        width = 2
        for shift in range(62, 0, -2):
            if self._value > (1 << shift):
                width = shift + 2
                break
        return format(self._value, f"0{width}b")

    def __iter__(self) -> Iterator[int]:
        return iter(self.bits)

    def __len__(self) -> int:
        return self.count()

    def __contains__(self, bit: object) -> bool:
        return isinstance(bit, int) and self.is_set(bit)

    # -- queries --------------------------------------------------------------------------

    def count(self) -> int:
        """Number of set bits."""
        return self._value.bit_count()

    @property
    def bits(self) -> tuple[int, ...]:
        """Set bits in ascending order."""
        return set_bits(self._value)

    def get_bits(self) -> list[int]:
        """Set bits in ascending order, as a list (upstream ``GetBits``)."""
        return list(self.bits)

    def is_empty(self) -> bool:
        """Whether no bit is set."""
        return self._value == 0

    def is_set(self, bit: int) -> bool:
        """Whether ``bit`` is set; out-of-range bits are never set."""
        return 0 <= bit < MAX_BITS and bool(self._value >> bit & 1)

    def any_set(self, bits: Iterable[int]) -> bool:
        """Whether any of ``bits`` is set."""
        return any(self.is_set(b) for b in bits)

    def is_equal(self, other: BitMask) -> bool:
        """Value equality (upstream ``IsEqual``)."""
        return self._value == other._value

    def is_less_than(self, other: BitMask) -> bool:
        """Numeric comparison of the raw values (upstream ``IsLessThan``)."""
        return self._value < other._value

    def is_greater_than(self, other: BitMask) -> bool:
        """Numeric comparison of the raw values (upstream ``IsGreaterThan``)."""
        return self._value > other._value

    def is_narrower_than(self, other: BitMask) -> bool:
        """Fewer bits, or as many bits and a smaller value (upstream ``IsNarrowerThan``)."""
        mine, theirs = self.count(), other.count()
        if mine == theirs:
            return self._value < other._value
        return mine < theirs

    def is_subset_of(self, other: BitMask) -> bool:
        """Whether every bit of this mask is set in ``other``."""
        return self._value & ~other._value == 0

    # -- algebra (new masks) --------------------------------------------------------------

    def add(self, *bits: int) -> BitMask:
        """This mask with ``bits`` set; ``BitMaskError`` (and nothing applied) if any is bad."""
        return BitMask.from_int(self._value | _mask_of(bits))

    def remove(self, *bits: int) -> BitMask:
        """This mask with ``bits`` cleared; ``BitMaskError`` (nothing applied) if any is bad."""
        return BitMask.from_int(self._value & ~_mask_of(bits))

    def and_(self, *masks: BitMask) -> BitMask:
        """This mask AND every one of ``masks``."""
        v = self._value
        for m in masks:
            v &= m._value
        return BitMask.from_int(v)

    def or_(self, *masks: BitMask) -> BitMask:
        """This mask OR every one of ``masks``."""
        v = self._value
        for m in masks:
            v |= m._value
        return BitMask.from_int(v)

    def __and__(self, other: BitMask) -> BitMask:
        return BitMask.from_int(self._value & other._value)

    def __or__(self, other: BitMask) -> BitMask:
        return BitMask.from_int(self._value | other._value)


def _mask_of(bits: Iterable[int]) -> int:
    value = 0
    for bit in bits:
        if not 0 <= bit < MAX_BITS:
            raise BitMaskError()
        value |= 1 << bit
    return value


EMPTY: Final[BitMask] = BitMask()


def and_masks(first: BitMask, *masks: BitMask) -> BitMask:
    """``first`` AND every mask (upstream package-level ``And``)."""
    return first.and_(*masks)


def or_masks(first: BitMask, *masks: BitMask) -> BitMask:
    """``first`` OR every mask (upstream package-level ``Or``)."""
    return first.or_(*masks)


def bit_mask_subsets(bits: Sequence[int]) -> Iterator[BitMask]:
    """The mask of every non-empty subset of ``bits``, in upstream ``IterateBitMasks`` order.

    Order matters to consumers that keep the first of equal candidates: all 1-subsets, then all
    2-subsets, ..., each size in lexicographic order of positions in ``bits``.
    """
    from itertools import combinations

    for k in range(1, len(bits) + 1):
        for combo in combinations(bits, k):
            yield BitMask.from_bits(combo)
