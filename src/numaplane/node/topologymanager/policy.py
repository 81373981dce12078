"""The hint merge shared by every policy that merges (upstream ``policy.go``).

Steps, in upstream order:

1. ``filter_providers_hints`` turns each provider's answer into per-resource hint lists, keeping
   the three "empty" shapes apart: a ``None``/empty map and a resource mapped to ``None`` mean
   "no preference" (``{any, preferred}``), a resource mapped to ``[]`` means "no possible
   placement" (``{any, not preferred}``).
2. ``HintMerger.merge`` walks the full cross product of those lists (first list outermost),
   merges each permutation (``merge_permutation``) and keeps the best candidate according to
   ``HintMerger.compare``, whose mask tie-break is ``HintMerger.fitter``.
3. Nothing accepted (no permutation, or only empty masks) gives ``{all nodes, not preferred}``.

``compare`` is a pure function of the two candidates' values, so the exhaustive walk memoises
its verdicts; the walk itself stays exhaustive and in upstream order.

Hook for ``prefer-most-allocated-numa-node`` (see ``numa_utilization``):
``HintMerger.merge_with_single_numa_ties`` returns, besides the unchanged merge result, the
NUMA ids of every distinct *preferred single-node* merged candidate. The single-numa-node
policy breaks a tie among two or more of them with ``numa_utilization.break_tie``; the merge
itself (``compare``/``fitter``) never looks at utilization (pairwise, the tie rule would depend
on the walk order). A faster merge path can reuse the hook by returning the same pair: its best
hint, and the preferred single-node candidates it saw (for ``single-numa-node``: each node that
every resource's filtered list allows, through a hint naming it or an "any" hint).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final, Protocol, TypeAlias

from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.node.topologymanager.hint_sets import StructuredHints
from numaplane.node.topologymanager.merge_search import MergeSearch
from numaplane.node.topologymanager.numa_info import NUMAInfo
from numaplane.node.topologymanager.policy_options import PolicyOptions

POLICY_NONE: Final = "none"
POLICY_BEST_EFFORT: Final = "best-effort"
POLICY_RESTRICTED: Final = "restricted"
POLICY_SINGLE_NUMA_NODE: Final = "single-numa-node"

USE_MERGE_SEARCH = True
"""Merge by ordered search (``merge_search``); ``False`` walks the cross product (reference)."""

FilteredHints: TypeAlias = list[Sequence[TopologyHint]]
"""One hint list per (provider, resource) after filtering."""

_ANY_PREFERRED: Final = TopologyHint(None, True)
_ANY_NOT_PREFERRED: Final = TopologyHint(None, False)


class Policy(Protocol):
    """A Topology Manager policy: a stateless merge plus its admission rule."""

    @property
    def name(self) -> str:
        """The policy's configuration string (``best-effort``, ...)."""
        ...

    def merge(self, providers_hints: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]:
        """The merged hint of every provider's hints, and whether the pod may be admitted."""
        ...

    def can_admit(self, hint: TopologyHint) -> bool:
        """Whether a merged hint satisfies the policy (upstream ``canAdmitPodResult``)."""
        ...


def is_alignment_guaranteed(policy: Policy) -> bool:
    """Upstream ``IsAlignmentGuaranteed``: only ``single-numa-node`` guarantees alignment."""
    return policy.name == POLICY_SINGLE_NUMA_NODE


def filter_providers_hints(providers_hints: Sequence[ProviderHints]) -> FilteredHints:
    """Per-resource hint lists from every provider (upstream ``filterProvidersHints``)."""
    filtered: FilteredHints = []
    for hints in providers_hints:
        if not hints:
            filtered.append([_ANY_PREFERRED])
            continue
        for resource_hints in hints.values():
            if resource_hints is None:
                filtered.append([_ANY_PREFERRED])
            elif isinstance(resource_hints, StructuredHints):
                # Rule-based lists stay rules (listing them is what the merge search avoids).
                filtered.append(resource_hints if resource_hints else [_ANY_NOT_PREFERRED])
            elif len(resource_hints) == 0:
                filtered.append([_ANY_NOT_PREFERRED])
            else:
                filtered.append(list(resource_hints))
    return filtered


