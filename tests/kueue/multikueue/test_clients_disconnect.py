"""A connection dropped while Workloads are reconciled: the cluster reads disconnected (with
``lost_since``) before its caches go, so no reconcile sees a connected cluster without copies
(which would requeue its Workloads at once instead of after ``workerLostTimeout``)."""

from __future__ import annotations

import asyncio

from numaplane.kube import KubeClient
from numaplane.kube.config import KubeConfig
from numaplane.kueue.runtime.multikueue.clients import RemoteClusters
from numaplane.kueue.runtime.multikueue.remote import RemoteCluster


def test_a_dropped_cluster_reads_disconnected_while_its_watchers_stop() -> None:
    async def scenario() -> None:
        local = KubeClient(KubeConfig(server="https://127.0.0.1:1"))
        remotes = RemoteClusters(local, namespace="kueue-system", clock=lambda: 42.0)
        changed: list[str] = []
        remotes.on_cluster_change = changed.append
        rc = RemoteCluster("worker1", "multikueue", 0.0)
        rc.mark_connected()
        seen: list[tuple[bool, float | None]] = []
        stop = rc.stop_watchers

        async def stopping() -> None:
            seen.append((rc.connected, rc.lost_since))
            await asyncio.sleep(0)
            await stop()

        rc.stop_watchers = stopping  # type: ignore[method-assign]
        await remotes._disconnect(rc)
        assert seen == [(False, 42.0)]
        assert changed == ["worker1"]
        await local.close()

    asyncio.run(scenario())
