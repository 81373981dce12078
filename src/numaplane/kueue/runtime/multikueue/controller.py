"""The MultiKueue workload controller (upstream ``wlReconciler``): a queue of local Workload
keys, filled by local Workload changes, remote changes (batched by ``events_batch_period``,
upstream's ``UpdatesBatchPeriod``), connectivity changes of a cluster, MultiKueueConfig changes
and AdmissionCheck changes; each key is reconciled by the pure
:func:`numaplane.kueue.multikueue.reconcile.reconcile` over a view of the local caches and the
workers' caches, and its actions are made by :class:`Executor`.

Only workloads with a MultiKueue admission check state are considered (SPEC §3.2). The
incremental dispatcher's round state lives here, in memory (lost on restart, as upstream's).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any, Final, Protocol

from numaplane.kube.client import KubeClient
from numaplane.kube.events import EventRecorder
from numaplane.kube.informer import EventHandler, Informer
from numaplane.kube.workqueue import ExponentialRateLimiter, WorkQueue
from numaplane.kueue import constants as c
from numaplane.kueue.errors import KueueError
from numaplane.kueue.multikueue import DispatchState, ReconcileOptions, reconcile
from numaplane.kueue.runtime.multikueue.execute import Executor
from numaplane.kueue.runtime.multikueue.groupread import (
    RemoteLike,
    check_state,
    config_clusters,
    group_view,
    is_deleting,
    multikueue_check,
    object_key,
    owner_job_key,
)
from numaplane.kueue.runtime.queueworker import serve_queue

log = logging.getLogger(__name__)

Obj = dict[str, Any]
#: upstream ``constants.UpdatesBatchPeriod``: remote events are batched this long.
EVENTS_BATCH_PERIOD_S: Final = 1.0


class RemoteSource(Protocol):
    """What the controller needs of ``RemoteClusters``: a cluster by name, with its client."""

    def get(self, name: str) -> RemoteWithClient | None: ...


class RemoteWithClient(RemoteLike, Protocol):
    """A ``RemoteCluster``: the view's reads plus its client."""

    @property
    def client(self) -> KubeClient | None: ...