def merge_permutation(
    default_affinity: BitMask, permutation: Sequence[TopologyHint]
) -> TopologyHint:
    """AND of the permutation's masks; preferred only if all are preferred and masks agree.

    ``None`` masks are "don't care". A permutation whose non-nil masks differ (``{0}`` and
    ``{0,1}``) is never preferred, even though their AND is ``{0}``.
    """
    value = default_affinity.value
    first: int | None = None
    preferred = True
    for hint in permutation:
        if hint.numa_affinity is not None:
            mask = hint.numa_affinity.value
            value &= mask
            if first is None:
                first = mask
            elif mask != first:
                preferred = False
        if not hint.preferred:
            preferred = False
    return TopologyHint(BitMask.from_int(value), preferred)


def max_of_min_affinity_counts(filtered_hints: Sequence[Sequence[TopologyHint]]) -> int:
    """The widest of the per-resource narrowest masks (upstream ``maxOfMinAffinityCounts``)."""
    best = 0
    for resource_hints in filtered_hints:
        if isinstance(resource_hints, StructuredHints):
            best = max(best, resource_hints.min_count())
            continue
        narrowest: BitMask | None = None
        for hint in resource_hints:
            mask = hint.numa_affinity
            if mask is None:
                continue
            if narrowest is None or mask.is_narrower_than(narrowest):
                narrowest = mask
        if narrowest is not None and narrowest.count() > best:
            best = narrowest.count()
    return best


def iterate_permutations(
    filtered_hints: Sequence[Sequence[TopologyHint]],
) -> Iterator[list[TopologyHint]]:
    """Every permutation of the cross product, first list outermost (upstream order)."""
    from itertools import product

    for combo in product(*filtered_hints):
        yield list(combo)


def _is_single_node(value: int) -> bool:
    return value != 0 and value & (value - 1) == 0


def _mask(hint: TopologyHint) -> BitMask:
    # Merged hints always carry a mask; a missing one counts as empty (never chosen).
    return hint.numa_affinity if hint.numa_affinity is not None else BitMask()


