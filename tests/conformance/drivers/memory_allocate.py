"""Driver for ``memory_allocate.json``: static memory policy start, allocation, removal and the
reserved-memory configuration checks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numaplane.api.quantity import Quantity
from numaplane.node.memorymanager.errors import MemoryManagerError
from numaplane.node.memorymanager.reserved import (
    MemoryReservation,
    convert_reserved,
    system_reserved_memory,
    validate_reserved_memory,
)
from numaplane.testing.upstream_fixtures import machine_from_cadvisor
from tests.conformance.drivers import VectorContext
from tests.conformance.drivers.memory_hints import (
    OPS as HINT_OPS,
)
from tests.conformance.drivers.memory_hints import (
    Op,
    check_error,
    check_state,
    dispatch,
    hint_of,
    new_policy_and_state,
    pod_of,
    system_reserved_of,
)


def _name(inp: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    policy, _ = new_policy_and_state(inp)
    assert policy.name == expected["name"], f"name {policy.name!r}"


def _start(inp: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    err: MemoryManagerError | None = None
    try:
        policy, state = new_policy_and_state(inp)
        policy.start(state)
    except MemoryManagerError as exc:
        err = exc
    check_error(err, expected)
    if err is None:
        check_state(state, expected)


def _allocate(inp: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    pod = pod_of(inp["pod"])
    try:
        policy, state = new_policy_and_state(inp, hint_of(inp.get("topology_manager_hint")))
    except MemoryManagerError as exc:
        check_error(exc, expected)
        return
    order = inp.get("allocate_order") or [c.name for c in pod.all_containers()]
    for name in order:
        err: MemoryManagerError | None = None
        try:
            policy.allocate(state, pod, pod.container(name))
        except MemoryManagerError as exc:
            err = exc
        check_error(err, expected)
    if expected.get("error") is None:
        check_state(state, expected)


def _remove_container(inp: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    policy, state = new_policy_and_state(inp)
    pod_uid = inp.get("pod_uid") or (inp.get("pod") or {}).get("uid") or "pod1"
    name = inp.get("container") or inp.get("container_name") or "container1"
    policy.remove_container(state, pod_uid, name)
    check_state(state, expected)


def _new(inp: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    err: MemoryManagerError | None = None
    try:
        new_policy_and_state(inp)
    except MemoryManagerError as exc:
        err = exc
    check_error(err, expected)


def _reservations(inp: Mapping[str, Any]) -> list[MemoryReservation]:
    entries = inp.get("reserved_memory") or inp.get("system_reserved_memory") or []
    return [
        MemoryReservation(
            int(entry.get("numaNode", entry.get("numa_node", 0))),
            {name: Quantity.parse(q) for name, q in (entry.get("limits") or {}).items()},
        )
        for entry in entries
    ]


def _allocatable(inp: Mapping[str, Any]) -> dict[str, Quantity]:
    data = inp.get("node_allocatable_reservation") or {}
    return {name: Quantity.parse(q) for name, q in data.items()}


def _validate_reserved_memory(inp: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    err: MemoryManagerError | None = None
    try:
        validate_reserved_memory(
            machine_from_cadvisor(inp.get("machine_info")), _allocatable(inp), _reservations(inp)
        )
    except MemoryManagerError as exc:
        err = exc
    check_error(err, expected)


def _reserved_result(got: Mapping[int, Mapping[str, int]], expected: Mapping[str, Any]) -> None:
    key = "reserved" if "reserved" in expected else "expected_reserved"
    if expected.get(key) is None:
        return
    want = system_reserved_of(expected[key])
    assert {n: dict(r) for n, r in got.items()} == want, f"reserved: got {got}, want {want}"


def _convert_reserved(inp: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    got = convert_reserved(machine_from_cadvisor(inp.get("machine_info")), _reservations(inp))
    _reserved_result(got, expected)


def _get_system_reserved_memory(inp: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    err: MemoryManagerError | None = None
    got: Mapping[int, Mapping[str, int]] = {}
    try:
        got = system_reserved_memory(
            machine_from_cadvisor(inp.get("machine_info")), _allocatable(inp), _reservations(inp)
        )
    except MemoryManagerError as exc:
        err = exc
    check_error(err, expected)
    if err is None:
        _reserved_result(got, expected)


OPS: dict[str, Op] = {
    "New": _new,
    "NewPolicyStatic": _new,
    "Start": _start,
    "Allocate": _allocate,
    "RemoveContainer": _remove_container,
    "Name": _name,
    "validateReservedMemory": _validate_reserved_memory,
    "convertReserved": _convert_reserved,
    "getSystemReservedMemory": _get_system_reserved_memory,
}


def run(vector: Mapping[str, Any], ctx: VectorContext) -> None:
    """Check one vector; dispatch on ``input.op`` (hint ops go to ``memory_hints``)."""
    dispatch(vector, {**HINT_OPS, **OPS})
