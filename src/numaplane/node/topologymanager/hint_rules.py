"""The rules hint lists are described by: capacity ``Threshold``s and ``Family``s of masks.

A mask is a hint of a ``Family`` when it lies in the family's universe of NUMA nodes, meets every
``Threshold`` (a sum of counts over the nodes or node groups it touches) and touches every node
set it must touch. Such a set of masks is closed under adding nodes of the universe, so it is
described by the rule alone; ``hint_sets.StructuredHints`` combines families into a provider's
answer. Also here: integer-mask helpers and the searches over a family (narrowest member width).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import TypeVar

from numaplane.cpuset import set_bits

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def mask_of(bits: Sequence[int] | Iterator[int]) -> int:
    """The integer mask of node ids 0-63 (ids outside that range are left out)."""
    value = 0
    for bit in bits:
        if 0 <= bit < 64:
            value |= 1 << bit
    return value


# Thresholds and families are built several times per admission by every provider, so they
# are plain ``__slots__`` classes rather than frozen dataclasses: no ``__post_init__`` call, no
# instance ``__dict__``, and no ``functools.cached_property`` (which takes a lock per read).
# They stay immutable values: equality, hash and repr are those the dataclasses had.
_set = object.__setattr__


class _Frozen:
    """Attribute assignment after ``__init__`` is an error, as for a frozen dataclass."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")


class Threshold(_Frozen):
    """``sum(count for group, count in groups if group & mask) >= minimum``.

    A group is the node set of one device (or one node's CPUs or memory): it counts once when
    the mask touches any of its nodes, as upstream's ``AnySet``.
    """

    __slots__ = ("_by_bit", "_ranked", "groups", "minimum")

    groups: tuple[tuple[int, int], ...]
    minimum: int
    # Amount per node bit when every group is one node, else None (see ``covered``).
    _by_bit: dict[int, int] | None
    _ranked: tuple[tuple[int, int], ...] | None

    def __init__(self, groups: tuple[tuple[int, int], ...], minimum: int) -> None:
        # When every group is one node (CPUs, memory, single-node devices), a narrow mask's
        # amount is a few look-ups by node instead of a pass over every group.
        by_bit: dict[int, int] | None = {}
        for group, count in groups:
            if by_bit is None or group & (group - 1):
                by_bit = None
                break
            by_bit[group] = by_bit.get(group, 0) + count
        _set(self, "groups", groups)
        _set(self, "minimum", minimum)
        _set(self, "_by_bit", by_bit)
        _set(self, "_ranked", None)

    @staticmethod
    def per_node(amounts: Mapping[int, int], minimum: int) -> Threshold:
        """A threshold over per-node amounts (``{node id: amount}``)."""
        return Threshold(tuple([(1 << n, a) for n, a in sorted(amounts.items()) if a]), minimum)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Threshold):
            return self.groups == other.groups and self.minimum == other.minimum
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.groups, self.minimum))

    def __repr__(self) -> str:
        return f"Threshold(groups={self.groups!r}, minimum={self.minimum!r})"

    def covered(self, mask: int) -> int:
        """The amount the mask holds."""
        by_bit = self._by_bit
        if by_bit is not None and mask.bit_count() < len(by_bit):
            total = 0
            while mask:
                low = mask & -mask
                total += by_bit.get(low, 0)
                mask ^= low
            return total
        total = 0
        for group, count in self.groups:
            if group & mask:
                total += count
        return total

    def holds(self, mask: int) -> bool:
        """Whether the mask holds at least ``minimum``."""
        return self.minimum <= 0 or self.covered(mask) >= self.minimum

    def _per_bit(self) -> dict[int, int]:
        # The amount each node bit adds on its own (a group counts for every node it spans).
        if self._by_bit is not None:
            return self._by_bit
        per_bit: dict[int, int] = {}
        for group, count in self.groups:
            while group:
                low = group & -group
                per_bit[low] = per_bit.get(low, 0) + count
                group ^= low
        return per_bit

    def single_nodes(self) -> int:
        """The mask of every node whose one-node mask holds ``minimum`` (``-1``: all do)."""
        minimum = self.minimum
        if minimum <= 0:
            return -1
        found = 0
        for bit, amount in self._per_bit().items():
            if amount >= minimum:
                found |= bit
        return found

    @property
    def ranked(self) -> tuple[tuple[int, int], ...]:
        """``(amount a node can add, node bit)`` per node, largest first (for upper bounds)."""
        ranked = self._ranked
        if ranked is None:
            per_bit: dict[int, int] = {}
            for group, count in self.groups:
                for bit in set_bits(group):
                    per_bit[bit] = per_bit.get(bit, 0) + count
            ranked = tuple(sorted(((a, 1 << b) for b, a in per_bit.items() if a > 0), reverse=True))
            _set(self, "_ranked", ranked)
        return ranked

    def may_reach(self, chosen: int, pool: int, picks: int) -> bool:
        """Whether ``chosen`` plus ``picks`` nodes of ``pool`` can possibly reach ``minimum``."""
        have = self.covered(chosen)
        if have >= self.minimum:
            return True
        for amount, bit in self.ranked:
            if picks == 0:
                break
            if bit & pool:
                have += amount
                picks -= 1
                if have >= self.minimum:
                    return True
        return False


