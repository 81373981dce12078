"""``devices_to_allocate`` and ``filter_by_affinity``: errors, order and reuse."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from numaplane.node.devicemanager.allocation import devices_to_allocate, filter_by_affinity
from numaplane.node.devicemanager.device import Device, ResourcePool
from numaplane.node.devicemanager.errors import DeviceManagerError, DeviceSourceError
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint

NO_HINT = TopologyHint(None, False)


def hint(*nodes: int) -> TopologyHint:
    return TopologyHint(BitMask(*nodes), True)


def pool(*devices: Device, in_use: Sequence[str] = ()) -> ResourcePool:
    return ResourcePool.of("gpu", devices, in_use)


TWO_NODES = pool(
    Device("a0", (0,)), Device("a1", (0,)), Device("b0", (1,)), Device("b1", (1,)), Device("x")
)


@dataclass(frozen=True)
class ErrorCase:
    name: str
    pool: ResourcePool | None
    required: int
    existing: frozenset[str] | None
    message: str
    reusable: frozenset[str] = field(default_factory=frozenset)


ERRORS = [
    ErrorCase(
        "changed request",
        TWO_NODES,
        2,
        frozenset({"a0"}),
        'pod "p" container "c" changed request for resource "gpu" from 1 to 2',
    ),
    ErrorCase("unregistered", None, 1, None, "cannot allocate unregistered device gpu"),
    ErrorCase(
        "no healthy devices",
        pool(Device("a0", (0,), healthy=False)),
        1,
        None,
        "no healthy devices present; cannot allocate unhealthy devices gpu",
    ),
    ErrorCase(
        "previously allocated unhealthy",
        pool(Device("a0", (0,), healthy=False), Device("a1", (0,))),
        1,
        frozenset({"a0"}),
        "previously allocated devices are no longer healthy; cannot allocate unhealthy devices gpu",
    ),
    ErrorCase(
        "not enough available",
        pool(Device("a0", (0,)), Device("a1", (0,)), in_use=["a0"]),
        2,
        None,
        "requested number of devices unavailable for gpu. Requested: 2, Available: 1",
    ),
    ErrorCase(
        "reused devices lower the need before counting",
        pool(Device("a0", (0,)), Device("a1", (0,)), Device("a2", (0,)), in_use=["a0", "a1"]),
        3,
        None,
        "requested number of devices unavailable for gpu. Requested: 2, Available: 1",
        frozenset({"a0"}),
    ),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c.name for c in ERRORS])
def test_errors_carry_upstream_messages(case: ErrorCase) -> None:
    with pytest.raises(DeviceManagerError) as info:
        devices_to_allocate(
            case.pool,
            pod_uid="p",
            container_name="c",
            resource="gpu",
            required=case.required,
            existing=case.existing,
            reusable=case.reusable,
            hint=NO_HINT,
            preferred=None,
        )
    assert str(info.value) == case.message


@dataclass(frozen=True)
class PickCase:
    name: str
    pool: ResourcePool
    required: int
    hint: TopologyHint
    expected: tuple[str, ...]
    reusable: frozenset[str] = field(default_factory=frozenset)
    existing: frozenset[str] | None = None


PICKS = [
    PickCase("no hint: natural id order", TWO_NODES, 3, NO_HINT, ("a0", "a1", "b0")),
    PickCase("aligned first", TWO_NODES, 2, hint(1), ("b0", "b1")),
    PickCase(
        "aligned, then unaligned, then no locality",
        TWO_NODES,
        5,
        hint(1),
        ("b0", "b1", "a0", "a1", "x"),
    ),
    PickCase("reusable first", TWO_NODES, 2, hint(1), ("a1", "b0"), frozenset({"a1"})),
    PickCase(
        "unhealthy reusable devices are not reused",
        pool(Device("a0", (0,), healthy=False), Device("a1", (0,))),
        1,
        NO_HINT,
        ("a1",),
        frozenset({"a0"}),
    ),
    PickCase("already held: nothing new", TWO_NODES, 1, hint(0), (), existing=frozenset({"b0"})),
    PickCase("zero requested", TWO_NODES, 0, hint(0), ()),
    PickCase(
        "hint nodes with fewer free devices fill first",
        pool(Device("a0", (0,)), Device("a1", (0,)), Device("b0", (1,))),
        1,
        hint(0, 1),
        ("b0",),
    ),
    PickCase(
        "natural order, not lexical",
        pool(Device("dev10"), Device("dev9"), Device("dev2")),
        2,
        NO_HINT,
        ("dev2", "dev9"),
    ),
]


@pytest.mark.parametrize("case", PICKS, ids=[c.name for c in PICKS])
def test_pick_order(case: PickCase) -> None:
    chosen = devices_to_allocate(
        case.pool,
        pod_uid="p",
        container_name="c",
        resource="gpu",
        required=case.required,
        existing=case.existing,
        reusable=case.reusable,
        hint=case.hint,
        preferred=None,
    )
    assert chosen == case.expected


def test_preferred_allocation_failure_is_wrapped() -> None:
    def broken(available: Sequence[str], must: Sequence[str], size: int) -> list[str]:
        raise DeviceSourceError("boom")

    with pytest.raises(
        DeviceManagerError, match="GetPreferredAllocation rpc failed with err: boom"
    ):
        devices_to_allocate(
            TWO_NODES,
            pod_uid="p",
            container_name="c",
            resource="gpu",
            required=1,
            existing=None,
            reusable=frozenset(),
            hint=NO_HINT,
            preferred=broken,
        )


def test_preferred_choice_is_followed_among_aligned() -> None:
    def prefer_last(available: Sequence[str], must: Sequence[str], size: int) -> list[str]:
        return list(available)[-size:]

    chosen = devices_to_allocate(
        TWO_NODES,
        pod_uid="p",
        container_name="c",
        resource="gpu",
        required=1,
        existing=None,
        reusable=frozenset(),
        hint=hint(0),
        preferred=prefer_last,
    )
    assert chosen == ("a1",)


def test_filter_by_affinity_groups() -> None:
    aligned, unaligned, without = filter_by_affinity(TWO_NODES, TWO_NODES.available, hint(0))
    assert (aligned, unaligned, without) == (["a0", "a1"], ["b0", "b1"], ["x"])


def test_filter_by_affinity_multi_node_device_goes_to_hint_group() -> None:
    p = pool(Device("ab", (1, 0)), Device("b0", (1,)))
    aligned, unaligned, _ = filter_by_affinity(p, p.available, hint(0))
    assert aligned == ["ab"]
    assert unaligned == ["b0"]


def test_filter_by_affinity_without_topology_returns_everything_unaligned() -> None:
    p = pool(Device("x"), Device("y", ()))
    assert filter_by_affinity(p, p.available, hint(0)) == ([], [], ["x", "y"])
