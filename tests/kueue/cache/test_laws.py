"""Laws of the quota tree, over random trees and random event sequences:

* adding a workload's usage and removing it again restores every node;
* ``available ≤ potential_available``, and usage never goes negative;
* the live cache, after any sequence of events, holds exactly the sums quota.md §2 defines
  (``SubtreeQuota``, ``Usage``) computed afresh from the final objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from numaplane.kueue.api.model import (
    ClusterQueue,
    Cohort,
    ResourceFlavor,
    ResourceQuota,
    Workload,
    quotas_of,
)
from numaplane.kueue.cache import KueueCache, Snapshot
from tests.kueue.cache.builders import admitted, cohort, cq

FLAVORS = ("f", "g")
FRS = tuple((flavor, "cpu") for flavor in FLAVORS)
COHORTS = ("c0", "c1", "c2")
QUEUES = ("q0", "q1", "q2", "q3")

limits = st.one_of(st.none(), st.integers(0, 12))


@st.composite
def cells(draw: st.DrawFn) -> tuple[tuple[str, str, int, int | None, int | None], ...]:
    return tuple((f, "cpu", draw(st.integers(0, 12)), draw(limits), draw(limits)) for f in FLAVORS)


@st.composite
def queues(draw: st.DrawFn, name: str) -> ClusterQueue:
    return cq(name, draw(st.sampled_from(("", *COHORTS))), *draw(cells()))


@st.composite
def cohorts(draw: st.DrawFn, name: str) -> Cohort:
    parent = draw(st.sampled_from(("", *COHORTS)))
    own = draw(st.booleans())
    return cohort(name, parent, *(draw(cells()) if own else ()))


@st.composite
def workloads(draw: st.DrawFn, index: int) -> Workload:
    queue = draw(st.sampled_from(QUEUES))
    flavor = draw(st.sampled_from(FLAVORS))
    return admitted(f"w{index}", queue, {(flavor, "cpu"): draw(st.integers(1, 10))})


def nonzero(values: dict[tuple[str, str], int]) -> dict[tuple[str, str], int]:
    return {k: v for k, v in values.items() if v}


def node_state(snap: Snapshot) -> dict[str, dict[tuple[str, str], int]]:
    state = {f"cq/{n}": nonzero(q.node.usage) for n, q in snap.cluster_queues.items()}
    state.update({f"cohort/{n}": nonzero(c.node.usage) for n, c in snap.cohorts.items()})
    return state


def tree_cache(
    qs: list[ClusterQueue], cs: list[Cohort], wls: list[Workload] | tuple[Workload, ...] = ()
) -> KueueCache:
    cache = KueueCache()
    for flavor in FLAVORS:
        cache.upsert_flavor(ResourceFlavor(flavor))
    for c in cs:
        cache.upsert_cohort(c)
    for q in qs:
        cache.upsert_cluster_queue(q)
    for wl in wls:
        cache.upsert_workload(wl)
    return cache


@st.composite
def trees(draw: st.DrawFn) -> tuple[list[ClusterQueue], list[Cohort]]:
    qs = [draw(queues(name)) for name in QUEUES]
    cs = [draw(cohorts(name)) for name in COHORTS if draw(st.booleans())]
    return qs, cs


@given(tree=trees(), data=st.data())
@settings(max_examples=150)
def test_add_then_remove_restores_every_node(
    tree: tuple[list[ClusterQueue], list[Cohort]], data: st.DataObject
) -> None:
    qs, cs = tree
    base = [data.draw(workloads(i)) for i in range(data.draw(st.integers(0, 4)))]
    snap = tree_cache(qs, cs, base).snapshot()
    before = node_state(snap)
    added = [data.draw(workloads(100 + i)) for i in range(data.draw(st.integers(1, 6)))]
    added = [wl for wl in added if wl.admission and snap.cluster_queue(wl.admission.cluster_queue)]
    for wl in added:
        snap.add_workload(wl)
        for queue in snap.cluster_queues.values():
            for fr in FRS:
                assert queue.available(fr) <= queue.potential_available(fr)
    for wl in data.draw(st.permutations(added)):
        snap.remove_workload(wl)
        assert all(v >= 0 for usage in node_state(snap).values() for v in usage.values())
    assert node_state(snap) == before


@given(tree=trees(), data=st.data())
@settings(max_examples=150)
def test_available_never_exceeds_potential(
    tree: tuple[list[ClusterQueue], list[Cohort]], data: st.DataObject
) -> None:
    qs, cs = tree
    wls = [data.draw(workloads(i)) for i in range(data.draw(st.integers(0, 8)))]
    snap = tree_cache(qs, cs, wls).snapshot()
    for queue in snap.cluster_queues.values():
        for fr in FRS:
            assert 0 <= queue.available(fr) <= queue.potential_available(fr)
            assert queue.potential_available(fr) >= 0


# --- the live cache against the definitions --------------------------------------------------


@dataclass
class World:
    """The objects that exist after a sequence of events."""

    queues: dict[str, ClusterQueue]
    cohorts: dict[str, Cohort]
    workloads: dict[str, Workload]


Amounts = dict[tuple[str, str], int]
Quotas = Mapping[tuple[str, str], ResourceQuota]


def expected_tree(world: World) -> dict[str, tuple[Amounts, Amounts]]:
    """quota.md §2 from scratch: (SubtreeQuota, Usage) of every non-cyclic Cohort and queue."""
    parent_of = {name: c.parent for name, c in world.cohorts.items() if c.parent}
    names = set(world.cohorts) | set(parent_of.values())
    names |= {q.cohort for q in world.queues.values() if q.cohort}

    def cyclic(name: str) -> bool:
        seen: set[str] = set()
        while name in parent_of:
            if name in seen:
                return True
            seen.add(name)
            name = parent_of[name]
        return False

    result: dict[str, tuple[Amounts, Amounts]] = {}

    def local_quota(quotas: Quotas, subtree: Amounts, fr: tuple[str, str]) -> int:
        quota = quotas.get(fr)
        if quota is None or quota.lending_limit is None:
            return 0
        return max(0, subtree.get(fr, 0) - quota.lending_limit)

    def queue_usage(name: str) -> dict[tuple[str, str], int]:
        total: dict[tuple[str, str], int] = {}
        for wl in world.workloads.values():
            if wl.admission is not None and wl.admission.cluster_queue == name:
                for fr, v in wl.admission.usage().items():
                    total[fr] = total.get(fr, 0) + v
        return total

    def visit(name: str) -> tuple[Quotas, Amounts, Amounts]:
        spec = world.cohorts.get(name)
        quotas = quotas_of(spec.resource_groups) if spec is not None else {}
        subtree = {fr: q.nominal for fr, q in quotas.items()}
        usage: dict[tuple[str, str], int] = {}
        children: list[tuple[Quotas, Amounts, Amounts]] = []
        for child in sorted(n for n, p in parent_of.items() if p == name):
            children.append(visit(child))
        for q in world.queues.values():
            if q.cohort == name:
                q_quotas = q.quotas()
                q_sub = {fr: x.nominal for fr, x in q_quotas.items()}
                q_use = queue_usage(q.name)
                result[f"cq/{q.name}"] = (q_sub, q_use)
                children.append((q_quotas, q_sub, q_use))
        for c_quotas, c_sub, c_use in children:
            for fr, v in c_sub.items():
                subtree[fr] = subtree.get(fr, 0) + v - local_quota(c_quotas, c_sub, fr)
            for fr, v in c_use.items():
                usage[fr] = usage.get(fr, 0) + max(0, v - local_quota(c_quotas, c_sub, fr))
        result[f"cohort/{name}"] = (subtree, usage)
        return quotas, subtree, usage

    for name in sorted(names):
        if name not in parent_of and not cyclic(name):
            visit(name)
    for q in world.queues.values():
        if not q.cohort:
            result[f"cq/{q.name}"] = (
                {fr: x.nominal for fr, x in q.quotas().items()},
                queue_usage(q.name),
            )
    return {k: (nonzero(a), nonzero(b)) for k, (a, b) in result.items()}


def actual_tree(
    snap: Snapshot,
) -> dict[str, tuple[dict[tuple[str, str], int], dict[tuple[str, str], int]]]:
    out = {
        f"cohort/{n}": (nonzero(c.node.subtree_quota), nonzero(c.node.usage))
        for n, c in snap.cohorts.items()
    }
    for n, q in snap.cluster_queues.items():
        if q.parent is not None or not q.spec.cohort:
            out[f"cq/{n}"] = (nonzero(q.node.subtree_quota), nonzero(q.node.usage))
    return out


@st.composite
def events(draw: st.DrawFn) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for _i in range(draw(st.integers(1, 25))):
        kind = draw(
            st.sampled_from(
                ("cq", "cq", "cohort", "wl", "wl", "wl", "del-cq", "del-cohort", "del-wl")
            )
        )
        if kind == "cq":
            out.append((kind, draw(queues(draw(st.sampled_from(QUEUES))))))
        elif kind == "cohort":
            out.append((kind, draw(cohorts(draw(st.sampled_from(COHORTS))))))
        elif kind == "wl":
            out.append((kind, draw(workloads(draw(st.integers(0, 5))))))
        elif kind == "del-cq":
            out.append((kind, draw(st.sampled_from(QUEUES))))
        elif kind == "del-cohort":
            out.append((kind, draw(st.sampled_from(COHORTS))))
        else:
            out.append((kind, f"ns/w{draw(st.integers(0, 5))}"))
    return out


@given(seq=events())
@settings(max_examples=200)
def test_live_cache_matches_the_definitions_after_any_events(seq: list[tuple[str, object]]) -> None:
    cache = KueueCache()
    for flavor in FLAVORS:
        cache.upsert_flavor(ResourceFlavor(flavor))
    world = World({}, {}, {})
    for kind, obj in seq:
        if kind == "cq":
            assert isinstance(obj, ClusterQueue)
            cache.upsert_cluster_queue(obj)
            world.queues[obj.name] = obj
        elif kind == "cohort":
            assert isinstance(obj, Cohort)
            cache.upsert_cohort(obj)
            world.cohorts[obj.name] = obj
        elif kind == "wl":
            assert isinstance(obj, Workload)
            cache.upsert_workload(obj)
            world.workloads[obj.key] = obj
        elif kind == "del-cq":
            assert isinstance(obj, str)
            cache.delete_cluster_queue(obj)
            world.queues.pop(obj, None)
        elif kind == "del-cohort":
            assert isinstance(obj, str)
            cache.delete_cohort(obj)
            world.cohorts.pop(obj, None)
        else:
            assert isinstance(obj, str)
            cache.delete_workload(obj)
            world.workloads.pop(obj, None)
        snap = cache.snapshot()
        assert actual_tree(snap) == expected_tree(world)
        for name, q in snap.cluster_queues.items():
            assert set(q.workloads) == {
                k
                for k, w in world.workloads.items()
                if w.admission is not None and w.admission.cluster_queue == name
            }


@given(
    members=st.lists(
        st.tuples(st.integers(0, 20), st.one_of(st.none(), st.integers(0, 20)), st.integers(0, 30)),
        min_size=1,
        max_size=5,
    )
)
def test_flat_cohort_matches_quota_md_simplification(
    members: list[tuple[int, int | None, int]],
) -> None:
    """quota.md §2, flat single cohort without lending limits or cohort quota:
    ``Available = min(C − Σ usage, nominal − usage + BL)``, ``Potential = min(C, nominal + BL)``
    with ``C = Σ nominal``."""
    queues = [
        cq(f"q{i}", "flat", ("f", "cpu", n, bl, None)) for i, (n, bl, _) in enumerate(members)
    ]
    usage = [
        admitted(f"w{i}", f"q{i}", {("f", "cpu"): used})
        for i, (_, _, used) in enumerate(members)
        if used
    ]
    snap = tree_cache(queues, [], usage).snapshot()
    capacity = sum(n for n, _, _ in members)
    used_total = sum(used for _, _, used in members)
    fr = ("f", "cpu")
    for i, (nominal, bl, used) in enumerate(members):
        queue = snap.cluster_queues[f"q{i}"]
        own = float("inf") if bl is None else nominal - used + bl
        expected = min(capacity - used_total, own)
        assert queue.available(fr) == max(0, expected)
        potential = capacity if bl is None else min(capacity, nominal + bl)
        assert queue.potential_available(fr) == potential
