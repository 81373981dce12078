"""A seeded admission workload: machines, a kubelet configuration, devices and a pod stream.

Shared by ``bench/admission.py`` (latency) and the differential tests of the fast admission
path (``tests/node/test_fast_path_differential.py``): Guaranteed pods that fit one NUMA node,
ones that need several and ones that cannot fit, with two device resources spread over the
NUMA nodes, admitted and released on a ``Node``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from numaplane.api.kubeletconfig import kubelet_config_from_dict
from numaplane.api.pod import Container, Pod
from numaplane.node.admission import Node
from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.source import InMemoryDeviceSource
from numaplane.testing.fixtures import fixture_path
from numaplane.topology.discover import load_machine
from numaplane.topology.model import Machine

GPU = "example.com/gpu"
NIC = "example.com/nic"
EXHAUSTIVE_LIMIT = 8


def resolve_machine(spec: str) -> Machine:
    """A machine from a ``--machine`` value or a shared fixture name."""
    try:
        return load_machine(str(fixture_path(spec)))
    except FileNotFoundError:
        return load_machine(spec)


def node_config(machine: Machine, policy_name: str, scope: str) -> dict[str, Any]:
    """Static CPU and memory managers; the Topology Manager allowed every NUMA node."""
    first = next(n.id for n in machine.numa_nodes if n.memory_bytes > 2 << 30)
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": str(machine.all_cpu_ids.min()),
        "systemReserved": {"memory": "1Gi"},
        "evictionHard": {"memory.available": "100Mi"},
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": first, "limits": {"memory": "1124Mi"}}],
        "topologyManagerPolicy": policy_name,
        "topologyManagerScope": scope,
        "topologyManagerPolicyOptions": {
            "max-allowable-numa-nodes": str(max(8, len(machine.numa_nodes)))
        },
    }


def device_sources(machine: Machine) -> list[InMemoryDeviceSource]:
    """One GPU per NUMA node; one NIC per pair of nodes, attached to both."""
    ids = [n.id for n in machine.numa_nodes]
    gpus = [Device(f"gpu{i}", (n,)) for i, n in enumerate(ids)]
    nics = [Device(f"nic{i}", tuple(ids[i : i + 2])) for i in range(0, len(ids), 2)]
    return [InMemoryDeviceSource(GPU, gpus), InMemoryDeviceSource(NIC, nics)]


def pod_stream(machine: Machine, count: int, seed: int) -> list[tuple[str, Pod]]:
    """``("admit", pod)`` and ``("release", uid)`` steps: a seeded mix of pod shapes."""
    rng = random.Random(seed)
    nodes = [n for n in machine.numa_nodes if n.cpus]
    per_node_cpus = max(1, min(len(n.cpus) for n in nodes))
    per_node_mem = max(1, min(n.memory_bytes for n in machine.numa_nodes) >> 20)
    total_cpus = len(machine.all_cpu_ids)
    steps: list[tuple[str, Pod]] = []
    live: list[Pod] = []
    for i in range(count):
        kind = rng.choices(["one", "several", "unfit"], weights=[6, 3, 1])[0]
        if kind == "one":
            cpus = rng.randint(1, max(1, per_node_cpus // 2))
            mem_mi = rng.randint(64, max(64, per_node_mem // 4))
            gpus, nics = rng.randint(0, 1), 0
        elif kind == "several":
            cpus = rng.randint(per_node_cpus + 1, max(per_node_cpus + 1, 3 * per_node_cpus))
            mem_mi = rng.randint(per_node_mem // 2, per_node_mem * 2)
            gpus, nics = rng.randint(1, 3), rng.randint(0, 1)
        else:
            cpus = total_cpus + 1
            mem_mi = 256
            gpus, nics = 1, 0
        limits: dict[str, str | int] = {"cpu": str(cpus), "memory": f"{mem_mi}Mi"}
        if gpus:
            limits[GPU] = gpus
        if nics:
            limits[NIC] = nics
        app = Container.of("app", requests=limits, limits=limits)
        pod = Pod.of(f"pod-{i}", containers=[app], name=f"pod-{i}")
        steps.append(("admit", pod))
        live.append(pod)
        if len(live) > 6 and rng.random() < 0.5:
            steps.append(("release", live.pop(rng.randrange(len(live)))))
    return steps


def run(
    machine: Machine,
    steps: list[tuple[str, Pod]],
    policy_name: str,
    scope: str,
    prepare: Callable[[Node], None] | None = None,
) -> tuple[list[float], list[object]]:
    """Admission times (ms) and each admission's decision; ``prepare`` may adjust the node
    first (``numaplane.testing.exhaustive.use_exhaustive_merge``)."""
    config = kubelet_config_from_dict(node_config(machine, policy_name, scope))
    node = Node(machine, config, device_sources=device_sources(machine))
    if prepare is not None:
        prepare(node)
    times: list[float] = []
    decisions: list[object] = []
    clock: Callable[[], float] = time.perf_counter
    for action, pod in steps:
        if action == "release":
            if pod.uid in {p.uid for p in node.pods}:
                node.release(pod.uid)
            continue
        start = clock()
        result = node.admit(pod)
        times.append((clock() - start) * 1000.0)
        merged = [d.merged for d in result.topology.explanation.decisions]
        placements = [(p.name, str(p.cpus), p.memory, dict(p.devices)) for p in result.containers]
        decisions.append((result.admitted, result.reason, merged, placements))
    return times, decisions
