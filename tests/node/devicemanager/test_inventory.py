"""Device inventories: PCI rules over a ``Machine`` and the YAML inventory format."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.errors import InputError
from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.errors import InventoryError
from numaplane.node.devicemanager.inventory import (
    PCIRule,
    devices_from_machine,
    parse_inventory,
    sources_of,
)
from numaplane.topology.cpuset import CPUSet
from numaplane.topology.model import CPU, Machine, NUMANode, PCIDevice

MACHINE = Machine(
    name="m",
    cpus=(CPU(0, 0, 0, 0), CPU(1, 1, 1, 1)),
    numa_nodes=(NUMANode(0, CPUSet([0]), 1 << 30), NUMANode(1, CPUSet([1]), 1 << 30)),
    devices=(
        PCIDevice("0000:41:00.0", "0x10de", "0x2330", "0x030200", numa=1),
        PCIDevice("0000:01:00.0", "0x10DE", "0x2330", "0x030000", numa=0),
        PCIDevice("0000:01:00.1", "0x10de", "0x22a3", "0x040300", numa=0),  # audio function
        PCIDevice("0000:02:00.0", "0x15b3", "0x101b", "0x020700", numa=None),
        PCIDevice("0000:03:00.0", "0x8086", "0x0b25", "0x080700", numa=0),
    ),
)


def test_default_rule_finds_nvidia_gpus_only() -> None:
    assert devices_from_machine(MACHINE) == {
        "nvidia.com/gpu": (Device("0000:01:00.0", (0,)), Device("0000:41:00.0", (1,))),
    }


def test_custom_rules_first_match_wins_and_unknown_locality_has_no_topology() -> None:
    rules = [PCIRule.parse("example.com/nic=15b3"), PCIRule("example.com/any", "0x10de")]
    assert devices_from_machine(MACHINE, rules) == {
        "example.com/nic": (Device("0000:02:00.0", None),),
        "example.com/any": (
            Device("0000:01:00.0", (0,)),
            Device("0000:01:00.1", (0,)),
            Device("0000:41:00.0", (1,)),
        ),
    }


@pytest.mark.parametrize("text", ["nogpu", "=0x10de", "x=zz", "x=0x10de:qq"])
def test_bad_rules_are_input_errors(text: str) -> None:
    with pytest.raises(InputError, match="--device-rule"):
        PCIRule.parse(text)


def test_inventory_yaml() -> None:
    text = """
resources:
  nvidia.com/gpu:
    - {id: gpu0, numa: 0}
    - {id: gpu1, numa: [0, 1]}
    - {id: gpu2}
    - {id: 3, numa: [], healthy: false}
"""
    inventory = parse_inventory(text, "inv.yaml")
    assert inventory == {
        "nvidia.com/gpu": (
            Device("gpu0", (0,)),
            Device("gpu1", (0, 1)),
            Device("gpu2", None),
            Device("3", (), healthy=False),
        )
    }
    (source,) = sources_of(inventory)
    assert source.resource_name == "nvidia.com/gpu"
    assert len(source.devices()) == 4


@dataclass(frozen=True)
class BadCase:
    name: str
    text: str
    message: str


BAD = [
    BadCase("not yaml", "resources: [", "inv.yaml: not valid YAML"),
    BadCase("not a mapping", "- 1", "inv.yaml: expected a mapping with a 'resources' key"),
    BadCase("unknown top key", "resources: {}\nextra: 1", "inv.yaml: extra: unknown key"),
    BadCase("resources not mapping", "resources: [1]", "inv.yaml: resources: expected a mapping"),
    BadCase(
        "devices not list",
        "resources: {x.io/gpu: 1}",
        "inv.yaml: resources.x.io/gpu: expected a list",
    ),
    BadCase(
        "entry not mapping",
        "resources: {x.io/gpu: [1]}",
        "inv.yaml: resources.x.io/gpu[0]: expected",
    ),
    BadCase(
        "missing id", "resources: {x.io/gpu: [{numa: 0}]}", "inv.yaml: resources.x.io/gpu[0].id:"
    ),
    BadCase(
        "duplicate id",
        "resources: {x.io/gpu: [{id: a}, {id: a}]}",
        "inv.yaml: resources.x.io/gpu[1].id: duplicate device id 'a'",
    ),
    BadCase(
        "bad numa",
        "resources: {x.io/gpu: [{id: a, numa: x}]}",
        "resources.x.io/gpu[0].numa: expected",
    ),
    BadCase("numa out of range", "resources: {x.io/gpu: [{id: a, numa: 64}]}", "x.io/gpu[0].numa"),
    BadCase("bool numa", "resources: {x.io/gpu: [{id: a, numa: true}]}", "x.io/gpu[0].numa"),
    BadCase("bad health", "resources: {x.io/gpu: [{id: a, healthy: 1}]}", "x.io/gpu[0].healthy"),
    BadCase(
        "unknown key", "resources: {x.io/gpu: [{id: a, nuam: 0}]}", "resources.x.io/gpu[0].nuam"
    ),
]


@pytest.mark.parametrize("case", BAD, ids=[c.name for c in BAD])
def test_inventory_errors_name_file_and_field(case: BadCase) -> None:
    with pytest.raises(InventoryError) as info:
        parse_inventory(case.text, "inv.yaml")
    message = str(info.value)
    assert case.message in message
    assert "\n" not in message
    assert message.startswith("inv.yaml")
