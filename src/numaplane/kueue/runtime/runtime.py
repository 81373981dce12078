"""Kueue against a cluster: one informer per kind feeds the :class:`~numaplane.kueue.engine.Engine`;
the scheduler loop runs a cycle whenever something may have become admissible; the Workload,
Job, ClusterQueue and LocalQueue reconcilers each work a queue of keys (upstream's
controller-runtime controllers); every decision is written through the standard API.

ClusterQueue and LocalQueue statuses are written at most once per ``status_batch_period`` per
queue (upstream batches the events that trigger them by ``constants.UpdatesBatchPeriod``), so
a thousand admissions make a handful of status writes, not a thousand.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

from numaplane.kube.client import KubeClient
from numaplane.kube.errors import KubeError
from numaplane.kube.events import EventRecorder
from numaplane.kube.informer import EventHandler, Informer
from numaplane.kube.workqueue import ExponentialRateLimiter, WorkQueue
from numaplane.kueue import constants as c
from numaplane.kueue.config import KueueConfig
from numaplane.kueue.engine import KINDS, Engine, Outcome, Touched, chained
from numaplane.kueue.errors import KueueError
from numaplane.kueue.runtime.queueworker import serve_queue
from numaplane.kueue.runtime.writer import Writer

log = logging.getLogger(__name__)

#: upstream ``constants.UpdatesBatchPeriod``.
STATUS_BATCH_PERIOD_S: Final = 1.0
#: The scheduler loop's pause after a cycle that reserved nothing, doubling up to the cap
#: (upstream runs its cycle under ``wait.UntilWithBackoff``, slowing down when idle).
IDLE_BACKOFF_S: Final = (0.001, 0.1)
#: How long a stopping Kueue still sends its queued events (a backlog of thousands after a
#: burst of admissions would otherwise hold SIGTERM for tens of seconds).
CLOSE_EVENTS_TIMEOUT_S: Final = 2.0

# Event sources (upstream's recorder names: constants.AdmissionName, the Job reconciler's
# "<group>/<kind>-kueue-controller", constants.WorkloadControllerName).
SCHEDULER_SOURCE: Final = c.ADMISSION_FIELD_MANAGER
JOB_SOURCE: Final = "batch/job-kueue-controller"
WORKLOAD_SOURCE: Final = "kueue-workload-controller"
QUEUE_SOURCE: Final = c.KUEUE_NAME


class KueueRuntime:
    """See the module doc; :meth:`run` works until cancelled."""

    def __init__(
        self,
        client: KubeClient,
        config: KueueConfig | None = None,
        *,
        workers: int = 4,
        clock: Callable[[], float] = time.time,
        status_batch_period: float = STATUS_BATCH_PERIOD_S,
        freeze_gc_after_sync: bool = False,
        scheduler: bool = True,
    ) -> None:
        self.client = client
        #: False: no scheduling cycles (the INT harness reserves quota itself, as upstream's
        #: integration tests do).
        self.scheduler = scheduler
        self.engine = Engine(config, clock=clock)
        self.clock = clock
        self.workers = workers
        self.status_batch_period = status_batch_period
        self.freeze_gc_after_sync = freeze_gc_after_sync
        self.informers = {
            kind: Informer(client, info.api_version, info.resource) for kind, info in KINDS.items()
        }
        self.recorders = {
            source: EventRecorder(client, source)
            for source in (SCHEDULER_SOURCE, JOB_SOURCE, WORKLOAD_SOURCE, QUEUE_SOURCE)
        }
        self.writer = Writer(
            client,
            self.recorders,
            refreshed=self.engine.observe,
            gone=self.engine.forget,
            failed=self.engine.write_failed,
            touched=self.touch,
        )
        limiter = ExponentialRateLimiter  # client-go's defaults (5 ms doubling to 1000 s)
        self.workload_queue = WorkQueue(rate_limiter=limiter())
        self.job_queue = WorkQueue(rate_limiter=limiter())
        self.cluster_queue_queue = WorkQueue(rate_limiter=limiter())
        self.local_queue_queue = WorkQueue(rate_limiter=limiter())
        self.cohort_queue = WorkQueue(rate_limiter=limiter())
        self._wake = asyncio.Event()
        self._synced = False
        #: Scheduling cycles run (for tests and the benchmark's log line).
        self.cycles = 0
        for kind, informer in self.informers.items():
            informer.add_handler(self._handler(kind))

    # ----- informer events ----------------------------------------------------------------

    def _handler(self, kind: str) -> EventHandler:
        def added(obj: dict[str, Any]) -> None:
            self.touch(self.engine.observe(kind, obj))

        def updated(old: dict[str, Any], new: dict[str, Any]) -> None:
            self.touch(self.engine.observe(kind, new))

        def deleted(obj: dict[str, Any]) -> None:
            self.touch(self.engine.forget(kind, obj))

        return EventHandler(added, updated, deleted)

    def touch(self, touched: Touched) -> None:
        """Queue what a change touched."""
        for key in touched.workloads:
            self.workload_queue.add(key)
        for key in touched.jobs:
            self.job_queue.add(key)
        batched = (
            (self.cluster_queue_queue, touched.cluster_queues),
            (self.local_queue_queue, touched.local_queues),
            (self.cohort_queue, touched.cohorts),
        )
        for queue, keys in batched:
            for key in keys:
                if self._synced:
                    queue.add_after(key, self.status_batch_period)
                else:
                    # Before the loop runs there is no timer to batch on: queued at once.
                    queue.add(key)
        if touched.schedule:
            self._wake.set()

    # ----- running ------------------------------------------------------------------------

    async def run(self) -> None:
        """Watch, schedule and reconcile until cancelled."""
        tasks = [
            asyncio.create_task(i.run(), name=f"kueue-{i.resource}")
            for i in self.informers.values()
        ]
        try:
            for informer in self.informers.values():
                await informer.wait_synced()
            self._synced = True
            if self.freeze_gc_after_sync:
                # What the first lists built lives long (see numaplane.cli.gctune).
                gc.collect()
                gc.freeze()
            log.info("caches synced: starting the scheduler and the reconcilers")
            reconcilers: list[tuple[WorkQueue, Callable[[str], Awaitable[None]], int]] = [
                (self.workload_queue, self._sync_workload, self.workers),
                (self.job_queue, self._sync_job, self.workers),
                (self.cluster_queue_queue, self._sync_cluster_queue, 1),
                (self.local_queue_queue, self._sync_local_queue, 1),
                (self.cohort_queue, self._sync_cohort, 1),
            ]
            for queue, handler, count in reconcilers:
                tasks += [asyncio.create_task(self._worker(queue, handler)) for _ in range(count)]
            if self.scheduler:
                tasks.append(asyncio.create_task(self._schedule_loop(), name="kueue-scheduler"))
            await asyncio.gather(*tasks)
        finally:
            for queue in (
                self.workload_queue,
                self.job_queue,
                self.cluster_queue_queue,
                self.local_queue_queue,
                self.cohort_queue,
            ):
                queue.shutdown()
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            for recorder in self.recorders.values():
                with contextlib.suppress(Exception):
                    await asyncio.shield(recorder.close(timeout=CLOSE_EVENTS_TIMEOUT_S))

    async def _schedule_loop(self) -> None:
        backoff = IDLE_BACKOFF_S[0]
        while True:
            if not self.engine.has_work():
                self._wake.clear()
                wake_at = self.engine.next_wakeup()
                timeout = None if wake_at is None else max(0.0, wake_at - self.clock())
                if not self.engine.has_work():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), timeout)
                continue
            outcome = self.engine.cycle(self.clock())
            self.cycles += 1
            reserved = any(w.assumed for w in outcome.writes)
            await self._execute(outcome, SCHEDULER_SOURCE)
            if reserved:
                backoff = IDLE_BACKOFF_S[0]
                await asyncio.sleep(0)
            else:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), backoff)
                backoff = min(backoff * 2, IDLE_BACKOFF_S[1])

    async def _execute(self, outcome: Outcome, source: str) -> None:
        """Make ``outcome``'s writes (concurrently, or in order when they depend on each
        other) and record its events."""
        self.writer.record(source, outcome.events)
        if outcome.ordered:
            versions: dict[tuple[str, str], str] = {}
            for write in outcome.writes:
                rv = await self.writer.write(chained(write, versions), source, decode=True)
                if rv is None:
                    break
                if rv:
                    versions[(write.kind, write.key)] = rv
        elif len(outcome.writes) == 1:
            await self.writer.write(outcome.writes[0], source)
        elif outcome.writes:
            results = await asyncio.gather(
                *(self.writer.write(w, source) for w in outcome.writes), return_exceptions=True
            )
            for result in results:
                if isinstance(result, BaseException) and not isinstance(result, KubeError):
                    raise result
        if outcome.error:
            # Upstream's reconciler returned an error: retried with the queue's backoff.
            raise KueueError(outcome.error)

    async def _worker(self, queue: WorkQueue, handler: Callable[[str], Awaitable[None]]) -> None:
        await serve_queue(queue, handler, "syncing")

    async def _sync(self, queue: WorkQueue, key: str, outcome: Outcome, source: str) -> None:
        await self._execute(outcome, source)
        if outcome.requeue_after is not None:
            queue.add_after(key, outcome.requeue_after)

    async def _sync_workload(self, key: str) -> None:
        outcome = self.engine.reconcile_workload(key, self.clock())
        await self._sync(self.workload_queue, key, outcome, WORKLOAD_SOURCE)

    async def _sync_job(self, key: str) -> None:
        outcome = self.engine.reconcile_job(key, self.clock())
        await self._sync(self.job_queue, key, outcome, JOB_SOURCE)

    async def _sync_cluster_queue(self, key: str) -> None:
        outcome = self.engine.cluster_queue_status(key, self.clock())
        await self._sync(self.cluster_queue_queue, key, outcome, QUEUE_SOURCE)

    async def _sync_local_queue(self, key: str) -> None:
        outcome = self.engine.local_queue_status(key, self.clock())
        await self._sync(self.local_queue_queue, key, outcome, QUEUE_SOURCE)

    async def _sync_cohort(self, key: str) -> None:
        outcome = self.engine.cohort_status(key, self.clock())
        await self._sync(self.cohort_queue, key, outcome, QUEUE_SOURCE)
