"""The predicate admit handler after the Topology Manager (spec §14, ``node.predicate``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from numaplane.api.kubeletconfig import kubelet_config_from_dict
from numaplane.api.pod import Container, Pod
from numaplane.api.quantity import Quantity
from numaplane.api.resourcenames import is_extended_resource_name
from numaplane.node.admission import Node
from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.source import InMemoryDeviceSource
from numaplane.node.predicate import (
    first_insufficient,
    fit_requests,
    node_allocatable,
)
from numaplane.node.requests import scheduler_requests
from numaplane.topology.discover import load_machine

GIB = 1 << 30
MIB = 1 << 20
MACHINE = (
    "sockets=1,numa-per-socket=1,cores-per-numa=4,memory-per-numa=8Gi,hugepages-2Mi-per-numa=512"
)
# 8Gi minus the default hard eviction threshold (100Mi) minus the 1Gi of 2Mi huge pages.
ALLOCATABLE_MEMORY = 8 * GIB - 100 * MIB - GIB
GPU = "example.com/gpu"


def _node(with_gpu: bool = False) -> Node:
    # No evictionHard in the file: the kubelet's default (memory.available<100Mi) applies.
    config = kubelet_config_from_dict({"kind": "KubeletConfiguration"}, "<test>")
    sources = [InMemoryDeviceSource(GPU, [Device("gpu0", (0,))])] if with_gpu else []
    return Node(load_machine(MACHINE), config, device_sources=sources)


def _pod(uid: str, requests: dict[str, str | int]) -> Pod:
    return Pod.of(uid, [Container.of("app", requests)])


@dataclass(frozen=True)
class AdmitCase:
    name: str
    requests: dict[str, str | int]
    reason: str | None
    message: str | None = None
    with_gpu: bool = False
    before: tuple[dict[str, str | int], ...] = field(default=())


CASES = (
    AdmitCase("memory up to allocatable net of huge pages", {"memory": ALLOCATABLE_MEMORY}, None),
    AdmitCase(
        "memory one byte over allocatable net of huge pages",
        {"memory": ALLOCATABLE_MEMORY + 1},
        "OutOfmemory",
        "Node didn't have enough resource: memory, requested: "
        f"{ALLOCATABLE_MEMORY + 1}, used: 0, capacity: {ALLOCATABLE_MEMORY}",
    ),
    AdmitCase(
        "cpu in millicores, counting admitted pods",
        {"cpu": "1500m"},
        "OutOfcpu",
        "Node didn't have enough resource: cpu, requested: 1500, used: 3000, capacity: 4000",
        before=({"cpu": "3"},),
    ),
    AdmitCase(
        "only the first failure: cpu before memory",
        {"cpu": "5", "memory": 9 * GIB},
        "OutOfcpu",
        "Node didn't have enough resource: cpu, requested: 5000, used: 0, capacity: 4000",
    ),
    AdmitCase(
        "memory before the scalar resources whatever their names",
        {"memory": 9 * GIB, "hugepages-1Gi": "1Gi"},
        "OutOfmemory",
        "Node didn't have enough resource: memory, requested: 9663676416, used: 0, "
        f"capacity: {ALLOCATABLE_MEMORY}",
    ),
    AdmitCase(
        "a huge page size the node lacks has no allocatable",
        {"hugepages-1Gi": "1Gi"},
        "OutOfhugepages-1Gi",
        "Node didn't have enough resource: hugepages-1Gi, requested: 1073741824, used: 0, "
        "capacity: 0",
    ),
    AdmitCase("an extended resource the node does not report is dropped", {GPU: 1}, None),
    AdmitCase(
        "a kubernetes.io resource the node does not report is not dropped",
        {"kubernetes.io/widget": 1},
        "OutOfkubernetes.io/widget",
        "Node didn't have enough resource: kubernetes.io/widget, requested: 1, used: 0, "
        "capacity: 0",
    ),
    AdmitCase("a registered device resource counts its devices", {GPU: 1}, None, with_gpu=True),
)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_predicate_admission(case: AdmitCase) -> None:
    node = _node(case.with_gpu)
    for i, requests in enumerate(case.before):
        assert node.admit(_pod(f"before-{i}", requests)).admitted
    result = node.admit(_pod("p", case.requests))
    assert (result.reason, result.message) == (case.reason, case.message)
    assert result.admitted == (case.reason is None)


def test_rejected_by_predicate_frees_its_allocations() -> None:
    node = _node(with_gpu=True)
    result = node.admit(_pod("p", {GPU: 1, "memory": 9 * GIB}))
    assert result.reason == "OutOfmemory"
    assert node.device_manager.container_devices("p", "app") == {}
    assert node.admit(_pod("q", {GPU: 1})).admitted


def test_node_allocatable_subtracts_every_huge_page_size_from_memory() -> None:
    capacity = {
        "memory": Quantity.parse("16Gi"),
        "hugepages-2Mi": Quantity.parse("1Gi"),
        "hugepages-1Gi": Quantity.parse("4Gi"),
        "cpu": Quantity.parse("8"),
    }
    reservation = {"memory": Quantity.parse("1Gi"), "cpu": Quantity.parse("500m")}
    got = node_allocatable(capacity, reservation)
    assert got["memory"] == Quantity.parse("10Gi")
    assert got["cpu"] == Quantity.parse("7500m")
    assert got["hugepages-1Gi"] == Quantity.parse("4Gi")


@dataclass(frozen=True)
class NameCase:
    name: str
    resource: str
    extended: bool


NAMES = (
    NameCase("vendor domain", "example.com/gpu", True),
    NameCase("kubernetes.io namespace", "kubernetes.io/widget", False),
    NameCase("kubernetes.io subdomain", "foo.kubernetes.io/widget", False),
    NameCase("native", "cpu", False),
    NameCase("hugepages", "hugepages-2Mi", False),
    NameCase("quota prefix", "requests.example.com/gpu", False),
)


@pytest.mark.parametrize("case", NAMES, ids=lambda c: c.name)
def test_is_extended_resource(case: NameCase) -> None:
    assert is_extended_resource_name(case.resource) is case.extended


def test_overhead_of_a_dropped_resource_still_counts() -> None:
    pod = Pod(
        name="p",
        uid="p",
        containers=(Container.of("app", {GPU: 2, "cpu": "1"}),),
        overhead={GPU: Quantity.parse("1")},
    )
    got = fit_requests(pod, scheduler_requests(pod), lambda name: False)
    assert got == {GPU: 1, "cpu": 1000}


def test_first_insufficient_uses_used_and_allocatable() -> None:
    shortfall = first_insufficient(
        {"example.com/b": 1, "example.com/a": 2, "cpu": 100},
        {"example.com/a": 1},
        {"example.com/a": 2, "example.com/b": 0, "cpu": 1000},
    )
    assert shortfall is not None
    assert (shortfall.reason, shortfall.requested, shortfall.used, shortfall.capacity) == (
        "OutOfexample.com/a",
        2,
        1,
        2,
    )
