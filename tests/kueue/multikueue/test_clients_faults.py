"""A worker's connection lost without any kubeconfig change: the worker's API server killed
(the watches break at once) and restarted, and the link to it partitioned (nothing breaks, the
connection check notices) and healed. Each time the MultiKueueCluster goes
``ClientConnectionFailed`` with its attempts, ``lost_since`` records the drop and stays while
the attempts go on, and the cluster is connected again (its remote objects replayed) once the
worker is back."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from numaplane.kube import KubeClient, load_kubeconfig
from numaplane.testing import kueue_objects as objects
from numaplane.testing.apiserver import RunningApiServer, running_apiserver, start_apiserver
from numaplane.testing.partition import PartitionProxy
from tests.kueue.multikueue.connworld import (
    API,
    ATTEMPTS,
    ORIGIN,
    Manager,
    make_worker_kubeconfig,
    manager,
    mk_cluster,
    run,
    with_host,
)

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApiServer]:
    data = tmp_path_factory.mktemp("multikueue-faults") / "data"
    with running_apiserver(data, clusters=("drop", "part", "worker1")) as running:
        yield running


def origin_workload(name: str) -> dict[str, object]:
    wl = objects.workload("default", name, "q1", {"cpu": "1"})
    wl["metadata"]["labels"] = {"kueue.x-k8s.io/multikueue-origin": ORIGIN}
    return wl


async def connected(m: Manager, name: str, kubeconfig: str) -> None:
    await m.put_secret(name, kubeconfig)
    await m.create(API, "multikueueclusters", mk_cluster(name, name))
    await m.until_condition("multikueueclusters", name, ("True", "Active", "Connected"))


async def lost(m: Manager, name: str, since: float) -> float:
    """Wait for ClientConnectionFailed and for the attempts to go on; the drop's time."""
    await m.until_active("multikueueclusters", name, lambda f: f[1] == "ClientConnectionFailed")
    rc = m.clusters.get(name)
    assert rc is not None
    assert not rc.connected
    dropped = rc.lost_since
    assert dropped is not None
    assert since <= dropped <= time.time()

    def retried(found: tuple[str, str, str]) -> bool:
        seen = ATTEMPTS.search(found[2])
        return seen is not None and int(seen.group(1)) >= 2

    await m.until_active("multikueueclusters", name, retried)
    assert rc.lost_since == dropped
    return dropped


def test_a_killed_worker_is_lost_then_reconnected_and_replayed(
    server: RunningApiServer, tmp_path: Path
) -> None:
    data = tmp_path / "worker"
    worker = start_apiserver(data)
    try:

        async def scenario() -> None:
            nonlocal worker
            text = await make_worker_kubeconfig(worker.kubeconfig)
            async with KubeClient(load_kubeconfig(worker.kubeconfig)) as admin:
                await admin.create(API, "workloads", origin_workload("remote-1"), "default")
            async with manager(server, "drop") as m:
                await connected(m, "w", text)
                rc = m.clusters.get("w")
                assert rc is not None
                assert ("w", "default/remote-1") in m.remote_changes
                replays = m.remote_changes.count(("w", "default/remote-1"))

                before = time.time()
                worker.kill()
                await lost(m, "w", before)

                worker = await asyncio.to_thread(start_apiserver, data, port=worker.port)
                await m.until_condition("multikueueclusters", "w", ("True", "Active", "Connected"))
                assert rc.connected
                assert rc.lost_since is None
                assert rc.failed_attempts == 0
                assert m.remote_changes.count(("w", "default/remote-1")) > replays

        run(scenario())
    finally:
        worker.stop()


def test_a_partitioned_worker_is_noticed_by_the_connection_check_then_reconnected(
    server: RunningApiServer,
) -> None:
    async def scenario() -> None:
        text = await make_worker_kubeconfig(server.cluster_kubeconfig("worker1"))
        proxy = PartitionProxy("127.0.0.1", server.port)
        port = await proxy.start()
        try:
            options = {
                "health_interval": 0.3,
                "health_timeout": 2.0,
                "establish_timeout": (1.0, 2.0),
            }
            async with manager(server, "part", **options) as m:
                await connected(m, "w", with_host(text, f"127.0.0.1:{port}"))
                rc = m.clusters.get("w")
                assert rc is not None

                before = time.time()
                proxy.partition()
                await lost(m, "w", before)
                found = await m.active_of("multikueueclusters", "w")
                assert found is not None
                assert "watch establishment timed out" in found[2]

                proxy.heal()
                await m.until_condition("multikueueclusters", "w", ("True", "Active", "Connected"))
                assert rc.connected
                assert rc.lost_since is None
        finally:
            await proxy.close()

    run(scenario())
