"""Rule-based hint lists: value semantics of thresholds and families, and the shortcuts the
single-numa-node merge takes (per-node answers instead of mask-by-mask tests) against upstream's
walk."""

from __future__ import annotations

import random

import pytest

from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.node.topologymanager.hint_rules import Family, RuleMemo, Threshold
from numaplane.node.topologymanager.hint_sets import StructuredHints
from numaplane.node.topologymanager.numa_info import NUMAInfo
from numaplane.node.topologymanager.policy import POLICY_SINGLE_NUMA_NODE, filter_providers_hints
from numaplane.node.topologymanager.policy_options import PolicyOptions
from numaplane.node.topologymanager.policy_single_numa_node import (
    SingleNumaNodePolicy,
    filter_single_numa_hints,
)
from numaplane.testing.exhaustive import HintMerger, listed_single_numa_hints, materialized


def _threshold(rng: random.Random, ids: list[int]) -> Threshold:
    if rng.random() < 0.3:
        amounts = {b: rng.randint(0, 5) for b in ids if rng.random() < 0.8}
        return Threshold.per_node(amounts, rng.randint(-1, 8))
    groups = [(1 << b, rng.randint(-1, 4)) for b in ids if rng.random() < 0.7]
    if len(ids) > 1 and rng.random() < 0.4:
        a, c = rng.sample(ids, 2)
        groups.append(((1 << a) | (1 << c), rng.randint(1, 3)))
    return Threshold(tuple(groups), rng.randint(-1, 8))


def _family(rng: random.Random, ids: list[int]) -> Family:
    universe = sum(1 << b for b in ids if rng.random() < 0.8)
    thresholds = tuple(_threshold(rng, ids) for _ in range(rng.randint(0, 3)))
    hits = tuple(
        sum(1 << b for b in rng.sample(ids, rng.randint(1, min(2, len(ids)))))
        for _ in range(rng.randint(0, 2))
    )
    return Family(universe, thresholds, hits, rng.choice([0, 1, 1, 2]))


def _structured(rng: random.Random, ids: list[int]) -> StructuredHints:
    families = [_family(rng, ids) for _ in range(rng.randint(0, 2))]
    extras = [
        sum(1 << b for b in rng.sample(ids, rng.randint(1, len(ids))))
        for _ in range(rng.randint(0, 3))
    ]
    aligned = None
    if rng.random() < 0.3:
        salt = rng.randint(0, 1000)

        def aligned(mask: int) -> bool:
            return (mask * 2654435761 + salt) % 3 == 0

    return StructuredHints(ids, families, extras, rng.randint(1, len(ids)), aligned)


def _ids(rng: random.Random) -> list[int]:
    return sorted(rng.sample(range(9), rng.randint(1, 6)))


def test_single_nodes_are_the_one_node_members() -> None:
    for seed in range(300):
        _single_nodes_are_the_one_node_members(random.Random(seed))


def _single_nodes_are_the_one_node_members(rng: random.Random) -> None:
    ids = _ids(rng)
    threshold = _threshold(rng, ids)
    family = _family(rng, ids)
    for n in range(10):
        assert bool(threshold.single_nodes() >> n & 1) == threshold.holds(1 << n)
        assert bool(family.single_nodes() >> n & 1) == family.contains(1 << n)


def test_single_node_preferred_lists_the_preferred_one_node_hints() -> None:
    for seed in range(300):
        _single_node_preferred_lists_the_preferred_one_node_hints(random.Random(seed))


def _single_node_preferred_lists_the_preferred_one_node_hints(rng: random.Random) -> None:
    hints = _structured(rng, _ids(rng))
    expected = [
        h
        for h in hints.materialize()
        if h.preferred and h.numa_affinity is not None and h.numa_affinity.count() == 1
    ]
    assert hints.single_node_preferred() == expected
    assert hints.single_node_preferred() == expected  # the remembered answer
    mask = 0
    for hint in expected:
        assert hint.numa_affinity is not None
        mask |= hint.numa_affinity.value
    assert hints.preferred_single_nodes() == mask


