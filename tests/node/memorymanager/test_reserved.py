"""Tests of the reserved-memory configuration checks (upstream ``TestValidateReservedMemory``,
``TestConvertPreReserved``, ``TestGetSystemReservedMemory``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest

from numaplane.api.quantity import Quantity
from numaplane.node.memorymanager.errors import ReservedMemoryError
from numaplane.node.memorymanager.reserved import (
    MemoryReservation,
    convert_reserved,
    system_reserved_memory,
    validate_reserved_memory,
)
from numaplane.testing.upstream_fixtures import machine_from_cadvisor

MACHINE = machine_from_cadvisor({"topology": [{"id": 0}, {"id": 1}]})
NOT_EQUAL = (
    'the total amount "{}" of type "{}" is not equal to the value "{}" determined by Node '
    "Allocatable feature"
)


def _res(node: int, **limits: str) -> MemoryReservation:
    return MemoryReservation(
        node, {k.replace("_", "-"): Quantity.parse(v) for k, v in limits.items()}
    )


def _q(values: Mapping[str, str]) -> dict[str, Quantity]:
    return {k: Quantity.parse(v) for k, v in values.items()}


@dataclass(frozen=True)
class ValidateCase:
    name: str
    allocatable: Mapping[str, str]
    reservations: tuple[MemoryReservation, ...]
    error: str | None
    reserved: Mapping[int, Mapping[str, int]] = field(default_factory=dict)


VALIDATE_CASES = [
    ValidateCase("nothing set", {}, (), None, {0: {}, 1: {}}),
    ValidateCase(
        "zero on both sides",
        {"memory": "0"},
        (_res(0, memory="0"),),
        None,
        {0: {"memory": 0}, 1: {}},
    ),
    ValidateCase(
        "reserved without allocatable",
        {},
        (_res(0, memory="12"),),
        NOT_EQUAL.format("12", "memory", "0"),
    ),
    ValidateCase(
        "reserved differs",
        {"memory": "5"},
        (_res(0, memory="12"),),
        NOT_EQUAL.format("12", "memory", "5"),
    ),
    ValidateCase(
        "totals equal",
        {"memory": "17", "hugepages-2Mi": "77", "hugepages-1Gi": "13"},
        (
            _res(0, memory="12", hugepages_2Mi="70", hugepages_1Gi="13"),
            _res(1, memory="5", hugepages_2Mi="7"),
        ),
        None,
        {
            0: {"memory": 12, "hugepages-2Mi": 70, "hugepages-1Gi": 13},
            1: {"memory": 5, "hugepages-2Mi": 7},
        },
    ),
    ValidateCase(
        "hugepages total differs",
        {"memory": "17", "hugepages-2Mi": "14", "hugepages-1Gi": "13"},
        (
            _res(0, memory="12", hugepages_2Mi="70", hugepages_1Gi="13"),
            _res(1, memory="5", hugepages_2Mi="7"),
        ),
        NOT_EQUAL.format("77", "hugepages-2Mi", "14"),
    ),
    ValidateCase(
        "binary quantities print as such",
        {},
        (_res(0, memory="1Gi"),),
        NOT_EQUAL.format("1Gi", "memory", "0"),
    ),
    ValidateCase("cpu in node allocatable is not memory", {"cpu": "2"}, (), None, {0: {}, 1: {}}),
    ValidateCase(
        "unknown NUMA node",
        {"memory": "17"},
        (_res(0, memory="12"), _res(2, memory="5")),
        "the reserved memory configuration references a NUMA node 2 that does not exist on "
        "this machine",
    ),
]


@pytest.mark.parametrize("case", VALIDATE_CASES, ids=lambda c: c.name)
def test_system_reserved_memory(case: ValidateCase) -> None:
    if case.error is not None:
        with pytest.raises(ReservedMemoryError) as info:
            validate_reserved_memory(MACHINE, _q(case.allocatable), case.reservations)
        assert str(info.value) == case.error
        with pytest.raises(ReservedMemoryError):
            system_reserved_memory(MACHINE, _q(case.allocatable), case.reservations)
        return
    validate_reserved_memory(MACHINE, _q(case.allocatable), case.reservations)
    got = system_reserved_memory(MACHINE, _q(case.allocatable), case.reservations)
    assert got == case.reserved


def test_convert_reserved_lists_every_node_and_rejects_fractions() -> None:
    assert convert_reserved(MACHINE, [_res(1, memory="1Gi")]) == {0: {}, 1: {"memory": 1 << 30}}
    with pytest.raises(ReservedMemoryError, match="could not covert"):
        convert_reserved(MACHINE, [_res(0, memory="1.5")])
