"""Full-admission latency on one machine (issue 5).

    python3 bench/admission.py --machine 256ia64-64n2s2c [--repeat 300] [--seed 1]

Builds a node (static CPU and memory managers, best-effort Topology Manager in container scope,
``max-allowable-numa-nodes`` raised to the machine's NUMA count) with two device resources
spread over the NUMA nodes: one ``example.com/gpu`` per node and one ``example.com/nic`` per
pair of nodes (a device on both). It then admits a fixed, seeded stream of Guaranteed pods: ones
that fit one NUMA node, ones that need several, and ones that cannot fit; admitted pods are
released at random so the machine stays partly full. Every ``Node.admit`` is timed.

With 8 NUMA nodes or fewer the same stream is replayed through the exhaustive definition (the
cross product of fully listed hints) and both runs must decide identically. Prints one line:

    machine=<name> numa=<n> p50_ms=<x> p99_ms=<y> exhaustive_p50_ms=<z or skipped>

``--machine`` takes what ``numaplane admit --machine`` takes, or a fixture name from
``../shared/topologies``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from numaplane.api.kubeletconfig import kubelet_config_from_dict
from numaplane.api.pod import Container, Pod
from numaplane.node.admission import Node
from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.source import InMemoryDeviceSource
from numaplane.node.topologymanager import policy
from numaplane.topology.discover import load_machine
from numaplane.topology.model import Machine

GPU = "example.com/gpu"
NIC = "example.com/nic"
EXHAUSTIVE_LIMIT = 8


def resolve_machine(spec: str) -> Machine:
    """A machine from a ``--machine`` value or a shared fixture name."""
    shared = Path(__file__).resolve().parents[2] / "shared" / "topologies"
    for sub, suffix in (("linux", ".tar.bz2"), ("xml", ".xml")):
        candidate = shared / sub / f"{spec}{suffix}"
        if candidate.exists():
            return load_machine(str(candidate))
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
    machine: Machine, steps: list[tuple[str, Pod]], policy_name: str, scope: str
) -> tuple[list[float], list[object]]:
    """Admission times (ms) and each admission's decision."""
    config = kubelet_config_from_dict(node_config(machine, policy_name, scope))
    node = Node(machine, config, device_sources=device_sources(machine))
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


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (nearest rank)."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its one-line result."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machine", required=True)
    parser.add_argument("--repeat", type=int, default=300, help="pods to admit")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--policy", default="best-effort")
    parser.add_argument("--scope", default="container")
    args = parser.parse_args(argv)
    machine = resolve_machine(args.machine)
    steps = pod_stream(machine, args.repeat, args.seed)
    numa = len(machine.numa_nodes)
    times, decisions = run(machine, steps, args.policy, args.scope)
    exhaustive = "skipped"
    if numa <= EXHAUSTIVE_LIMIT:
        policy.USE_MERGE_SEARCH = False
        try:
            ref_times, ref_decisions = run(machine, steps, args.policy, args.scope)
        finally:
            policy.USE_MERGE_SEARCH = True
        if ref_decisions != decisions:
            print("error: fast path and exhaustive definition disagree", file=sys.stderr)
            return 1
        exhaustive = f"{statistics.median(ref_times):.3f}"
    print(
        f"machine={machine.name} numa={numa} p50_ms={statistics.median(times):.3f} "
        f"p99_ms={percentile(times, 0.99):.3f} exhaustive_p50_ms={exhaustive}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
