"""MultiKueue in the manager's Kueue (upstream ``multikueue.SetupControllers``, on by default
as upstream's ``MultiKueue`` feature gate): the remote clusters (one client and its watches per
MultiKueueCluster, kubeconfig Secrets read from Kueue's namespace), the MultiKueue
AdmissionCheck ``Active`` controller and the workload controller, started once the runtime's
caches are synced and stopped with it. The Configuration's ``multiKueue`` section drives them;
with feature gate ``MultiKueueManagerQuotaAutomation`` (alpha, off by default) the manager
quota automation runs too (:mod:`.quotaautomation`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from typing import Final

from numaplane.kube.client import KubeClient
from numaplane.kube.errors import ApiError
from numaplane.kube.events import EventRecorder
from numaplane.kube.informer import Informer
from numaplane.kueue import constants as c
from numaplane.kueue.configvalues import MultiKueueConfig
from numaplane.kueue.multikueue import quota
from numaplane.kueue.runtime.multikueue.clients import RemoteClusters
from numaplane.kueue.runtime.multikueue.controller import (
    EVENTS_BATCH_PERIOD_S,
    WorkloadController,
    reconcile_options,
)
from numaplane.kueue.runtime.multikueue.quotaautomation import QuotaAutomation
from numaplane.kueue.runtime.multikueue.remote import RemoteCluster

log = logging.getLogger(__name__)

#: Beyond upstream (see ``RemoteClusters.health_interval``): how often each connected worker
#: must answer, so that a partitioned worker counts as lost without waiting for TCP.
HEALTH_INTERVAL_S: Final = 5.0
#: What MultiKueue needs served besides Kueue's own kinds.
RESOURCES: Final = ("multikueueconfigs", "multikueueclusters")


async def multikueue_served(client: KubeClient) -> bool:
    """Whether the cluster serves MultiKueue's CRDs (else MultiKueue does not run)."""
    for resource in RESOURCES:
        try:
            await client.list(c.API_VERSION, resource, limit=1)
        except ApiError as err:
            if err.is_not_found:
                return False
            raise
    return True


class MultiKueue:
    """See the module doc; :meth:`run` works until cancelled."""

    def __init__(
        self,
        client: KubeClient,
        informers: Mapping[str, Informer],
        recorder: EventRecorder,
        config: MultiKueueConfig,
        *,
        namespace: str,
        clock: Callable[[], float] = time.time,
        events_batch_period: float = EVENTS_BATCH_PERIOD_S,
        workers: int = 4,
        health_interval: float = HEALTH_INTERVAL_S,
        feature_gates: Mapping[str, bool] | None = None,
    ) -> None:
        self.informers = informers
        #: Only with the gate: nothing watches the workers' queues for it otherwise.
        self.quota: QuotaAutomation | None = None
        automated = (feature_gates or {}).get(quota.GATE, False)
        self.remotes = RemoteClusters(
            client,
            namespace=namespace,
            origin=config.origin,
            clock=clock,
            gc_interval=config.gc_interval,
            on_remote_change=lambda cluster, key: self.controller.on_remote_change(cluster, key),
            on_cluster_change=self._cluster_changed,
            health_interval=health_interval,
            remote_queues=self._watch_worker if automated else None,
        )
        self.controller = WorkloadController(
            client,
            workloads=informers["Workload"],
            jobs=informers["Job"],
            checks=informers["AdmissionCheck"],
            # One watch of the configs, shared with the AdmissionCheck controller.
            configs=self.remotes.configs,
            remotes=self.remotes,
            recorder=recorder,
            options=reconcile_options(
                origin=config.origin,
                worker_lost_timeout=config.worker_lost_timeout,
                dispatcher=config.dispatcher_name,
                step_size=config.incremental_step_size,
            ),
            clock=clock,
            events_batch_period=events_batch_period,
            workers=workers,
        )
        self.remotes.is_local_gone = self.controller.is_local_gone
        if automated:
            self.quota = QuotaAutomation(
                client,
                cluster_queues=informers["ClusterQueue"],
                local_queues=informers["LocalQueue"],
                checks=informers["AdmissionCheck"],
                remotes=self.remotes,
                clock=clock,
                events_batch_period=events_batch_period,
            )

    def _watch_worker(self, rc: RemoteCluster) -> None:
        if self.quota is not None:
            self.quota.watch_worker(rc)

    def _cluster_changed(self, cluster: str) -> None:
        self.controller.on_cluster_change(cluster)
        if self.quota is not None:
            self.quota.on_cluster_change(cluster)

    async def run(self) -> None:
        """Wait for the runtime's caches, then run until cancelled."""
        tasks: list[asyncio.Task[None]] = []
        try:
            for kind in ("Workload", "Job", "AdmissionCheck"):
                await self.informers[kind].wait_synced()
            tasks.append(asyncio.create_task(self.remotes.run(), name="multikueue-clusters"))
            await self.remotes.configs.wait_synced()
            log.info("multikueue: caches synced, starting the workload controller")
            tasks.append(asyncio.create_task(self.controller.run(), name="multikueue-workloads"))
            if self.quota is not None:
                for kind in ("ClusterQueue", "LocalQueue"):
                    await self.informers[kind].wait_synced()
                tasks.append(asyncio.create_task(self.quota.run(), name="multikueue-quota"))
            # Not gather: a cancelled gather cancels every task at once (see below).
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()
        finally:
            # The workload controller first: it must not use a worker's client once
            # RemoteClusters has closed it (a closed client would open a new session).
            for task in reversed(tasks):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
