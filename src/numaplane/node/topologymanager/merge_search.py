"""The hint merge as an ordered search instead of a walk over the cross product.

``HintMerger.compare`` is a total order on distinct ``(mask, preferred)`` candidates:

* preferred beats non-preferred;
* among preferred, the ``fitter`` order: fewer nodes, then (prefer-closest) smaller average
  distance, then smaller mask value;
* among non-preferred, with ``B`` the widest per-resource narrowest width: width ``B`` first,
  then widths below ``B`` widest first, then widths above ``B`` narrowest first; the ``fitter``
  order within a width.

Equal candidates keep the current one, and equal candidates are equal values, so the merge's
result is the maximum of the set of merged candidates whatever order they are met in. That set
is searched here width by width in that order, masks of one width in ``fitter`` order, pruning
prefixes no candidate can extend; the first (or, for average distances, the best) mask that is
a candidate wins.

* A preferred candidate with mask ``m``: every list holds ``(m, preferred)`` or a preferred
  "any" hint (all non-nil masks of a preferred permutation are equal).
* Any candidate ``m`` (used only when none is preferred): there are hints, one per list, whose
  masks AND to ``m``. With rule-based lists (``Family``: closed under adding nodes) that is a
  cover problem: the nodes outside ``m`` must be shared out among the lists so that each list
  still holds its mask without the nodes it took.

How a list is read (listed sets as ``ExplicitHints``, rules directly) and the cover test are in
``merge_lists``. When every list is what ``single-numa-node`` leaves after its filter (preferred
hints, each "any" or one node), the candidates are read off per node instead of searched
(``merge_single_node.fold_single_nodes``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import product

from numaplane.cpuset import set_bits
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.node.topologymanager.hint_rules import Family
from numaplane.node.topologymanager.hint_sets import StructuredHints
from numaplane.node.topologymanager.merge_lists import (
    ExplicitHints,
    HintList,
    cover,
    indexed,
    is_empty,
    minimal_masks,
)
from numaplane.node.topologymanager.numa_info import NUMAInfo

Prefix = Callable[[int, int, int], bool]
"""(chosen nodes, nodes still free to pick, picks left) -> whether a candidate may follow."""


@dataclass(frozen=True, slots=True)
class Merged:
    """A merge's result and, when asked for, the NUMA ids (ascending) of every distinct
    preferred merged candidate naming one node: the candidates a utilization tie-break chooses
    among. When any exists the hint is one of them (preferred beats non-preferred, and one node
    is the narrowest mask); under ``Narrowest`` it is the lowest."""

    hint: TopologyHint
    single_node_ties: tuple[int, ...] = ()


class MergeSearch:
    """The ordered search for one merge (see the module doc)."""

    def __init__(
        self,
        numa_info: NUMAInfo,
        hints: Sequence[StructuredHints],
        use_closest: bool,
        best_non_preferred_count: int,
    ) -> None:
        self.numa_info = numa_info
        self.default = default = numa_info.default_affinity.value
        self.use_closest = use_closest
        self.b = best_non_preferred_count
        self.lists: list[HintList] = [indexed(h, default) for h in hints]
        self._distance_rows = _dense_rows(numa_info, self.default) if use_closest else None
        # Per family (by its place in ``lists``): the nodes it can drop one at a time.
        self._droppable: dict[tuple[int, int], int] = {}

    # -- entry -------------------------------------------------------------------------------

    def run(self, with_ties: bool = False) -> Merged:
        """The merged hint; with ``with_ties`` the preferred single-node candidates too."""
        default = self.default
        if default == 0:
            # No node: every merged mask is empty, and compare never accepts an empty mask.
            return Merged(TopologyHint(BitMask.from_int(0), False))
        if not self.lists:
            return Merged(TopologyHint(BitMask.from_int(default), True))
        if any(is_empty(h) for h in self.lists):
            return Merged(TopologyHint(BitMask.from_int(default), False))
        best = self._best_preferred()
        ties = tuple(sorted(self.preferred_single_nodes())) if with_ties else ()
        if best is not None:
            return Merged(TopologyHint(BitMask.from_int(best), True), ties)
        best = self._best_non_preferred()
        return Merged(
            TopologyHint(BitMask.from_int(default if best is None else best), False), ties
        )

    # -- ordering ----------------------------------------------------------------------------

    def _key(self, mask: int) -> tuple[int, float, int]:
        distance = self.numa_info.average_distance(BitMask.from_int(mask))
        return (mask.bit_count(), distance if self.use_closest else 0.0, mask)

    def _best_of(self, masks: set[int]) -> int | None:
        masks.discard(0)
        if not masks:
            return None
        if not self.use_closest:
            return min(masks, key=lambda m: (m.bit_count(), m))
        return min(masks, key=self._key)

    # -- preferred candidates ----------------------------------------------------------------

    def _accepts_preferred(self, hints: HintList, mask: int) -> bool:
        if isinstance(hints, ExplicitHints):
            return hints.accepts_preferred(mask)
        return hints.contains(mask) and hints.preferred(mask)

    def _listed_preferred(self) -> set[int] | None:
        """Every preferred candidate's mask when a list bounds them; ``None`` when only rules
        bound them (then they are searched)."""
        default = self.default
        explicit = [h for h in self.lists if isinstance(h, ExplicitHints)]
        strict = [h for h in explicit if not h.nil_preferred]
        if strict:
            # Every list must use the same mask: one from this list's preferred hints.
            return {
                m & default
                for m in strict[0].preferred_masks
                if all(self._accepts_preferred(h, m) for h in self.lists)
            }
        if len(explicit) < len(self.lists):
            return None
        # Every list has a preferred "any": all "any", or one mask with "any" elsewhere.
        return {default} | {m & default for h in explicit for m in h.preferred_masks}

    def _best_preferred(self) -> int | None:
        listed = self._listed_preferred()
        if listed is not None:
            return self._best_of(listed)
        structured = [h for h in self.lists if isinstance(h, StructuredHints)]
        return self._search_structured_preferred(structured)

    def preferred_single_nodes(self) -> set[int]:
        """NUMA ids of every distinct preferred candidate naming exactly one node."""
        listed = self._listed_preferred()
        if listed is None:
            listed = {
                1 << n
                for n in set_bits(self.default)
                if all(self._accepts_preferred(h, 1 << n) for h in self.lists)
            }
        return {m.bit_length() - 1 for m in listed if m and not m & (m - 1)}

    def _search_structured_preferred(self, structured: list[StructuredHints]) -> int | None:
        allowed = self.default
        for s in structured:
            allowed &= s.universe
        widths = {s.preferred_width for s in structured if s.aligned is None}
        if len(widths) > 1:
            return None
        candidates = sorted(widths) if widths else range(1, allowed.bit_count() + 1)

        def prefix(chosen: int, pool: int, picks: int) -> bool:
            return all(s.may_extend(chosen, pool, picks) for s in structured)

        def leaf(mask: int) -> bool:
            return all(s.contains(mask) and s.preferred(mask) for s in structured)

        for width in candidates:
            found = self.search_width(width, allowed, prefix, leaf)
            if found is not None:
                return found
        return None

    # -- non-preferred candidates ------------------------------------------------------------

    def _best_non_preferred(self) -> int | None:
        n = self.default.bit_count()
        b = self.b
        order = list(range(min(b, n), 0, -1)) + list(range(max(b, 0) + 1, n + 1))

        default = self.default

        def prefix(chosen: int, pool: int, picks: int) -> bool:
            # Every node left out must be left out by some list's hint, and every list needs a
            # hint holding the chosen nodes.
            outside = default & ~(chosen | pool)
            for index, hints in enumerate(self.lists):
                if not hints.has_superset(chosen):
                    return False
                if outside:
                    outside &= ~self._excludable(index, hints, chosen)
            return not outside

        for width in order:
            found = self.search_width(width, self.default, prefix, self.achievable)
            if found is not None:
                return found
        return None

    def _excludable(self, index: int, hints: HintList, chosen: int) -> int:
        """Nodes some hint of ``hints`` holding ``chosen`` can leave out (each on its own)."""
        default = self.default
        if isinstance(hints, ExplicitHints):
            out = 0
            for v in hints.merged:
                if v & chosen == chosen:
                    out |= default & ~v
            return out
        out = 0
        for extra in hints.extras_containing(chosen):
            out |= default & ~extra
        for place, family in enumerate(hints.families):
            if not chosen & ~family.universe:
                droppable = self._droppable_nodes(index, place, family)
                out |= (default & ~family.universe) | (droppable & ~chosen)
        return out

    def _droppable_nodes(self, index: int, place: int, family: Family) -> int:
        # Keyed by where the family sits (which list, which family): the lists do not change
        # during one search, and the key costs nothing to hash (a family's hash hashes every
        # threshold).
        key = (index, place)
        found = self._droppable.get(key)
        if found is None:
            found = 0
            for bit in set_bits(family.universe):
                if family.contains(family.universe & ~(1 << bit)):
                    found |= 1 << bit
            self._droppable[key] = found
        return found

    def achievable(self, mask: int) -> bool:
        """Whether one hint per list has masks whose AND (with the machine) is ``mask``."""
        fixed: set[int] = {self.default}
        options: list[list[tuple[int, Family | None]]] = []
        for hints in self.lists:
            if isinstance(hints, ExplicitHints):
                supersets = hints.superset_options(mask)
                if not supersets:
                    return False
                fixed = minimal_masks({f & v for f in fixed for v in supersets})
                continue
            choices: list[tuple[int, Family | None]] = [
                (e, None) for e in hints.extras if e & mask == mask
            ]
            choices += [(f.universe, f) for f in hints.families if not mask & ~f.universe]
            if not choices:
                return False
            options.append(choices)
        if not options:
            return mask in fixed
        for base in fixed:
            for combo in product(*options):
                outer = base
                families: list[Family] = []
                for universe, family in combo:
                    outer &= universe
                    if family is not None:
                        families.append(family)
                need = outer & ~mask
                if not need:
                    return True
                if families and cover(need, families):
                    return True
        return False

    # -- ordered search within one width -----------------------------------------------------

    def search_width(
        self, width: int, allowed: int, prefix: Prefix, leaf: Callable[[int], bool]
    ) -> int | None:
        """The first mask of ``width`` nodes of ``allowed`` in ``fitter`` order passing ``leaf``.

        ``prefix`` prunes: it is asked whether anything may follow a partial choice.
        """
        nodes = set_bits(allowed)
        if width <= 0 or len(nodes) < width:
            return None
        pools = [0]
        for bit in nodes:
            pools.append(pools[-1] | 1 << bit)
        if not prefix(0, pools[-1], width):
            return None
        if self.use_closest:
            return self._closest_search(width, nodes, pools, prefix, leaf)

        def walk(chosen: int, picks: int, limit: int) -> int | None:
            if picks == 0:
                return chosen if leaf(chosen) else None
            # Ascending value: the highest remaining node first, the rest below it.
            for index in range(picks - 1, limit):
                step = chosen | 1 << nodes[index]
                if prefix(step, pools[index], picks - 1):
                    found = walk(step, picks - 1, index)
                    if found is not None:
                        return found
            return None

        return walk(0, width, len(nodes))

    def _closest_search(
        self,
        width: int,
        nodes: Sequence[int],
        pools: list[int],
        prefix: Prefix,
        leaf: Callable[[int], bool],
    ) -> int | None:
        rows = self._distance_rows
        scale = width * width
        low = min((min(r.values()) for r in rows.values()), default=0) if rows else 0
        best: list[object] = [None, 0.0]  # mask, average distance

        def bound(chosen: int, pool: int, picks: int) -> float:
            if rows is None:
                return float("-inf")
            chosen_bits = set_bits(chosen)
            total = sum(rows[i][j] for i in chosen_bits for j in chosen_bits)
            if picks == 0:
                return total / scale
            adds = sorted(
                rows[x][x] + sum(rows[x][c] + rows[c][x] for c in chosen_bits)
                for x in set_bits(pool)
            )
            return (total + sum(adds[:picks]) + picks * (picks - 1) * min(low, 0)) / scale

        def walk(chosen: int, picks: int, limit: int) -> None:
            if picks == 0:
                distance = self.numa_info.average_distance(BitMask.from_int(chosen))
                if best[0] is not None and not distance < best[1]:  # type: ignore[operator]
                    return
                if leaf(chosen):
                    best[0], best[1] = chosen, distance
                return
            for index in range(picks - 1, limit):
                step = chosen | 1 << nodes[index]
                if not prefix(step, pools[index], picks - 1):
                    continue
                if best[0] is not None and bound(step, pools[index], picks - 1) >= best[1]:  # type: ignore[operator]
                    continue
                walk(step, picks - 1, index)

        walk(0, width, len(nodes))
        return best[0]  # type: ignore[return-value]


def _dense_rows(numa_info: NUMAInfo, default: int) -> dict[int, dict[int, int]] | None:
    """Distances between the machine's nodes for bounds; ``None`` when any is unknown."""
    nodes = set_bits(default)
    rows: dict[int, dict[int, int]] = {}
    for i in nodes:
        row = numa_info.distances.get(i)
        if row is None or any(j >= len(row) for j in nodes):
            return None
        rows[i] = {j: row[j] for j in nodes}
    return rows


def search_merge(
    numa_info: NUMAInfo,
    hints: Sequence[StructuredHints],
    use_closest: bool,
    best_non_preferred_count: int,
    with_ties: bool = False,
) -> Merged:
    """The merge's result by ordered search (see the module doc)."""
    return MergeSearch(numa_info, hints, use_closest, best_non_preferred_count).run(with_ties)
