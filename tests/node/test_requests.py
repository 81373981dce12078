"""The conversion of a pod's requests into each manager's units (``numaplane.node.requests``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from numaplane.api.pod import Container, Pod, ResourceRequirements
from numaplane.api.quantity import Quantity
from numaplane.node.requests import (
    MemoryRequestError,
    container_device_requests,
    guaranteed_cpus,
    memory_requests,
    pod_device_requests,
    pod_guaranteed_cpus,
    pod_memory_requests,
    scheduler_requests,
)

GB = 1 << 30
MB = 1 << 20
GPU = "example.com/gpu"


def _guaranteed(name: str, cpu: str, memory: str = "1Gi", **extra: str) -> Container:
    values = {"cpu": cpu, "memory": memory, **extra}
    return Container.of(name, values, values)


def _sidecar(name: str, cpu: str) -> Container:
    values = {"cpu": cpu, "memory": "1Gi"}
    return Container.of(name, values, values, restart_policy="Always")


@dataclass(frozen=True)
class CPUCase:
    name: str
    pod: Pod
    want_pod: int
    want_first: int


CPU_CASES = (
    CPUCase("one whole cpu", Pod.of("p", [_guaranteed("a", "2")]), 2, 2),
    CPUCase("fractional stays shared", Pod.of("p", [_guaranteed("a", "1500m")]), 0, 0),
    CPUCase(
        "burstable pod gets none",
        Pod.of("p", [Container.of("a", {"cpu": "2"}, {"cpu": "4"})]),
        0,
        0,
    ),
    CPUCase(
        "init peak wins over apps",
        Pod.of("p", [_guaranteed("a", "1")], [_guaranteed("i", "3")]),
        3,
        1,
    ),
    CPUCase(
        "sidecars add to apps and to later inits",
        Pod.of(
            "p",
            [_guaranteed("a", "1")],
            [_sidecar("s", "2"), _guaranteed("i", "2")],
        ),
        4,
        1,
    ),
    CPUCase(
        "pod-level resources stay on the shared pool",
        Pod(
            name="p",
            uid="p",
            containers=(_guaranteed("a", "2"),),
            resources=ResourceRequirements(
                {"cpu": Quantity.parse("2"), "memory": Quantity.parse("1Gi")},
                {"cpu": Quantity.parse("2"), "memory": Quantity.parse("1Gi")},
            ),
        ),
        0,
        0,
    ),
)


@pytest.mark.parametrize("case", CPU_CASES, ids=lambda c: c.name)
def test_guaranteed_cpus(case: CPUCase) -> None:
    assert pod_guaranteed_cpus(case.pod) == case.want_pod
    assert guaranteed_cpus(case.pod, case.pod.containers[0]) == case.want_first


@dataclass(frozen=True)
class MemoryCase:
    name: str
    pod: Pod
    want: dict[str, int]


MEMORY_CASES = (
    MemoryCase(
        "memory types only",
        Pod.of(
            "p",
            [Container.of("a", {"cpu": "1500m", "memory": "1Gi", "hugepages-2Mi": "4Mi"})],
        ),
        {"memory": GB, "hugepages-2Mi": 4 * MB},
    ),
    MemoryCase(
        "only resources an app container requests",
        Pod.of(
            "p",
            [Container.of("app", {"memory": GB})],
            [
                Container.of("init", {"memory": 3 * GB, "hugepages-1Gi": GB}),
                Container.of("side", {"memory": GB}, restart_policy="Always"),
            ],
        ),
        {"memory": 3 * GB},
    ),
    MemoryCase(
        "sidecars add up with apps",
        Pod.of(
            "p",
            [Container.of("app", {"memory": GB})],
            [Container.of("side", {"memory": 2 * GB}, restart_policy="Always")],
        ),
        {"memory": 3 * GB},
    ),
)


@pytest.mark.parametrize("case", MEMORY_CASES, ids=lambda c: c.name)
def test_pod_memory_requests(case: MemoryCase) -> None:
    assert pod_memory_requests(case.pod) == case.want


def test_memory_requests_refuse_fractional_bytes() -> None:
    with pytest.raises(MemoryRequestError, match="failed to represent quantity as int64"):
        memory_requests(Container.of("c", requests={"memory": "0.5"}))


@dataclass(frozen=True)
class DeviceCase:
    name: str
    pod: Pod
    want_pod: dict[str, int]
    want_first: dict[str, int]


def _gpus(name: str, count: int, restart_policy: str | None = None) -> Container:
    return Container.of(name, {GPU: count}, {GPU: count, "cpu": 1}, restart_policy)


DEVICE_CASES = (
    DeviceCase("limits of device resources", Pod.of("p", [_gpus("a", 2)]), {GPU: 2}, {GPU: 2}),
    DeviceCase(
        "max of init and sum of apps",
        Pod.of("p", [_gpus("a", 1), _gpus("b", 1)], [_gpus("i", 3)]),
        {GPU: 3},
        {GPU: 1},
    ),
    DeviceCase(
        "sidecar devices add up",
        Pod.of("p", [_gpus("a", 1)], [_gpus("s", 1, "Always"), _gpus("i", 1)]),
        {GPU: 2},
        {GPU: 1},
    ),
)


@pytest.mark.parametrize("case", DEVICE_CASES, ids=lambda c: c.name)
def test_device_requests(case: DeviceCase) -> None:
    is_device: Callable[[str], bool] = GPU.__eq__
    assert pod_device_requests(case.pod, is_device) == case.want_pod
    assert container_device_requests(case.pod.containers[0], is_device) == case.want_first


def test_scheduler_requests_count_millicores_and_leave_zero_out() -> None:
    pod = Pod.of(
        "p",
        [Container.of("a", {"cpu": "250m", "memory": "1Gi", GPU: 0})],
        [Container.of("i", {"cpu": "1"})],
    )
    assert scheduler_requests(pod) == {"cpu": 1000, "memory": GB}
