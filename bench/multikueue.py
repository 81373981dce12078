"""MultiKueue's dispatch: one manager, 100 worker clusters, 5,000 Jobs submitted at once to the
manager; then one worker lost.

    python bench/multikueue.py                          # 100 workers, 5,000 Jobs
    python bench/multikueue.py --workers 10 --jobs 500  # smaller

Everything runs on one ``numaplane apiserver``: the manager is its default cluster (with the
Job defaulting that sets ``spec.managedBy: kueue.x-k8s.io/multikueue``), the workers are its
logical clusters ``worker000`` .. The manager runs ``numaplane kueue --config C`` as a process,
as a user would; the workers' Kueues (a plain :class:`~numaplane.kueue.runtime.KueueRuntime`
each, upstream's defaults) all run in one second process (``--serve-workers``): a hundred
``numaplane kueue`` processes do not fit two cores. No Job controller and no nodes: dispatch
ends at the manager's Workload ``Admitted``, which needs the workers' Kueue but no pods.

The objects come from ``--seed``: the manager has one ClusterQueue per worker, each with its own
MultiKueue AdmissionCheck and MultiKueueConfig listing ``--clusters-per-config`` workers (3:
upstream's incremental step) starting at its own and wrapping around, so every worker serves
that many queues; the default ``AllAtOnce`` dispatcher copies each Workload to the 3 workers of
its queue. Each Job (1 pod of 0.5, 1 or 2 CPUs) goes to a random LocalQueue. Quotas hold every
Job everywhere, so nothing waits for quota: what is timed is MultiKueue. Kubeconfig Secrets are
made as Kueue's documentation makes them (a ServiceAccount token per worker).

Figures (a watch on the manager's Workloads records when each is first seen reserved and first
seen ``Admitted`` with a ``clusterName``):

- ``dispatch_per_s``: Workloads admitted through a worker over the seconds from the first
  manager reservation to the last admission (reservation → remote copies → a worker's Kueue
  reserves → the Job created on that worker alone → the manager's Workload ``Admitted``).
- ``dispatch_p99_ms`` / ``dispatch_p50_ms``: per Workload, reservation → ``Admitted`` (so the
  queue a burst makes is counted, as upstream's benchmark counts it).
- ``duplicates`` (manager Jobs with more than one Job on the workers), ``lost`` (manager Jobs
  not admitted, or with no Job on the worker their Workload names): both must be 0.
- ``lost_worker_requeue_s``: the worker holding the most Workloads is broken as upstream's
  tests break one (its Secret's server set to ``https://127.0.0.1:1``); the seconds until the
  last of its Workloads is no longer admitted there, with ``worker_lost_timeout_s`` (the
  Configuration's ``multiKueue.workerLostTimeout``) and ``connection_check_s`` (the manager's
  connection check period); ``requeue_after_timeout_s`` is the part beyond the timeout (aim:
  ≤ 2 × the check period). ``readmit_s``: until the last of them is admitted on another
  worker. The Secret is then restored and ``duplicates_after``/``lost_after`` count again once
  the stale copies on the restored worker are gone (``stale_removed_s``).

The last line is ``key=value``; the same seed makes the same objects.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]

API = "kueue.x-k8s.io/v1beta2"
NAMESPACE = "bench"
KUEUE_NAMESPACE = "kueue-system"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
CPU_CHOICES = ("500m", "1", "2")
#: The manager's connection check period (``numaplane kueue``'s, beyond upstream).
CONNECTION_CHECK_S = 5.0


@dataclass(frozen=True)
class Scenario:
    """The generated objects: worker names, each manager queue's workers, the Jobs."""

    workers: tuple[str, ...]
    #: Manager queue index → the workers of its MultiKueueConfig, in config order.
    configs: tuple[tuple[str, ...], ...]
    jobs: tuple[Obj, ...]

    def queues_of(self, worker: str) -> list[int]:
        """The manager queues whose config lists ``worker``."""
        return [i for i, clusters in enumerate(self.configs) if worker in clusters]


