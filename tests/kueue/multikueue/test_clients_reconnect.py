"""Scenario D11 of the MultiKueue corpus (upstream issue #12801, fix #12824): the events of a
worker that just (re)connected are delivered while the manager already counts it connected, so
the workload reconciler they wake removes an orphan copy at once instead of waiting
``workerLostTimeout`` for a worker it would believe lost. Checked at the source: the connection
state each remote event finds when it reaches the manager, on the first connection and after a
break and restore, against a real ``numaplane apiserver``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from numaplane.kube import KubeClient, load_kubeconfig
from numaplane.testing import kueue_objects as objects
from numaplane.testing.apiserver import RunningApiServer, running_apiserver
from tests.kueue.multikueue.connworld import (
    API,
    ORIGIN,
    broken,
    make_worker_kubeconfig,
    manager,
    mk_cluster,
    run,
    until,
)

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

NAMESPACE = "ns-d11"
ORPHAN = "orphan"
ORIGIN_LABEL = "kueue.x-k8s.io/multikueue-origin"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApiServer]:
    data = tmp_path_factory.mktemp("multikueue-d11") / "data"
    with running_apiserver(data, clusters=("d11", "worker1")) as running:
        yield running


def orphan_copy() -> dict[str, Any]:
    """A copy of a manager Workload that no longer exists, as MultiKueue made it."""
    return {
        "apiVersion": API,
        "kind": "Workload",
        "metadata": {
            "name": ORPHAN,
            "namespace": NAMESPACE,
            "labels": {ORIGIN_LABEL: ORIGIN},
        },
        "spec": {
            "queueName": "q1",
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
                }
            ],
        },
    }


def test_d11_a_reconnected_workers_events_find_it_connected(server: RunningApiServer) -> None:
    async def scenario() -> None:
        text = await make_worker_kubeconfig(server.cluster_kubeconfig("worker1"))
        async with KubeClient(load_kubeconfig(server.cluster_kubeconfig("worker1"))) as worker:
            await worker.create("v1", "namespaces", objects.namespace(NAMESPACE))
            await worker.create(API, "workloads", orphan_copy(), NAMESPACE)
        # (cluster, workload key, connected when the event reached the manager)
        delivered: list[tuple[str, str, bool]] = []
        holder: list[Any] = []

        def on_remote_change(cluster: str, key: str) -> None:
            rc = holder[0].get(cluster)
            delivered.append((cluster, key, rc is not None and rc.connected))

        async with manager(server, "d11", on_remote_change=on_remote_change) as m:
            holder.append(m.clusters)
            await m.put_secret("w1", text)
            await m.create(API, "multikueueclusters", mk_cluster("worker1", "w1"))
            await m.until_condition(
                "multikueueclusters", "worker1", ("True", "Active", "Connected")
            )
            assert delivered == [("worker1", f"{NAMESPACE}/{ORPHAN}", True)]

            await m.put_secret("w1", broken(text))
            await m.until_active(
                "multikueueclusters", "worker1", lambda found: found[1] == "ClientConnectionFailed"
            )
            rc = m.clusters.get("worker1")
            assert rc is not None
            assert not rc.connected
            delivered.clear()

            await m.put_secret("w1", text)
            await m.until_condition(
                "multikueueclusters", "worker1", ("True", "Active", "Connected")
            )

            async def replayed() -> bool | None:
                return True if delivered else None

            await until(replayed, "the orphan's event after the reconnection")
            assert delivered == [("worker1", f"{NAMESPACE}/{ORPHAN}", True)]

    run(scenario())
