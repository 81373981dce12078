"""API server throughput and watch latency (issue 13).

    python3 bench/apiserver.py [--objects 10000] [--clients 32] [--watchers 100] [--events 1000]
                               [--rate 20]
    python3 bench/apiserver.py --store      # the storage layer alone, in this process

Starts ``numaplane apiserver --data-dir TMP --port P`` in a subprocess and drives it from this
process with ``numaplane.kube.KubeClient`` (TLS, the admin client certificate of the
kubeconfig the server writes):

1. ``--objects`` small ConfigMaps created by ``--clients`` concurrent clients (creates/s; each
   acknowledged create is durable);
2. each of them updated once, by ``--clients`` concurrent clients (updates/s);
3. one list of all of them in their namespace (the median of 5, in ms);
4. ``--watchers`` concurrent watches on a second namespace while ``--events`` ConfigMaps are
   created there at a steady ``--rate`` per second (default 20: the steady-state churn of
   Kubernetes' scalability SLOs, sig-scalability/slos/slos.md); a delivery's latency runs from
   the moment the create is sent to the moment a watcher has decoded the event (so it includes
   the durable commit). The 99th percentile over all deliveries, in ms.

With ``--store`` the same four measurements run against ``ClusterStore`` directly (no HTTP, no
JSON on the wire): what the storage layer costs by itself. The last line is always:

    creates_per_s=<n> updates_per_s=<n> list_10k_ms=<x> watch_p99_ms=<x>
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from numaplane.agent.process import process_cpu_seconds
from numaplane.apiserver.storage import ClusterStore, ObjectKey
from numaplane.kube import ApiError, KubeClient, KubeConnectionError, load_kubeconfig


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def configmap(name: str, namespace: str, **data: str) -> dict[str, Any]:
    """A small ConfigMap."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": {"bench": "yes"}},
        "data": {"key": "value", **data},
    }


async def in_parallel(count: int, clients: int, one: Callable[[int], Awaitable[None]]) -> float:
    """Run ``one(i)`` for ``i < count`` from ``clients`` concurrent workers; seconds taken."""
    next_index = 0

    async def worker() -> None:
        nonlocal next_index
        while next_index < count:
            i = next_index
            next_index += 1
            await one(i)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    return time.perf_counter() - start


async def paced(count: int, rate: float, send: Callable[[int], Awaitable[None]]) -> None:
    """Start ``send(i)`` for ``i < count`` at ``rate`` per second."""
    start = time.perf_counter()
    tasks = []
    for i in range(count):
        delay = start + i / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.ensure_future(send(i)))
    await asyncio.gather(*tasks)


def report(
    creates_s: float, updates_s: float, list_s: list[float], latencies: list[float], rate: float
) -> None:
    """Print the details and the summary line."""
    print(f"list_runs_ms={','.join(f'{t * 1000:.1f}' for t in list_s)}")
    print(
        f"watch_deliveries={len(latencies)} rate_per_s={rate:g} "
        f"p50_ms={percentile(latencies, 0.5) * 1000:.2f} max_ms={max(latencies) * 1000:.2f}"
    )
    print(
        f"creates_per_s={creates_s:.0f} updates_per_s={updates_s:.0f} "
        f"list_10k_ms={statistics.median(list_s) * 1000:.1f} "
        f"watch_p99_ms={percentile(latencies, 0.99) * 1000:.2f}"
    )


