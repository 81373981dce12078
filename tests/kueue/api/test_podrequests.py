"""Per-pod requests as upstream's ``PodRequests`` computes them: containers summed, init
containers as a floor (with the restartable ones before them), sidecars added, pod-level
requests replacing the container total, overhead added, limits standing in for missing
requests, negative requests charged as zero, and exact sums rounded once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.kueue.api.podrequests import pod_requests
from numaplane.kueue.errors import KueueObjectError


def c(
    requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": "c", "image": "x", "resources": resources, **extra}


def sidecar(requests: dict[str, Any]) -> dict[str, Any]:
    return c(requests, restartPolicy="Always")


@dataclass(frozen=True)
class Case:
    name: str
    spec: dict[str, Any]
    want: dict[str, int]


CASES = [
    Case("empty", {"containers": [{"name": "c", "image": "x"}]}, {}),
    Case(
        "containers are summed",
        {
            "containers": [
                c({"cpu": "1", "memory": "1Gi"}),
                c({"cpu": "500m", "example.com/gpu": 2}),
            ]
        },
        {"cpu": 1500, "memory": 1 << 30, "example.com/gpu": 2},
    ),
    Case(
        "an init container is a floor per resource",
        {
            "initContainers": [c({"cpu": "3", "memory": "10Mi"})],
            "containers": [c({"cpu": "1", "memory": "1Gi"})],
        },
        {"cpu": 3000, "memory": 1 << 30},
    ),
    Case(
        "the largest init container is the floor",
        {
            "initContainers": [c({"cpu": "2"}), c({"cpu": "4"}), c({"cpu": "1"})],
            "containers": [c({"cpu": "1"})],
        },
        {"cpu": 4000},
    ),
    Case(
        "an init-only resource is charged",
        {"initContainers": [c({"example.com/x": 1})], "containers": [c({"cpu": "1"})]},
        {"cpu": 1000, "example.com/x": 1},
    ),
    Case(
        "a sidecar adds to the containers",
        {"initContainers": [sidecar({"cpu": "1"})], "containers": [c({"cpu": "2"})]},
        {"cpu": 3000},
    ),
    Case(
        "a sidecar runs beside later init containers only",
        {
            # init A (5) runs alone; sidecar S (1) starts; init B (3) runs with S: 4;
            # then the app (2) with S: 3. The floor is 5.
            "initContainers": [c({"cpu": "5"}), sidecar({"cpu": "1"}), c({"cpu": "3"})],
            "containers": [c({"cpu": "2"})],
        },
        {"cpu": 5000},
    ),
    Case(
        "an init container after a sidecar counts it",
        {
            "initContainers": [sidecar({"cpu": "2"}), c({"cpu": "4"})],
            "containers": [c({"cpu": "1"})],
        },
        {"cpu": 6000},
    ),
    Case(
        "overhead is added",
        {"containers": [c({"cpu": "1"})], "overhead": {"cpu": "250m", "memory": "64Mi"}},
        {"cpu": 1250, "memory": 64 << 20},
    ),
    Case(
        "a limit stands in for a missing request",
        {"containers": [c({"cpu": "1"}, {"cpu": "2", "memory": "1Gi"})]},
        {"cpu": 1000, "memory": 1 << 30},
    ),
    Case(
        "limits alone",
        {"containers": [c(None, {"cpu": "2"})], "initContainers": [c(None, {"cpu": "3"})]},
        {"cpu": 3000},
    ),
    Case(
        "pod-level requests replace the container total for cpu and memory",
        {
            "containers": [c({"cpu": "1", "memory": "1Gi", "example.com/gpu": 1})],
            "resources": {"requests": {"cpu": "4", "example.com/gpu": 8}},
        },
        {"cpu": 4000, "memory": 1 << 30, "example.com/gpu": 1},
    ),
    Case(
        "a pod-level limit stands in for a pod-level request no container makes, then overhead",
        {
            "containers": [c({"cpu": "1"})],
            "resources": {"limits": {"memory": "2Gi"}},
            "overhead": {"memory": "1Gi"},
        },
        {"cpu": 1000, "memory": 3 << 30},
    ),
    Case(
        "a pod-level limit leaves the containers' requests alone",
        {"containers": [c({"memory": "1Gi"})], "resources": {"limits": {"memory": "2Gi"}}},
        {"memory": 1 << 30},
    ),
    Case(
        "a negative request is charged as zero",
        {"containers": [c({"cpu": "-1"}), c({"cpu": "1"})]},
        {"cpu": 1000},
    ),
    Case(
        "fractions are summed before rounding up",
        {"containers": [c({"cpu": "0.5m"}), c({"cpu": "0.5m"}), c({"memory": "0.5"})]},
        {"cpu": 1, "memory": 1},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_pod_requests(case: Case) -> None:
    assert pod_requests(case.spec) == case.want


def test_a_bad_quantity_names_the_field() -> None:
    with pytest.raises(KueueObjectError) as err:
        pod_requests({"containers": [c({"cpu": "lots"})]}, kind="Workload", name="ns/w")
    assert str(err.value).startswith("Workload ns/w: spec.containers[0].resources.requests.cpu: ")
    assert "\n" not in str(err.value)