class HintMerger:
    """The candidate walk and comparison of upstream's ``HintMerger``.

    ``best_non_preferred_affinity_count`` defaults to ``max_of_min_affinity_counts(hints)``;
    it can be given to exercise ``compare`` alone.
    """

    def __init__(
        self,
        numa_info: NUMAInfo,
        hints: Sequence[Sequence[TopologyHint]],
        policy_name: str,
        options: PolicyOptions,
        best_non_preferred_affinity_count: int | None = None,
    ) -> None:
        self.numa_info = numa_info
        self.hints = hints
        self.policy_name = policy_name
        self.options = options
        self.best_non_preferred_affinity_count = (
            max_of_min_affinity_counts(hints)
            if best_non_preferred_affinity_count is None
            else best_non_preferred_affinity_count
        )
        # Closest only where the option is on and the policy is not single-numa-node.
        self._use_closest = policy_name != POLICY_SINGLE_NUMA_NODE and options.prefer_closest_numa

    def fitter(self, current: TopologyHint, candidate: TopologyHint) -> TopologyHint:
        """Between two hints of equal standing, the one with the better mask; ties keep current.

        Upstream ``CompareNUMAAffinityMasks``: ``Closest`` when prefer-closest-numa-nodes
        applies, else ``Narrowest``.
        """
        cur, cand = _mask(current), _mask(candidate)
        if cur == cand:
            return current
        if self._use_closest:
            best = self.numa_info.closest(cur, cand)
        else:
            best = self.numa_info.narrowest(cur, cand)
        return current if best == cur else candidate

    def compare(self, current: TopologyHint | None, candidate: TopologyHint) -> TopologyHint | None:
        """The better of the best hint so far and a candidate (upstream ``compare``).

        Preferred beats non-preferred. Among non-preferred hints, with ``B`` the widest
        per-resource minimum, a width as close as possible to ``B`` without exceeding it wins.
        """
        k = _mask(candidate).count()
        if k == 0:
            return current
        if current is None:
            return candidate
        if not current.preferred and candidate.preferred:
            return candidate
        if current.preferred and not candidate.preferred:
            return current
        if current.preferred and candidate.preferred:
            return self.fitter(current, candidate)
        b = self.best_non_preferred_affinity_count
        c = _mask(current).count()
        if c > b:
            return self.fitter(current, candidate)
        if c == b:
            return self.fitter(current, candidate) if k == b else current
        if k > b:
            return current
        if k == b:
            return candidate
        if k > c:
            return candidate
        if k < c:
            return current
        return self.fitter(current, candidate)

    def merge(self) -> TopologyHint:
        """The best merged hint over the full cross product (upstream ``HintMerger.Merge``)."""
        return self._merge(None)

    def merge_with_single_numa_ties(self) -> tuple[TopologyHint, tuple[int, ...]]:
        """``merge()``, and the NUMA ids (ascending) of every distinct preferred merged
        candidate whose mask is a single node: the candidates a utilization tie-break chooses
        among. When any exists the merge result is one of them (preferred beats non-preferred,
        and one node is the narrowest mask); under ``Narrowest`` it is the lowest.
        """
        ties: set[int] = set()
        best = self._merge(ties)
        return best, tuple(sorted(ties))

    def _merge(self, single_numa_ties: set[int] | None) -> TopologyHint:
        default = self.numa_info.default_affinity
        if USE_MERGE_SEARCH:
            search = MergeSearch(
                self.numa_info,
                self.hints,
                self._use_closest,
                self.best_non_preferred_affinity_count,
            )
            found = search.run()
            if found is not None:
                if single_numa_ties is not None:
                    single_numa_ties.update(search.preferred_single_nodes())
                return found
        best: TopologyHint | None = None
        best_key: tuple[int, bool] | None = None
        hints_by_key: dict[tuple[int, bool], TopologyHint] = {}
        verdicts: dict[tuple[tuple[int, bool] | None, tuple[int, bool]], bool] = {}
        for key in _merged_candidates(default.value, self.hints):
            if single_numa_ties is not None and key[1] and _is_single_node(key[0]):
                single_numa_ties.add(key[0].bit_length() - 1)
            if key == best_key or key[0] == 0:
                # compare keeps the current hint for an equal or an empty candidate.
                continue
            pair = (best_key, key)
            wins = verdicts.get(pair)
            candidate = hints_by_key.get(key)
            if candidate is None:
                candidate = TopologyHint(BitMask.from_int(key[0]), key[1])
                hints_by_key[key] = candidate
            if wins is None:
                wins = self.compare(best, candidate) is candidate
                verdicts[pair] = wins
            if wins:
                best, best_key = candidate, key
        if best is None:
            return TopologyHint(default, False)
        return best


def _merged_candidates(
    default: int, hints: Sequence[Sequence[TopologyHint]]
) -> Iterator[tuple[int, bool]]:
    """``(mask value, preferred)`` of ``merge_permutation`` for every permutation, in order.

    A depth-first walk that carries the partial AND, the first non-nil mask and the running
    preference, so each permutation costs O(1) at the leaves. Permutations whose AND is already
    empty are left out (whole subtrees at once): ``compare`` never accepts an empty mask.
    """
    lists = [
        [(None if h.numa_affinity is None else h.numa_affinity.value, h.preferred) for h in hs]
        for hs in hints
    ]
    depth = len(lists)
    if depth == 0:
        yield (default, True)
        return

    def walk(i: int, acc: int, first: int | None, preferred: bool) -> Iterator[tuple[int, bool]]:
        last = i + 1 == depth
        for value, pref in lists[i]:
            a, f, p = acc, first, preferred and pref
            if value is not None:
                a &= value
                if f is None:
                    f = value
                elif value != f:
                    p = False
                if a == 0:
                    continue
            if last:
                yield (a, p)
            else:
                yield from walk(i + 1, a, f, p)

    yield from walk(0, default, None, True)
