"""A whole cluster's throughput: pods created at once, scheduled NUMA-aware, admitted and
"running" on simulated nodes (issue 14).

    python3 bench/cluster.py [--nodes 100] [--pods 5000] [--clients 32]
                             [--machine M ...] [--no-numa-filter] [--timeout 1200]

Starts ``numaplane up --node none --simulated-nodes NODES`` (a mix of 2-, 4- and 8-NUMA
presets, one simulated agent per shape; every node's KubeletConfiguration is a static CPU
manager with CPU 0 reserved and the ``single-numa-node`` Topology Manager policy) in a temporary
directory, waits for every Node to be Ready, then creates PODS Guaranteed pods of mixed sizes
(1, 2 or 4 CPUs with 512Mi per CPU, in the proportions 5:3:2) at once, from ``--clients``
concurrent clients of ``numaplane.kube``. One watch on the pods records, per pod, when it was
first seen bound (``spec.nodeName``) and when it was first seen ``Running``, both measured from
the moment its create was sent. The last line is:

    pods_per_s=<n> bind_p99_ms=<x> running_p99_ms=<x> topology_affinity_errors=<n>

``pods_per_s`` is the pods Running divided by the seconds from the first create to the last pod
Running (end to end: create, schedule, bind, admit, status); ``topology_affinity_errors`` the
pods the nodes rejected with ``TopologyAffinityError`` (zero with the NUMA filter on; run with
``--no-numa-filter`` to see the count without it). Pods that end Pending are counted on the
line before.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from numaplane.kube import ApiError, KubeClient, load_kubeconfig
from numaplane.testing.cluster import RunningCluster, start_cluster

NAMESPACE = "bench"
#: 2-, 4- and 8-NUMA presets of ``numaplane machine presets``.
DEFAULT_MACHINES = (
    "multi-socket-per-numa",
    "dual-socket-multi-numa",
    "dual-socket-multi-numa-large",
)
#: (CPUs, weight): the pod sizes and how often each is drawn.
SIZES = ((1, 5), (2, 3), (4, 2))
KUBELET_CONFIG = """\
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0"
topologyManagerPolicy: single-numa-node
"""


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (nearest rank); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def pod(name: str, cpus: int) -> dict[str, Any]:
    """A Guaranteed pod of ``cpus`` whole CPUs and 512Mi per CPU, running until deleted."""
    resources = {"cpu": str(cpus), "memory": f"{512 * cpus}Mi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"bench": "cluster"}},
        "spec": {
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {
                    "name": "main",
                    "image": "sleep",
                    "command": ["sleep", "infinity"],
                    "resources": {"requests": resources, "limits": resources},
                }
            ],
        },
    }


@dataclass
class Timeline:
    """What the watch saw of each pod, in seconds on the ``time.perf_counter`` clock."""

    sent: dict[str, float] = field(default_factory=dict)
    bound: dict[str, float] = field(default_factory=dict)
    running: dict[str, float] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    expected: int = 0

    def see(self, obj: dict[str, Any]) -> None:
        """Record one watched version of a pod."""
        name = str(obj["metadata"]["name"])
        now = time.perf_counter()
        if obj.get("spec", {}).get("nodeName") and name not in self.bound:
            self.bound[name] = now
        status = obj.get("status") or {}
        phase = status.get("phase")
        if phase == "Running" and name not in self.running:
            self.running[name] = now
        elif phase == "Failed" and name not in self.failed:
            self.failed[name] = str(status.get("reason") or "")
        if len(self.running) + len(self.failed) >= self.expected:
            self.done.set()


async def watch_pods(client: KubeClient, timeline: Timeline, resource_version: str) -> None:
    """Feed every pod event of the namespace to ``timeline`` until cancelled."""
    async for event in client.watch(
        "v1", "pods", NAMESPACE, resource_version=resource_version, allow_bookmarks=True
    ):
        if event.type in ("ADDED", "MODIFIED"):
            timeline.see(event.object)


async def create_all(
    client: KubeClient, pods: list[dict[str, Any]], clients: int, timeline: Timeline
) -> None:
    """Create ``pods`` from ``clients`` concurrent workers, retrying transient refusals."""
    queue = list(reversed(pods))

    async def worker() -> None:
        while queue:
            body = queue.pop()
            name = body["metadata"]["name"]
            timeline.sent[name] = time.perf_counter()
            for attempt in range(10):
                try:
                    await client.create("v1", "pods", body, NAMESPACE)
                    break
                except ApiError as err:
                    if err.code not in (429, 500, 503, 504) or attempt == 9:
                        raise
                    await asyncio.sleep(0.1 * (attempt + 1))

    await asyncio.gather(*(worker() for _ in range(clients)))


async def drive(cluster: RunningCluster, args: argparse.Namespace) -> str:
    """Create the pods, wait for them, and return the result line."""
    rng = random.Random(args.seed)
    sizes = [cpus for cpus, weight in SIZES for _ in range(weight)]
    pods = [pod(f"p{i:05d}", rng.choice(sizes)) for i in range(args.pods)]
    timeline = Timeline(expected=len(pods))
    config = load_kubeconfig(cluster.kubeconfig)
    async with KubeClient(config, max_connections=args.clients + 4) as client:
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        try:
            await client.create("v1", "namespaces", namespace)
        except ApiError as err:
            if err.code != 409:
                raise
        listed = await client.list("v1", "pods", NAMESPACE)
        watcher = asyncio.ensure_future(
            watch_pods(client, timeline, str(listed["metadata"].get("resourceVersion") or ""))
        )
        start = time.perf_counter()
        await create_all(client, pods, args.clients, timeline)
        created_s = time.perf_counter() - start
        print(f"created {len(pods)} pods in {created_s:.1f}s", file=sys.stderr)
        try:
            await asyncio.wait_for(timeline.done.wait(), args.timeout)
        except TimeoutError:
            print(f"timed out after {args.timeout}s", file=sys.stderr)
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
    running = timeline.running
    end = max(running.values(), default=start)
    bind_ms = [(timeline.bound[n] - timeline.sent[n]) * 1000 for n in timeline.bound]
    running_ms = [(running[n] - timeline.sent[n]) * 1000 for n in running]
    affinity = sum(1 for reason in timeline.failed.values() if reason == "TopologyAffinityError")
    pending = len(pods) - len(running) - len(timeline.failed)
    print(
        f"running={len(running)} failed={len(timeline.failed)} pending={pending} "
        f"bound={len(timeline.bound)} failed_reasons={sorted(set(timeline.failed.values()))}",
        file=sys.stderr,
    )
    pods_per_s = len(running) / (end - start) if end > start else 0.0
    return (
        f"pods_per_s={pods_per_s:.0f} bind_p99_ms={percentile(bind_ms, 0.99):.0f} "
        f"running_p99_ms={percentile(running_ms, 0.99):.0f} "
        f"topology_affinity_errors={affinity}"
    )


def main() -> None:
    """Run the benchmark and print its result line last."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--machine", action="append", default=None)
    parser.add_argument("--no-numa-filter", action="store_true")
    parser.add_argument("--timeout", type=float, default=1200.0)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--keep", action="store_true", help="keep the data directory")
    args = parser.parse_args()
    machines = tuple(args.machine or DEFAULT_MACHINES)
    work = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    kubelet = work / "kubelet.yaml"
    kubelet.write_text(KUBELET_CONFIG)
    extra = ("--no-numa-filter",) if args.no_numa_filter else ()
    cluster = start_cluster(
        work / "data",
        simulated_nodes=args.nodes,
        machine=machines,
        node="none",
        kubelet_config=kubelet,
        extra_args=extra,
    )
    try:
        started = time.perf_counter()
        cluster.wait_nodes_ready(args.nodes, timeout_s=600)
        print(
            f"{args.nodes} nodes Ready in {time.perf_counter() - started:.1f}s "
            f"({', '.join(machines)}); data in {work}",
            file=sys.stderr,
        )
        line = asyncio.run(drive(cluster, args))
    finally:
        cluster.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(line)


if __name__ == "__main__":
    main()
