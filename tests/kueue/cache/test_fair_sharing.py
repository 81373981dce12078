"""Dominant Resource Share of queues and Cohorts (upstream ``fair_sharing.go``; cases from
upstream ``TestDominantResourceShare``): a borrowing ``cq`` next to a ``lending-cq``."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from numaplane.kueue.api.model import ResourceFlavor
from numaplane.kueue.cache import DRS, KueueCache, compare_drs
from tests.kueue.cache.builders import Cell, admitted, cq

GPU = "example.com/gpu"
MAX_INT64 = 2**63 - 1


@dataclass(frozen=True)
class ShareCase:
    name: str
    cells: tuple[Cell, ...]
    lending: tuple[Cell, ...]
    usage: dict[tuple[str, str], int]
    expected: tuple[int, str, bool]
    weight_milli: int = 1000
    request: dict[tuple[str, str], int] | None = None
    cohort: str = "test-cohort"


def d(resource: str, nominal: int, lending: int | None = None, flavor: str = "default") -> Cell:
    return (flavor, resource, nominal, None, lending)


SHARE_CASES = (
    ShareCase(
        "no cohort",
        (d("cpu", 2000), d(GPU, 5)),
        (),
        {("default", "cpu"): 1000, ("default", GPU): 2},
        (0, "", False),
        cohort="",
    ),
    ShareCase(
        "usage below nominal",
        (d("cpu", 2000), d(GPU, 5)),
        (d("cpu", 8000), d(GPU, 5)),
        {("default", "cpu"): 1000, ("default", GPU): 2},
        (0, "", False),
    ),
    ShareCase(
        "usage above nominal: (7-5)*1000/10",
        (d("cpu", 2000), d(GPU, 5)),
        (d("cpu", 8000), d(GPU, 5)),
        {("default", "cpu"): 3000, ("default", GPU): 7},
        (200, GPU, True),
    ),
    ShareCase(
        "one resource above nominal: (3-2)*1000/10",
        (d("cpu", 2000), d(GPU, 5)),
        (d("cpu", 8000), d(GPU, 5)),
        {("default", "cpu"): 3000, ("default", GPU): 3},
        (100, "cpu", True),
    ),
    ShareCase(
        "with the workload's request: (1+4-2)*1000/10",
        (d("cpu", 2000), d(GPU, 5)),
        (d("cpu", 8000), d(GPU, 5)),
        {("default", "cpu"): 1000, ("default", GPU): 2},
        (300, "cpu", True),
        request={("default", "cpu"): 4000, ("default", GPU): 4},
    ),
    ShareCase(
        "slightly above nominal in a large cohort rounds up to 1",
        (d(GPU, 500),),
        (d(GPU, 1000),),
        {("default", GPU): 501},
        (1, GPU, True),
    ),
    ShareCase(
        "way above nominal, weight 300",
        (d(GPU, 500),),
        (d(GPU, 1000),),
        {("default", GPU): 800},
        (1, GPU, True),
        weight_milli=300_000,
    ),
    ShareCase(
        "a resource nobody lends does not count",
        (d("cpu", 2000), d(GPU, 2, lending=0)),
        (d("cpu", 8000), d(GPU, 64, lending=0)),
        {("default", "cpu"): 1000, ("default", GPU): 1},
        (300, "cpu", True),
        request={("default", "cpu"): 4000, ("default", GPU): 4},
    ),
    ShareCase(
        "zero weight borrowing only what nobody lends",
        (d(GPU, 2, lending=0),),
        (d(GPU, 64, lending=0),),
        {("default", GPU): 3},
        (MAX_INT64, "", True),
        weight_milli=0,
    ),
    ShareCase(
        "flavors of a resource add up: ((15+10-20)+0)*1000/200",
        (d("cpu", 20000, flavor="on-demand"), d("cpu", 80000, flavor="spot")),
        (d("cpu", 100000),),
        {("on-demand", "cpu"): 15000, ("spot", "cpu"): 5000},
        (25, "cpu", True),
        request={("on-demand", "cpu"): 10000},
    ),
    ShareCase(
        "weight 2 halves the share",
        (d(GPU, 5),),
        (d(GPU, 5),),
        {("default", GPU): 7},
        (100, GPU, True),
        weight_milli=2000,
    ),
)


@pytest.mark.parametrize("case", SHARE_CASES, ids=[c.name for c in SHARE_CASES])
def test_dominant_resource_share(case: ShareCase) -> None:
    cache = KueueCache()
    for flavor in ("default", "on-demand", "spot"):
        cache.upsert_flavor(ResourceFlavor(flavor))
    cache.upsert_cluster_queue(
        replace(cq("cq", case.cohort, *case.cells), fair_weight_milli=case.weight_milli)
    )
    if case.lending:
        cache.upsert_cluster_queue(cq("lending-cq", case.cohort, *case.lending))
    for i, (fr, amount) in enumerate(case.usage.items()):
        cache.upsert_workload(admitted(f"w{i}", "cq", {fr: amount}))
    snap = cache.snapshot()
    drs = snap.cluster_queues["cq"].dominant_resource_share(case.request)
    value, resource = drs.rounded_weighted_share()
    assert (value, resource, drs.borrowing) == case.expected
    if case.lending:
        assert snap.cluster_queues[
            "lending-cq"
        ].dominant_resource_share().rounded_weighted_share() == (0, "")
        assert snap.cohorts[case.cohort].dominant_resource_share().rounded_weighted_share() == (
            0,
            "",
        )
    if case.request is None:
        live = cache.cluster_queue_drs("cq")
        assert live is not None
        assert live.rounded_weighted_share() == (value, resource)


def test_compare_drs_orders_zero_weight_borrowers_last() -> None:
    small = DRS(fair_weight=1.0, unweighted_ratio=10.0, borrowing=True)
    large = DRS(fair_weight=1.0, unweighted_ratio=20.0, borrowing=True)
    infinite = DRS(fair_weight=0.0, unweighted_ratio=1.0, borrowing=True)
    assert compare_drs(small, large) == -1
    assert compare_drs(large, small) == 1
    assert compare_drs(small, small) == 0
    assert compare_drs(infinite, large) == 1
    assert compare_drs(large, infinite) == -1
    assert compare_drs(DRS.negative(), DRS(fair_weight=1.0)) == -1


def test_is_borrowing_on_requested_resources() -> None:
    drs = DRS(fair_weight=1.0, unweighted_ratio=5.0, borrowing=True, borrowed_frs=(("f", "cpu"),))
    assert drs.is_borrowing_on({("f", "cpu"): 1})
    assert not drs.is_borrowing_on({("f", "memory"): 1, ("f", "cpu"): 0})
