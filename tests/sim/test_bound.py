"""The exact optimum: known answers, CP-SAT against brute force, never below the kubelet."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from numaplane.api.kubeletconfig import KubeletConfiguration, kubelet_config_from_dict
from numaplane.api.pod import Container, Pod
from numaplane.errors import InputError
from numaplane.node.admission import Node
from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.source import DeviceSource, InMemoryDeviceSource
from numaplane.sim.bound import optimum
from numaplane.sim.bruteforce import brute_force_optimum
from numaplane.topology.model import Machine
from numaplane.topology.synthetic import SyntheticShape

GPU = "example.com/gpu"
GIB = 1 << 30
SEEDS = 40
POLICIES = ("none", "best-effort", "restricted", "single-numa-node")


def _config(
    policy: str,
    scope: str = "container",
    *,
    reserved: str = "0",
    options: dict[str, str] | None = None,
) -> KubeletConfiguration:
    doc: dict[str, Any] = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": reserved,
        "systemReserved": {"memory": "1Gi"},
        "evictionHard": {"memory.available": "100Mi"},
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1124Mi"}}],
        "topologyManagerPolicy": policy,
        "topologyManagerScope": scope,
    }
    if options:
        doc["cpuManagerPolicyOptions"] = options
    return kubelet_config_from_dict(doc)


def _machine(numa: int, cores: int, memory_gib: int = 8, threads: int = 1) -> Machine:
    return SyntheticShape(
        numa_per_socket=numa,
        cores_per_numa=cores,
        threads_per_core=threads,
        memory_per_numa=memory_gib * GIB,
    ).build()


def _gpus(machine: Machine, per_numa: int) -> list[DeviceSource]:
    devices = [Device(f"gpu{n}-{i}", (n,)) for n in machine.numa_ids for i in range(per_numa)]
    return [InMemoryDeviceSource(GPU, devices)] if devices else []


def _container(name: str, cpu: str, memory: str = "256Mi", gpu: int = 0, **kw: Any) -> Container:
    res: dict[str, str | int] = {"cpu": cpu, "memory": memory}
    if gpu:
        res[GPU] = gpu
    return Container.of(name, res, res, **kw)


def _pod(uid: str, *containers: Container, init: Sequence[Container] = ()) -> Pod:
    return Pod.of(uid, containers, init)


def _greedy(
    machine: Machine, config: KubeletConfiguration, pods: Sequence[Pod], sources: list[DeviceSource]
) -> int:
    node = Node(machine, config, device_sources=sources)
    return sum(node.admit(pod).admitted for pod in pods)


@dataclass(frozen=True)
class Case:
    """One instance with its known optimum."""

    name: str
    machine: Machine
    config: KubeletConfiguration
    pods: tuple[Pod, ...]
    want: int
    gpus_per_numa: int = 0
    extra_nodes: tuple[Machine, ...] = field(default=())


_M45 = _machine(2, 5)  # CPU 0 reserved: 4 + 5 exclusive CPUs
_THREE = tuple(_pod(f"p{i}", _container("c", "3")) for i in range(4))

CASES = (
    Case("single-numa strands CPUs", _M45, _config("single-numa-node"), _THREE, 2),
    Case("restricted is the capacity bound", _M45, _config("restricted"), _THREE, 3),
    Case("best-effort is the capacity bound", _M45, _config("best-effort"), _THREE, 3),
    Case("none is the capacity bound", _M45, _config("none"), _THREE, 3),
    Case(
        "container scope splits a pod's containers",
        _M45,
        _config("single-numa-node"),
        (_pod("a", _container("c1", "4"), _container("c2", "5")),),
        1,
    ),
    Case(
        "pod scope keeps a pod on one NUMA node",
        _M45,
        _config("single-numa-node", "pod"),
        (_pod("a", _container("c1", "4"), _container("c2", "5")),),
        0,
    ),
    Case(
        "init containers count at their peak",
        _M45,
        _config("single-numa-node"),
        (
            _pod("a", _container("app", "5"), init=[_container("init", "5")]),
            _pod("b", _container("app", "4")),
        ),
        2,
    ),
    Case(
        "sidecars add up with the app containers",
        _M45,
        _config("single-numa-node", "pod"),
        (
            _pod(
                "a",
                _container("app", "3"),
                init=[_container("side", "3", restart_policy="Always")],
            ),
        ),
        0,
    ),
    Case(
        "memory per NUMA node binds",
        _machine(2, 8, memory_gib=4),
        _config("single-numa-node"),
        # NUMA 0 keeps 1124Mi for the system: one pod there, two on NUMA 1.
        tuple(_pod(f"p{i}", _container("c", "1", "2Gi")) for i in range(4)),
        3,
    ),
    Case(
        "devices must sit with the CPUs",
        _M45,
        _config("single-numa-node"),
        (_pod("a", _container("c", "5", gpu=2)), _pod("b", _container("c", "4", gpu=1))),
        1,
        gpus_per_numa=1,
    ),
    Case(
        "fractional CPU uses node allocatable only",
        _M45,
        _config("single-numa-node"),
        tuple(_pod(f"p{i}", _container("c", "1500m")) for i in range(8)),
        6,
    ),
    Case(
        "full-pcpus-only refuses odd requests",
        _machine(2, 4, threads=2),
        _config("single-numa-node", options={"full-pcpus-only": "true"}),
        (_pod("a", _container("c", "3")), _pod("b", _container("c", "6"))),
        1,
    ),
    Case(
        "a second node takes the overflow",
        _M45,
        _config("single-numa-node"),
        _THREE,
        4,
        extra_nodes=(_M45,),
    ),
)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_known_optimum(case: Case) -> None:
    machines = (case.machine, *case.extra_nodes)
    sources = [_gpus(m, case.gpus_per_numa) for m in machines]
    result = optimum(machines, case.config, case.pods, device_sources=sources)
    assert result.optimal
    assert result.admitted == case.want
    assert result.upper_bound == case.want
    assert len(result.placement) == case.want == len(result.node)
    assert brute_force_optimum(machines, case.config, case.pods, device_sources=sources) == (
        case.want
    )


def test_single_numa_placement_respects_capacity() -> None:
    pods = tuple(_pod(f"p{i}", _container("c", "2")) for i in range(5))
    result = optimum(_M45, _config("single-numa-node"), pods)
    assert result.admitted == 4
    used = {0: 0, 1: 0}
    for containers in result.placement.values():
        (numa,) = containers["c"]
        used[numa] += 2
    assert used[0] <= 4
    assert used[1] <= 5


def test_same_input_same_answer() -> None:
    config = _config("single-numa-node")
    first = optimum(_M45, config, _THREE)
    assert optimum(_M45, config, _THREE) == first


@dataclass(frozen=True)
class BadInput:
    """An input the optimum refuses."""

    name: str
    pods: tuple[Pod, ...]
    kwargs: dict[str, Any]


BAD = (
    BadInput("duplicate uids", (_pod("a", _container("c", "1")),) * 2, {}),
    BadInput("device sources per node", (), {"device_sources": [[], []]}),
    BadInput("time limit", (), {"time_limit_s": 0}),
)


@pytest.mark.parametrize("bad", BAD, ids=lambda b: b.name)
def test_bad_input(bad: BadInput) -> None:
    with pytest.raises(InputError):
        optimum(_M45, _config("none"), bad.pods, **bad.kwargs)


# -- random tiny instances ------------------------------------------------------------------


def _random_pod(rng: random.Random, uid: str, gpus: bool) -> Pod:
    def container(name: str, **kw: Any) -> Container:
        cpu = rng.choice(["1", "2", "3", "4", "500m"])
        memory = rng.choice(["256Mi", "1Gi", "2Gi", "3Gi"])
        gpu = rng.choice([0, 0, 1, 2]) if gpus else 0
        if rng.random() < 0.2:
            # Burstable: no exclusive CPUs, no memory pinning.
            return Container.of(name, {"cpu": cpu, "memory": memory}, {"memory": "4Gi"}, **kw)
        return _container(name, cpu, memory, gpu, **kw)

    apps = [container(f"app{i}") for i in range(rng.choice([1, 1, 2]))]
    init: list[Container] = []
    if rng.random() < 0.25:
        init.append(container("init"))
    if rng.random() < 0.1:
        init.append(container("side", restart_policy="Always"))
    return _pod(uid, *apps, init=init)


def _random_instance(seed: int) -> tuple[Machine, list[DeviceSource], tuple[Pod, ...]]:
    rng = random.Random(seed)
    machine = _machine(rng.choice([2, 3, 4]), rng.choice([2, 3, 4]), rng.choice([3, 4, 6]))
    gpus = rng.random() < 0.4
    sources = _gpus(machine, rng.choice([1, 2])) if gpus else []
    pods = tuple(_random_pod(rng, f"p{i}", gpus) for i in range(rng.randint(3, 7)))
    return machine, sources, pods


@pytest.mark.parametrize("seed", range(SEEDS), ids=lambda s: f"seed{s}")
def test_cpsat_equals_brute_force(seed: int) -> None:
    machine, sources, pods = _random_instance(seed)
    for policy in POLICIES:
        for scope in ("container", "pod"):
            config = _config(policy, scope)
            exact = optimum(machine, config, pods, device_sources=[sources])
            assert exact.optimal
            brute = brute_force_optimum(machine, config, pods, device_sources=[sources])
            assert exact.admitted == brute, (policy, scope)


# Seed 4 once caught the node engine freeing an admitted pod's init-container memory.
_KUBELET_SEEDS = list(range(SEEDS))


@pytest.mark.parametrize("seed", _KUBELET_SEEDS, ids=lambda s: f"seed{s}")
def test_optimum_never_below_kubelet(seed: int) -> None:
    machine, sources, pods = _random_instance(seed)
    for policy in POLICIES:
        for scope in ("container", "pod"):
            config = _config(policy, scope)
            exact = optimum(machine, config, pods, device_sources=[sources])
            assert exact.admitted >= _greedy(machine, config, pods, sources), (policy, scope)
