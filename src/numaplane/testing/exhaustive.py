"""The Topology Manager's exhaustive definition: the oracle the fast path is compared against.

Upstream walks the full cross product of every provider's hints, each hint list naming every
qualifying mask, and keeps the best permutation by ``HintMerger.compare``. numaplane's merge
searches that order instead (``topologymanager.merge_search``) and its providers answer with
rules (``StructuredHints``). This module keeps the definition, written the upstream way:

- ``HintMerger`` (``compare``, ``fitter``) and ``merge_permutation``, folded over every
  permutation in upstream order by ``exhaustive_merge``;
- ``ExhaustivePolicy``: a Topology Manager policy that lists every hint and merges by that fold,
  and ``use_exhaustive_merge``, which installs it in a ``Node`` so whole admissions can be
  replayed both ways (``bench/admission.py``, ``tests/node/test_fast_path_differential.py``).

The hint generators written the upstream way are in ``numaplane.testing.upstream_hints``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import product

from numaplane.node.admission import Node
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.node.topologymanager.numa_info import NUMAInfo
from numaplane.node.topologymanager.numa_utilization import TieBreak, break_tie
from numaplane.node.topologymanager.policy import (
    POLICY_NONE,
    POLICY_SINGLE_NUMA_NODE,
    MergeResult,
    Policy,
    filter_providers_hints,
)
from numaplane.node.topologymanager.policy_options import PolicyOptions
from numaplane.node.topologymanager.policy_single_numa_node import UtilizationTieBreakingPolicy


def materialized(hints: Sequence[Sequence[TopologyHint]]) -> list[list[TopologyHint]]:
    """Every hint list as a plain list (rule-based lists are listed mask by mask)."""
    return [list(h) for h in hints]


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


def iterate_permutations(
    filtered_hints: Sequence[Sequence[TopologyHint]],
) -> Iterator[list[TopologyHint]]:
    """Every permutation of the cross product, first list outermost (upstream order)."""
    for combo in product(*filtered_hints):
        yield list(combo)


def listed_max_of_min_affinity_counts(filtered_hints: Sequence[Sequence[TopologyHint]]) -> int:
    """Upstream ``maxOfMinAffinityCounts`` over listed hints: the widest narrowest mask."""
    best = 0
    for resource_hints in filtered_hints:
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


def _mask(hint: TopologyHint) -> BitMask:
    # Merged hints always carry a mask; a missing one counts as empty (never chosen).
    return hint.numa_affinity if hint.numa_affinity is not None else BitMask()


class HintMerger:
    """Upstream's ``HintMerger``: the candidate comparison and the cross-product walk.

    ``best_non_preferred_affinity_count`` defaults to the listed ``maxOfMinAffinityCounts`` of
    ``hints``; it can be given to exercise ``compare`` alone.
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
        self.hints = materialized(hints)
        self.policy_name = policy_name
        self.options = options
        self.best_non_preferred_affinity_count = (
            listed_max_of_min_affinity_counts(self.hints)
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
        return self.merge_with_single_numa_ties()[0]

    def merge_with_single_numa_ties(self) -> tuple[TopologyHint, tuple[int, ...]]:
        """``merge()``, and the NUMA ids (ascending) of every distinct preferred merged
        candidate whose mask is a single node (what a utilization tie-break chooses among).

        Every permutation in upstream order, except those whose AND is already empty: those
        are skipped a whole subtree at a time, which changes nothing (``compare`` never accepts
        an empty mask) and keeps eight-node machines within reach. ``compare`` is a pure
        function of the two candidates' values, so its verdicts are remembered.
        """
        default = self.numa_info.default_affinity
        ties: set[int] = set()
        best: TopologyHint | None = None
        best_key: tuple[int, bool] | None = None
        verdicts: dict[tuple[tuple[int, bool] | None, tuple[int, bool]], bool] = {}
        for key in _merged_candidates(default.value, self.hints):
            if key[1] and key[0] and not key[0] & (key[0] - 1):
                ties.add(key[0].bit_length() - 1)
            if key == best_key or key[0] == 0:
                continue  # compare keeps the current hint for an equal or an empty candidate
            candidate = TopologyHint(BitMask.from_int(key[0]), key[1])
            wins = verdicts.get((best_key, key))
            if wins is None:
                wins = verdicts[(best_key, key)] = self.compare(best, candidate) is candidate
            if wins:
                best, best_key = candidate, key
        if best is None:
            best = TopologyHint(default, False)
        return best, tuple(sorted(ties))


def _merged_candidates(
    default: int, hints: Sequence[Sequence[TopologyHint]]
) -> Iterator[tuple[int, bool]]:
    """``(mask value, preferred)`` of ``merge_permutation`` for every permutation, in order,
    leaving out (a subtree at a time) those whose AND is already empty."""
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


def exhaustive_merge(
    numa_info: NUMAInfo,
    hints: Sequence[Sequence[TopologyHint]],
    policy_name: str,
    options: PolicyOptions,
) -> TopologyHint:
    """Upstream ``HintMerger.Merge``: every permutation, first list outermost, folded with
    ``compare``; nothing accepted gives ``{all nodes, not preferred}``."""
    return HintMerger(numa_info, hints, policy_name, options).merge()


def listed_single_numa_hints(
    filtered_hints: Sequence[Sequence[TopologyHint]],
) -> list[list[TopologyHint]]:
    """Upstream ``filterSingleNumaHints`` over listed hints."""
    return [
        [
            h
            for h in hints
            if h.preferred and (h.numa_affinity is None or h.numa_affinity.count() == 1)
        ]
        for hints in filtered_hints
    ]


class ExhaustivePolicy:
    """A merging policy decided by the exhaustive definition instead of the search.

    It wraps the policy a Topology Manager built (its name, NUMA info, options, admit rule and,
    for ``prefer-most-allocated-numa-node``, its utilization source) and replaces only the
    merge: every hint listed, every permutation walked.
    """

    def __init__(self, inner: Policy, numa_info: NUMAInfo, options: PolicyOptions) -> None:
        self.inner = inner
        self.numa_info = numa_info
        self.options = options

    @property
    def name(self) -> str:
        """The wrapped policy's name."""
        return self.inner.name

    def merge(self, providers_hints: Sequence[ProviderHints]) -> MergeResult:
        """The wrapped policy's merge, by the exhaustive walk."""
        numa_info, options = self.numa_info, self.options
        lists = materialized(filter_providers_hints(providers_hints))
        single = self.name == POLICY_SINGLE_NUMA_NODE
        if single:
            lists = listed_single_numa_hints(lists)
        best, ties = HintMerger(numa_info, lists, self.name, options).merge_with_single_numa_ties()
        tie: TieBreak | None = None
        if single and options.prefer_most_allocated_numa_node:
            mask = best.numa_affinity
            if len(ties) > 1 and best.preferred and mask is not None and mask.count() == 1:
                utilization = None
                if isinstance(self.inner, UtilizationTieBreakingPolicy):
                    utilization = self.inner.utilization
                tie = break_tie(ties, mask.bits[0], utilization)
                best = TopologyHint(BitMask(tie.chosen), True)
        if single and best.numa_affinity == numa_info.default_affinity:
            best = TopologyHint(None, best.preferred)
        return MergeResult(best, self.can_admit(best), tie)

    def can_admit(self, hint: TopologyHint) -> bool:
        """The wrapped policy's admit rule."""
        return self.inner.can_admit(hint)


def use_exhaustive_merge(node: Node) -> None:
    """Make ``node``'s Topology Manager merge by the exhaustive definition from now on."""
    manager = node.topology_manager
    scope = manager.scope
    if scope.policy.name != POLICY_NONE:
        scope.policy = ExhaustivePolicy(scope.policy, manager.numa_info, manager.options)
