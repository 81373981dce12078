"""Invariants of the whole node engine under random admit/release sequences.

On real machines (hwloc captures from ``../shared/topologies`` and a GPU preset), whatever pods
arrive and leave:

- no CPU is in two exclusive sets, nor in an exclusive set and the shared pool;
- reserved CPUs are never exclusive;
- memory and hugepages never go below zero on any NUMA node;
- every device is held by at most one pod;
- under ``single-numa-node`` every admitted container's CPUs, memory and devices sit on one
  NUMA node;
- releasing every pod gives back exactly the starting state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from numaplane.api.kubeletconfig import kubelet_config_from_dict
from numaplane.api.pod import Container, Pod
from numaplane.node.admission import Node
from numaplane.node.devicemanager.inventory import DEFAULT_PCI_RULES, devices_from_machine
from numaplane.node.devicemanager.source import InMemoryDeviceSource
from numaplane.testing.admission_workload import node_config
from numaplane.testing.fixtures import machine_fixture, shared_topologies_dir
from numaplane.topology.discover import load_machine
from numaplane.topology.model import Machine

GPU = "nvidia.com/gpu"


@dataclass(frozen=True)
class Scenario:
    """A machine, a kubelet configuration, and how many steps hypothesis may take."""

    name: str
    machine: Callable[[], Machine]
    policy: str
    scope: str
    max_examples: int
    with_gpus: bool = False
    captured: bool = False


def _fixture(name: str) -> Callable[[], Machine]:
    def load() -> Machine:
        if shared_topologies_dir() is None:
            pytest.skip("../shared/topologies is not present")
        return machine_fixture(name)

    return load


SCENARIOS = (
    Scenario(
        "8numa-single-numa-node",
        _fixture("16amd64-8n2c"),
        "single-numa-node",
        "container",
        12,
        captured=True,
    ),
    Scenario(
        "8numa-best-effort-pod",
        _fixture("32amd64-4s2n4c-cgroup2"),
        "best-effort",
        "pod",
        30,
        captured=True,
    ),
    Scenario(
        "4socket-restricted",
        _fixture("16em64t-4s2c2t"),
        "restricted",
        "container",
        50,
        captured=True,
    ),
    Scenario(
        "gpu-single-numa-node",
        lambda: load_machine("dual-socket-gpu"),
        "single-numa-node",
        "container",
        80,
        with_gpus=True,
    ),
    Scenario(
        "gpu-best-effort-pod",
        lambda: load_machine("dual-socket-gpu"),
        "best-effort",
        "pod",
        80,
        with_gpus=True,
    ),
)

_container = st.fixed_dictionaries(
    {
        "cpu": st.sampled_from(["1", "2", "3", "4", "6", "500m"]),
        "memory": st.sampled_from(["256Mi", "1Gi", "3Gi", "9Gi"]),
        "gpu": st.integers(0, 2),
        "guaranteed": st.booleans(),
    }
)
_pod = st.fixed_dictionaries(
    {"apps": st.lists(_container, min_size=1, max_size=2), "init": st.lists(_container, max_size=1)}
)
_step = st.one_of(
    st.tuples(st.just("admit"), _pod), st.tuples(st.just("release"), st.integers(0, 50))
)


def _make_pod(uid: str, spec: dict[str, Any], with_gpus: bool) -> Pod:
    def container(name: str, c: dict[str, Any]) -> Container:
        limits: dict[str, str | int] = {"cpu": c["cpu"], "memory": c["memory"]}
        if with_gpus and c["gpu"]:
            limits[GPU] = c["gpu"]
        requests = dict(limits) if c["guaranteed"] else {"cpu": "100m", "memory": "64Mi"}
        if with_gpus and c["gpu"]:
            requests[GPU] = c["gpu"]
        return Container.of(name, requests=requests, limits=limits)

    return Pod.of(
        uid,
        containers=[container(f"app{i}", c) for i, c in enumerate(spec["apps"])],
        init_containers=[container(f"init{i}", c) for i, c in enumerate(spec["init"])],
    )


def _snapshot(node: Node) -> tuple[Any, ...]:
    return (
        node.cpu_manager.shared_pool(),
        node.cpu_manager.exclusive_assignments(),
        dict(node.memory_manager.state.get_machine_state()),
        {r: node.device_manager.allocated(r) for r in node.device_manager.resources()},
    )


def _check_invariants(node: Node, machine: Machine, policy: str) -> None:
    shared = node.cpu_manager.shared_pool()
    reserved = node.cpu_manager.reserved_cpus()
    seen: set[int] = set()
    for pod_uid, containers in node.cpu_manager.exclusive_assignments().items():
        pod_cpus: set[int] = set()
        for name, cpus in containers.items():
            assert cpus.is_disjoint(shared), f"{pod_uid}/{name} CPUs {cpus} in shared pool"
            assert cpus.is_disjoint(reserved), f"{pod_uid}/{name} holds reserved CPUs"
            pod_cpus |= set(cpus)
        # Within a pod, app containers may reuse init containers' CPUs (upstream reuse).
        assert not (pod_cpus & seen), f"pod {pod_uid} shares exclusive CPUs with another pod"
        seen |= pod_cpus
    for node_id, state in node.memory_manager.state.get_machine_state().items():
        for resource, table in state.memory_map.items():
            assert table.free >= 0, f"NUMA {node_id} {resource} free {table.free}"
            assert table.reserved >= 0, f"NUMA {node_id} {resource} reserved {table.reserved}"
    for resource in node.device_manager.resources():
        holders: dict[str, str] = {}
        for pod in node.pods:
            for c in pod.all_containers():
                for dev in node.device_manager.container_devices(pod.uid, c.name).get(resource, ()):
                    assert holders.setdefault(dev, pod.uid) == pod.uid, f"{dev} in two pods"
    if policy != "single-numa-node":
        return
    for pod in node.pods:
        for c in pod.all_containers():
            placement = node.placement(pod, c.name)
            numa: set[int] = set(machine.numa_nodes_of_cpus(placement.exclusive_cpus))
            for block in placement.memory:
                numa |= set(block.numa_nodes)
            for ids in placement.devices.values():
                for device in node.device_manager.devices(GPU):
                    if device.id in ids:
                        numa |= set(device.numa or ())
            assert len(numa) <= 1, f"{pod.uid}/{c.name} spans NUMA nodes {sorted(numa)}"


@pytest.mark.parametrize(
    "scenario",
    # A scenario on a capture belongs to the real-capture group (see tests/conftest.py).
    [pytest.param(s, marks=pytest.mark.shared_captures) if s.captured else s for s in SCENARIOS],
    ids=lambda s: s.name,
)
def test_random_admit_release_sequences_keep_invariants(scenario: Scenario) -> None:
    machine = scenario.machine()
    config = kubelet_config_from_dict(
        node_config(machine, scenario.policy, scenario.scope), "<invariants>"
    )
    gpus = devices_from_machine(machine, DEFAULT_PCI_RULES) if scenario.with_gpus else {}
    if scenario.with_gpus:
        assert gpus.get(GPU), "the GPU preset should expose nvidia.com/gpu devices"

    @settings(
        max_examples=scenario.max_examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.lists(_step, min_size=20, max_size=60))
    def run(steps: list[tuple[str, Any]]) -> None:
        sources = [InMemoryDeviceSource(r, devs) for r, devs in gpus.items()]
        node = Node(machine, config, device_sources=sources)
        start = _snapshot(node)
        for index, (op, arg) in enumerate(steps):
            if op == "admit":
                result = node.admit(_make_pod(f"pod-{index}", arg, scenario.with_gpus))
                outcomes[result.reason or "admitted"] = (
                    outcomes.get(result.reason or "admitted", 0) + 1
                )
            elif node.pods:
                node.release(node.pods[arg % len(node.pods)].uid)
            _check_invariants(node, machine, scenario.policy)
        for pod in node.pods:
            node.release(pod.uid)
        assert _snapshot(node) == start, "releasing every pod did not restore the start state"

    outcomes: dict[str, int] = {}
    run()
    # The sequences must exercise both outcomes, or the invariants prove nothing.
    assert outcomes.get("admitted", 0) > 20, outcomes
    assert sum(n for r, n in outcomes.items() if r != "admitted") > 0, outcomes
