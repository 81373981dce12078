"""The ordered merge search agrees with the exhaustive cross product, tie-breaks included.

Random NUMA machines (up to 8 nodes, non-contiguous ids, random distances), random explicit
hint lists (any/preferred mixes, masks reaching outside the machine) and random rule-based lists
(families with thresholds over single nodes and node pairs, required nodes, extras, socket-like
preference rules), under every merging policy, with and without prefer-closest.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.node.topologymanager.hint_rules import Family, Threshold
from numaplane.node.topologymanager.hint_sets import StructuredHints
from numaplane.node.topologymanager.merge_search import search_merge
from numaplane.node.topologymanager.numa_info import NUMAInfo
from numaplane.node.topologymanager.policy import merge_filtered
from numaplane.node.topologymanager.policy_options import PolicyOptions
from numaplane.testing.exhaustive import exhaustive_merge

POLICIES = ("best-effort", "restricted", "single-numa-node")


def _numa(rng: random.Random, n: int) -> NUMAInfo:
    ids = sorted(rng.sample(range(n + rng.randint(0, 2)), n))
    size = max(ids) + 1
    rows = {
        i: tuple(10 if i == j else rng.choice([11, 12, 20, 21, 30]) for j in range(size))
        for i in ids
    }
    return NUMAInfo(tuple(ids), rows)


def _explicit(rng: random.Random, ids: list[int]) -> list[TopologyHint]:
    out = []
    for _ in range(rng.randint(0, 5)):
        if rng.random() < 0.1:
            out.append(TopologyHint(None, rng.random() < 0.6))
            continue
        bits = [b for b in ids if rng.random() < 0.4] or [rng.choice(ids)]
        if rng.random() < 0.05:
            bits.append(max(ids) + 1)
        out.append(TopologyHint(BitMask.from_bits(bits), rng.random() < 0.5))
    return out


def _structured(rng: random.Random, ids: list[int]) -> StructuredHints:
    families = []
    for _ in range(rng.randint(0, 2)):
        universe = sum(1 << b for b in ids if rng.random() < 0.8)
        thresholds = []
        for _ in range(rng.randint(0, 2)):
            groups = [(1 << b, rng.randint(0, 4)) for b in ids if rng.random() < 0.7]
            if len(ids) > 1 and rng.random() < 0.3:
                a, c = rng.sample(ids, 2)
                groups.append(((1 << a) | (1 << c), rng.randint(1, 3)))
            thresholds.append(Threshold(tuple(groups), rng.randint(-1, 8)))
        hits = tuple(1 << rng.choice(ids) for _ in range(rng.randint(0, 1)))
        families.append(Family(universe, tuple(thresholds), hits, rng.choice([1, 1, 2])))
    extras = [
        sum(1 << b for b in rng.sample(ids, rng.randint(1, len(ids))))
        for _ in range(rng.randint(0, 2))
    ]
    aligned = None
    if rng.random() < 0.15:
        salt = rng.randint(0, 1000)

        def aligned(mask: int) -> bool:
            return (mask * 2654435761 + salt) % 3 == 0

    return StructuredHints(ids, families, extras, rng.randint(1, len(ids)), aligned)


@dataclass(frozen=True)
class Batch:
    """A seeded batch of random merges."""

    name: str
    first_seed: int
    count: int
    max_nodes: int


BATCHES = (
    Batch("small machines", 0, 1500, 4),
    Batch("up to 7 nodes", 10_000, 1500, 7),
    Batch("8 nodes", 20_000, 1500, 8),
)


@pytest.mark.parametrize("batch", BATCHES, ids=lambda b: b.name)
def test_search_matches_exhaustive(batch: Batch) -> None:
    for seed in range(batch.first_seed, batch.first_seed + batch.count):
        rng = random.Random(seed)
        info = _numa(rng, rng.randint(1, batch.max_nodes))
        ids = list(info.nodes)
        lists: list[list[TopologyHint] | StructuredHints] = []
        for _ in range(rng.randint(0, 4)):
            if rng.random() < 0.5:
                lists.append(_explicit(rng, ids))
            else:
                rule = _structured(rng, ids)
                lists.append(rule if rule else [TopologyHint(None, False)])
        policy = rng.choice(POLICIES)
        options = PolicyOptions(prefer_closest_numa=rng.random() < 0.5)
        fast = merge_filtered(info, lists, policy, options).hint
        assert fast == exhaustive_merge(info, lists, policy, options), f"seed {seed}"


def test_rule_outside_the_machine_is_merged_mask_by_mask() -> None:
    info = NUMAInfo((0, 1))
    rule = StructuredHints((0, 1, 2), [Family(0b111, ())], (), 1)
    merged = search_merge(info, [rule], False, 1).hint
    assert merged == TopologyHint(BitMask(0), True)
    assert merged == exhaustive_merge(info, [rule], "best-effort", PolicyOptions())


def test_equal_distances_fall_back_to_the_smaller_mask() -> None:
    info = NUMAInfo((0, 1, 2, 3), dict.fromkeys(range(4), (10, 20, 20, 20)))
    rule = StructuredHints((0, 1, 2, 3), [Family(0b1111, (Threshold.per_node({}, 0),))], (), 2)
    options = PolicyOptions(prefer_closest_numa=True)
    merged = merge_filtered(info, [rule], "best-effort", options).hint
    assert merged == exhaustive_merge(info, [rule], "best-effort", options)
    assert merged.numa_affinity is not None
    assert merged.numa_affinity.count() == 2


def test_no_lists_merges_to_every_node_preferred() -> None:
    info = NUMAInfo((0, 3))
    assert search_merge(info, [], False, 0).hint == TopologyHint(BitMask(0, 3), True)


def test_an_empty_list_gives_every_node_not_preferred() -> None:
    info = NUMAInfo((0, 1))
    empty = StructuredHints.listed([])
    assert search_merge(info, [empty], False, 0).hint == TopologyHint(BitMask(0, 1), False)
