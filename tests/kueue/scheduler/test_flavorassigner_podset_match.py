"""Flavor ⇄ podSet matching (``podset_match``): taints against the pods' and the flavor's
tolerations, node selector and required affinity reduced to the flavor's own label keys, and
upstream's lazy selector errors."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from numaplane.api import tolerations
from numaplane.controllers.scheduler import taint_toleration
from numaplane.kueue.api.model import PodSet, ResourceFlavor
from numaplane.kueue.scheduler.podset_match import (
    PodSetMatchError,
    flavor_mismatch,
    taint_string,
)

GPU_FLAVOR = ResourceFlavor("gpu", node_labels={"accel": "a100", "zone": "z1", "size": "8"})
SPOT = {"key": "spot", "value": "true", "effect": "NoSchedule"}


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": op, "values": list(values)}


@dataclass(frozen=True)
class MatchCase:
    name: str
    flavor: ResourceFlavor
    want: str | None
    node_selector: Mapping[str, str] = field(default_factory=dict)
    terms: tuple[Mapping[str, Any], ...] = ()
    tolerations: tuple[Mapping[str, Any], ...] = ()


def terms(*groups: list[dict[str, Any]]) -> tuple[Mapping[str, Any], ...]:
    return tuple({"matchExpressions": g} for g in groups)


AFFINITY = "flavor gpu doesn't match node affinity"
CASES = [
    MatchCase("no constraints", GPU_FLAVOR, None),
    MatchCase("selector on a flavor key matches", GPU_FLAVOR, None, node_selector={"zone": "z1"}),
    MatchCase(
        "selector on a flavor key differs", GPU_FLAVOR, AFFINITY, node_selector={"zone": "z2"}
    ),
    MatchCase(
        "selector keys the flavor does not set are ignored",
        GPU_FLAVOR,
        None,
        node_selector={"team": "x", "zone": "z1"},
    ),
    MatchCase(
        "NotIn excludes", GPU_FLAVOR, AFFINITY, terms=terms([expr("accel", "NotIn", "a100")])
    ),
    MatchCase("Exists", GPU_FLAVOR, None, terms=terms([expr("accel", "Exists")])),
    MatchCase("DoesNotExist", GPU_FLAVOR, AFFINITY, terms=terms([expr("accel", "DoesNotExist")])),
    MatchCase("Gt compares integers", GPU_FLAVOR, None, terms=terms([expr("size", "Gt", "4")])),
    MatchCase("Lt compares integers", GPU_FLAVOR, AFFINITY, terms=terms([expr("size", "Lt", "4")])),
    MatchCase(
        "expressions of a term are ANDed",
        GPU_FLAVOR,
        AFFINITY,
        terms=terms([expr("accel", "In", "a100"), expr("zone", "In", "z9")]),
    ),
    MatchCase(
        "terms are ORed",
        GPU_FLAVOR,
        None,
        terms=terms([expr("zone", "In", "z9")], [expr("accel", "In", "a100")]),
    ),
    MatchCase(
        "a term left without the flavor's keys matches any flavor",
        GPU_FLAVOR,
        None,
        terms=terms([expr("zone", "In", "z9")], [expr("team", "In", "x")]),
    ),
    MatchCase(
        "an unparsable term does not matter when another matches",
        GPU_FLAVOR,
        None,
        terms=terms([expr("zone", "Gt", "x")], [expr("accel", "In", "a100")]),
    ),
    MatchCase(
        "an untolerated NoSchedule taint comes first",
        ResourceFlavor("gpu", node_taints=(SPOT,)),
        "untolerated taint {spot true NoSchedule <nil>} in flavor gpu",
    ),
    MatchCase(
        "the pods' toleration tolerates it",
        ResourceFlavor("gpu", node_taints=(SPOT,)),
        None,
        tolerations=({"key": "spot", "operator": "Exists"},),
    ),
    MatchCase(
        "the flavor's own toleration tolerates it",
        ResourceFlavor("gpu", node_taints=(SPOT,), tolerations=({"operator": "Exists"},)),
        None,
    ),
    MatchCase(
        "PreferNoSchedule taints are not checked",
        ResourceFlavor("gpu", node_taints=({"key": "k", "effect": "PreferNoSchedule"},)),
        None,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_flavor_mismatch(case: MatchCase) -> None:
    podset = PodSet(
        "main",
        1,
        {"cpu": 1000},
        node_selector=case.node_selector,
        required_node_affinity=case.terms,
        tolerations=case.tolerations,
    )
    assert flavor_mismatch(podset, case.flavor) == case.want


@dataclass(frozen=True)
class ErrorCase:
    name: str
    terms: tuple[Mapping[str, Any], ...]
    want: str


ERROR_CASES = [
    ErrorCase(
        "unknown operator",
        terms([expr("zone", "Near", "z1")]),
        'nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Near"',
    ),
    ErrorCase(
        "Gt needs an integer",
        terms([expr("size", "Gt", "big")]),
        "nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: \"big\": for 'Gt', "
        "'Lt' operators, the value must be an integer",
    ),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c.name for c in ERROR_CASES])
def test_a_deciding_term_that_does_not_parse_is_an_error(case: ErrorCase) -> None:
    podset = PodSet("main", 1, {}, required_node_affinity=case.terms)
    with pytest.raises(PodSetMatchError) as err:
        flavor_mismatch(podset, GPU_FLAVOR)
    assert str(err.value) == case.want


def test_taint_string_prints_time_added_when_set() -> None:
    taint = {"key": "k", "value": "", "effect": "NoExecute", "timeAdded": "2024-01-02T03:04:05Z"}
    assert taint_string(taint) == "{k  NoExecute 2024-01-02T03:04:05Z}"


def test_the_scheduler_package_still_exports_tolerates() -> None:
    assert taint_toleration.tolerates is tolerations.tolerates