class WorkloadController:
    """See the module doc. The informers are the runtime's (Workloads, Jobs, AdmissionChecks)
    plus this controller's MultiKueueConfig informer; :meth:`run` works until cancelled."""

    def __init__(
        self,
        client: KubeClient,
        *,
        workloads: Informer,
        jobs: Informer,
        checks: Informer,
        configs: Informer,
        remotes: RemoteSource,
        recorder: EventRecorder,
        options: ReconcileOptions,
        clock: Callable[[], float] = time.time,
        events_batch_period: float = EVENTS_BATCH_PERIOD_S,
        workers: int = 4,
    ) -> None:
        self.workloads = workloads
        self.jobs = jobs
        self.checks = checks
        self.configs = configs
        self.remotes = remotes
        self.options = options
        self.clock = clock
        self.events_batch_period = events_batch_period
        self.workers = workers
        self.queue = WorkQueue(rate_limiter=ExponentialRateLimiter())
        self.dispatch_state = DispatchState()
        self.executor = Executor(client, self._client_of, recorder, origin=options.origin)
        #: The last copy of each deleted local Workload, until its remote objects are gone (R0).
        self.deleted: dict[str, Obj] = {}
        #: Reconcile passes made (for tests).
        self.passes = 0
        workloads.add_handler(EventHandler(self._wl_added, self._wl_updated, self._wl_deleted))
        checks.add_handler(EventHandler(self._check_added, self._check_updated, self._check_added))
        configs.add_handler(
            EventHandler(self._config_added, self._config_updated, self._config_added)
        )
        jobs.add_handler(EventHandler(self._job_changed, self._job_updated, self._job_changed))

    # ----- triggers ------------------------------------------------------------------------

    def _wl_added(self, obj: Obj) -> None:
        self.queue.add(object_key(obj))

    def _wl_updated(self, old: Obj, new: Obj) -> None:
        self.queue.add(object_key(new))

    def _wl_deleted(self, obj: Obj) -> None:
        key = object_key(obj)
        if multikueue_check(obj, self.checks.get_by_key) is not None:
            self.deleted[key] = obj
        self.queue.add(key)

    def _job_changed(self, obj: Obj) -> None:
        # Only a Job whose mirrored counters are kept cleared (see execute's module doc).
        workload = self.executor.to_clear.get(object_key(obj))
        if workload is not None:
            self.queue.add(workload)

    def _job_updated(self, old: Obj, new: Obj) -> None:
        self._job_changed(new)

    def _check_added(self, obj: Obj) -> None:
        self._requeue_check(str((obj.get("metadata") or {}).get("name") or ""))

    def _check_updated(self, old: Obj, new: Obj) -> None:
        if old.get("spec") != new.get("spec"):
            self._requeue_check(str((new.get("metadata") or {}).get("name") or ""))

    def _config_added(self, obj: Obj) -> None:
        self._requeue_config(str((obj.get("metadata") or {}).get("name") or ""))

    def _config_updated(self, old: Obj, new: Obj) -> None:
        if old.get("spec") != new.get("spec"):
            self._config_added(new)

    def on_remote_change(self, cluster: str, key: str) -> None:
        """A remote Workload or Job of local workload ``key`` changed on ``cluster``."""
        del cluster
        self.queue.add_after(key, self.events_batch_period)

    def on_cluster_change(self, cluster: str) -> None:
        """``cluster`` connected or disconnected: every workload whose config lists it."""
        configs = {
            str((cfg.get("metadata") or {}).get("name") or "")
            for cfg in self.configs.list()
            if cluster in config_clusters(cfg)
        }
        self._requeue(lambda ref_config: ref_config in configs)

    def _requeue_check(self, check: str) -> None:
        for wl in self.workloads.list():
            for state in (wl.get("status") or {}).get("admissionChecks") or ():
                if state.get("name") == check:
                    self.queue.add(object_key(wl))

    def _requeue_config(self, config: str) -> None:
        self._requeue(lambda ref_config: ref_config == config)

    def _requeue(self, wanted: Callable[[str], bool]) -> None:
        for wl in self.workloads.list():
            ref = multikueue_check(wl, self.checks.get_by_key)
            if ref is not None and wanted(ref.config):
                self.queue.add(object_key(wl))

    # ----- reads ---------------------------------------------------------------------------

    def _client_of(self, cluster: str) -> KubeClient | None:
        remote = self.remotes.get(cluster)
        return None if remote is None or not remote.connected else remote.client

    def is_local_gone(self, key: str) -> bool:
        """Whether local workload ``key`` is missing or being deleted (for orphan GC)."""
        local = self.workloads.get_by_key(key)
        return local is None or is_deleting(local)

    # ----- running -------------------------------------------------------------------------

    async def run(self) -> None:
        """Reconcile queued keys until cancelled."""
        tasks = [asyncio.create_task(self._worker()) for _ in range(self.workers)]
        try:
            await asyncio.gather(*tasks)
        finally:
            self.queue.shutdown()
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def _worker(self) -> None:
        await serve_queue(self.queue, self.sync, "multikueue: syncing")

    async def sync(self, key: str) -> None:
        """One reconcile pass of local workload ``key``."""
        local = self.workloads.get_by_key(key)
        last = self.deleted.get(key)
        source = local if local is not None else last
        if source is None:
            self.dispatch_state.forget(key)
            return
        ref = multikueue_check(source, self.checks.get_by_key)
        if ref is None:
            self.deleted.pop(key, None)
            return
        if check_state(source, ref.check) == c.CHECK_REJECTED and local is not None:
            # upstream leaves a Rejected workload alone before reading its config.
            return
        config = self.configs.get_by_key(ref.config) if ref.config else None
        if config is None and local is not None:
            # upstream: the config cannot be read → the reconcile fails and is retried.
            raise KueueError(f"multikueue config {ref.config!r} of check {ref.check!r} not found")
        view = group_view(
            key,
            local,
            last,
            ref.check,
            config_clusters(config),
            self.jobs.get_by_key,
            self.remotes.get,
        )
        self.passes += 1
        done = reconcile(view, self.options, self.clock(), self.dispatch_state)
        job_key = owner_job_key(source)
        await self.executor.run(
            done.actions,
            check=ref.check,
            local_workload=view.local,
            job_key=job_key,
            local_job=None if job_key is None else self.jobs.get_by_key(job_key),
        )
        if done.error:
            raise KueueError(done.error)
        if local is None and done.requeue_after is None:
            # R0 done: nothing more to remove.
            self.deleted.pop(key, None)
            self.dispatch_state.forget(key)
        if done.requeue_after is not None:
            self.queue.add_after(key, done.requeue_after)


def reconcile_options(
    *,
    origin: str,
    worker_lost_timeout: float,
    dispatcher: str,
    step_size: int | None,
) -> ReconcileOptions:
    """The reconciler's options from the Configuration's ``multiKueue`` section."""
    if step_size is None:
        return ReconcileOptions(
            origin=origin, worker_lost_timeout=worker_lost_timeout, dispatcher=dispatcher
        )
    return ReconcileOptions(
        origin=origin,
        worker_lost_timeout=worker_lost_timeout,
        dispatcher=dispatcher,
        step_size=step_size,
    )
