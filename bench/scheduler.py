"""The scheduler's decision rate, in process: N nodes (node engines standing for their agents),
M Guaranteed pods of mixed sizes, every decision checked against the node's own admission.

    PYTHONPATH=src python3 bench/scheduler.py [--nodes 100] [--pods 5000] [--seed 1]
        [--publish-every 8] [--end-rate 0.3] [--no-numa-filter]

Each node is a ``Node`` (a mix of 2-, 4- and 8-NUMA synthetic machines, static CPU and memory
managers, ``single-numa-node``) published to the scheduler's cache as its Node object and its
NodeResourceTopology with the snapshot annotation, as the agent publishes them. For each pod the
timed part is what the scheduler pays: parsing the pod, the decision (filters, scores, the NUMA
prediction) and the assumption on the replica, plus taking each republished snapshot (every
``--publish-every`` binds to a node) and each ended pod. The node then admits the pod itself
(untimed): ``rejected=`` counts pods the node refused after the scheduler chose it (0 with the
NUMA filter). After each bind a running pod ends with probability ``--end-rate``.

Last line: ``key=value`` pairs (``decisions_per_s``, ``us_per_decision``, ``scheduled``,
``unschedulable``, ``rejected``, ``rebuilds``).
"""

from __future__ import annotations

import argparse
import random
import time
from datetime import UTC, datetime
from typing import Any

from numaplane.agent.cluster.nodeobject import node_object
from numaplane.agent.cluster.nrt import nrt_object
from numaplane.api.kubeletconfig import KubeletConfiguration
from numaplane.controllers.scheduler.cache import Cache
from numaplane.controllers.scheduler.framework import decide
from numaplane.controllers.scheduler.options import SchedulerOptions
from numaplane.controllers.scheduler.podinfo import pod_info
from numaplane.node.admission import Node
from numaplane.testing.kubeletconfigs import static_single_numa_config
from numaplane.topology.model import Machine
from numaplane.topology.synthetic import parse_synthetic

SHAPES = (
    "sockets=2,numa-per-socket=1,cores-per-numa=8,threads-per-core=2,memory-per-numa=32Gi",
    "sockets=2,numa-per-socket=2,cores-per-numa=4,threads-per-core=2,memory-per-numa=16Gi",
    "sockets=2,numa-per-socket=4,cores-per-numa=2,threads-per-core=2,memory-per-numa=8Gi",
)
SIZES = ((1, "512Mi"), (2, "1Gi"), (3, "1Gi"), (4, "2Gi"), (6, "2Gi"))


def kubelet_config(machine: Machine) -> KubeletConfiguration:
    """Static CPU and memory managers, CPU 0 and 1124Mi reserved, single-numa-node."""
    return static_single_numa_config(machine)


def pod_object(i: int, rng: random.Random) -> dict[str, Any]:
    """A Guaranteed pod of a random size (one container, sometimes two)."""
    containers = []
    for c in range(1 if rng.random() < 0.8 else 2):
        cpus, memory = rng.choice(SIZES)
        amounts = {"cpu": str(cpus), "memory": memory}
        resources = {"requests": amounts, "limits": amounts}
        containers.append({"name": f"c{c}", "image": "sleep", "resources": resources})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"uid-{i}"},
        "spec": {"containers": containers, "schedulerName": "default-scheduler"},
    }


def main() -> None:
    """Run the benchmark (see the module doc)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--publish-every", type=int, default=8)
    parser.add_argument("--end-rate", type=float, default=0.3)
    parser.add_argument("--no-numa-filter", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    options = SchedulerOptions(numa_filter=not args.no_numa_filter, seed=args.seed)
    now = datetime.now(UTC)
    cache = Cache()
    agents: dict[str, Node] = {}
    for n in range(args.nodes):
        machine = parse_synthetic(SHAPES[n % len(SHAPES)])
        name = f"node-{n}"
        agents[name] = Node(machine, kubelet_config(machine))
        cache.set_node(node_object(name, agents[name], now=now))
        cache.set_nrt(nrt_object(name, agents[name]))
    objects = [pod_object(i, rng) for i in range(args.pods)]
    running: list[tuple[str, str]] = []
    binds: dict[str, int] = {}
    scheduled = unschedulable = rejected = 0
    timed = 0.0
    for obj in objects:
        start = time.perf_counter()
        pod = pod_info(obj)
        decision = decide(cache, options, pod, rng)
        node = decision.node
        ok = node is not None and cache.assume(pod, node, check_numa=options.numa_filter)
        timed += time.perf_counter() - start
        if not ok or node is None:
            unschedulable += 1
            continue
        scheduled += 1
        if agents[node].admit(pod.pod).admitted:
            running.append((pod.uid, node))
        else:
            rejected += 1
            start = time.perf_counter()
            cache.remove_assigned(pod.uid)
            timed += time.perf_counter() - start
        binds[node] = binds.get(node, 0) + 1
        if binds[node] % args.publish_every == 0:
            nrt = nrt_object(node, agents[node])
            start = time.perf_counter()
            cache.set_nrt(nrt)
            timed += time.perf_counter() - start
        if running and rng.random() < args.end_rate:
            uid, where = running.pop(rng.randrange(len(running)))
            agents[where].release(uid)
            start = time.perf_counter()
            cache.remove_assigned(uid)
            timed += time.perf_counter() - start
    rebuilds = sum(n.rebuilds for n in cache.numa.values()) - args.nodes
    decisions = len(objects)
    print(
        f"nodes={args.nodes} pods={decisions} numa_filter={options.numa_filter} "
        f"decisions_per_s={decisions / timed:.0f} us_per_decision={timed / decisions * 1e6:.0f} "
        f"scheduled={scheduled} unschedulable={unschedulable} rejected={rejected} "
        f"rebuilds={rebuilds}"
    )


if __name__ == "__main__":
    main()
