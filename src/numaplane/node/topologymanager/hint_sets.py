"""Hint lists described by a rule instead of listed mask by mask.

Every hint provider answers "each NUMA mask that can hold the request", which is up to
``2**n - 1`` masks. Those answers share a shape: a mask is a hint when it lies in a universe of
nodes, meets every capacity threshold (a sum of counts over the nodes or node groups it touches)
and touches every node set it must touch (reusable CPUs or devices). Such a set is closed under
adding nodes of the universe, so it is described by the rule alone: a ``Family``. A provider's
answer is a ``StructuredHints``: some families, some individually checked masks (``extras``)
and the preference rule (a mask is preferred when its width equals the provider's minimum
width, or, for CPUs aligned by socket, when it spans the fewest sockets).

``StructuredHints`` is a ``Sequence[TopologyHint]`` whose items, when someone asks for them,
are exactly the list the exhaustive definition builds (same masks, same order, same flags), so
code that iterates hints sees no difference. The merge (``merge_search``) never iterates: it
asks membership and bounds.

It is the one representation the engine works on. A provider may still answer with a plain
list (upstream's shape: regenerated hints, test inputs, conformance vectors); ``hint_set_of``
turns such a list into a *listed* ``StructuredHints`` that keeps the hints exactly as given
(order, duplicates, "any" hints) and answers the same queries, so nothing past that one
conversion asks which kind it holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Final, overload

from numaplane.cpuset import set_bits
from numaplane.node.topologymanager.bitmask import BitMask, bit_mask_subsets
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.node.topologymanager.hint_rules import (
    Family,
    family_has_width,
    mask_of,
    masks_of_width,
)

#: Above this many NUMA nodes an explanation summarises a rule-based hint list.
SUMMARY_NODE_LIMIT = 8


_NO_EXTRAS: frozenset[int] = frozenset()


class StructuredHints(Sequence[TopologyHint]):
    """A provider's hint list given by rule: ``families``, ``extras`` and a preference rule.

    ``node_ids`` is the order the exhaustive definition visits masks in (``bit_mask_subsets``);
    the materialised list (indexing, iteration, ``len``) follows it exactly. A listed set
    (``listed``) has no rule: ``listed_hints`` holds the hints as given.

    The fields are fixed at construction. The ``_``-prefixed slots are memos of values derived
    from them (the list view, the narrowest width, the single-node hints), filled on first use:
    rules are shared between admissions, so each is computed once per rule.
    """

    __slots__ = (
        "_extras_by_width",
        "_items",
        "_min_count",
        "_single",
        "_single_mask",
        "_single_shape",
        "aligned",
        "extras",
        "families",
        "listed_hints",
        "node_ids",
        "preferred_width",
        "universe",
    )

    def __init__(
        self,
        node_ids: Sequence[int],
        families: Sequence[Family],
        extras: Sequence[int] = (),
        preferred_width: int = 0,
        aligned: Callable[[int], bool] | None = None,
    ) -> None:
        self.node_ids = node_ids = tuple(node_ids)
        #: Every node a hint may name.
        self.universe = universe = mask_of(node_ids)
        self.families = tuple([f for f in families if f.nonempty])
        self.extras = (
            frozenset([e for e in extras if e and not e & ~universe]) if extras else _NO_EXTRAS
        )
        self.preferred_width = preferred_width
        self.aligned = aligned
        #: The hints as a provider listed them (``listed``); ``None`` for a rule.
        self.listed_hints: tuple[TopologyHint, ...] | None = None
        self._items: tuple[TopologyHint, ...] | None = None
        self._min_count: int | None = None
        self._single: StructuredHints | None = None
        self._single_shape: tuple[bool, int] | None = None
        self._single_mask: int | None = None
        # Built on first use: only the merge search and best-hint walks ask by width.
        self._extras_by_width: dict[int, list[int]] | None = None

    @classmethod
    def listed(cls, hints: Sequence[TopologyHint]) -> StructuredHints:
        """The hints a provider listed, kept as given (order, duplicates, "any" hints)."""
        found = cls((), ())
        found.listed_hints = found._items = tuple(hints)
        return found

    # -- rule queries ------------------------------------------------------------------------

    def contains(self, mask: int) -> bool:
        """Whether ``mask`` is one of the hints."""
        return mask in self.extras or any(f.contains(mask) for f in self.families)

    def preferred(self, mask: int) -> bool:
        """The preferred flag a hint with this mask carries."""
        if mask.bit_count() == self.preferred_width:
            return True
        return self.aligned is not None and self.aligned(mask)

    def single_nodes(self) -> int:
        """The mask of every node ``n`` whose one-node mask ``{n}`` is a hint."""
        found = 0
        for extra in self.extras:
            if not extra & (extra - 1):
                found |= extra
        for family in self.families:
            found |= family.single_nodes()
        return found

    def preferred_single_nodes(self) -> int:
        """The mask of every node ``n`` whose one-node hint ``{n}`` is preferred: the hints
        ``single-numa-node`` keeps (``single_node_preferred`` lists them)."""
        found = self._single_mask
        if found is None:
            found = self._single_mask = self._preferred_single_nodes()
        return found

    def _preferred_single_nodes(self) -> int:
        # ``{n}`` is preferred when one node is the preferred width, else only if socket-aligned.
        by_width = self.preferred_width == 1
        aligned = self.aligned
        if not by_width and aligned is None:
            return 0
        members = self.single_nodes() & self.universe
        if by_width or not members or aligned is None:
            return members
        return mask_of(n for n in set_bits(members) if aligned(1 << n))

    def _by_width(self) -> dict[int, list[int]]:
        by_width = self._extras_by_width
        if by_width is None:
            by_width = self._extras_by_width = {}
            for extra in sorted(self.extras):
                by_width.setdefault(extra.bit_count(), []).append(extra)
        return by_width

    def may_extend(self, chosen: int, pool: int, picks: int) -> bool:
        """Whether some hint is ``chosen`` plus exactly ``picks`` nodes of ``pool``."""
        within = chosen | pool
        if self.extras:
            for extra in self._by_width().get(chosen.bit_count() + picks, ()):
                if extra & chosen == chosen and not extra & ~within:
                    return True
        return any(f.may_extend(chosen, pool, picks) for f in self.families)

    def has_superset(self, mask: int) -> bool:
        """Whether some hint contains every node of ``mask``."""
        for family in self.families:
            if not mask & ~family.universe:
                return True
        for _ in self.extras_containing(mask):
            return True
        return False

    def extras_containing(self, mask: int) -> Iterator[int]:
        """The extras holding every node of ``mask`` (only those at least as wide can)."""
        width = mask.bit_count()
        for extra_width, extras in self._by_width().items():
            if extra_width >= width:
                for extra in extras:
                    if extra & mask == mask:
                        yield extra

    def is_empty(self) -> bool:
        """Whether there is no hint at all."""
        if self.listed_hints is not None:
            return not self.listed_hints
        return not self.extras and not self.families

    def min_count(self) -> int:
        """Width of the narrowest hint (0 when there is none)."""
        if self._min_count is None:
            self._min_count = self._find_min_count()
        return self._min_count

    def _find_min_count(self) -> int:
        if self.listed_hints is not None:
            # Upstream's narrowest listed mask ("any" hints name no mask).
            return min(
                (h.numa_affinity.count() for h in self.listed_hints if h.numa_affinity is not None),
                default=0,
            )
        best = min((e.bit_count() for e in self.extras), default=0)
        universe = self.universe
        limit = best - 1 if best else universe.bit_count()
        for width in range(1, limit + 1):
            for family in self.families:
                if family_has_width(family, universe, width):
                    return width
        return best

    # -- the list view -----------------------------------------------------------------------

    def materialize(self) -> tuple[TopologyHint, ...]:
        """The exhaustive list: every hint in ``bit_mask_subsets`` order with its flag.

        A tuple: rules are cached and shared between admissions (and nodes), so what they hand
        out must not be editable."""
        if self._items is None:
            items: list[TopologyHint] = []
            for mask in bit_mask_subsets(self.node_ids):
                value = mask.value
                if self.contains(value):
                    items.append(TopologyHint(mask, self.preferred(value)))
            self._items = tuple(items)
        return self._items

    @overload
    def __getitem__(self, index: int) -> TopologyHint: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[TopologyHint]: ...

    def __getitem__(self, index: int | slice) -> TopologyHint | Sequence[TopologyHint]:
        return self.materialize()[index]

    def __len__(self) -> int:
        return len(self.materialize())

    def __iter__(self) -> Iterator[TopologyHint]:
        return iter(self.materialize())

    def __bool__(self) -> bool:
        return not self.is_empty()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (StructuredHints, list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"StructuredHints(nodes={len(self.node_ids)}, {self.summary()})"

    # -- explanations ------------------------------------------------------------------------

    def is_large(self) -> bool:
        """Whether explanations should summarise rather than list (never a listed set)."""
        return len(self.node_ids) > SUMMARY_NODE_LIMIT

    def narrowest(self, limit: int = 4) -> list[TopologyHint]:
        """Up to ``limit`` narrowest hints (fewest nodes, then smallest mask value)."""
        found: list[TopologyHint] = []
        universe = self.universe
        nodes = set_bits(universe)
        width = self.min_count()
        while width and width <= len(nodes) and len(found) < limit:
            for value in masks_of_width(nodes, width):
                if self.contains(value):
                    found.append(TopologyHint(BitMask.from_int(value), self.preferred(value)))
                    if len(found) == limit:
                        break
            width += 1
        return found

    def summary(self) -> str:
        """A one-line description: the narrowest width and the narrowest hints."""
        if self.is_empty():
            return "no hints"
        shown = " ".join(str(h) for h in self.narrowest())
        widths = f"narrowest width {self.min_count()}, preferred width {self.preferred_width}"
        return f"{widths}: {shown} ..."

    def summary_json(self) -> dict[str, object]:
        """The summary as JSON: ``{"summary": true, "nodes", "narrowest_width", ...}``."""
        return {
            "summary": True,
            "nodes": len(self.node_ids),
            "narrowest_width": self.min_count(),
            "preferred_width": self.preferred_width,
            "narrowest": [h.to_json() for h in self.narrowest()],
        }

    # -- single-numa-node ----------------------------------------------------------------------

    def single_node_preferred(self) -> StructuredHints:
        """The hints ``single-numa-node`` keeps, as a listed set: the preferred hints that are
        "any" or name one node, in list order (upstream ``filterSingleNumaHints``)."""
        single = self._single
        if single is None:
            if self.listed_hints is not None:
                kept = [
                    h
                    for h in self.listed_hints
                    if h.preferred and (h.numa_affinity is None or h.numa_affinity.count() == 1)
                ]
            else:
                # Providers share one rule between resources (memory and its hugepages).
                nodes = self.preferred_single_nodes()
                kept = [
                    _SINGLE_NODE_HINTS[n] for n in self.node_ids if 0 <= n < 64 and nodes >> n & 1
                ]
            single = self._single = StructuredHints.listed(kept)
        return single

    def single_node_shape(self) -> tuple[bool, int] | None:
        """For a listed set whose hints are all preferred and each "any" or one node (what
        ``single-numa-node`` leaves): whether it holds "any", and the mask of the nodes it
        names. ``None`` for any other set."""
        listed = self.listed_hints
        if listed is None:
            return None
        shape = self._single_shape
        if shape is None:
            has_any = False
            singles = 0
            for hint in listed:
                mask = hint.numa_affinity
                if not hint.preferred:
                    return None
                if mask is None:
                    has_any = True
                elif mask.count() != 1:
                    return None
                else:
                    singles |= mask.value
            shape = self._single_shape = (has_any, singles)
        return shape


# Hints are immutable values: one preferred hint per node serves every admission.
_SINGLE_NODE_HINTS: Final = tuple(TopologyHint(BitMask(n), True) for n in range(64))


def single_node_hint(node: int) -> TopologyHint:
    """The preferred hint naming only ``node`` (0-63; one shared value per node)."""
    return _SINGLE_NODE_HINTS[node]


def hint_set_of(hints: Sequence[TopologyHint]) -> StructuredHints:
    """A provider's hint list as the engine's one representation: a rule stays itself, a
    plain list becomes a listed set (the only place that asks which kind a list is)."""
    if isinstance(hints, StructuredHints):
        return hints
    return StructuredHints.listed(hints)


#: ``{any, preferred}``: what "no preference" becomes after filtering.
ANY_PREFERRED: Final = StructuredHints.listed((TopologyHint(None, True),))
#: ``{any, not preferred}``: what "no possible placement" becomes after filtering.
ANY_NOT_PREFERRED: Final = StructuredHints.listed((TopologyHint(None, False),))