class Family(_Frozen):
    """Masks within ``universe``, at least ``min_size`` wide, touching every set of ``hits``
    and meeting every threshold. Closed under adding nodes of the universe."""

    __slots__ = ("_nonempty", "hits", "min_size", "thresholds", "universe")

    universe: int
    thresholds: tuple[Threshold, ...]
    hits: tuple[int, ...]
    min_size: int
    _nonempty: bool | None

    def __init__(
        self,
        universe: int,
        thresholds: tuple[Threshold, ...] = (),
        hits: tuple[int, ...] = (),
        min_size: int = 1,
    ) -> None:
        _set(self, "universe", universe)
        _set(self, "thresholds", thresholds)
        _set(self, "hits", hits)
        _set(self, "min_size", min_size)
        _set(self, "_nonempty", None)

    def _key(self) -> tuple[int, tuple[Threshold, ...], tuple[int, ...], int]:
        return (self.universe, self.thresholds, self.hits, self.min_size)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Family):
            return self._key() == other._key()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"Family(universe={self.universe!r}, thresholds={self.thresholds!r}, "
            f"hits={self.hits!r}, min_size={self.min_size!r})"
        )

    def contains(self, mask: int) -> bool:
        """Whether ``mask`` is a member."""
        if mask & ~self.universe or mask.bit_count() < max(self.min_size, 1):
            return False
        for hit in self.hits:
            if not hit & mask:
                return False
        return all(t.holds(mask) for t in self.thresholds)

    @property
    def nonempty(self) -> bool:
        """Whether any member exists (the universe itself is the widest candidate)."""
        nonempty = self._nonempty
        if nonempty is None:
            nonempty = self.contains(self.universe)
            _set(self, "_nonempty", nonempty)
        return nonempty

    def single_nodes(self) -> int:
        """The mask of every node ``n`` whose one-node mask ``{n}`` is a member."""
        if self.min_size > 1:
            return 0
        found = self.universe
        for hit in self.hits:
            found &= hit
        for threshold in self.thresholds:
            if not found:
                break
            found &= threshold.single_nodes()
        return found

    def may_extend(self, chosen: int, pool: int, picks: int) -> bool:
        """Whether some member is ``chosen`` plus exactly ``picks`` nodes of ``pool``."""
        if chosen & ~self.universe or not self.nonempty:
            return False
        pool &= self.universe & ~chosen
        if pool.bit_count() < picks or chosen.bit_count() + picks < max(self.min_size, 1):
            return False
        # Every hit the chosen nodes miss needs a picked node of its own -- unless hits
        # overlap: a device on nodes {0, 1} and one on {0} are both met by node 0. So count
        # only unmet hits that share no pool node with one counted before: those pairwise
        # disjoint hits need distinct picks whatever the choice (a lower bound, never more).
        needed = 0
        claimed = 0
        for hit in self.hits:
            if not hit & chosen:
                reachable = hit & pool
                if not reachable:
                    return False
                if not reachable & claimed:
                    needed += 1
                    claimed |= reachable
        if needed > picks:
            return False
        return all(t.may_reach(chosen, pool, picks) for t in self.thresholds)