def _answer(rng: random.Random, ids: list[int]) -> ProviderHints:
    roll = rng.random()
    if roll < 0.05:
        return None
    if roll < 0.1:
        return {}
    answer: dict[str, list[TopologyHint] | StructuredHints | None] = {}
    for name in ("a", "b", "c")[: rng.randint(1, 3)]:
        kind = rng.random()
        if kind < 0.1:
            answer[name] = None
        elif kind < 0.2:
            answer[name] = []
        elif kind < 0.6:
            answer[name] = _structured(rng, ids)
        else:
            listed: list[TopologyHint] = []
            for _ in range(rng.randint(1, 4)):
                if rng.random() < 0.15:
                    listed.append(TopologyHint(None, rng.random() < 0.7))
                    continue
                bits = rng.sample([*ids, max(ids) + 1], rng.randint(1, 2))
                listed.append(TopologyHint(BitMask.from_bits(bits), rng.random() < 0.7))
            answer[name] = listed
    return answer


def test_single_numa_node_merge_equals_the_walk_over_listed_hints() -> None:
    for seed in range(600):
        _single_numa_node_merge_equals_the_walk_over_listed_hints(random.Random(seed))


def _single_numa_node_merge_equals_the_walk_over_listed_hints(rng: random.Random) -> None:
    ids = _ids(rng)
    machine = [b for b in ids if rng.random() < 0.9] or ids[:1]
    answers = [_answer(rng, ids) for _ in range(rng.randint(0, 3))]
    filtered = filter_single_numa_hints(filter_providers_hints(answers))
    listed = listed_single_numa_hints(materialized(filter_providers_hints(answers)))
    assert [list(h) for h in filtered] == listed
    info = NUMAInfo(tuple(machine))
    got = SingleNumaNodePolicy(info).merge(answers).hint
    want = HintMerger(info, listed, POLICY_SINGLE_NUMA_NODE, PolicyOptions()).merge()
    if want.numa_affinity == info.default_affinity:
        want = TopologyHint(None, want.preferred)
    assert got == want


def test_thresholds_and_families_are_immutable_values() -> None:
    per_node = Threshold.per_node({2: 3, 0: 1, 1: 0}, 4)
    listed = Threshold(((1, 1), (4, 3)), 4)
    assert per_node == listed
    assert hash(per_node) == hash(listed) == hash((((1, 1), (4, 3)), 4))
    assert per_node != Threshold(((1, 1), (4, 3)), 5)
    assert repr(per_node) == "Threshold(groups=((1, 1), (4, 3)), minimum=4)"
    family = Family(0b111, (per_node,), (1,))
    same = Family(0b111, (listed,), (1,), 1)
    assert family == same
    assert hash(family) == hash(same) == hash((0b111, (listed,), (1,), 1))
    assert family != Family(0b111, (listed,), (1,), 2)
    assert repr(family) == (
        "Family(universe=7, thresholds=(Threshold(groups=((1, 1), (4, 3)), minimum=4),), "
        "hits=(1,), min_size=1)"
    )
    assert family != (0b111, (listed,), (1,), 1)
    with pytest.raises(AttributeError):
        per_node.minimum = 1
    with pytest.raises(AttributeError):
        family.universe = 1
    # Lazily remembered answers do not change the value.
    assert family.nonempty
    assert family.thresholds[0].ranked == ((3, 4), (1, 1))
    assert family == same


def test_rule_memo_starts_afresh_when_full() -> None:
    memo: RuleMemo[int, str] = RuleMemo("test rules", 2)
    assert memo.get(1) is None
    assert memo.put(1, "a") == "a"
    memo.put(2, "b")
    assert (memo.get(1), memo.get(2), len(memo)) == ("a", "b", 2)
    memo.put(3, "c")
    assert (memo.get(1), memo.get(3), len(memo)) == (None, "c", 1)


def test_a_listed_set_keeps_the_hints_as_given() -> None:
    hints = [
        TopologyHint(BitMask(1), False),
        TopologyHint(None, True),
        TopologyHint(BitMask(1), False),
    ]
    listed = StructuredHints.listed(hints)
    assert list(listed) == hints
    assert listed.min_count() == 1
    assert not listed.is_large()
    assert list(listed.single_node_preferred()) == [TopologyHint(None, True)]
    assert listed.single_node_shape() is None
    assert listed.single_node_preferred().single_node_shape() == (True, 0)