def generate(workers: int, jobs: int, per_config: int, seed: int) -> Scenario:
    """The benchmark's objects for ``seed``."""
    rng = random.Random(seed)
    names = tuple(f"worker{i:03d}" for i in range(workers))
    width = max(1, min(per_config, workers))
    configs = tuple(tuple(names[(i + k) % workers] for k in range(width)) for i in range(workers))
    made = []
    for index in range(jobs):
        cpu = rng.choice(CPU_CHOICES)
        queue = rng.randrange(workers)
        made.append(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {
                    "name": f"job-{index:05d}",
                    "namespace": NAMESPACE,
                    "labels": {QUEUE_LABEL: f"lq-{queue:03d}"},
                },
                "spec": {
                    "parallelism": 1,
                    "completions": 1,
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [
                                {
                                    "name": "c",
                                    "image": "registry.k8s.io/pause:3.9",
                                    "resources": {"requests": {"cpu": cpu}},
                                }
                            ],
                        }
                    },
                },
            }
        )
    return Scenario(names, configs, tuple(made))


def _queues(cluster_queues: list[tuple[str, list[str]]], quota: int) -> list[tuple[str, Obj]]:
    """(resource, object) of a flavor, ClusterQueues (name, admission checks) and their
    LocalQueues ``lq-NNN`` (the ClusterQueue's name ``cq-NNN``, or ``cq`` for all on a worker)."""
    found: list[tuple[str, Obj]] = [
        ("resourceflavors", {"apiVersion": API, "kind": "ResourceFlavor",
                             "metadata": {"name": "default"}}),
    ]  # fmt: skip
    for name, checks in cluster_queues:
        spec: Obj = {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [
                        {"name": "default", "resources": [{"name": "cpu", "nominalQuota": quota}]}
                    ],
                }
            ],
        }
        if checks:
            spec["admissionChecks"] = checks
        found.append(
            ("clusterqueues", {"apiVersion": API, "kind": "ClusterQueue",
                               "metadata": {"name": name}, "spec": spec})
        )  # fmt: skip
    return found


def _local_queue(index: int, cluster_queue: str) -> tuple[str, Obj]:
    return (
        "localqueues",
        {
            "apiVersion": API,
            "kind": "LocalQueue",
            "metadata": {"namespace": NAMESPACE, "name": f"lq-{index:03d}"},
            "spec": {"clusterQueue": cluster_queue},
        },
    )


def manager_objects(scenario: Scenario) -> list[tuple[str, Obj]]:
    """(resource, object) on the manager, in creation order (MultiKueueClusters aside)."""
    quota = 2 * len(scenario.jobs) + 2
    found: list[tuple[str, Obj]] = []
    for index, clusters in enumerate(scenario.configs):
        name = f"mk-{index:03d}"
        spec = {"clusters": list(clusters)}
        found.append(
            ("multikueueconfigs", {"apiVersion": API, "kind": "MultiKueueConfig",
                                   "metadata": {"name": name}, "spec": spec})
        )  # fmt: skip
        parameters = {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": name}
        found.append(
            ("admissionchecks", {"apiVersion": API, "kind": "AdmissionCheck",
                                 "metadata": {"name": name},
                                 "spec": {"controllerName": "kueue.x-k8s.io/multikueue",
                                          "parameters": parameters}})
        )  # fmt: skip
    cqs = [(f"cq-{i:03d}", [f"mk-{i:03d}"]) for i in range(len(scenario.configs))]
    found += _queues(cqs, quota)
    found += [_local_queue(i, f"cq-{i:03d}") for i in range(len(scenario.configs))]
    return found


def worker_objects(scenario: Scenario, worker: str) -> list[tuple[str, Obj]]:
    """(resource, object) on ``worker``: one ClusterQueue, the LocalQueues it serves."""
    quota = 2 * len(scenario.jobs) + 2
    local = [_local_queue(i, "cq") for i in scenario.queues_of(worker)]
    return _queues([("cq", [])], quota) + local


def kueue_config(worker_lost_timeout: float, gc_interval: float, concurrency: int) -> str:
    """The manager's Kueue Configuration (``concurrency``: its Workload controllers'
    ``groupKindConcurrency``, 0 for Kueue's shipped value)."""
    config: dict[str, Any] = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "multiKueue": {
            "workerLostTimeout": f"{worker_lost_timeout:g}s",
            "gcInterval": f"{gc_interval:g}s",
        },
    }
    if concurrency:
        config["controller"] = {"groupKindConcurrency": {"Workload.kueue.x-k8s.io": concurrency}}
    return yaml.safe_dump(config)


# --- the workers' Kueues (a child process) -------------------------------------------------------


async def _serve_workers(kubeconfigs: list[str]) -> None:
    from numaplane.kube import KubeClient, load_kubeconfig
    from numaplane.kueue.runtime import KueueRuntime

    clients = [KubeClient(load_kubeconfig(Path(path))) for path in kubeconfigs]
    tasks = [asyncio.create_task(KueueRuntime(client).run()) for client in clients]
    try:
        await asyncio.gather(*tasks)
    finally:
        for client in clients:
            await client.close()


