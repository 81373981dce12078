"""The world of the MultiKueue fault tests: ``numaplane up --multikueue-workers 2`` (a manager
and logical clusters ``worker1``/``worker2`` of its API server, each worker with its own
controllers, Kueue and simulated nodes), the manager's Kueue reaching each worker through a
:class:`Link` (a loopback proxy the test cuts, so that one worker can be killed or partitioned
alone while the test itself still sees everything), and a :class:`Ledger` that watches every
cluster for the whole test and records each manager Job's remote Jobs and pod runs.

What counts as a duplicate run or a lost Job: :mod:`tests.kueue.multikueue.faultledger`.

A worker is away in two ways: :meth:`Link.partition` (every byte dropped, nothing refused: the
manager, which has no connection check of its own here, notices nothing until it heals; how a
short partition looks) and :meth:`Link.cut` (connections closed, new ones refused: a killed
API server, or a kubeconfig pointing nowhere as upstream's tests break it). A cut worker is
reconnected by the manager's backoff (5s, 10s, ...) after it is restored, so it is always
away for longer than the 4s ``workerLostTimeout``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import os
import signal
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import yaml

from numaplane.kube import KubeClient, load_kubeconfig
from numaplane.kube.errors import ApiError
from numaplane.kube.informer import Informer
from numaplane.testing.cluster import RunningCluster, start_cluster
from numaplane.testing.partition import PartitionProxy
from tests.kueue.multikueue.faultledger import WORKERS, Ledger, Verdict, condition, owner
from tests.kueue.multikueue.faultobjects import (
    API,
    CHECK,
    NS,
    cluster_queue,
    flavor,
    job,
    local_queue,
)

Obj = dict[str, Any]
T = TypeVar("T")

KUEUE_NS = "kueue-system"
#: The manager's MultiKueue timing knobs (SPEC §1.9; the INT harness values).
WORKER_LOST_TIMEOUT_S = 4.0
KUEUE_CONFIG = f"""apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
multiKueue:
  gcInterval: 2s
  workerLostTimeout: {WORKER_LOST_TIMEOUT_S:g}s
"""
#: Each worker's quota: jobs queue on the workers, so that a fault finds some running,
#: some admitted and some only copied.
WORKER_CPUS = 12
SIM_NODES = 1
#: Upper bound of every wait (the pytest-timeout of the tests is the real bound).
WAIT_S = 240.0


class Link(PartitionProxy):
    """The manager's way to a worker. Beside :meth:`partition` (a black hole: nothing is
    noticed until it heals), :meth:`cut` is a killed API server as its clients see it: every
    connection closed at once and new ones refused, until :meth:`restore` listens again on the
    same port."""

    async def cut(self) -> None:
        """Close every connection; refuse new ones."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        self.heal()
        if server is not None:
            await server.wait_closed()

    async def restore(self) -> None:
        """Accept connections again, on the same port."""
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port)