# ----- against a server, over HTTPS -----


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def wait_ready(kubeconfig: Path, server: subprocess.Popen[bytes]) -> KubeClient:
    """A client once the server has written its kubeconfig and answers ``/readyz``."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"bench/apiserver.py: the server exited with {server.returncode}")
        if kubeconfig.exists():
            try:
                client = KubeClient(load_kubeconfig(kubeconfig), max_connections=0)
            except Exception:  # written but not complete yet
                await asyncio.sleep(0.1)
                continue
            try:
                await client.request("GET", "/readyz")
                return client
            except (ApiError, KubeConnectionError):
                await client.close()
        await asyncio.sleep(0.1)
    sys.exit("bench/apiserver.py: the server did not become ready within 120 s")


async def bench_server(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="numaplane-bench-") as tmp:
        data_dir = Path(tmp)
        port = free_port()
        command = [
            sys.executable,
            "-m",
            "numaplane.cli.main",
            "apiserver",
            "--data-dir",
            str(data_dir),
            "--port",
            str(port),
        ]
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        try:
            client = await wait_ready(data_dir / "admin.kubeconfig", server)
            async with client:
                await run_http(client, args, CpuMeter(server.pid))
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


class CpuMeter:
    """CPU seconds used by the server process and by this one, per phase: what each operation
    costs whatever else the machine runs (wall-clock rates depend on that)."""

    def __init__(self, server_pid: int) -> None:
        self._pid = server_pid
        self._mark = self._now()

    def _now(self) -> tuple[float, float]:
        server = process_cpu_seconds(self._pid) or 0.0
        mine = resource.getrusage(resource.RUSAGE_SELF)
        return server, mine.ru_utime + mine.ru_stime

    def reset(self) -> None:
        """Start the next phase now."""
        self._mark = self._now()

    def phase(self, name: str, operations: int, unit: str) -> None:
        """Print the CPU per operation since the last call."""
        now = self._now()
        server, client = (now[0] - self._mark[0], now[1] - self._mark[1])
        self._mark = now
        scale = 1e3 if unit == "ms" else 1e6
        print(
            f"{name}: server_cpu_{unit}={server / operations * scale:.2f} "
            f"client_cpu_{unit}={client / operations * scale:.2f} per operation"
        )


async def run_http(client: KubeClient, args: argparse.Namespace, cpu: CpuMeter) -> None:
    for ns in ("bench", "watch"):
        with contextlib.suppress(ApiError):
            await client.create(
                "v1",
                "namespaces",
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
            )
    created: list[dict[str, Any]] = [{} for _ in range(args.objects)]

    async def create(i: int) -> None:
        created[i] = await client.create("v1", "configmaps", configmap(f"cm-{i}", "bench"), "bench")

    cpu.reset()
    creates = args.objects / await in_parallel(args.objects, args.clients, create)
    cpu.phase("create", args.objects, "ms")

    async def update(i: int) -> None:
        body = dict(created[i])
        body["data"] = {"key": "changed"}
        await client.update("v1", "configmaps", body, "bench")

    updates = args.objects / await in_parallel(args.objects, args.clients, update)
    cpu.phase("update", args.objects, "ms")
    list_s = []
    for _ in range(5):
        start = time.perf_counter()
        listed = await client.list("v1", "configmaps", "bench")
        list_s.append(time.perf_counter() - start)
        # The namespace also holds kube-root-ca.crt (published into every namespace).
        mine = [i for i in listed["items"] if i["metadata"]["name"] != "kube-root-ca.crt"]
        assert len(mine) == args.objects, len(mine)
    cpu.phase("list", len(list_s), "ms")

    sent: dict[str, float] = {}
    latencies: list[float] = []
    rv = str((await client.list("v1", "configmaps", "watch"))["metadata"]["resourceVersion"])
    ready = asyncio.Event()
    started = 0

    async def watcher() -> None:
        nonlocal started
        seen = 0
        stream = client.watch(
            "v1", "configmaps", "watch", resource_version=rv, allow_bookmarks=False
        )
        started += 1
        if started == args.watchers:
            ready.set()
        async for event in stream:
            latencies.append(time.perf_counter() - sent[event.object["metadata"]["name"]])
            seen += 1
            if seen == args.events:
                break
        await stream.aclose()

    watchers = [asyncio.ensure_future(watcher()) for _ in range(args.watchers)]
    await ready.wait()
    await asyncio.sleep(1.0)  # every watch request is on the server before the first write

    async def send(i: int) -> None:
        name = f"w-{i}"
        sent[name] = time.perf_counter()
        await client.create("v1", "configmaps", configmap(name, "watch"), "watch")

    cpu.reset()
    await paced(args.events, args.rate, send)
    await asyncio.gather(*watchers)
    # Includes the server's creates of the events (about 0.5 ms each, 1/100 of it per delivery).
    cpu.phase("watch delivery", len(latencies), "us")
    report(creates, updates, list_s, latencies, args.rate)


# ----- the storage layer alone -----


async def bench_store(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="numaplane-bench-") as tmp:
        store = await ClusterStore.open(Path(tmp) / "store.db")
        try:
            created: list[dict[str, Any]] = [{} for _ in range(args.objects)]

            async def create(i: int) -> None:
                obj = configmap(f"cm-{i}", "bench")
                created[i] = await store.create(ObjectKey("configmaps", "bench", f"cm-{i}"), obj)

            creates = args.objects / await in_parallel(args.objects, args.clients, create)

            async def update(i: int) -> None:
                body = dict(created[i])
                body["data"] = {"key": "changed"}
                rv = int(created[i]["metadata"]["resourceVersion"])
                await store.update(ObjectKey("configmaps", "bench", f"cm-{i}"), body, rv)

            updates = args.objects / await in_parallel(args.objects, args.clients, update)
            list_s = []
            for _ in range(5):
                start = time.perf_counter()
                items, _ = store.list("configmaps", "bench")
                list_s.append(time.perf_counter() - start)
                assert len(items) == args.objects
            sent: dict[str, float] = {}
            latencies: list[float] = []
            rv = store.current_rv()

            async def watcher() -> None:
                w = store.watch("configmaps", "watch", rv)
                for _ in range(args.events):
                    event = await w.next()
                    assert event is not None
                    latencies.append(time.perf_counter() - sent[event.key.name])
                w.close()

            watchers = [asyncio.ensure_future(watcher()) for _ in range(args.watchers)]

            async def send(i: int) -> None:
                sent[f"w-{i}"] = time.perf_counter()
                obj = configmap(f"w-{i}", "watch")
                await store.create(ObjectKey("configmaps", "watch", f"w-{i}"), obj)

            await paced(args.events, args.rate, send)
            await asyncio.gather(*watchers)
        finally:
            await store.close()
    report(creates, updates, list_s, latencies, args.rate)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--watchers", type=int, default=100)
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument(
        "--rate",
        type=float,
        default=20.0,
        help="creates per second while the watchers measure delivery (default: 20, the "
        "steady-state churn of Kubernetes' scalability SLOs)",
    )
    parser.add_argument("--store", action="store_true", help="bench ClusterStore directly")
    args = parser.parse_args()
    os.environ.setdefault("PYTHONHASHSEED", "0")
    asyncio.run(bench_store(args) if args.store else bench_server(args))


if __name__ == "__main__":
    main()
