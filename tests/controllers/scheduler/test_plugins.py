"""The filter plugins and NodeResourcesFit's scores, case by case (upstream's semantics and
reason strings)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from numaplane.controllers.scheduler import (
    node_affinity,
    node_unschedulable,
    noderesources_fit,
    taint_toleration,
)
from numaplane.controllers.scheduler.nodeinfo import NodeInfo
from numaplane.controllers.scheduler.podinfo import PodInfo, pod_info

from .helpers import node_obj, pod_obj

AFFINITY = "node(s) didn't match Pod's node affinity/selector"


def node_with(obj: dict[str, Any], *bound: dict[str, Any]) -> NodeInfo:
    info = NodeInfo(obj)
    for pod in bound:
        info.add_pod(pod_info(pod))
    return info


@dataclass(frozen=True)
class FilterCase:
    name: str
    plugin: Callable[[PodInfo, NodeInfo], tuple[str, ...]]
    pod: dict[str, Any]
    node: dict[str, Any]
    want: tuple[str, ...]
    bound: tuple[dict[str, Any], ...] = field(default=())


def req(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": op, **({"values": list(values)} if values else {})}


def required(*terms: list[dict[str, Any]], fields: list[dict[str, Any]] | None = None) -> Any:
    built = [{"matchExpressions": t} for t in terms]
    if fields is not None:
        built.append({"matchFields": fields})
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": built}
        }
    }


FIT = noderesources_fit.filter_node
AFF = node_affinity.filter_node
TAINT = taint_toleration.filter_node
UNSCHED = node_unschedulable.filter_node
ZONE = {"topology.kubernetes.io/zone": "a", "rank": "5"}
NOSCHED = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}

CASES = [
    FilterCase("fit/fits", FIT, pod_obj("p", cpu="2"), node_obj("n", cpu="4"), ()),
    FilterCase(
        "fit/insufficient cpu after bound pods",
        FIT,
        pod_obj("p", cpu="2"),
        node_obj("n", cpu="4"),
        ("Insufficient cpu",),
        (pod_obj("a", cpu="3"),),
    ),
    FilterCase(
        "fit/cpu and memory both insufficient",
        FIT,
        pod_obj("p", cpu="8", memory="16Gi"),
        node_obj("n"),
        ("Insufficient cpu", "Insufficient memory"),
    ),
    FilterCase(
        "fit/too many pods",
        FIT,
        pod_obj("p", cpu="100m"),
        node_obj("n", pods="1"),
        ("Too many pods",),
        (pod_obj("a", cpu="100m"),),
    ),
    FilterCase(
        "fit/best effort fits a full node",
        FIT,
        pod_obj("p", cpu=None, memory=None),
        node_obj("n", cpu="1"),
        (),
        (pod_obj("a", cpu="1"),),
    ),
    FilterCase(
        "fit/extended resource missing on the node",
        FIT,
        {
            **pod_obj("p"),
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "resources": {
                            "requests": {"example.com/gpu": "1"},
                            "limits": {"example.com/gpu": "1"},
                        },
                    }
                ]
            },
        },
        node_obj("n"),
        ("Insufficient example.com/gpu",),
    ),
    FilterCase(
        "affinity/selector matches",
        AFF,
        pod_obj("p", node_selector={"rank": "5"}),
        node_obj("n", labels=ZONE),
        (),
    ),
    FilterCase(
        "affinity/selector differs",
        AFF,
        pod_obj("p", node_selector={"rank": "6"}),
        node_obj("n", labels=ZONE),
        (AFFINITY,),
    ),
    FilterCase(
        "affinity/In",
        AFF,
        pod_obj("p", affinity=required([req("rank", "In", "4", "5")])),
        node_obj("n", labels=ZONE),
        (),
    ),
    FilterCase(
        "affinity/NotIn missing label",
        AFF,
        pod_obj("p", affinity=required([req("gpu", "NotIn", "x")])),
        node_obj("n", labels=ZONE),
        (),
    ),
    FilterCase(
        "affinity/Exists fails",
        AFF,
        pod_obj("p", affinity=required([req("gpu", "Exists")])),
        node_obj("n", labels=ZONE),
        (AFFINITY,),
    ),
    FilterCase(
        "affinity/DoesNotExist",
        AFF,
        pod_obj("p", affinity=required([req("gpu", "DoesNotExist")])),
        node_obj("n", labels=ZONE),
        (),
    ),
    FilterCase(
        "affinity/Gt",
        AFF,
        pod_obj("p", affinity=required([req("rank", "Gt", "4")])),
        node_obj("n", labels=ZONE),
        (),
    ),
    FilterCase(
        "affinity/Lt fails",
        AFF,
        pod_obj("p", affinity=required([req("rank", "Lt", "5")])),
        node_obj("n", labels=ZONE),
        (AFFINITY,),
    ),
    FilterCase(
        "affinity/Gt not an integer",
        AFF,
        pod_obj("p", affinity=required([req("topology.kubernetes.io/zone", "Gt", "1")])),
        node_obj("n", labels=ZONE),
        (AFFINITY,),
    ),
    FilterCase(
        "affinity/terms are ORed",
        AFF,
        pod_obj("p", affinity=required([req("gpu", "Exists")], [req("rank", "In", "5")])),
        node_obj("n", labels=ZONE),
        (),
    ),
    FilterCase(
        "affinity/expressions are ANDed",
        AFF,
        pod_obj("p", affinity=required([req("gpu", "DoesNotExist"), req("rank", "In", "6")])),
        node_obj("n", labels=ZONE),
        (AFFINITY,),
    ),
    FilterCase(
        "affinity/matchFields metadata.name",
        AFF,
        pod_obj("p", affinity=required(fields=[req("metadata.name", "In", "n")])),
        node_obj("n"),
        (),
    ),
    FilterCase(
        "affinity/empty term matches nothing",
        AFF,
        pod_obj("p", affinity=required([])),
        node_obj("n"),
        (AFFINITY,),
    ),
    FilterCase(
        "taint/untolerated NoSchedule",
        TAINT,
        pod_obj("p"),
        node_obj("n", taints=[NOSCHED]),
        ("node(s) had untolerated taint {dedicated: gpu}",),
    ),
    FilterCase(
        "taint/PreferNoSchedule ignored",
        TAINT,
        pod_obj("p"),
        node_obj("n", taints=[{**NOSCHED, "effect": "PreferNoSchedule"}]),
        (),
    ),
    FilterCase(
        "taint/Equal toleration",
        TAINT,
        pod_obj("p", tolerations=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
        node_obj("n", taints=[NOSCHED]),
        (),
    ),
    FilterCase(
        "taint/Equal other value",
        TAINT,
        pod_obj("p", tolerations=[{"key": "dedicated", "value": "cpu"}]),
        node_obj("n", taints=[NOSCHED]),
        ("node(s) had untolerated taint {dedicated: gpu}",),
    ),
    FilterCase(
        "taint/Exists without key tolerates all",
        TAINT,
        pod_obj("p", tolerations=[{"operator": "Exists"}]),
        node_obj("n", taints=[NOSCHED, {"key": "x", "effect": "NoExecute"}]),
        (),
    ),
    FilterCase(
        "taint/effect must match",
        TAINT,
        pod_obj(
            "p", tolerations=[{"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}]
        ),
        node_obj("n", taints=[NOSCHED]),
        ("node(s) had untolerated taint {dedicated: gpu}",),
    ),
    FilterCase(
        "unschedulable/cordoned",
        UNSCHED,
        pod_obj("p"),
        node_obj("n", unschedulable=True),
        ("node(s) were unschedulable",),
    ),
    FilterCase(
        "unschedulable/tolerated",
        UNSCHED,
        pod_obj(
            "p", tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]
        ),
        node_obj("n", unschedulable=True),
        (),
    ),
    FilterCase("unschedulable/schedulable", UNSCHED, pod_obj("p"), node_obj("n"), ()),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_filter(case: FilterCase) -> None:
    assert case.plugin(pod_info(case.pod), node_with(case.node, *case.bound)) == case.want


@dataclass(frozen=True)
class ScoreCase:
    name: str
    strategy: str
    pod: dict[str, Any]
    bound: tuple[dict[str, Any], ...]
    want: int


# Node: 4 cpu (4000m), 8Gi. Pod 1 cpu / 2Gi on an empty node: cpu 3000/4000 free -> 75,
# memory 6/8 -> 75: LeastAllocated 75, MostAllocated 25.
SCORES = [
    ScoreCase("least/empty node", "LeastAllocated", pod_obj("p", memory="2Gi"), (), 75),
    ScoreCase("most/empty node", "MostAllocated", pod_obj("p", memory="2Gi"), (), 25),
    # cpu (1000+2000)/4000 used -> 25 free; memory (2+2)/8 -> 50 free: mean 37.
    ScoreCase(
        "least/half full",
        "LeastAllocated",
        pod_obj("p", memory="2Gi"),
        (pod_obj("a", cpu="2", memory="2Gi"),),
        37,
    ),
    ScoreCase(
        "most/half full",
        "MostAllocated",
        pod_obj("p", memory="2Gi"),
        (pod_obj("a", cpu="2", memory="2Gi"),),
        62,
    ),
    # No requests: counts 100m and 200MB (upstream's non-zero defaults):
    # cpu 3900*100//4000 = 97; memory (8Gi-200MB)*100//8Gi = 97.
    ScoreCase(
        "least/best effort counts defaults",
        "LeastAllocated",
        pod_obj("p", cpu=None, memory=None),
        (),
        97,
    ),
    ScoreCase(
        "least/overcommitted scores 0",
        "LeastAllocated",
        pod_obj("p", cpu="8", memory="16Gi"),
        (),
        0,
    ),
]


@pytest.mark.parametrize("case", SCORES, ids=[c.name for c in SCORES])
def test_score(case: ScoreCase) -> None:
    node = node_with(node_obj("n"), *case.bound)
    assert noderesources_fit.score(case.strategy, pod_info(case.pod), node) == case.want
