"""The shared merge: filtering, permutations, ``compare``/``fitter``, and merge laws."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.node.topologymanager.numa_info import NUMAInfo
from numaplane.node.topologymanager.policy import (
    MergeResult,
    filter_providers_hints,
    max_of_min_affinity_counts,
    merge_filtered,
)
from numaplane.node.topologymanager.policy_best_effort import BestEffortPolicy
from numaplane.node.topologymanager.policy_none import NonePolicy
from numaplane.node.topologymanager.policy_options import PolicyOptions
from numaplane.node.topologymanager.policy_restricted import RestrictedPolicy
from numaplane.node.topologymanager.policy_single_numa_node import SingleNumaNodePolicy
from numaplane.testing.exhaustive import HintMerger, iterate_permutations, merge_permutation
from tests.node.topologymanager.strategies import MAX_NODES, providers

NODES = tuple(range(MAX_NODES))
ROWS = {0: (10, 11, 20, 20), 1: (11, 10, 20, 20), 2: (20, 20, 10, 11), 3: (20, 20, 11, 10)}
INFO = NUMAInfo(NODES, ROWS)


def h(bits: tuple[int, ...] | None, preferred: bool = True) -> TopologyHint:
    """A hint from bit numbers (``None`` = any)."""
    return TopologyHint(None if bits is None else BitMask(*bits), preferred)


@dataclass(frozen=True)
class FilterCase:
    """One provider answer and the lists filtering must produce."""

    name: str
    providers: tuple[ProviderHints, ...]
    want: list[list[TopologyHint]]


FILTER_CASES = (
    FilterCase("nil map", (None,), [[h(None, True)]]),
    FilterCase("empty map", ({},), [[h(None, True)]]),
    FilterCase("nil slice: no preference", ({"cpu": None},), [[h(None, True)]]),
    FilterCase("empty slice: no placement", ({"cpu": []},), [[h(None, False)]]),
    FilterCase(
        "hints kept as given, one list per resource",
        ({"cpu": [h((0,)), h((1,), False)], "gpu": None},),
        [[h((0,)), h((1,), False)], [h(None, True)]],
    ),
    FilterCase("no providers", (), []),
)


@pytest.mark.parametrize("case", FILTER_CASES, ids=lambda c: c.name)
def test_filter_keeps_the_three_empties_apart(case: FilterCase) -> None:
    """``None`` map, ``None`` list and ``[]`` give different filtered lists."""
    assert filter_providers_hints(case.providers) == case.want


def test_merge_permutation_masks_must_agree_to_be_preferred() -> None:
    """{0} and {0,1}, both preferred, AND to {0} but are not preferred; nil is don't-care."""
    default = BitMask(*NODES)
    assert merge_permutation(default, [h((0,)), h((0, 1))]) == h((0,), False)
    assert merge_permutation(default, [h((1,)), h(None), h((1,))]) == h((1,), True)
    assert merge_permutation(default, [h(None, False)]) == h(NODES, False)
    assert merge_permutation(default, []) == h(NODES, True)


def test_permutations_first_list_outermost() -> None:
    """The cross product order is lexicographic with the first list outermost."""
    lists = [[h((0,)), h((1,))], [h((2,)), h((3,))]]
    got = [[p[0].numa_affinity, p[1].numa_affinity] for p in iterate_permutations(lists)]
    assert got == [
        [BitMask(0), BitMask(2)],
        [BitMask(0), BitMask(3)],
        [BitMask(1), BitMask(2)],
        [BitMask(1), BitMask(3)],
    ]


def test_max_of_min_ignores_nil_and_takes_widest_minimum() -> None:
    """Each list's narrowest non-nil mask, then the widest of those."""
    lists = [[h(None), h((0, 1, 2))], [h((1,)), h((0, 1))], [h(None, False)]]
    assert max_of_min_affinity_counts(lists) == 3


def test_merge_without_candidates_is_all_nodes_not_preferred() -> None:
    """An empty list (nothing possible) leaves the default ``{all, false}``."""
    merged = merge_filtered(INFO, [[h((0,))], []], "best-effort", PolicyOptions())
    assert merged.hint == h(NODES, False)
    assert HintMerger(INFO, [[h((0,))], []], "best-effort", PolicyOptions()).merge() == h(
        NODES, False
    )


def test_merge_with_no_lists_is_all_nodes_preferred() -> None:
    """Zero providers: one empty permutation, the default mask, preferred."""
    assert merge_filtered(INFO, [], "best-effort", PolicyOptions()).hint == h(NODES, True)
    assert HintMerger(INFO, [], "best-effort", PolicyOptions()).merge() == h(NODES, True)


