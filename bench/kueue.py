"""Kueue's scheduling throughput: 100 ClusterQueues in 10 cohorts that borrow from each other,
10,000 pending Workloads of mixed priorities created directly (no Jobs, no pods), admitted
until nothing more fits.

    python bench/kueue.py                        # in process: the engine, writes applied in memory
    python bench/kueue.py --mode e2e             # an API server + ``numaplane kueue`` process
    python bench/kueue.py --workloads 2000       # smaller

The objects are generated from ``--seed``: each ClusterQueue has two flavors (``on-demand`` with a
nominal quota of 8, 16 or 32 CPUs and 4 GiB per CPU, ``spot`` with half of it), half of them a
borrowing limit, the others unlimited borrowing within their cohort; each Workload goes to a
random ClusterQueue's LocalQueue with priority 0, 100 or 1000 and 1–4 pods of 0.5, 1 or 2 CPUs.
The capacity (all cohorts together) is about what the Workloads ask for in total, so most are
admitted, some borrowing, and the rest end parked as inadmissible. No preemption is configured
(the victims of a preemption keep their quota until a job integration releases it, and there
are no jobs here).

The in-process mode runs the engine (:class:`numaplane.kueue.engine.Engine`) as the runtime does,
cycle after cycle, each cycle's writes applied and observed back and the Workload controller run
on what they touched, until no head is left (or 50 cycles in a row reserve nothing). The queues'
statuses are written once at the end (``status_s``), as a work queue coalesces them.
``cycle_p99_ms`` is the 99th percentile of ``Engine.cycle`` alone; ``admissions_per_s`` counts
the whole loop (cycles, write-backs, the Workload controller).
The e2e mode creates everything through the API server first, then starts ``numaplane kueue``
and watches the reservations arrive; ``admissions_per_s`` spans the first to the last
reservation, ``startup_s`` the process start and its initial lists.

The last line is ``key=value``: the counts, the two figures and ``fingerprint``, a digest of every
decision (each Workload's ClusterQueue and flavors, or its pending reason), equal across runs and
modes when the decisions are.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Obj = dict[str, Any]

API_VERSION = "kueue.x-k8s.io/v1beta2"
NAMESPACE = "bench"
EPOCH = 1_800_000_000
PRIORITIES = (0, 100, 1000)
CPU_CHOICES = ("500m", "1", "2")
CPU_MILLI = {"500m": 500, "1": 1000, "2": 2000}
#: Cycles in a row that reserve nothing before the in-process run stops.
IDLE_CYCLES = 50


@dataclass(frozen=True)
class Scenario:
    """The generated objects, in creation order."""

    namespace: Obj
    flavors: list[Obj]
    cluster_queues: list[Obj]
    local_queues: list[Obj]
    workloads: list[Obj]


def _time(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def generate(cluster_queues: int, cohorts: int, workloads: int, seed: int) -> Scenario:
    """The benchmark's objects for ``seed``."""
    rng = random.Random(seed)
    flavors = [
        {"apiVersion": API_VERSION, "kind": "ResourceFlavor", "metadata": {"name": name}}
        for name in ("on-demand", "spot")
    ]
    cqs: list[Obj] = []
    lqs: list[Obj] = []
    # Quotas grow with the Workloads so that the capacity stays about the total demand.
    # (a Workload asks for ~2.9 CPUs on average, a ClusterQueue holds ~28 units)
    unit = max(1, round(workloads / (10 * cluster_queues)))
    for index in range(cluster_queues):
        name = f"cq-{index:03d}"
        cpus = rng.choice((8, 16, 32)) * unit
        borrowing = rng.random() < 0.5

        def quota(cpu: int, borrowing: bool = borrowing) -> list[Obj]:
            rows: list[Obj] = [
                {"name": "cpu", "nominalQuota": str(cpu)},
                {"name": "memory", "nominalQuota": f"{4 * cpu}Gi"},
            ]
            if borrowing:
                rows[0]["borrowingLimit"] = str(cpu // 2)
                rows[1]["borrowingLimit"] = f"{2 * cpu}Gi"
            return rows

        cqs.append(
            {
                "apiVersion": API_VERSION,
                "kind": "ClusterQueue",
                "metadata": {"name": name},
                "spec": {
                    "cohortName": f"cohort-{index % cohorts:02d}",
                    "namespaceSelector": {},
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu", "memory"],
                            "flavors": [
                                {"name": "on-demand", "resources": quota(cpus)},
                                {"name": "spot", "resources": quota(cpus // 2)},
                            ],
                        }
                    ],
                },
            }
        )
        lqs.append(
            {
                "apiVersion": API_VERSION,
                "kind": "LocalQueue",
                "metadata": {"namespace": NAMESPACE, "name": f"lq-{index:03d}"},
                "spec": {"clusterQueue": name},
            }
        )
    wls: list[Obj] = []
    for index in range(workloads):
        cpu = rng.choice(CPU_CHOICES)
        count = rng.randint(1, 4)
        memory = f"{4 * CPU_MILLI[cpu] // 1000}Gi" if CPU_MILLI[cpu] >= 1000 else "2Gi"
        wls.append(
            {
                "apiVersion": API_VERSION,
                "kind": "Workload",
                "metadata": {
                    "namespace": NAMESPACE,
                    "name": f"wl-{index:05d}",
                    "creationTimestamp": _time(EPOCH + index),
                },
                "spec": {
                    "queueName": f"lq-{rng.randrange(cluster_queues):03d}",
                    "priority": rng.choice(PRIORITIES),
                    "podSets": [
                        {
                            "name": "main",
                            "count": count,
                            "template": {
                                "spec": {
                                    "restartPolicy": "Never",
                                    "containers": [
                                        {
                                            "name": "c",
                                            "image": "registry.k8s.io/pause:3.9",
                                            "resources": {
                                                "requests": {"cpu": cpu, "memory": memory}
                                            },
                                        }
                                    ],
                                }
                            },
                        }
                    ],
                },
            }
        )
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    return Scenario(namespace, flavors, cqs, lqs, wls)


# --- decisions ---------------------------------------------------------------------------------


def _condition(obj: Obj, kind: str) -> Obj | None:
    for found in (obj.get("status") or {}).get("conditions") or []:
        if found.get("type") == kind:
            return dict(found)
    return None


def decision(obj: Obj) -> list[Any]:
    """One Workload's decision: its ClusterQueue and flavors, or its pending reason."""
    admission = (obj.get("status") or {}).get("admission")
    if admission:
        flavors = [
            sorted((psa.get("flavors") or {}).items()) for psa in admission["podSetAssignments"]
        ]
        return ["reserved", admission["clusterQueue"], flavors]
    pending = _condition(obj, "QuotaReserved")
    return ["pending", pending.get("reason") if pending else ""]


def _digest(rows: Any) -> str:
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()[:16]


def fingerprint(workloads: list[Obj]) -> tuple[int, str, str]:
    """How many Workloads hold a reservation, a digest of every decision, and one of the
    reservations alone (pending reasons of parked workloads depend on when the run stops
    watching; where the quota went does not)."""
    rows = sorted((o["metadata"]["name"], decision(o)) for o in workloads)
    reserved = [row for row in rows if row[1][0] == "reserved"]
    return len(reserved), _digest(rows), _digest(reserved)


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (nearest rank) of ``values``."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


# --- in process ----------------------------------------------------------------------------------


class _Memory:
    """The objects the engine wrote, observed back as an informer would deliver them (the
    written dicts as they are: no copies, no resourceVersions; what the bench times is the
    engine's work, not a store's)."""

    def __init__(self, now: float) -> None:
        from numaplane.kueue.engine import Engine, Touched

        self.now = now
        self.engine = Engine(clock=lambda: self.now)
        self.objects: dict[tuple[str, str], Obj] = {}
        self.touched = Touched()

    def put(self, obj: Obj) -> None:
        from numaplane.kueue.engine import object_key

        kind = str(obj["kind"])
        self.objects[(kind, object_key(obj))] = obj
        self.touched.merge(self.engine.observe(kind, obj))

    def apply(self, outcome: Any) -> int:
        """Make ``outcome``'s writes; how many reservations they carried."""
        from numaplane.kueue.engine import CREATE, DELETE

        reserved = 0
        for write in outcome.writes:
            if write.verb == DELETE:
                self.objects.pop((write.kind, write.key), None)
                self.touched.merge(self.engine.forget(write.kind, write.obj))
            elif write.verb == CREATE or (write.kind, write.key) in self.objects:
                self.put(write.obj)
                reserved += bool(write.assumed)
        return reserved

    def controllers(self, *, statuses: bool = True) -> None:
        """The Workload controller on what changed, until quiet; with ``statuses`` the
        ClusterQueue and LocalQueue statuses too, else their keys wait (a work queue coalesces
        them: the runtime writes a queue's status once for many changes)."""
        from numaplane.kueue.engine import Touched

        waiting = Touched()
        while self.touched.workloads or (
            statuses and (self.touched.cluster_queues or self.touched.local_queues)
        ):
            touched, self.touched = self.touched, Touched()
            for key in sorted(touched.workloads):
                self.apply(self.engine.reconcile_workload(key, self.now))
            if not statuses:
                waiting.cluster_queues |= touched.cluster_queues
                waiting.local_queues |= touched.local_queues
                continue
            for name in sorted(touched.cluster_queues):
                self.apply(self.engine.cluster_queue_status(name, self.now))
            for key in sorted(touched.local_queues):
                self.apply(self.engine.local_queue_status(key, self.now))
        self.touched.cluster_queues |= waiting.cluster_queues
        self.touched.local_queues |= waiting.local_queues


def run_engine(scenario: Scenario) -> dict[str, Any]:
    """Every cycle in process until nothing is left to try; the figures."""
    memory = _Memory(float(EPOCH + len(scenario.workloads) + 60))
    start = time.perf_counter()
    for obj in [scenario.namespace, *scenario.flavors, *scenario.cluster_queues]:
        memory.put(json.loads(json.dumps(obj)))
    for obj in [*scenario.local_queues, *scenario.workloads]:
        memory.put(json.loads(json.dumps(obj)))
    memory.controllers()
    setup_s = time.perf_counter() - start

    engine = memory.engine
    cycle_ms: list[float] = []
    admitted = idle = 0
    start = time.perf_counter()
    # Until no head is left, or a long run of cycles that reserve nothing (heads that keep
    # coming back without ever fitting).
    while engine.has_work() and idle < IDLE_CYCLES:
        memory.now += 0.01
        began = time.perf_counter()
        outcome = engine.cycle(memory.now)
        cycle_ms.append((time.perf_counter() - began) * 1000)
        reserved = memory.apply(outcome)
        memory.controllers(statuses=False)
        admitted += reserved
        idle = 0 if reserved else idle + 1
    loop_s = time.perf_counter() - start
    start = time.perf_counter()
    memory.controllers()
    status_s = time.perf_counter() - start
    workloads = [o for (kind, _), o in memory.objects.items() if kind == "Workload"]
    count, digest, reserved_digest = fingerprint(workloads)
    return {
        "setup_s": round(setup_s, 2),
        "cycles": len(cycle_ms),
        "admitted": count,
        "reservations": admitted,
        "admissions_per_s": round(count / loop_s, 1) if loop_s else 0.0,
        "cycle_p50_ms": round(statistics.median(cycle_ms), 2) if cycle_ms else 0.0,
        "cycle_p99_ms": round(percentile(cycle_ms, 0.99), 2),
        "loop_s": round(loop_s, 2),
        "status_s": round(status_s, 2),
        "fingerprint": digest,
        "reserved_fingerprint": reserved_digest,
    }


# --- through the API -----------------------------------------------------------------------------


def _chunks(items: list[Obj], size: int) -> Iterator[list[Obj]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


async def _create_all(kubeconfig: Path, scenario: Scenario) -> float:
    from numaplane.kube import KubeClient, load_kubeconfig
    from numaplane.kueue.crds import kueue_crds

    async with KubeClient(load_kubeconfig(kubeconfig), max_connections=16) as client:
        for crd in kueue_crds():
            await client.create("apiextensions.k8s.io/v1", "customresourcedefinitions", crd)
        await _wait_served(client)
        await client.create("v1", "namespaces", scenario.namespace)
        for obj in scenario.flavors:
            await client.create(API_VERSION, "resourceflavors", obj)
        for obj in scenario.cluster_queues:
            await client.create(API_VERSION, "clusterqueues", obj)
        for obj in scenario.local_queues:
            await client.create(API_VERSION, "localqueues", obj, NAMESPACE)
        start = time.perf_counter()
        for chunk in _chunks(scenario.workloads, 64):
            await asyncio.gather(
                *(
                    client.create(API_VERSION, "workloads", o, NAMESPACE, decode=False)
                    for o in chunk
                )
            )
        return time.perf_counter() - start


async def _wait_served(client: Any) -> None:
    from numaplane.kube import ApiError

    deadline = time.monotonic() + 60
    while True:
        try:
            await client.list(API_VERSION, "workloads", NAMESPACE, limit=1)
            return
        except ApiError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


async def _watch_reservations(
    kubeconfig: Path, expected: int, quiet_s: float
) -> tuple[list[float], list[Obj]]:
    """Wall times of the first reservation of each Workload, until ``expected`` were seen or
    none came for ``quiet_s``; then every Workload."""
    from numaplane.kube import KubeClient, load_kubeconfig

    seen: dict[str, float] = {}
    async with KubeClient(load_kubeconfig(kubeconfig)) as client:
        items, version = await client.list_all(API_VERSION, "workloads", NAMESPACE)
        for obj in items:
            if (obj.get("status") or {}).get("admission"):
                seen[obj["metadata"]["name"]] = time.perf_counter()
        last = time.perf_counter()

        async def consume() -> None:
            nonlocal last
            async for event in client.watch(
                API_VERSION, "workloads", NAMESPACE, resource_version=version
            ):
                obj = event.object
                name = (obj.get("metadata") or {}).get("name")
                if name and name not in seen and (obj.get("status") or {}).get("admission"):
                    seen[name] = last = time.perf_counter()
                    if len(seen) >= expected:
                        return

        task = asyncio.ensure_future(consume())
        while not task.done() and time.perf_counter() - last < quiet_s:
            await asyncio.sleep(0.5)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        final, _ = await client.list_all(API_VERSION, "workloads", NAMESPACE)
    return sorted(seen.values()), final


def _stopped_within(process: subprocess.Popen[bytes], timeout_s: float) -> float:
    """Seconds ``process`` took to exit (after its SIGTERM); TimeoutExpired past ``timeout_s``."""
    began = time.perf_counter()
    process.wait(timeout=timeout_s)
    return time.perf_counter() - began


def run_e2e(scenario: Scenario, expected: int, quiet_s: float) -> dict[str, Any]:
    """Everything through an API server and a ``numaplane kueue`` process; the figures."""
    from numaplane.testing.apiserver import ENTRY, running_apiserver

    with (
        tempfile.TemporaryDirectory(prefix="bench-kueue-") as work,
        running_apiserver(Path(work) / "api") as server,
    ):
        create_s = asyncio.run(_create_all(server.kubeconfig, scenario))
        argv = [sys.executable, "-c", ENTRY, "kueue", "--kubeconfig", str(server.kubeconfig)]
        with (Path(work) / "kueue.log").open("wb") as log:
            started = time.perf_counter()
            kueue = subprocess.Popen(
                [*argv, "--no-leader-elect"], stdout=log, stderr=subprocess.STDOUT
            )
            try:
                times, final = asyncio.run(
                    _watch_reservations(server.kubeconfig, expected, quiet_s)
                )
            finally:
                kueue.terminate()
                try:
                    stop_s = _stopped_within(kueue, 60)
                except subprocess.TimeoutExpired:
                    kueue.kill()
                    kueue.wait()
                    stop_s = -1.0
    count, digest, reserved_digest = fingerprint(final)
    span = (times[-1] - times[0]) if len(times) > 1 else 0.0
    return {
        "create_s": round(create_s, 1),
        "startup_s": round(times[0] - started, 1) if times else 0.0,
        "admitted": count,
        "admissions_per_s": round(len(times) / span, 1) if span else 0.0,
        "cycle_p99_ms": "n/a",
        "span_s": round(span, 2),
        "stop_s": round(stop_s, 1),
        "fingerprint": digest,
        "reserved_fingerprint": reserved_digest,
    }


def main() -> None:
    """Run the benchmark; the last line is ``key=value``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=("engine", "e2e"), default="engine")
    parser.add_argument("--cluster-queues", type=int, default=100)
    parser.add_argument("--cohorts", type=int, default=10)
    parser.add_argument("--workloads", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quiet-s", type=float, default=20.0, help="e2e: stop after this idle")
    args = parser.parse_args()
    scenario = generate(args.cluster_queues, args.cohorts, args.workloads, args.seed)
    reference = run_engine(scenario)
    figures = (
        reference
        if args.mode == "engine"
        else run_e2e(scenario, reference["admitted"], args.quiet_s)
    )
    if args.mode == "e2e":
        figures["same_decisions_as_engine"] = figures["fingerprint"] == reference["fingerprint"]
        figures["same_reservations_as_engine"] = (
            figures["reserved_fingerprint"] == reference["reserved_fingerprint"]
        )
    head = {
        "mode": args.mode,
        "cluster_queues": args.cluster_queues,
        "cohorts": args.cohorts,
        "workloads": args.workloads,
        "seed": args.seed,
    }
    print(" ".join(f"{k}={v}" for k, v in {**head, **figures}.items()))


if __name__ == "__main__":
    main()
