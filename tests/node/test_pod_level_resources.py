"""Pod-level resources (``spec.resources``, KEP-2837) in every manager, PodLevelResourceManagers
off as at the revision the spec studies (spec §0, §7.1, §7.2, §8.5, §9.6, §14).

* QoS is computed from the pod-level resources alone;
* the static CPU policy gives no hints and no exclusive CPUs (shared pool);
* the Static memory policy gives no hints and allocates nothing (PodLevelResources on);
* the device manager is unaffected (devices are never pod-level resources);
* the predicate counts the pod-level requests; with the PodLevelResources gate off it counts
  the containers' and the pod-features handler rejects the pod afterwards.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pytest

from numaplane.api.kubeletconfig import kubelet_config_from_dict
from numaplane.api.pod import Container, Pod, QOSClass, ResourceRequirements
from numaplane.api.quantity import Quantity
from numaplane.cpuset import CPUSet
from numaplane.node.admission import Node
from numaplane.node.cpumanager.policy_static import StaticPolicy as StaticCPUPolicy
from numaplane.node.cpumanager.state import InMemoryState as CPUState
from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.source import InMemoryDeviceSource
from numaplane.node.requests import guaranteed_cpus, pod_guaranteed_cpus
from numaplane.topology.discover import load_machine
from tests.node.cpumanager.topos import DUAL_SOCKET_HT
from tests.node.memorymanager.helpers import GB, started_policy
from tests.node.memorymanager.helpers import machine as memory_machine

GPU = "example.com/gpu"


def _quantities(values: Mapping[str, str]) -> dict[str, Quantity]:
    return {name: Quantity.parse(v) for name, v in values.items()}


def _pod(
    pod_level: Mapping[str, str] | None,
    container: Mapping[str, str | int],
    qos: QOSClass | None = None,
) -> Pod:
    resources = None
    if pod_level is not None:
        resources = ResourceRequirements(_quantities(pod_level), _quantities(pod_level))
    return Pod(
        name="p",
        uid="p",
        containers=(Container.of("app", container, container),),
        resources=resources,
        status_qos_class=qos,
    )


WHOLE = {"cpu": "2", "memory": "1Gi"}


@dataclass(frozen=True)
class SetCase:
    name: str
    resources: ResourceRequirements | None
    want: bool


SET_CASES = (
    SetCase("absent", None, False),
    SetCase("empty", ResourceRequirements(), False),
    SetCase("cpu request", ResourceRequirements(_quantities({"cpu": "1"})), True),
    SetCase("memory limit", ResourceRequirements({}, _quantities({"memory": "1Gi"})), True),
    SetCase("huge pages only", ResourceRequirements(_quantities({"hugepages-2Mi": "2Mi"})), True),
    SetCase(
        "unsupported only", ResourceRequirements(_quantities({"ephemeral-storage": "1"})), False
    ),
)


@pytest.mark.parametrize("case", SET_CASES, ids=lambda c: c.name)
def test_has_pod_level_resources(case: SetCase) -> None:
    pod = Pod(name="p", uid="p", resources=case.resources)
    assert pod.has_pod_level_resources is case.want


@dataclass(frozen=True)
class ManagerCase:
    name: str
    pod: Pod
    qos: QOSClass
    exclusive_cpus: int


MANAGER_CASES = (
    ManagerCase("container-level only", _pod(None, WHOLE), QOSClass.GUARANTEED, 2),
    ManagerCase("pod-level cpu and memory", _pod(WHOLE, WHOLE), QOSClass.GUARANTEED, 0),
    ManagerCase(
        # Pod-level values alone decide QoS: the containers' Guaranteed values do not count.
        "pod-level burstable",
        Pod(
            name="p",
            uid="p",
            containers=(Container.of("app", WHOLE, WHOLE),),
            resources=ResourceRequirements(_quantities({"cpu": "2"}), _quantities({"cpu": "4"})),
        ),
        QOSClass.BURSTABLE,
        0,
    ),
    ManagerCase(
        "pod-level huge pages only, recorded Guaranteed",
        _pod({"hugepages-2Mi": "2Mi"}, WHOLE, QOSClass.GUARANTEED),
        QOSClass.GUARANTEED,
        0,
    ),
)


@pytest.mark.parametrize("case", MANAGER_CASES, ids=lambda c: c.name)
def test_static_cpu_policy(case: ManagerCase) -> None:
    pod = case.pod
    container = pod.containers[0]
    assert pod.qos_class is case.qos
    assert guaranteed_cpus(pod, container) == case.exclusive_cpus
    assert pod_guaranteed_cpus(pod) == case.exclusive_cpus
    policy = StaticCPUPolicy(DUAL_SOCKET_HT, 0)
    state = CPUState()
    policy.start(state)
    hints = policy.get_topology_hints(state, pod, container)
    pod_hints = policy.get_pod_topology_hints(state, pod)
    assert (hints is None, pod_hints is None) == (case.exclusive_cpus == 0,) * 2
    policy.allocate(state, pod, container)
    cpus = state.get_cpu_set(pod.uid, container.name)
    assert len(cpus if cpus is not None else CPUSet()) == case.exclusive_cpus


@pytest.mark.parametrize("case", MANAGER_CASES, ids=lambda c: c.name)
def test_static_memory_policy(case: ManagerCase) -> None:
    policy, state, _ = started_policy(memory_machine(2, 4 * GB))
    pod = case.pod
    container = pod.containers[0]
    pinned = case.exclusive_cpus > 0  # the same pods are left alone by both policies
    assert (policy.get_topology_hints(state, pod, container) is not None) is pinned
    assert (policy.get_pod_topology_hints(state, pod) is not None) is pinned
    policy.allocate(state, pod, container)
    assert (state.get_memory_blocks(pod.uid, container.name) is not None) is pinned
    pinning = policy.metrics.registry.get_sample_value(
        "kubelet_memory_manager_pinning_requests_total"
    )
    assert pinning == int(pinned)


def _node(gate: bool = True) -> Node:
    config = kubelet_config_from_dict(
        {
            "kind": "KubeletConfiguration",
            "cpuManagerPolicy": "static",
            "reservedSystemCPUs": "0",
            "systemReserved": {"memory": "1Gi"},
            "memoryManagerPolicy": "Static",
            "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1124Mi"}}],
            "topologyManagerPolicy": "single-numa-node",
            "featureGates": {"PodLevelResources": gate},
        },
        "<test>",
    )
    source = InMemoryDeviceSource(GPU, [Device("gpu0", (0,)), Device("gpu1", (1,))])
    return Node(load_machine("dual-socket-ht"), config, device_sources=[source])


def test_node_keeps_pod_level_pods_on_shared_resources_but_gives_devices() -> None:
    node = _node()
    pod = _pod(WHOLE, {**WHOLE, GPU: 1})
    result = node.admit(pod)
    assert result.admitted
    (placement,) = result.containers
    assert placement.exclusive_cpus == CPUSet()
    assert placement.memory == ()
    assert len(placement.devices[GPU]) == 1


@dataclass(frozen=True)
class PredicateCase:
    name: str
    gate: bool
    pod_level_cpu: str
    reason: str | None
    message: str | None


PREDICATE_CASES = (
    PredicateCase("pod level fits", True, "2", None, None),
    PredicateCase(
        # 12 CPUs, one reserved (reservedSystemCPUs) out of allocatable.
        "pod-level request counted",
        True,
        "20",
        "OutOfcpu",
        "Node didn't have enough resource: cpu, requested: 20000, used: 0, capacity: 11000",
    ),
    PredicateCase(
        # Gate off: the containers' 1 CPU is what the predicate sees, then the pod-features
        # handler refuses the pod.
        "gate off: pod-features handler after the predicate",
        False,
        "20",
        "PodLevelResourcesNotSupported",
        "PodLevelResources feature gate is disabled",
    ),
)


@pytest.mark.parametrize("case", PREDICATE_CASES, ids=lambda c: c.name)
def test_predicate_with_pod_level_requests(case: PredicateCase) -> None:
    node = _node(case.gate)
    container = {"cpu": "1", "memory": "1Gi"}
    pod = _pod({"cpu": case.pod_level_cpu, "memory": "1Gi"}, container)
    result = node.admit(pod)
    assert (result.reason, result.message) == (case.reason, case.message)
    assert result.admitted is (case.reason is None)


def test_gate_off_predicate_failure_comes_first() -> None:
    node = _node(gate=False)
    too_big = {"cpu": "20", "memory": "1Gi"}
    result = node.admit(_pod({"cpu": "1", "memory": "1Gi"}, too_big))
    assert result.reason == "OutOfcpu"
