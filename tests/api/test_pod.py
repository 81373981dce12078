"""The Pod model: QoS class and effective requests, computed as Kubernetes computes them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import FrozenInstanceError, dataclass, field

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.api.pod import (
    Container,
    Pod,
    QOSClass,
    ResourceRequirements,
    aggregate_container_resources,
    compute_qos,
    is_pod_level_resource,
)
from numaplane.api.quantity import Quantity


def guaranteed(name: str, cpu: str = "1", memory: str = "1Gi", **extra: str) -> Container:
    values = {"cpu": cpu, "memory": memory, **extra}
    return Container.of(name, values, values)


def best_effort(name: str) -> Container:
    return Container.of(name)


def sidecar(container: Container) -> Container:
    return Container(container.name, container.resources, restart_policy="Always")


@dataclass(frozen=True)
class QOSCase:
    """A pod and the class ``ComputePodQOS`` gives it; ``why`` cites the rule exercised."""

    name: str
    why: str
    containers: tuple[Container, ...]
    expected: QOSClass
    init_containers: tuple[Container, ...] = ()
    pod_resources: ResourceRequirements | None = None


QOS_CASES = [
    QOSCase(
        "no resources",
        "BestEffort: no container sets any cpu or memory request or limit",
        (best_effort("a"), best_effort("b")),
        QOSClass.BEST_EFFORT,
    ),
    QOSCase(
        "only extended resources",
        "only cpu and memory count (supportedQoSComputeResources)",
        (Container.of("a", {"nvidia.com/gpu": 1}, {"nvidia.com/gpu": 1}),),
        QOSClass.BEST_EFFORT,
    ),
    QOSCase(
        "explicit zeros",
        "zero requests and limits count as unset",
        (Container.of("a", {"cpu": "0", "memory": "0"}, {"cpu": "0", "memory": "0"}),),
        QOSClass.BEST_EFFORT,
    ),
    QOSCase(
        "requests equal limits",
        "Guaranteed: every container limits cpu and memory and requests equal limits",
        (guaranteed("a"), guaranteed("b", cpu="2", memory="2Gi")),
        QOSClass.GUARANTEED,
    ),
    QOSCase(
        "equal values in different formats",
        "equality is by value: 1Gi == 1073741824, 1 == 1000m",
        (Container.of("a", {"cpu": "1", "memory": "1Gi"}, {"cpu": "1000m", "memory": 2**30}),),
        QOSClass.GUARANTEED,
    ),
    QOSCase(
        "non-integer cpu",
        "QoS ignores whether the cpu is whole (only the CPU Manager cares)",
        (guaranteed("a", cpu="1500m"),),
        QOSClass.GUARANTEED,
    ),
    QOSCase(
        "extended resources do not spoil guaranteed",
        "extended resources are ignored for QoS",
        (
            Container.of(
                "a",
                {"cpu": "1", "memory": "1Gi", "example.com/nic": 1},
                {"cpu": "1", "memory": "1Gi", "example.com/nic": 2},
            ),
        ),
        QOSClass.GUARANTEED,
    ),
    QOSCase(
        "request below limit",
        "Burstable: a request differs from its limit",
        (Container.of("a", {"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"}),),
        QOSClass.BURSTABLE,
    ),
    QOSCase(
        "limits without requests",
        "without admission defaulting an unset request is zero, unequal to the limit",
        (Container.of("a", limits={"cpu": "1", "memory": "1Gi"}),),
        QOSClass.BURSTABLE,
    ),
    QOSCase(
        "cpu only",
        "Guaranteed needs both cpu and memory",
        (Container.of("a", {"cpu": "1"}, {"cpu": "1"}),),
        QOSClass.BURSTABLE,
    ),
    QOSCase(
        "guaranteed next to best effort",
        "a Guaranteed and a BestEffort container make the pod Burstable",
        (guaranteed("a"), best_effort("b")),
        QOSClass.BURSTABLE,
    ),
    QOSCase(
        "best-effort init container",
        "init containers count: one without resources spoils Guaranteed",
        (guaranteed("app"),),
        QOSClass.BURSTABLE,
        init_containers=(best_effort("init"),),
    ),
    QOSCase(
        "burstable init container",
        "init containers count",
        (guaranteed("app"),),
        QOSClass.BURSTABLE,
        init_containers=(Container.of("init", {"cpu": "1"}, {"cpu": "2", "memory": "1Gi"}),),
    ),
    QOSCase(
        "guaranteed init and sidecar",
        "init and sidecar containers that are Guaranteed keep the pod Guaranteed",
        (guaranteed("app"),),
        QOSClass.GUARANTEED,
        init_containers=(guaranteed("init", cpu="4"), sidecar(guaranteed("side"))),
    ),
    QOSCase(
        "best-effort sidecar",
        "sidecars count like every init container",
        (guaranteed("app"),),
        QOSClass.BURSTABLE,
        init_containers=(sidecar(best_effort("side")),),
    ),
    QOSCase(
        "best-effort init of best-effort pod",
        "all BestEffort stays BestEffort",
        (best_effort("app"),),
        QOSClass.BEST_EFFORT,
        init_containers=(best_effort("init"),),
    ),
    QOSCase(
        "pod-level resources decide",
        "with pod-level resources only they decide (PodLevelResources)",
        (best_effort("app"),),
        QOSClass.GUARANTEED,
        pod_resources=ResourceRequirements(
            {"cpu": Quantity.parse("2"), "memory": Quantity.parse("1Gi")},
            {"cpu": Quantity.parse("2"), "memory": Quantity.parse("1Gi")},
        ),
    ),
    QOSCase(
        "pod-level burstable",
        "pod-level requests below limits are Burstable whatever the containers say",
        (guaranteed("app"),),
        QOSClass.BURSTABLE,
        pod_resources=ResourceRequirements(
            {"cpu": Quantity.parse("1"), "memory": Quantity.parse("1Gi")},
            {"cpu": Quantity.parse("2"), "memory": Quantity.parse("1Gi")},
        ),
    ),
    QOSCase(
        "empty pod-level resources",
        "pod-level resources present but empty are BestEffort",
        (guaranteed("app"),),
        QOSClass.BEST_EFFORT,
        pod_resources=ResourceRequirements(),
    ),
]


@pytest.mark.parametrize("case", QOS_CASES, ids=lambda c: c.name)
def test_qos_class(case: QOSCase) -> None:
    pod = Pod(
        name="p",
        uid="u",
        containers=case.containers,
        init_containers=case.init_containers,
        resources=case.pod_resources,
    )
    assert pod.qos_class is case.expected, case.why
    assert compute_qos(pod.all_containers(), case.pod_resources) is case.expected


def test_recorded_qos_class_wins() -> None:
    """``GetPodQOS`` returns ``status.qosClass`` when set, without recomputing."""
    pod = Pod.of("u", [best_effort("a")], qos="Guaranteed")
    assert pod.qos_class is QOSClass.GUARANTEED
    assert pod.computed_qos_class() is QOSClass.BEST_EFFORT


@dataclass(frozen=True)
class RequestsCase:
    """Pod requests per ``PodRequests`` (KEP-753 formula for sidecars)."""

    name: str
    containers: tuple[Container, ...]
    init_containers: tuple[Container, ...]
    expected: Mapping[str, str]
    overhead: Mapping[str, str] = field(default_factory=dict)
    pod_requests: Mapping[str, str] | None = None


def mem(name: str, amount: str, restartable: bool = False) -> Container:
    return Container.of(name, {"memory": amount}, restart_policy="Always" if restartable else None)


def cpu(name: str, amount: str, restartable: bool = False) -> Container:
    return Container.of(name, {"cpu": amount}, restart_policy="Always" if restartable else None)


REQUESTS_CASES = [
    RequestsCase(
        "apps add up",
        (mem("a", "1Gi"), mem("b", "512Mi")),
        (),
        {"memory": "1536Mi"},
    ),
    RequestsCase(
        "large init container dominates",
        (mem("a", "1Gi"),),
        (mem("init", "4Gi"),),
        {"memory": "4Gi"},
    ),
    RequestsCase(
        "init containers take the max, not the sum",
        (cpu("a", "1"),),
        (cpu("i1", "2"), cpu("i2", "3")),
        {"cpu": "3"},
    ),
    RequestsCase(
        # kubelet spec §9.6 / §6.6: sidecars run beside later init containers and the apps.
        "spec 9.6 init and sidecar mix",
        (mem("app", "1Gi"),),
        (
            mem("i1", "1Gi"),
            mem("s1", "2Gi", restartable=True),
            mem("i2", "3Gi"),
            mem("s2", "4Gi", restartable=True),
        ),
        {"memory": "7Gi"},
    ),
    RequestsCase(
        "init after sidecar needs both",
        (cpu("app", "1"),),
        (cpu("s1", "2", restartable=True), cpu("i1", "5")),
        {"cpu": "7"},
    ),
    RequestsCase(
        "init before sidecar runs alone",
        (cpu("app", "1"),),
        (cpu("i1", "5"), cpu("s1", "2", restartable=True)),
        {"cpu": "5"},
    ),
    RequestsCase(
        "sidecars add to apps",
        (cpu("app", "1"),),
        (cpu("s1", "500m", restartable=True), cpu("s2", "250m", restartable=True)),
        {"cpu": "1750m"},
    ),
    RequestsCase(
        "resources are independent",
        (Container.of("app", {"cpu": "1", "memory": "1Gi"}),),
        (Container.of("init", {"cpu": "4", "memory": "512Mi"}),),
        {"cpu": "4", "memory": "1Gi"},
    ),
    RequestsCase(
        "overhead is added",
        (mem("app", "1Gi"),),
        (),
        {"memory": "1088Mi", "cpu": "250m"},
        overhead={"memory": "64Mi", "cpu": "250m"},
    ),
    RequestsCase(
        "pod-level requests replace the container sum",
        (mem("app", "1Gi"), cpu("b", "1")),
        (),
        {"memory": "3Gi", "cpu": "1"},
        pod_requests={"memory": "3Gi"},
    ),
]


@pytest.mark.parametrize("case", REQUESTS_CASES, ids=lambda c: c.name)
def test_effective_requests(case: RequestsCase) -> None:
    resources = None
    if case.pod_requests is not None:
        resources = ResourceRequirements(
            {k: Quantity.parse(v) for k, v in case.pod_requests.items()}, {}
        )
    pod = Pod(
        name="p",
        uid="u",
        containers=case.containers,
        init_containers=case.init_containers,
        overhead={k: Quantity.parse(v) for k, v in case.overhead.items()},
        resources=resources,
    )
    got = pod.effective_requests()
    assert {k: str(v) for k, v in got.items()} == dict(case.expected)


def test_effective_requests_skip_pod_level_with_the_gate_off() -> None:
    pod = Pod(
        name="p",
        uid="u",
        containers=(cpu("a", "1"),),
        resources=ResourceRequirements({"cpu": Quantity.parse("3")}, {}),
    )
    assert pod.effective_requests() == {"cpu": Quantity.parse("3")}
    assert pod.effective_requests(pod_level_resources=False) == {"cpu": Quantity.parse("1")}


def test_aggregate_limits_use_the_same_formula() -> None:
    pod = Pod(
        name="p",
        uid="u",
        containers=(Container.of("app", limits={"cpu": "1"}),),
        init_containers=(
            Container.of("s", limits={"cpu": "2"}, restart_policy="Always"),
            Container.of("i", limits={"cpu": "4"}),
        ),
    )
    assert pod.aggregate_container_limits() == {"cpu": Quantity.parse("6")}
    assert pod.aggregate_container_requests() == {}


@given(
    st.lists(st.integers(0, 64), max_size=4),
    st.lists(st.tuples(st.integers(0, 64), st.booleans()), max_size=5),
)
def test_law_requests_cover_every_phase(apps: list[int], inits: list[tuple[int, bool]]) -> None:
    """The pod request covers the apps plus all sidecars, and every init phase."""
    pod = Pod(
        name="p",
        uid="u",
        containers=tuple(cpu(f"a{i}", str(n)) for i, n in enumerate(apps)),
        init_containers=tuple(cpu(f"i{i}", str(n), r) for i, (n, r) in enumerate(inits)),
    )
    total = pod.effective_requests().get("cpu", Quantity.zero()).value()
    sidecars = 0
    for n, restartable in inits:
        if restartable:
            sidecars += n
        else:
            assert total >= n + sidecars
    assert total >= sum(apps) + sidecars
    assert total <= sum(apps) + sum(n for n, _ in inits)
    via_pick = aggregate_container_resources(
        pod.init_containers, pod.containers, lambda c: c.resources.requests
    )
    assert via_pick.get("cpu", Quantity.zero()).value() == total


def test_container_helpers() -> None:
    c = Container.of("c", {"cpu": "2"}, {"cpu": 2, "memory": "1Gi"}, restart_policy="Always")
    assert c.is_restartable
    assert c.requests_of("cpu") == Quantity.parse("2")
    assert c.requests_of("memory").is_zero()
    assert c.limits_of("memory") == Quantity.parse("1Gi")
    assert not Container.of("d").is_restartable
    assert not Container.of("e", restart_policy="Never").is_restartable


def test_requests_defaulted_from_limits() -> None:
    r = ResourceRequirements(
        {"cpu": Quantity.parse("1")}, {"cpu": Quantity.parse("2"), "memory": Quantity.parse("1Gi")}
    )
    d = r.with_defaulted_requests()
    assert d.requests == {"cpu": Quantity.parse("1"), "memory": Quantity.parse("1Gi")}
    assert d.limits == r.limits


def test_pod_lookup_and_order() -> None:
    pod = Pod.of("u", [guaranteed("app")], [guaranteed("init")], name="web", namespace="ns")
    assert [c.name for c in pod.all_containers()] == ["init", "app"]
    assert pod.container("init").name == "init"
    assert pod.key == "ns/web"
    with pytest.raises(KeyError, match="missing"):
        pod.container("missing")
    assert Pod.of("uid-only").name == "uid-only"


def test_values_are_frozen_and_hashable() -> None:
    pod = Pod.of("u", [guaranteed("app")])
    with pytest.raises(FrozenInstanceError):
        pod.uid = "v"  # type: ignore[misc]
    with pytest.raises(TypeError):
        pod.containers[0].resources.requests["cpu"] = Quantity.parse("9")  # type: ignore[index]
    assert pod == Pod.of("u", [guaranteed("app")])
    assert hash(pod) == hash(Pod.of("u", [guaranteed("app")]))
    assert {pod, Pod.of("u", [guaranteed("app")])} == {pod}
    assert pod != Pod.of("u", [guaranteed("app", cpu="2")])


def test_pod_level_resource_names() -> None:
    assert is_pod_level_resource("cpu")
    assert is_pod_level_resource("memory")
    assert is_pod_level_resource("hugepages-1Gi")
    assert not is_pod_level_resource("nvidia.com/gpu")