def family_has_width(family: Family, universe: int, width: int) -> bool:
    """Whether the family has a member exactly ``width`` wide (depth-first, pruned)."""
    nodes = set_bits(universe & family.universe)
    prefix = [0]
    for bit in nodes:
        prefix.append(prefix[-1] | 1 << bit)

    def walk(chosen: int, picks: int, limit: int) -> bool:
        if picks == 0:
            return family.contains(chosen)
        for index in range(picks - 1, limit):
            step = chosen | 1 << nodes[index]
            if family.may_extend(step, prefix[index], picks - 1) and walk(step, picks - 1, index):
                return True
        return False

    return family.may_extend(0, prefix[len(nodes)], width) and walk(0, width, len(nodes))


def masks_of_width(nodes: Sequence[int], width: int) -> Iterator[int]:
    """Every mask of exactly ``width`` of ``nodes``, in ascending value."""

    # The highest node first, then the rest below it.
    def walk(chosen: int, picks: int, limit: int) -> Iterator[int]:
        if picks == 0:
            yield chosen
            return
        for index in range(picks - 1, limit):
            yield from walk(chosen | 1 << nodes[index], picks - 1, index)

    yield from walk(0, width, len(nodes))


def min_width_meeting(
    node_ids: Sequence[int], thresholds: Sequence[Threshold], default: int
) -> int:
    """Width of the narrowest mask of ``node_ids`` meeting every threshold, else ``default``.

    This is the "minimum affinity size" every provider prefers: computed over all masks, so it
    reflects capacity, not what is free.
    """
    key = (tuple(node_ids), tuple(thresholds), default)
    found = _MIN_WIDTHS.get(key)
    if found is None:
        found = _MIN_WIDTHS.put(key, _min_width_meeting(*key))
    return found


class RuleMemo(dict[K, V]):
    """A bounded memo from the values a hint rule is built from to what is built from them.

    Sound because of what callers key it on: every input the stored value depends on, as plain
    values (ints, tuples of ints, ``Threshold``s compared by their groups and minimum), never an
    object identity, so an equal key means an equal answer whichever node or admission asks.
    Stored values are immutable (a ``StructuredHints`` only fills memos of functions of itself),
    so handing one out again is safe. Read with ``get`` (a plain dict look-up: these sit on
    every admission's path); store with ``put``, which starts afresh when ``limit`` entries are
    stored.
    """

    def __init__(self, name: str, limit: int) -> None:
        super().__init__()
        #: What the memo holds, for people reading a profile or a debugger.
        self.name = name
        self.limit = limit

    def put(self, key: K, value: V) -> V:
        """Store ``value`` for ``key`` and return it."""
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value


#: Narrowest widths by (node ids, capacity thresholds, default): capacity thresholds repeat
#: from admission to admission (the same request sizes on the same machine).
_MIN_WIDTHS: RuleMemo[tuple[tuple[int, ...], tuple[Threshold, ...], int], int] = RuleMemo(
    "narrowest widths meeting capacity thresholds", 4096
)


def _min_width_meeting(
    node_ids: tuple[int, ...], thresholds: tuple[Threshold, ...], default: int
) -> int:
    universe = mask_of(node_ids)
    family = Family(universe, tuple(thresholds))
    if not family.nonempty:
        return default
    for width in range(1, universe.bit_count() + 1):
        if family_has_width(family, universe, width):
            return min(width, default)
    return default