def serve_workers(kubeconfigs: list[str]) -> None:
    """Run one Kueue per kubeconfig in this process until killed."""
    from numaplane.cli.gctune import tune_gc

    tune_gc()
    asyncio.run(_serve_workers(kubeconfigs))


# --- setup ---------------------------------------------------------------------------------------


async def _create(client: Any, resource_name: str, obj: Obj) -> None:
    from numaplane.kube import ApiError

    api = obj["apiVersion"]
    try:
        await client.create(api, resource_name, obj, obj["metadata"].get("namespace"), decode=False)
    except ApiError as err:
        if not err.is_conflict:
            raise


async def _namespace(client: Any, name: str) -> None:
    await _create(client, "namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                          "metadata": {"name": name}})  # fmt: skip


async def _limited(items: list[Awaitable[None]], limit: int) -> None:
    gate = asyncio.Semaphore(limit)

    async def one(item: Awaitable[None]) -> None:
        async with gate:
            await item

    await asyncio.gather(*(one(item) for item in items))


async def set_up(server: Any, scenario: Scenario) -> None:
    """Every object but the Jobs, on the manager and each worker."""
    from numaplane.kube import KubeClient, load_kubeconfig
    from numaplane.kueue.runtime.install import install_kueue_crds
    from numaplane.kueue.runtime.workeraccess import add_worker

    async with KubeClient(load_kubeconfig(server.kubeconfig), max_connections=16) as manager:
        await install_kueue_crds(manager)
        await _namespace(manager, NAMESPACE)
        await _namespace(manager, KUEUE_NAMESPACE)

        async def worker(name: str) -> None:
            path = server.cluster_kubeconfig(name)
            async with KubeClient(load_kubeconfig(path), max_connections=4) as client:
                await install_kueue_crds(client)
                await _namespace(client, NAMESPACE)
                for resource_name, obj in worker_objects(scenario, name):
                    await _create(client, resource_name, obj)
                await add_worker(manager, client, name, namespace=KUEUE_NAMESPACE)
            cluster = {
                "apiVersion": API,
                "kind": "MultiKueueCluster",
                "metadata": {"name": name},
                "spec": {
                    "clusterSource": {
                        "kubeConfig": {"locationType": "Secret", "location": f"{name}-secret"}
                    }
                },
            }
            await _create(manager, "multikueueclusters", cluster)

        await _limited([worker(name) for name in scenario.workers], 8)
        for resource_name, obj in manager_objects(scenario):
            await _create(manager, resource_name, obj)


def _condition(obj: Obj, kind: str) -> str | None:
    for found in (obj.get("status") or {}).get("conditions") or ():
        if found.get("type") == kind:
            return str(found.get("status"))
    return None


async def _until(what: str, timeout_s: float, probe: Callable[[], Awaitable[bool]]) -> float:
    """Poll ``probe`` every 0.5 s until true; the seconds it took. RuntimeError past
    ``timeout_s``."""
    began = time.perf_counter()
    while not await probe():
        if time.perf_counter() - began > timeout_s:
            raise RuntimeError(f"timed out after {timeout_s:g}s waiting for {what}")
        await asyncio.sleep(0.5)
    return time.perf_counter() - began


async def wait_active(manager: Any, scenario: Scenario, timeout_s: float) -> float:
    """Seconds until every MultiKueueCluster and AdmissionCheck is ``Active``."""

    async def active() -> bool:
        for kind in ("multikueueclusters", "admissionchecks"):
            items, _ = await manager.list_all(API, kind)
            if len(items) < len(scenario.workers) or any(
                _condition(o, "Active") != "True" for o in items
            ):
                return False
        return True

    return await _until("the workers Active", timeout_s, active)


# --- the run -------------------------------------------------------------------------------------


@dataclass
class Watch:
    """What the manager's Workload watch saw, by Workload name."""

    reserved: dict[str, float] = field(default_factory=dict)
    admitted: dict[str, float] = field(default_factory=dict)
    #: The cluster each Workload is admitted on now ("" when not admitted).
    cluster: dict[str, str] = field(default_factory=dict)
    #: During the lost-worker phase: the worker, the phase start, and when each of its
    #: Workloads left it / was admitted elsewhere.
    victim: str = ""
    left: dict[str, float] = field(default_factory=dict)
    readmitted: dict[str, float] = field(default_factory=dict)
    last: float = 0.0

    def see(self, obj: Obj, now: float) -> None:
        """One Workload as delivered by the watch."""
        name = obj["metadata"]["name"]
        status = obj.get("status") or {}
        if name not in self.reserved and _condition(obj, "QuotaReserved") == "True":
            self.reserved[name] = now
        on = str(status.get("clusterName") or "")
        here = on if _condition(obj, "Admitted") == "True" and on else ""
        if here and name not in self.admitted:
            self.admitted[name] = self.last = now
        before = self.cluster.get(name, "")
        self.cluster[name] = here
        if self.victim and before == self.victim and here != self.victim:
            self.left.setdefault(name, now)
        if self.victim and name in self.left and here and here != self.victim:
            self.readmitted.setdefault(name, now)


async def _watch(client: Any, version: str, watch: Watch) -> None:
    async for event in client.watch(API, "workloads", NAMESPACE, resource_version=version):
        if event.type in ("ADDED", "MODIFIED"):
            watch.see(event.object, time.perf_counter())


def _chunks(items: list[Obj], size: int) -> Iterator[list[Obj]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


async def remote_jobs(server: Any, scenario: Scenario) -> dict[str, list[str]]:
    """Manager Job name → the workers that hold a Job of that name."""
    from numaplane.kube import KubeClient, load_kubeconfig

    found: dict[str, list[str]] = {}

    async def one(name: str) -> None:
        path = server.cluster_kubeconfig(name)
        async with KubeClient(load_kubeconfig(path)) as client:
            items, _ = await client.list_all("batch/v1", "jobs", NAMESPACE)
        for job in items:
            found.setdefault(job["metadata"]["name"], []).append(name)

    await _limited([one(name) for name in scenario.workers], 8)
    return found


async def tally(server: Any, manager: Any, scenario: Scenario) -> tuple[int, int, int]:
    """(admitted, duplicates, lost) from the manager's Workloads and the workers' Jobs."""
    jobs = await remote_jobs(server, scenario)
    wls, _ = await manager.list_all(API, "workloads", NAMESPACE)
    admitted_on: dict[str, str] = {}
    for wl in wls:
        owners: list[Obj] = wl["metadata"].get("ownerReferences") or []
        owner = owners[0].get("name") if owners else None
        on = (wl.get("status") or {}).get("clusterName")
        if owner and on and _condition(wl, "Admitted") == "True":
            admitted_on[owner] = on
    names = [job["metadata"]["name"] for job in scenario.jobs]
    duplicates = sum(1 for n in names if len(jobs.get(n, ())) > 1)
    lost = sum(1 for n in names if n not in admitted_on or admitted_on[n] not in jobs.get(n, ()))
    return len(admitted_on), duplicates, lost


async def _secret_server(manager: Any, worker: str, server: str | None) -> str:
    """Set worker's kubeconfig Secret's server to ``server`` (None: leave it); the old one."""
    secret = await manager.get("v1", "secrets", f"{worker}-secret", KUEUE_NAMESPACE)
    config = yaml.safe_load(base64.b64decode(secret["data"]["kubeconfig"]).decode())
    old = str(config["clusters"][0]["cluster"]["server"])
    if server is not None:
        config["clusters"][0]["cluster"]["server"] = server
        text = yaml.safe_dump(config).encode()
        secret["data"]["kubeconfig"] = base64.b64encode(text).decode()
        await manager.update("v1", "secrets", secret, KUEUE_NAMESPACE, decode=False)
    return old


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (nearest rank) of ``values``."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


async def measure(
    server: Any, scenario: Scenario, args: argparse.Namespace, pids: dict[str, int]
) -> dict[str, Any]:
    """Submit the Jobs, time the dispatch, then lose a worker; the figures. ``pids`` names the
    processes whose CPU time the dispatch costs."""
    from numaplane.kube import KubeClient, load_kubeconfig

    figures: dict[str, Any] = {}
    async with KubeClient(load_kubeconfig(server.kubeconfig), max_connections=32) as manager:
        figures["active_s"] = round(await wait_active(manager, scenario, args.setup_timeout), 1)
        _, version = await manager.list_all(API, "workloads", NAMESPACE)
        watch = Watch()
        watcher = asyncio.create_task(_watch(manager, version, watch))
        cpu_before = {name: _cpu_s(pid) for name, pid in pids.items()}
        began = time.perf_counter()
        for chunk in _chunks(list(scenario.jobs), 64):
            await asyncio.gather(
                *(manager.create("batch/v1", "jobs", o, NAMESPACE, decode=False) for o in chunk)
            )
        figures["create_s"] = round(time.perf_counter() - began, 1)
        expected = len(scenario.jobs)
        watch.last = time.perf_counter()
        said = time.perf_counter()
        while len(watch.admitted) < expected and time.perf_counter() - watch.last < args.quiet_s:
            await asyncio.sleep(0.5)
            if time.perf_counter() - said > 30:
                said = time.perf_counter()
                progress = f"reserved {len(watch.reserved)}, admitted {len(watch.admitted)}"
                print(f"multikueue bench: {progress} of {expected}", file=sys.stderr)
        cpu = {name: _cpu_s(pid) - cpu_before[name] for name, pid in pids.items()}
        start = min(watch.reserved.values(), default=0.0)
        span = watch.last - start if watch.admitted else 0.0
        latencies = [
            (at - watch.reserved[name]) * 1000
            for name, at in watch.admitted.items()
            if name in watch.reserved
        ]
        admitted, duplicates, lost = await tally(server, manager, scenario)
        figures |= {
            "admitted": admitted,
            "dispatch_s": round(span, 1),
            "dispatch_per_s": round(len(watch.admitted) / span, 1) if span else 0.0,
            "dispatch_p50_ms": round(statistics.median(latencies)) if latencies else 0,
            "dispatch_p99_ms": round(percentile(latencies, 0.99)),
            "duplicates": duplicates,
            "lost": lost,
        }
        # CPU time from the first create to the last admission, per Workload admitted: what
        # a dispatch costs each process, whatever the machine's load.
        done = max(1, len(watch.admitted))
        for name, seconds in cpu.items():
            figures[f"cpu_ms_per_dispatch_{name}"] = round(1000 * seconds / done, 1)
        figures["cpu_ms_per_dispatch"] = round(1000 * sum(cpu.values()) / done, 1)
        if not args.no_lost_worker:
            figures |= await lose_a_worker(server, manager, scenario, watch, args)
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
    return figures


async def lose_a_worker(
    server: Any, manager: Any, scenario: Scenario, watch: Watch, args: argparse.Namespace
) -> dict[str, Any]:
    """Break the busiest worker's Secret, time the requeues, restore it, count again."""
    counts: dict[str, int] = {}
    for on in watch.cluster.values():
        if on:
            counts[on] = counts.get(on, 0) + 1
    if not counts:
        return {"lost_worker_requeue_s": "n/a"}
    victim = max(sorted(counts), key=lambda name: counts[name])
    held = {name for name, on in watch.cluster.items() if on == victim}
    watch.victim = victim
    began = time.perf_counter()
    old = await _secret_server(manager, victim, f"https://127.0.0.1:1/clusters/{victim}")
    limit = args.worker_lost_timeout + args.quiet_s

    async def requeued() -> bool:
        return held <= set(watch.left)

    async def moved() -> bool:
        return held <= set(watch.readmitted)

    figures: dict[str, Any] = {"lost_worker": victim, "lost_worker_workloads": len(held)}
    try:
        await _until("the lost worker's Workloads requeued", limit, requeued)
        requeue = max(watch.left[n] for n in held) - began
        figures |= {
            "lost_worker_requeue_s": round(requeue, 2),
            "lost_worker_first_requeue_s": round(min(watch.left[n] for n in held) - began, 2),
            "worker_lost_timeout_s": args.worker_lost_timeout,
            "connection_check_s": CONNECTION_CHECK_S,
            "requeue_after_timeout_s": round(requeue - args.worker_lost_timeout, 2),
        }
        await _until("the lost worker's Workloads admitted elsewhere", limit, moved)
        figures["readmit_s"] = round(max(watch.readmitted[n] for n in held) - began, 2)
    except RuntimeError as err:
        figures["lost_worker_error"] = str(err).replace(" ", "_")
        figures.setdefault("lost_worker_requeue_s", "timeout")
    watch.victim = ""
    await _secret_server(manager, victim, old)
    restored = time.perf_counter()

    async def clean() -> bool:
        jobs = await remote_jobs(server, scenario)
        return not any(len(on) > 1 for on in jobs.values())

    try:
        await _until("the stale copies removed", args.quiet_s, clean)
        figures["stale_removed_s"] = round(time.perf_counter() - restored, 1)
    except RuntimeError:
        figures["stale_removed_s"] = "timeout"
    _, duplicates, lost = await tally(server, manager, scenario)
    if args.keep_logs:
        wls, _ = await manager.list_all(API, "workloads", NAMESPACE)
        jobs = await remote_jobs(server, scenario)
        dump = {"workloads": wls, "remote_jobs": jobs}
        Path(args.keep_logs, "final.yaml").write_text(yaml.safe_dump(dump))
    figures |= {"duplicates_after": duplicates, "lost_after": lost}
    return figures


def _peak_mib(pid: int) -> float:
    """A live process's peak resident memory (VmHWM), MiB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return 0.0


def _cpu_s(pid: int) -> float:
    """A live process's user + system CPU time so far, seconds (0 once it is gone)."""
    from numaplane.agent.process import process_cpu_seconds

    return process_cpu_seconds(pid) or 0.0


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run(scenario: Scenario, args: argparse.Namespace) -> dict[str, Any]:
    """Bring everything up in a temporary directory, measure, stop; the figures."""
    from numaplane.testing.apiserver import ENTRY, running_apiserver

    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-multikueue-") as temp:
        work = Path(temp)
        began = time.perf_counter()
        with running_apiserver(
            work / "api", clusters=scenario.workers, extra_args=("--kueue-job-defaulting",)
        ) as server:
            asyncio.run(set_up(server, scenario))
            figures["setup_s"] = round(time.perf_counter() - began, 1)
            config = work / "kueue-config.yaml"
            config.write_text(
                kueue_config(args.worker_lost_timeout, args.gc_interval, args.workload_concurrency)
            )
            host = [str(server.cluster_kubeconfig(name)) for name in scenario.workers]
            verbose = ["-v"] if args.keep_logs else []
            logs = [(work / f"{name}.log").open("wb") for name in ("workers", "manager")]
            workers = subprocess.Popen(
                [sys.executable, __file__, "--serve-workers", *host],
                stdout=logs[0],
                stderr=subprocess.STDOUT,
            )
            kueue = subprocess.Popen(
                [sys.executable, "-c", ENTRY, "kueue", "--kubeconfig", str(server.kubeconfig),
                 "--config", str(config), "--no-leader-elect", *verbose],
                stdout=logs[1], stderr=subprocess.STDOUT,
            )  # fmt: skip
            try:
                pids = {
                    "apiserver": server.process.pid,
                    "manager": kueue.pid,
                    "workers": workers.pid,
                }
                figures |= asyncio.run(measure(server, scenario, args, pids))
                figures["apiserver_mib"] = _peak_mib(server.process.pid)
                figures["manager_kueue_mib"] = _peak_mib(kueue.pid)
                figures["workers_kueue_mib"] = _peak_mib(workers.pid)
            finally:
                _stop(kueue)
                _stop(workers)
                for log in logs:
                    log.close()
                if args.keep_logs:
                    for name in ("workers", "manager"):
                        text = (work / f"{name}.log").read_text(errors="replace")
                        Path(args.keep_logs, f"{name}.log").write_text(text)
    figures["bench_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    figures["total_s"] = round(time.perf_counter() - began, 1)
    return figures


def main() -> None:
    """Run the benchmark; the last line is ``key=value``."""
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-workers":
        serve_workers(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--clusters-per-config", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--worker-lost-timeout", type=float, default=10.0, help="seconds")
    parser.add_argument("--gc-interval", type=float, default=10.0, help="seconds")
    parser.add_argument("--quiet-s", type=float, default=60.0, help="stop waiting after this idle")
    parser.add_argument("--setup-timeout", type=float, default=300.0, help="seconds")
    parser.add_argument(
        "--workload-concurrency",
        type=int,
        default=0,
        help="the manager's controller.groupKindConcurrency for Workload.kueue.x-k8s.io "
        "(the MultiKueue workload controller's reconciles at once; default: Kueue's shipped 10)",
    )
    parser.add_argument("--no-lost-worker", action="store_true", help="skip the lost worker")
    parser.add_argument("--keep-logs", default="", help="copy the Kueue logs into this folder")
    args = parser.parse_args()
    scenario = generate(args.workers, args.jobs, args.clusters_per_config, args.seed)
    figures = run(scenario, args)
    head = {
        "workers": args.workers,
        "jobs": args.jobs,
        "clusters_per_config": len(scenario.configs[0]) if scenario.configs else 0,
        "seed": args.seed,
        "workload_concurrency": args.workload_concurrency or 10,
    }
    print(" ".join(f"{k}={v}" for k, v in {**head, **figures}.items()))


if __name__ == "__main__":
    main()
