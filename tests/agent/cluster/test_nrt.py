"""``nrt_object``: zones, per-zone cpu/memory/hugepages/device figures as NFD's
topology-updater reports them, attributes, and the exact snapshot annotation; the CRD built in
code."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from numaplane.agent.cluster.nodeobject import NodeSystemInfo, node_object
from numaplane.agent.cluster.nrt import (
    SNAPSHOT_ANNOTATION,
    nrt_object,
    topology_policy_name,
)
from numaplane.agent.cluster.nrtcrd import nrt_crd
from numaplane.api.kubeletconfig import kubelet_config_from_dict
from numaplane.api.pod import Container, Pod
from numaplane.api.quantity import Quantity
from numaplane.node.admission import Node
from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.source import InMemoryDeviceSource
from numaplane.node.snapshot import NodeSnapshot, restore_node
from numaplane.testing.fixtures import shared_topologies_dir
from numaplane.topology.model import Machine
from numaplane.topology.presets import PRESETS
from numaplane.topology.synthetic import parse_synthetic

GPU = "example.com/gpu"


def _static(machine: Machine, **extra: Any) -> dict[str, Any]:
    return {
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": "0,1",
        "systemReserved": {"memory": "1Gi"},
        "evictionHard": {"memory.available": "100Mi"},
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": machine.numa_ids[0], "limits": {"memory": "1124Mi"}}],
        "topologyManagerPolicy": "single-numa-node",
        **extra,
    }


def _zones(obj: dict[str, Any]) -> dict[str, dict[str, dict[str, int]]]:
    return {
        z["name"]: {
            r["name"]: {
                k: Quantity.parse(r[k]).value() for k in ("capacity", "allocatable", "available")
            }
            for r in z["resources"]
        }
        for z in obj["zones"]
    }


@dataclass(frozen=True)
class Case:
    name: str
    machine: str
    static: bool = True
    config: dict[str, Any] = field(default_factory=dict)


CASES = [
    Case("4 NUMA nodes static", "dual-socket-multi-numa"),
    Case("2 NUMA nodes static pod scope", "dual-socket-ht", config={"topologyManagerScope": "pod"}),
    Case("none policies", "dual-socket-multi-numa", static=False),
    Case("8 NUMA nodes", "sockets=2,numa-per-socket=4,cores-per-numa=4,threads-per-core=2"),
]


def _machine(spec: str) -> Machine:
    return PRESETS[spec].build() if spec in PRESETS else parse_synthetic(spec)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_zones_add_up_to_the_node(case: Case) -> None:
    machine = _machine(case.machine)
    config = kubelet_config_from_dict(_static(machine, **case.config) if case.static else {})
    node = Node(machine, config)
    obj = nrt_object("n1", node, snapshot=False)
    zones = _zones(obj)
    assert list(zones) == [f"node-{n}" for n in machine.numa_ids]
    cpu = [z["cpu"] for z in zones.values()]
    assert sum(c["capacity"] for c in cpu) == len(machine.all_cpu_ids)
    assert sum(c["allocatable"] for c in cpu) == len(machine.all_cpu_ids) - (
        2 if case.static else 0
    )
    assert all(c["available"] == c["allocatable"] for c in cpu)
    if case.static:
        memory = [z["memory"] for z in zones.values()]
        assert sum(m["capacity"] for m in memory) == machine.memory_bytes
        # Allocatable per zone: the node's memory minus reservedMemory on its node.
        assert sum(m["allocatable"] for m in memory) == machine.memory_bytes - 1124 * (1 << 20)
    else:
        assert all("memory" not in z for z in zones.values())
    attributes = {a["name"]: a["value"] for a in obj["attributes"]}
    assert attributes == {
        "topologyManagerPolicy": config.topology_manager_policy,
        "topologyManagerScope": config.topology_manager_scope,
    }
    for zone in obj["zones"]:
        own = machine.numa_node(int(zone["name"].removeprefix("node-")))
        assert [(c["name"], c["value"]) for c in zone["costs"]] == [
            (f"node-{other}", dist) for other, dist in own.distances
        ]


def test_available_drops_by_what_a_pod_holds() -> None:
    machine = PRESETS["dual-socket-multi-numa"].build()
    gpus = [Device(f"gpu{n}", (n,)) for n in machine.numa_ids]
    node = Node(
        machine,
        kubelet_config_from_dict(_static(machine)),
        device_sources=[InMemoryDeviceSource(GPU, gpus)],
    )
    limits: dict[str, str | int] = {"cpu": "4", "memory": "2Gi", GPU: 1}
    admitted = node.admit(Pod.of("p", [Container.of("c", limits, limits)]))
    assert admitted.admitted
    (numa,) = admitted.containers[0].memory_numa_nodes or ()
    zones = _zones(nrt_object("n1", node, snapshot=False))
    for name, zone in zones.items():
        held = name == f"node-{numa}"
        assert zone["cpu"]["allocatable"] - zone["cpu"]["available"] == (4 if held else 0)
        assert zone["memory"]["allocatable"] - zone["memory"]["available"] == (
            2 << 30 if held else 0
        )
        assert zone[GPU] == {"capacity": 1, "allocatable": 1, "available": 0 if held else 1}


def test_hugepages_zones() -> None:
    machine = parse_synthetic("sockets=2,cores-per-numa=4,hugepages-2Mi-per-numa=128")
    node = Node(machine, kubelet_config_from_dict(_static(machine)))
    zones = _zones(nrt_object("n1", node, snapshot=False))
    assert zones["node-1"]["hugepages-2Mi"] == {
        "capacity": 256 << 20,
        "allocatable": 256 << 20,
        "available": 256 << 20,
    }


def test_snapshot_annotation_restores_the_node() -> None:
    machine = PRESETS["dual-socket-multi-numa"].build()
    node = Node(machine, kubelet_config_from_dict(_static(machine)))
    node.admit(
        Pod.of(
            "p", [Container.of("c", {"cpu": "2", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"})]
        )
    )
    obj = nrt_object("n1", node, owner_uid="uid-1")
    snapshot = NodeSnapshot.from_json(obj["metadata"]["annotations"][SNAPSHOT_ANNOTATION])
    restored = restore_node(snapshot, {})
    assert [p.uid for p in restored.pods] == ["p"]
    assert obj["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "uid-1"}
    ]


@pytest.mark.parametrize(
    ("policy", "scope", "name"),
    [
        ("none", "container", "None"),
        ("single-numa-node", "container", "SingleNUMANodeContainerLevel"),
        ("single-numa-node", "pod", "SingleNUMANodePodLevel"),
        ("restricted", "pod", "RestrictedPodLevel"),
        ("best-effort", "container", "BestEffortContainerLevel"),
    ],
)
def test_topology_policy_names(policy: str, scope: str, name: str) -> None:
    assert topology_policy_name(policy, scope) == name


# -- the CRD --------------------------------------------------------------------------------------


def _without_descriptions(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_descriptions(v) for k, v in value.items() if k != "description"}
    if isinstance(value, list):
        return [_without_descriptions(v) for v in value]
    return value


def test_crd_shape() -> None:
    crd = nrt_crd()
    spec = crd["spec"]
    assert crd["metadata"]["name"] == "noderesourcetopologies.topology.node.k8s.io"
    assert (spec["group"], spec["scope"]) == ("topology.node.k8s.io", "Cluster")
    assert [(v["name"], v["served"], v["storage"]) for v in spec["versions"]] == [
        ("v1alpha1", True, False),
        ("v1alpha2", True, True),
    ]
    assert "api-approved.kubernetes.io" in crd["metadata"]["annotations"]


@pytest.mark.shared_captures
def test_crd_schema_matches_the_published_one() -> None:
    base = shared_topologies_dir()
    assert base is not None
    path = Path(base).parent / "noderesourcetopology" / "crd.yaml"
    if not path.exists():
        pytest.skip("../shared/noderesourcetopology/crd.yaml not found")
    published = yaml.safe_load(path.read_text())
    ours = nrt_crd()
    assert ours["spec"]["names"] == published["spec"]["names"]
    assert ours["metadata"]["annotations"] == {
        k: v
        for k, v in published["metadata"]["annotations"].items()
        if k == "api-approved.kubernetes.io"
    }
    for mine, theirs in zip(ours["spec"]["versions"], published["spec"]["versions"], strict=True):
        assert _without_descriptions(mine) == _without_descriptions(theirs)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_zones_and_node_agree(preset: str) -> None:
    """Per preset: the zones' cpu and memory add up to what the Node object reports."""
    machine = PRESETS[preset].build()
    node = Node(machine, kubelet_config_from_dict(_static(machine)))
    zones = _zones(nrt_object("n1", node, snapshot=False))
    status = node_object("n1", node, now=datetime(2026, 1, 1, tzinfo=UTC), system=NodeSystemInfo())[
        "status"
    ]
    cpu_capacity = sum(z["cpu"]["capacity"] for z in zones.values() if "cpu" in z)
    cpu_allocatable = sum(z["cpu"]["allocatable"] for z in zones.values() if "cpu" in z)
    assert cpu_capacity == Quantity.parse(status["capacity"]["cpu"]).value()
    assert cpu_allocatable == Quantity.parse(status["allocatable"]["cpu"]).value()
    memory = sum(z["memory"]["allocatable"] for z in zones.values() if "memory" in z)
    # Node allocatable memory also holds back the eviction threshold; the memory manager's
    # reservation (reservedMemory) is that plus systemReserved: the two agree.
    assert memory == Quantity.parse(status["allocatable"]["memory"]).value()