def _children(parent: int) -> list[tuple[int, list[str]]]:
    """(pid, argv) of ``parent``'s children, from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
            found.append((int(entry), [a.decode() for a in argv if a]))
    return found


class FaultWorld:
    """The running world; see the module doc. Made by :func:`fault_world`."""

    def __init__(self, cluster: RunningCluster) -> None:
        self.cluster = cluster
        self.ledger = Ledger()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.links: dict[str, Link] = {}
        self.clients: dict[str, KubeClient] = {}
        self._tasks: list[asyncio.Task[None]] = []

    def call(self, work: Coroutine[Any, Any, T], timeout: float = 60.0) -> T:
        """Run ``work`` in the world's event loop; its result."""
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout)

    def kubeconfig(self, cluster: str) -> Path:
        """``manager``'s or a worker's admin kubeconfig."""
        if cluster == "manager":
            return self.cluster.kubeconfig
        return self.cluster.cluster_kubeconfig(cluster)

    async def _start(self) -> None:
        for name in ("manager", *WORKERS):
            client = KubeClient(load_kubeconfig(self.kubeconfig(name)))
            self.clients[name] = client
            on_job, on_pod = self.ledger.handlers(name)
            for api, resource, handler in (("batch/v1", "jobs", on_job), ("v1", "pods", on_pod)):
                informer = Informer(client, api, resource, namespace=NS)
                informer.add_handler(handler)
                self._tasks.append(asyncio.create_task(informer.run()))
        workloads = Informer(self.clients["manager"], API, "workloads", namespace=NS)
        workloads.add_handler(self.ledger.workload_handler())
        self._tasks.append(asyncio.create_task(workloads.run()))
        for worker in WORKERS:
            link = Link("127.0.0.1", self.cluster.port)
            await link.start()
            self.links[worker] = link

    async def _stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for link in self.links.values():
            await link.close()
        for client in self.clients.values():
            await client.close()

    def close(self) -> None:
        """Stop watching, close the links and the event loop."""
        with contextlib.suppress(Exception):
            self.call(self._stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()

    async def _apply(self, cluster: str, obj: Obj) -> None:
        api, kind = obj["apiVersion"], obj["kind"]
        resource = {
            "ResourceFlavor": "resourceflavors",
            "ClusterQueue": "clusterqueues",
            "LocalQueue": "localqueues",
            "AdmissionCheck": "admissionchecks",
            "MultiKueueConfig": "multikueueconfigs",
            "MultiKueueCluster": "multikueueclusters",
            "Secret": "secrets",
        }[kind]
        namespace = obj["metadata"].get("namespace")
        await self.clients[cluster].create(api, resource, obj, namespace)

    async def _link_secret(self, worker: str) -> Obj:
        """The Secret ``up`` made for ``worker``, its server moved to the worker's link."""
        made = await self.clients["manager"].get("v1", "secrets", f"{worker}-secret", KUEUE_NS)
        config = yaml.safe_load(base64.b64decode(made["data"]["kubeconfig"]))
        for entry in config["clusters"]:
            server = str(entry["cluster"]["server"])
            port = f":{self.cluster.port}/"
            assert port in server, server
            entry["cluster"]["server"] = server.replace(port, f":{self.links[worker].port}/")
        text = yaml.safe_dump(config).encode()
        return {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": f"{worker}-link", "namespace": KUEUE_NS},
            "data": {"kubeconfig": base64.b64encode(text).decode()},
        }

    async def _set_up(self) -> None:
        for worker in WORKERS:
            for obj in (flavor(), cluster_queue(WORKER_CPUS, []), local_queue()):
                await self._apply(worker, obj)
        manager = [flavor(), cluster_queue(100_000, [CHECK]), local_queue()]
        manager.append(
            {
                "apiVersion": API,
                "kind": "AdmissionCheck",
                "metadata": {"name": CHECK},
                "spec": {
                    "controllerName": "kueue.x-k8s.io/multikueue",
                    "parameters": {
                        "apiGroup": "kueue.x-k8s.io",
                        "kind": "MultiKueueConfig",
                        "name": CHECK,
                    },
                },
            }
        )
        manager.append(
            {
                "apiVersion": API,
                "kind": "MultiKueueConfig",
                "metadata": {"name": CHECK},
                "spec": {"clusters": list(WORKERS)},
            }
        )
        for worker in WORKERS:
            manager.append(await self._link_secret(worker))
            source = {"kubeConfig": {"locationType": "Secret", "location": f"{worker}-link"}}
            manager.append(
                {
                    "apiVersion": API,
                    "kind": "MultiKueueCluster",
                    "metadata": {"name": worker},
                    "spec": {"clusterSource": source},
                }
            )
        for obj in manager:
            await self._apply("manager", obj)

    def until(self, what: str, probe: Callable[[], T | None], wait_s: float = WAIT_S) -> T:
        """Poll ``probe`` until it answers; fails with every log after ``wait_s``."""
        deadline = time.monotonic() + wait_s
        while True:
            found = probe()
            if found:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}\n{self.cluster.all_logs()}")
            time.sleep(0.2)

    def poll(self, what: str, probe: Callable[[], Coroutine[Any, Any, bool]]) -> None:
        """:meth:`until` with a probe run in the world's event loop."""
        self.until(what, lambda: self.call(probe()))

    async def _active(self, worker: str) -> str | None:
        mkc = await self.clients["manager"].get(API, "multikueueclusters", worker)
        return condition(mkc, "Active")

    def lost(self, worker: str) -> None:
        """Wait until the manager shows ``worker``'s MultiKueueCluster not Active."""
        self.poll(f"{worker} not Active", lambda: self._not_active(worker))

    async def _not_active(self, worker: str) -> bool:
        return await self._active(worker) == "False"

    async def _served(self, cluster: str, resource: str) -> bool:
        try:
            await self.clients[cluster].list(API, resource, limit=1)
        except ApiError:
            return False
        return True

    async def _ready(self, cluster: str) -> bool:
        """Whether ``cluster``'s Nodes are Ready (workers) or its check Active (manager)."""
        client = self.clients[cluster]
        if cluster == "manager":
            try:
                check = await client.get(API, "admissionchecks", CHECK)
            except ApiError:
                return False
            return condition(check, "Active") == "True"
        nodes = (await client.list("v1", "nodes"))["items"]
        return sum(1 for n in nodes if condition(n, "Ready") == "True") >= SIM_NODES

    def set_up(self) -> None:
        """Links, watches, queues on every cluster, the manager's MultiKueue objects; returns
        once the workers' nodes are Ready and the manager's check is Active."""
        self.call(self._start())
        for cluster in ("manager", *WORKERS):
            for resource in ("clusterqueues", "multikueueclusters"):
                served = functools.partial(self._served, cluster, resource)
                self.poll(f"{resource} on {cluster}", served)
        self.call(self._set_up())
        for cluster in (*WORKERS, "manager"):
            self.poll(f"{cluster} ready", functools.partial(self._ready, cluster))

    async def _submit(self, names: list[str]) -> None:
        client = self.clients["manager"]
        await asyncio.gather(*(client.create("batch/v1", "jobs", job(n), NS) for n in names))

    def submit(self, prefix: str, count: int) -> list[str]:
        """Create ``count`` Jobs ``<prefix>-NNN`` on the manager at once; their names."""
        names = [f"{prefix}-{i:03d}" for i in range(count)]
        self.call(self._submit(names), timeout=120)
        return names

    async def _final(self, prefix: str) -> tuple[dict[str, Obj], dict[str, int]]:
        client = self.clients["manager"]
        jobs = {
            j["metadata"]["name"]: j
            for j in (await client.list_all("batch/v1", "jobs", NS))[0]
            if j["metadata"]["name"].startswith(prefix + "-")
        }
        retries: dict[str, int] = {}
        for wl in (await client.list_all(API, "workloads", NS))[0]:
            found = owner(wl, "Job")
            if found is None or not found[0].startswith(prefix + "-"):
                continue
            for check in (wl.get("status") or {}).get("admissionChecks") or ():
                if check.get("name") == CHECK:
                    retries[found[0]] = int(check.get("retryCount") or 0)
        return jobs, retries

    def verdict(self, prefix: str, names: list[str]) -> Verdict:
        """Wait until every Job of ``names`` turned Complete and the workers hold nothing of
        them any more, then count (the ledger's verdict)."""
        self.until(
            f"{len(names)} jobs Complete", lambda: self.ledger.completed(names) == len(names)
        )
        self.poll(f"the workers clean of {prefix}", functools.partial(self._clean, prefix))
        jobs, retries = self.call(self._final(prefix))
        return self.ledger.verdict(names, jobs, retries)

    async def _clean(self, prefix: str) -> bool:
        for worker in WORKERS:
            client = self.clients[worker]
            for api, resource in (("batch/v1", "jobs"), (API, "workloads")):
                items = (await client.list_all(api, resource, NS))[0]
                if any(i["metadata"]["name"].startswith(prefix + "-") for i in items):
                    return False
        return True

    def processes(self, match: Callable[[list[str]], bool]) -> list[int]:
        """The pids of ``up``'s children whose argv ``match``."""
        return [pid for pid, argv in _children(self.cluster.process.pid) if match(argv)]

    def kill(self, match: Callable[[list[str]], bool]) -> list[int]:
        """SIGKILL ``up``'s children whose argv ``match`` (``up`` restarts them); their pids."""
        pids = self.processes(match)
        assert pids, "no such child of numaplane up"
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        return pids

    def worker_processes(self, worker: str) -> Callable[[list[str]], bool]:
        """Matches ``worker``'s controllers, Kueue and simulated nodes."""
        path = str(self.cluster.cluster_kubeconfig(worker))
        return lambda argv: path in argv

    def manager_kueue(self) -> Callable[[list[str]], bool]:
        """Matches the manager's Kueue."""
        path = str(self.cluster.kubeconfig)
        return lambda argv: "kueue" in argv and path in argv


@contextlib.contextmanager
def fault_world(data: Path) -> Iterator[FaultWorld]:
    """``numaplane up`` with two workers and the fault-test Kueue configuration, set up; stopped
    after the block."""
    data.mkdir(parents=True, exist_ok=True)
    config = data.parent / "kueue-config.yaml"
    config.write_text(KUEUE_CONFIG, encoding="utf-8")
    extra = (
        "--multikueue-workers",
        "2",
        "--worker-simulated-nodes",
        str(SIM_NODES),
        "--kueue-config",
        str(config),
    )
    cluster = start_cluster(data, extra_args=extra)
    world = FaultWorld(cluster)
    try:
        world.set_up()
        yield world
    finally:
        world.close()
        cluster.stop()
