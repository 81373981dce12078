"""Upstream test cases beyond the shared vectors, run through the conformance driver.

These are further cases of the same upstream tests (``topology_hints_test.go``), written in
the vector format, so the rules (not just the shared cases) are pinned.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conformance.drivers import VectorContext
from tests.conformance.drivers.device_hints import run


def _numa(node: int, *ids: str) -> list[dict[str, Any]]:
    return [{"id": i, "numa": node} for i in ids]


def _aligned(
    name: str,
    request: int,
    devices: list[dict[str, Any]],
    hint: list[int],
    alignment: dict[str, int],
    preferred: list[str] | None = None,
    must: list[str] | None = None,
) -> dict[str, Any]:
    return {
        "name": name,
        "input": {
            "op": "devicesToAllocate",
            "resource": "resource",
            "request": request,
            "devices": devices,
            "allocated_devices": [],
            "reusable_devices": [],
            "topology_affinity_hint": {"numa": hint, "preferred": True},
            "plugin_get_preferred_allocation": None
            if preferred is None
            else {"returns": preferred},
        },
        "expected": {
            "allocated_count": request,
            "must_contain": must or [],
            "numa_alignment_counts": alignment,
        },
    }


def _params(
    name: str,
    request: int,
    devices: list[dict[str, Any]],
    allocated: list[str],
    reusable: list[str],
    available: list[str],
    must: list[str],
) -> dict[str, Any]:
    return {
        "name": name,
        "input": {
            "op": "devicesToAllocate -> GetPreferredAllocation call parameters",
            "resource": "resource",
            "request": request,
            "devices": devices,
            "allocated_devices": allocated,
            "reusable_devices": reusable,
            "topology_affinity_hint": {"numa": [0], "preferred": True},
        },
        "expected": {"available": available, "must_include": must, "size": request},
    }


def _hints(
    name: str,
    op: str,
    containers: list[dict[str, Any]],
    devices: dict[str, list[dict[str, Any]]],
    allocated: dict[str, Any],
    expected: dict[str, Any],
) -> dict[str, Any]:
    return {
        "name": name,
        "input": {
            "op": op,
            "numa_nodes": [0, 1],
            "pod": {"uid": "fakePod", "init_containers": [], "containers": containers},
            "devices": devices,
            "allocated_devices": allocated,
            "active_pods": ["fakePod", "fakeOtherPod"],
        },
        "expected": {"hints": expected},
    }


P0 = {"numa": [0], "preferred": True}
P1 = {"numa": [1], "preferred": True}
N01 = {"numa": [0, 1], "preferred": False}
FOUR = _numa(0, "Dev1", "Dev3") + _numa(1, "Dev2", "Dev4")
MANY_0 = _numa(0, *[f"Dev{i}" for i in range(3)]) + _numa(1, *[f"Dev{i}" for i in range(3, 100)])
EIGHT = _numa(0, "Dev0", "Dev1", "Dev2", "Dev3") + _numa(1, "Dev4", "Dev5", "Dev6", "Dev7")

CASES: list[dict[str, Any]] = [
    _aligned("Single Request, no alignment", 1, [{"id": "Dev1"}, {"id": "Dev2"}], [0, 1], {}),
    _aligned("Single Request, socket 0", 1, _numa(0, "Dev1") + _numa(1, "Dev2"), [0], {"0": 1}),
    _aligned("Single Request, socket 1", 1, _numa(0, "Dev1") + _numa(1, "Dev2"), [1], {"1": 1}),
    _aligned("Request for 2, socket 0", 2, FOUR, [0], {"0": 2}),
    _aligned("Request for 2, socket 1", 2, FOUR, [1], {"1": 2}),
    _aligned(
        "Request for 4, unsatisfiable, prefer socket 0",
        4,
        _numa(0, "Dev1", "Dev3", "Dev5") + _numa(1, "Dev2", "Dev4", "Dev6"),
        [0],
        {"0": 3, "1": 1},
    ),
    _aligned(
        "Request for 4, unsatisfiable, prefer socket 1",
        4,
        _numa(0, "Dev1", "Dev3", "Dev5") + _numa(1, "Dev2", "Dev4", "Dev6"),
        [1],
        {"0": 1, "1": 3},
    ),
    _aligned(
        "Request for 4, multisocket",
        4,
        [{"id": f"Dev{i + 1}", "numa": i % 4} for i in range(8)],
        [1, 3],
        {"1": 2, "3": 2},
    ),
    _aligned(
        "Request for 5, multisocket, preferred accepted",
        5,
        MANY_0,
        [0],
        {"0": 3, "1": 2},
        preferred=["Dev0", "Dev1", "Dev2", "Dev42", "Dev83"],
        must=["Dev0", "Dev1", "Dev2", "Dev42", "Dev83"],
    ),
    _aligned(
        "Request for 5, multisocket, preferred unaligned accepted, bogus ignored",
        5,
        MANY_0,
        [0],
        {"0": 3, "1": 2},
        preferred=["Dev0", "Dev1", "Dev2", "Dev42", "bogus0"],
        must=["Dev0", "Dev1", "Dev2", "Dev42"],
    ),
    _params(
        "Request for 1, socket 0, 0 already allocated, 0 reusable",
        1,
        _numa(0, "Dev0", "Dev1", "Dev2", "Dev3"),
        [],
        [],
        ["Dev0", "Dev1", "Dev2", "Dev3"],
        [],
    ),
    _params(
        "Request for 4, socket 0, 2 already allocated, 2 reusable",
        4,
        _numa(0, *[f"Dev{i}" for i in range(8)]),
        ["Dev0", "Dev5"],
        ["Dev0", "Dev5"],
        [f"Dev{i}" for i in range(8)],
        ["Dev0", "Dev5"],
    ),
    _hints(
        "Request for 2, optimal on 1 NUMA node, forced cross-NUMA",
        "GetTopologyHints(pod, pod.containers[0])",
        [{"name": "fakeContainer", "limits": {"testdevice": "2"}}],
        {"testdevice": FOUR},
        {"fakePod": {"fakeOtherContainer": {"testdevice": ["Dev1", "Dev2"]}}},
        {"testdevice": [N01]},
    ),
    _hints(
        "Single device type, all already allocated to container",
        "GetTopologyHints(pod, pod.containers[0])",
        [{"name": "fakeContainer", "limits": {"testdevice": "2"}}],
        {"testdevice": _numa(0, "Dev1", "Dev2")},
        {"fakePod": {"fakeContainer": {"testdevice": ["Dev1", "Dev2"]}}},
        {"testdevice": [P0, N01]},
    ),
    _hints(
        "Request for 2, one device per socket",
        "GetTopologyHints(pod, pod.containers[0])",
        [{"name": "fakeContainer", "limits": {"testdevice": "2"}}],
        {"testdevice": _numa(0, "Dev1") + _numa(1, "Dev2")},
        {},
        {"testdevice": [{"numa": [0, 1], "preferred": True}]},
    ),
    _hints(
        "2 device types, user container only, optimal on 1 NUMA node, forced cross-NUMA",
        "GetPodTopologyHints(pod)",
        [
            {"name": "fakeContainer1", "limits": {"testdevice1": "1", "testdevice2": "1"}},
            {"name": "fakeContainer2", "limits": {"testdevice1": "1", "testdevice2": "1"}},
            {"name": "fakeContainer3", "limits": {"notRegistered": "1"}},
        ],
        {"testdevice1": EIGHT[:2] + EIGHT[4:6], "testdevice2": EIGHT[:2] + EIGHT[4:6]},
        {
            "fakeOtherPod": {
                "fakeOtherContainer": {
                    "testdevice1": ["Dev0", "Dev4"],
                    "testdevice2": ["Dev0", "Dev4"],
                }
            }
        },
        {"testdevice1": [N01], "testdevice2": [N01]},
    ),
    _hints(
        "Single device type, less already allocated to pod than requested",
        "GetPodTopologyHints(pod)",
        [{"name": "fakeContainer", "limits": {"testdevice": "4"}}],
        {"testdevice": FOUR},
        {"fakePod": {"fakeContainer": {"testdevice": ["Dev1", "Dev2"]}}},
        {"testdevice": []},
    ),
    _hints(
        "Devices of an inactive pod are released before hints",
        "GetPodTopologyHints(pod)",
        [{"name": "fakeContainer", "limits": {"testdevice": "2"}}],
        {"testdevice": FOUR},
        {"gonePod": {"c": {"testdevice": ["Dev1", "Dev2", "Dev3"]}}},
        {"testdevice": [P0, P1, N01]},
    ),
    {
        "name": "empty pod",
        "input": {"op": "getPodDeviceRequest", "pod": {}, "registered_resources": []},
        "expected": {"requests": {}},
    },
    {
        "name": "Init containers and user containers request the same amount",
        "input": {
            "op": "getPodDeviceRequest",
            "pod": {
                "init_containers": [{"limits": {"gpu": "2", "nic": "2", "cpu": "2"}}] * 2,
                "containers": [{"limits": {"gpu": "1", "nic": "1", "memory": "1G"}}] * 2,
            },
            "registered_resources": ["gpu", "nic"],
        },
        "expected": {"requests": {"gpu": 2, "nic": 2}},
    },
    {
        "name": "sidecar devices add to app containers and to later init containers",
        "input": {
            "op": "getPodDeviceRequest",
            "pod": {
                "init_containers": [
                    {"name": "side", "limits": {"gpu": "1"}, "restart_policy": "Always"},
                    {"name": "init", "limits": {"gpu": "3"}},
                ],
                "containers": [{"limits": {"gpu": "2"}}],
            },
            "registered_resources": ["gpu"],
        },
        "expected": {"requests": {"gpu": 4}},
    },
]


@pytest.mark.parametrize("vector", CASES, ids=[c["name"] for c in CASES])
def test_upstream_case(vector: dict[str, Any]) -> None:
    """Each further upstream case holds under the same driver as the shared vectors."""
    run(vector, VectorContext(Path("."), "inline"))
