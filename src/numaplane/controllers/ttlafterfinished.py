"""The TTL-after-finished controller, as kube-controller-manager's
(``pkg/controller/ttlafterfinished``): a Job with ``spec.ttlSecondsAfterFinished`` that has
finished (a ``Complete`` or ``Failed`` condition with status True) is deleted, with
``propagationPolicy: Background`` (its pods go with it through the garbage collector), once
``ttlSecondsAfterFinished`` seconds have passed since that condition's
``lastTransitionTime``. Before deleting, the Job is read again from the API server (not the
cache) and the TTL checked once more, so a TTL raised meanwhile is honoured; the delete is
conditional on the Job's UID, so a new Job of the same name is never deleted in its place.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from numaplane.controllers.nodelifecycle import parse_time
from numaplane.kube.client import KubeClient, resource_path
from numaplane.kube.errors import ApiError, KubeError
from numaplane.kube.events import EventRecorder
from numaplane.kube.informer import EventHandler, Informer, object_key, split_key
from numaplane.kube.workqueue import ShutDown, WorkQueue

log = logging.getLogger(__name__)

Obj = dict[str, Any]


def finish_time(job: Obj) -> float | None:
    """When the Job finished: its True ``Complete`` or ``Failed`` condition's
    ``lastTransitionTime`` (``None`` while it runs)."""
    for cond in (job.get("status") or {}).get("conditions") or []:
        if cond.get("type") in ("Complete", "Failed") and cond.get("status") == "True":
            return parse_time(cond.get("lastTransitionTime"))
    return None


def expires_at(job: Obj) -> float | None:
    """When the Job is due for deletion (``None``: never, or not yet finished)."""
    if (job.get("metadata") or {}).get("deletionTimestamp"):
        return None
    ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
    if ttl is None:
        return None
    finished = finish_time(job)
    if finished is None:
        return None
    return finished + int(ttl)


class TTLAfterFinishedController:
    """Deletes finished Jobs ``ttlSecondsAfterFinished`` after they finished."""

    def __init__(
        self,
        client: KubeClient,
        *,
        recorder: EventRecorder | None = None,
        workers: int = 1,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.recorder = recorder
        self.workers = workers
        self._clock = clock
        self.jobs = Informer(client, "batch/v1", "jobs")
        self._queue = WorkQueue()
        self.jobs.add_handler(
            EventHandler(on_add=self._enqueue, on_update=lambda _, n: self._enqueue(n))
        )

    def _enqueue(self, job: Obj) -> None:
        if expires_at(job) is not None:
            self._queue.add(object_key(job))

    async def run(self) -> None:
        """Watch Jobs and delete expired ones, until cancelled."""
        tasks = [asyncio.ensure_future(self.jobs.run())]
        tasks += [asyncio.ensure_future(self._work()) for _ in range(max(1, self.workers))]
        try:
            await asyncio.gather(*tasks)
        finally:
            self._queue.shutdown()
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _work(self) -> None:
        await self.jobs.wait_synced()
        while True:
            try:
                key = await self._queue.get()
            except ShutDown:
                return
            try:
                await self.process(key)
                self._queue.forget(key)
            except KubeError as err:
                log.info("job %s: %s", key, err)
                self._queue.add_rate_limited(key)
            finally:
                self._queue.done(key)

    async def process(self, key: str) -> None:
        """Delete the Job ``key`` when it has expired, else queue it again for when it will."""
        cached = self.jobs.get_by_key(key)
        if cached is None or expires_at(cached) is None:
            return
        if self._requeue_if_early(key, cached):
            return
        namespace, name = split_key(key)
        # The cache may be stale (the TTL changed): decide on the Job as stored now.
        try:
            fresh = await self.client.get("batch/v1", "jobs", name, namespace)
        except ApiError as err:
            if err.is_not_found:
                return
            raise
        if expires_at(fresh) is None or self._requeue_if_early(key, fresh):
            return
        log.info("deleting job %s: its ttlSecondsAfterFinished has passed", key)
        try:
            await self.client.request(
                "DELETE",
                resource_path("batch/v1", "jobs", namespace, name),
                body={
                    "kind": "DeleteOptions",
                    "apiVersion": "v1",
                    "propagationPolicy": "Background",
                    "preconditions": {"uid": fresh["metadata"].get("uid")},
                },
            )
        except ApiError as err:
            if not (err.is_not_found or err.is_conflict):
                raise

    def _requeue_if_early(self, key: str, job: Obj) -> bool:
        due = expires_at(job)
        assert due is not None
        left = due - self._clock()
        if left > 0:
            self._queue.add_after(key, left)
            return True
        return False
