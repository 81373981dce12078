"""``machine_to_dict``/``machine_from_dict``: an exact round trip, through JSON text too, and
one-line refusals of malformed input."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.testing.fixtures import linux_fixture_names, machine_fixture, xml_fixture_names
from numaplane.topology.cpuset import CPUSet
from numaplane.topology.model import CPU, HugePages, Machine, NUMANode, PCIDevice
from numaplane.topology.presets import PRESETS
from numaplane.topology.serialize import (
    SerializedMachineError,
    machine_from_dict,
    machine_to_dict,
)
from numaplane.topology.synthetic import parse_synthetic


def _round_trip(machine: Machine) -> Machine:
    return machine_from_dict(json.loads(json.dumps(machine_to_dict(machine))))


def _assert_same(machine: Machine) -> None:
    back = _round_trip(machine)
    assert back == machine
    # Fields dataclass equality does not see (the per-CPU index) and derived views.
    assert [back.cpu(c.id) for c in machine.cpus] == list(machine.cpus)
    assert back.all_cpu_ids == machine.all_cpu_ids
    assert back.offline_cpu_ids == machine.offline_cpu_ids
    assert back.physical_core_ids == machine.physical_core_ids
    assert [n.distance_map for n in back.numa_nodes] == [n.distance_map for n in machine.numa_nodes]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_round_trip(name: str) -> None:
    _assert_same(PRESETS[name].build())


@dataclass(frozen=True)
class ShapeCase:
    name: str
    spec: str


SHAPES = [
    ShapeCase(
        "hugepages and gpus",
        "sockets=2,cores-per-numa=4,hugepages-2Mi-per-numa=512,"
        "hugepages-1Gi-per-numa=2,gpus-per-numa=1",
    ),
    ShapeCase("memory-only nodes", "sockets=2,cores-per-numa=2,memory-only-numa=2"),
    ShapeCase("offline cpus", "sockets=1,cores-per-numa=4,threads-per-core=2,offline=3-5"),
    ShapeCase("uncore caches", "sockets=1,numa-per-socket=2,cores-per-numa=8,cores-per-uncore=4"),
]


@pytest.mark.parametrize("case", SHAPES, ids=lambda c: c.name)
def test_synthetic_shapes_round_trip(case: ShapeCase) -> None:
    machine = parse_synthetic(case.spec)
    assert machine.devices or "gpus" not in case.spec
    _assert_same(machine)


@pytest.mark.shared_captures
@pytest.mark.parametrize("name", linux_fixture_names() + xml_fixture_names())
def test_captures_round_trip(name: str) -> None:
    _assert_same(machine_fixture(name))


# -- arbitrary machines ------------------------------------------------------------------------

_small = st.integers(min_value=0, max_value=300)
_hex = st.text("0123456789abcdef", min_size=1, max_size=6).map(lambda s: "0x" + s)
_opt_text = st.none() | st.text(max_size=8)


@st.composite
def machines(draw: st.DrawFn) -> Machine:
    numa_ids = draw(st.lists(st.integers(0, 300), min_size=1, max_size=5, unique=True))
    cpu_ids = draw(st.lists(st.integers(0, 2000), max_size=24, unique=True))
    cpus = tuple(
        CPU(
            cpu_id,
            core=draw(_small),
            socket=draw(_small),
            numa=draw(st.sampled_from(numa_ids)),
            die=draw(_small),
            uncore_cache=draw(_small),
            online=draw(st.booleans()),
            physical_core=draw(st.integers(-1, 2000)),
        )
        for cpu_id in cpu_ids
    )
    nodes = tuple(
        NUMANode(
            node_id,
            CPUSet(c.id for c in cpus if c.numa == node_id and c.online),
            draw(st.integers(0, 1 << 50)),
            tuple(
                HugePages(size, draw(_small), draw(_small))
                for size in draw(st.lists(st.sampled_from([2048, 1 << 20, 64]), unique=True))
            ),
            tuple((other, draw(st.integers(10, 255))) for other in sorted(numa_ids)),
        )
        for node_id in numa_ids
    )
    devices = tuple(
        PCIDevice(
            address=draw(st.text(min_size=1, max_size=12)),
            vendor=draw(_hex),
            device=draw(_hex),
            class_id=draw(_hex),
            driver=draw(_opt_text),
            numa=draw(st.none() | st.sampled_from(numa_ids)),
            physfn=draw(_opt_text),
            virtfns=tuple(draw(st.lists(st.text(max_size=6), max_size=3))),
            name=draw(_opt_text),
        )
        for _ in range(draw(st.integers(0, 4)))
    )
    return Machine(draw(st.text(max_size=10)), cpus, nodes, devices, draw(st.text(max_size=10)))


@given(machines())
def test_arbitrary_machines_round_trip(machine: Machine) -> None:
    _assert_same(machine)


# -- refusals ----------------------------------------------------------------------------------


def _doc() -> dict[str, Any]:
    return machine_to_dict(PRESETS["dual-socket-ht"].build())


@dataclass(frozen=True)
class BadCase:
    name: str
    damage: Any  # Callable[[dict], object]: the damaged document
    field: str


BAD = [
    BadCase("not an object", lambda d: [d], "expected an object"),
    BadCase("wrong format", lambda d: {**d, "format": "x"}, "format"),
    BadCase("column too short", lambda d: {**d, "cpus": {**d["cpus"], "core": [0]}}, "cpus.core"),
    BadCase("bool as int", lambda d: {**d, "cpus": {**d["cpus"], "id": [True] * 12}}, "cpus.id"),
    BadCase(
        "online not bools",
        lambda d: {**d, "cpus": {**d["cpus"], "online": [1] * 12}},
        "cpus.online",
    ),
    BadCase("repeated cpu ids", lambda d: {**d, "cpus": {**d["cpus"], "id": [0] * 12}}, "cpus.id"),
    BadCase(
        "bad cpu list",
        lambda d: {**d, "numaNodes": [{**d["numaNodes"][0], "cpus": "x"}]},
        "numaNodes[0].cpus",
    ),
    BadCase(
        "distance not a pair",
        lambda d: {**d, "numaNodes": [{**d["numaNodes"][0], "distances": [[0]]}]},
        "numaNodes[0].distances[0]",
    ),
    BadCase("repeated nodes", lambda d: {**d, "numaNodes": d["numaNodes"] * 2}, "numaNodes"),
    BadCase(
        "device without address",
        lambda d: {**d, "devices": [{"vendor": "0x1"}]},
        "devices[0].address",
    ),
]


@pytest.mark.parametrize("case", BAD, ids=lambda c: c.name)
def test_malformed_documents_are_refused_naming_the_field(case: BadCase) -> None:
    with pytest.raises(SerializedMachineError) as info:
        machine_from_dict(case.damage(_doc()), source="annotation")
    message = str(info.value)
    assert message.startswith("annotation")
    assert case.field in message
    assert "\n" not in message