def test_fitter_uses_closest_only_with_the_option_and_not_single_numa() -> None:
    """{0,2}/{1,2}-style ties: Narrowest picks the smaller value, Closest the nearer pair."""
    far, near = h((0, 2)), h((2, 3))
    closest = PolicyOptions(prefer_closest_numa=True)
    assert HintMerger(INFO, [], "best-effort", PolicyOptions()).fitter(far, near) is far
    assert HintMerger(INFO, [], "best-effort", closest).fitter(far, near) is near
    assert HintMerger(INFO, [], "single-numa-node", closest).fitter(far, near) is far


def _naive_merge(merger: HintMerger) -> TopologyHint:
    """Upstream's loop verbatim: every permutation through ``compare``, no memo."""
    best: TopologyHint | None = None
    default = merger.numa_info.default_affinity
    for perm in itertools.product(*merger.hints):
        best = merger.compare(best, merge_permutation(default, perm))
    return best if best is not None else TopologyHint(default, False)


@settings(max_examples=200)
@given(providers, st.booleans())
def test_search_equals_upstream_loop(answers: list[ProviderHints], closest: bool) -> None:
    """The merge search returns exactly what upstream's plain loop returns."""
    options = PolicyOptions(prefer_closest_numa=closest)
    filtered = filter_providers_hints(answers)
    merger = HintMerger(INFO, filtered, "best-effort", options)
    assert merge_filtered(INFO, filtered, "best-effort", options).hint == _naive_merge(merger)


POLICIES = (
    BestEffortPolicy(INFO),
    BestEffortPolicy(INFO, PolicyOptions(prefer_closest_numa=True)),
    RestrictedPolicy(INFO),
    SingleNumaNodePolicy(INFO),
)


@settings(max_examples=150)
@given(providers, st.randoms(use_true_random=False))
def test_merge_is_independent_of_provider_order(answers: list[ProviderHints], rnd: object) -> None:
    """Shuffling providers (and resources within them) never changes the merged hint."""
    import random

    assert isinstance(rnd, random.Random)
    shuffled = list(answers)
    rnd.shuffle(shuffled)
    reordered = [None if a is None else dict(reversed(list(a.items()))) for a in shuffled]
    for policy in POLICIES:
        assert policy.merge(answers) == policy.merge(reordered)


@settings(max_examples=300)
@given(providers)
def test_preferred_result_is_never_wider_than_a_feasible_preferred_mask(
    answers: list[ProviderHints],
) -> None:
    """A mask is feasible when some resource offers it as a preferred hint and every resource
    offers it, or "any", as a preferred hint.

    A preferred result is feasible, and no feasible mask is narrower (Narrowest applies when
    prefer-closest-numa-nodes is off).
    """
    hint = BestEffortPolicy(INFO).merge(answers).hint
    if not hint.preferred:
        return
    assert hint.numa_affinity is not None
    lists = filter_providers_hints(answers)

    def feasible(mask: BitMask) -> bool:
        return all(any(x.preferred and x.numa_affinity in (None, mask) for x in hs) for hs in lists)

    offered = {
        x.numa_affinity for hs in lists for x in hs if x.preferred and x.numa_affinity is not None
    }
    candidates = {m for m in offered if feasible(m)}
    if candidates:
        assert hint.numa_affinity in candidates
        assert not any(m.is_narrower_than(hint.numa_affinity) for m in candidates)
    else:
        # Only "any" hints were preferred everywhere: the result spans every node.
        assert hint.numa_affinity == INFO.default_affinity


@given(providers)
def test_none_always_admits_without_merging(answers: list[ProviderHints]) -> None:
    """The none policy admits everything with the empty hint."""
    assert NonePolicy().merge(answers) == MergeResult(TopologyHint(None, False), True)


@given(providers)
def test_single_numa_node_never_admits_multi_numa(answers: list[ProviderHints]) -> None:
    """An admitted single-numa-node result is "any" or exactly one node, and preferred."""
    merged = SingleNumaNodePolicy(INFO).merge(answers)
    hint, admit = merged.hint, merged.admit
    if admit:
        assert hint.preferred
        assert hint.numa_affinity is None or hint.numa_affinity.count() == 1
    assert hint.numa_affinity != INFO.default_affinity


@given(providers)
def test_restricted_admits_exactly_preferred(answers: list[ProviderHints]) -> None:
    """Restricted admits iff the merged hint is preferred, and merges like best-effort."""
    merged = RestrictedPolicy(INFO).merge(answers)
    assert merged.admit == merged.hint.preferred
    assert merged.hint == BestEffortPolicy(INFO).merge(answers).hint
    assert BestEffortPolicy(INFO).merge(answers).admit
