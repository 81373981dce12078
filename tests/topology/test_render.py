"""The JSON document's shape is stable, and the tree shows what matters."""

from __future__ import annotations

import json

import yaml
from rich.console import Console

from numaplane.topology.presets import preset
from numaplane.topology.render import machine_document, machine_tree, render_json, render_yaml
from numaplane.topology.synthetic import parse_synthetic


def test_document_shape() -> None:
    doc = machine_document(preset("dual-socket-gpu"))
    assert list(doc) == ["name", "source", "cpus", "numa_nodes", "devices"]
    assert doc["cpus"][0] == {
        "id": 0,
        "core": 0,
        "socket": 0,
        "die": 0,
        "numa": 0,
        "uncore_cache": 0,
        "online": True,
        "physical_core": 0,
    }
    node = doc["numa_nodes"][1]
    assert node["cpus"] == "8-15,40-47"
    assert node["memory_bytes"] == 64 << 30
    assert node["distances"] == {"0": 11, "1": 10, "2": 21, "3": 21}
    assert node["hugepages"][0] == {
        "size_kib": 2048,
        "resource": "hugepages-2Mi",
        "total": 1024,
        "free": 1024,
    }
    assert set(doc["devices"][0]) >= {"address", "vendor", "device", "class", "driver", "numa"}
    assert doc["devices"][3]["numa"] == 3


def test_json_and_yaml_carry_the_same_document() -> None:
    m = preset("single-socket-ht")
    assert json.loads(render_json(m)) == machine_document(m)
    assert yaml.safe_load(render_yaml(m)) == machine_document(m)


def test_tree_lists_sockets_nodes_cores_devices_and_offline() -> None:
    m = parse_synthetic(
        "sockets=2,cores-per-numa=2,threads-per-core=2,gpus-per-numa=1,offline=7,memory-only-numa=1"
    )
    console = Console(width=200, record=True)
    console.print(machine_tree(m))
    text = console.export_text()
    assert "socket 1" in text
    assert "NUMA node 2" in text
    assert "(no CPUs)" in text
    assert "core 0 (core_id 0, L3 0): CPUs 0,4" in text
    assert "PCI 0000:11:00.0" in text
    assert "offline CPUs: 7" in text
