"""The Job controller's loop (upstream's ``job_controller.go`` minus ``syncJob``): informers on
Jobs and Pods, the handlers that turn their events into queued Job keys (pod events batched by
one second, spec changes at once), the expectations they observe, an index of pods by owning
Job, adoption and release of pods (``ClaimPods``), the orphan queue that strips the tracking
finalizer from pods no unfinished Job tracks, and the workers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from numaplane.api.selectors import SelectorError, label_selector_from_dict
from numaplane.controllers.job import status as conditions
from numaplane.controllers.job.backoff import BackoffStore, PodFailureBackoff
from numaplane.controllers.job.claim import PodIndex, claim_pods
from numaplane.controllers.job.expectations import ControllerExpectations, FinalizerExpectations
from numaplane.controllers.job.pods import remove_finalizer_patch
from numaplane.controllers.job.podstate import (
    controller_ref,
    deleting,
    has_tracking_finalizer,
    meta,
    parse_time,
    uid,
)
from numaplane.controllers.job.runtime import SYNC_BATCH_PERIOD_S, JobRuntime, Obj, Recorder
from numaplane.controllers.job.sync import sync_job
from numaplane.kube import ApiError, KubeClient, KubeError
from numaplane.kube.events import EventRecorder
from numaplane.kube.informer import EventHandler, Informer, object_key
from numaplane.kube.workqueue import ExponentialRateLimiter, WorkQueue

log = logging.getLogger(__name__)

COMPONENT = "job-controller"
#: ``DefaultJobApiBackOff`` and ``MaxJobApiBackOff``: retries of a failed sync.
API_BACKOFF_BASE_S = 1.0
API_BACKOFF_CAP_S = 60.0


def _split(key: str) -> tuple[str, str]:
    namespace, _, name = key.rpartition("/")
    return namespace, name


class JobController:
    """Runs batch/v1 Jobs: creates and deletes their pods and writes their status."""

    def __init__(
        self,
        client: KubeClient,
        *,
        recorder: Recorder | None = None,
        workers: int = 4,
        clock: Callable[[], float] = time.time,
        backoff: PodFailureBackoff | None = None,
        sync_batch_period: float = SYNC_BATCH_PERIOD_S,
    ) -> None:
        self.client = client
        self.workers = workers
        self._own_recorder = recorder is None
        self.recorder: Recorder = recorder or EventRecorder(client, COMPONENT)
        self.jobs = Informer(client, "batch/v1", "jobs")
        self.pods = Informer(client, "v1", "pods")
        self.queue = WorkQueue(
            rate_limiter=ExponentialRateLimiter(API_BACKOFF_BASE_S, API_BACKOFF_CAP_S)
        )
        self.orphans = WorkQueue(
            rate_limiter=ExponentialRateLimiter(API_BACKOFF_BASE_S, API_BACKOFF_CAP_S)
        )
        self.clock = clock
        self._batch = sync_batch_period
        self.index = PodIndex()
        self.runtime = JobRuntime(
            client=client,
            recorder=self.recorder,
            clock=clock,
            backoff=backoff or PodFailureBackoff(),
            expectations=ControllerExpectations(),
            finalizer_expectations=FinalizerExpectations(),
            backoff_store=BackoffStore(),
            lookup_job=self._lookup_job,
            claim_pods=lambda job: claim_pods(client, self.index, job),
            enqueue_after=self._enqueue_after,
            sync_batch_period=sync_batch_period,
        )
        self.jobs.add_handler(EventHandler(self._add_job, self._update_job, self._delete_job))
        self.pods.add_handler(EventHandler(self._add_pod, self._update_pod, self._delete_pod_final))

    # ----- running -----

    async def run(self) -> None:
        """Watch and sync until cancelled."""
        tasks = [asyncio.create_task(self.jobs.run()), asyncio.create_task(self.pods.run())]
        try:
            await self.jobs.wait_synced()
            await self.pods.wait_synced()
            tasks += [
                asyncio.create_task(self._worker(self.queue, self._sync))
                for _ in range(self.workers)
            ]
            tasks.append(asyncio.create_task(self._worker(self.orphans, self._sync_orphan)))
            await asyncio.gather(*tasks)
        finally:
            self.queue.shutdown()
            self.orphans.shutdown()
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            if self._own_recorder and isinstance(self.recorder, EventRecorder):
                with contextlib.suppress(Exception):
                    await asyncio.shield(self.recorder.close())

    async def _worker(self, queue: WorkQueue, handler: Callable[[str], Any]) -> None:
        while True:
            key = await queue.get()
            try:
                await handler(key)
                queue.forget(key)
            except asyncio.CancelledError:
                raise
            except KubeError as err:
                log.info("syncing %s: %s", key, err)
                queue.add_rate_limited(key)
            except Exception:
                # A bug must not stop the worker: log it and retry later, as HandleError does.
                log.exception("syncing %s", key)
                queue.add_rate_limited(key)
            finally:
                queue.done(key)

    async def _sync(self, key: str) -> None:
        await sync_job(self.runtime, key)

    # ----- lookups -----

    def _lookup_job(self, key: str) -> Obj | None:
        namespace, name = _split(key)
        return self.jobs.get(namespace, name)

    def _resolve(self, namespace: str, ref: Mapping[str, Any]) -> Obj | None:
        # resolveControllerRef: the Job the reference names, if it is still that Job.
        if ref.get("kind") != "Job":
            return None
        job = self.jobs.get(namespace, str(ref.get("name") or ""))
        if job is None or uid(job) != ref.get("uid"):
            return None
        return job

    def _jobs_selecting(self, pod: Obj) -> list[Obj]:
        # getPodJobs: Jobs of the pod's namespace whose selector matches its labels.
        namespace = meta(pod).get("namespace")
        labels = meta(pod).get("labels") or {}
        found = []
        for job in self.jobs.list():
            if meta(job).get("namespace") != namespace:
                continue
            selector = (job.get("spec") or {}).get("selector")
            try:
                parsed = label_selector_from_dict(selector)
            except SelectorError:
                continue
            if not parsed.empty() and parsed.matches(labels):
                found.append(job)
        return found

    # ----- queueing -----

    def _enqueue_after(self, key: str, delay: float) -> None:
        self.queue.add_after(key, delay)

    def _enqueue_batched(self, job: Obj) -> None:
        self.queue.add_after(object_key(job), self._batch)

    def _enqueue_orphan(self, pod: Obj) -> None:
        self.orphans.add(object_key(pod))

    def _cleanup_pod_finalizers(self, job: Obj) -> None:
        # The pods of a finished or deleted Job keep no finalizer (a backup of the sync).
        for pod in self.index.owned_by(uid(job)):
            if has_tracking_finalizer(pod):
                self._enqueue_orphan(pod)

    # ----- Job events -----

    def _add_job(self, job: Obj) -> None:
        self.queue.add(object_key(job))

    def _update_job(self, old: Obj, new: Obj) -> None:
        key = object_key(new)
        if meta(new).get("generation") == meta(old).get("generation"):
            # Status writes (mostly ours) are batched like pod events.
            self._enqueue_batched(new)
        else:
            self.queue.add(key)
        if conditions.is_finished(new):
            self._cleanup_pod_finalizers(new)
        started = parse_time((new.get("status") or {}).get("startTime"))
        deadline = (new.get("spec") or {}).get("activeDeadlineSeconds")
        if started is None or deadline is None:
            return
        if (old.get("spec") or {}).get("activeDeadlineSeconds") != deadline:
            self.queue.add_after(key, float(deadline) - (self.clock() - started))

    def _delete_job(self, job: Obj) -> None:
        self.queue.add(object_key(job))
        self._cleanup_pod_finalizers(job)

    # ----- Pod events -----

    def _add_pod(self, pod: Obj) -> None:
        self.index.add(pod)
        if deleting(pod):
            # A restarted controller may first see a pod already being deleted: no creation.
            self._pod_gone(pod, final=False)
            return
        ref = controller_ref(pod)
        if ref is not None:
            job = self._resolve(str(meta(pod).get("namespace") or ""), ref)
            if job is not None:
                self.runtime.expectations.creation_observed(object_key(job))
                self._enqueue_batched(job)
            return
        if has_tracking_finalizer(pod):
            self._enqueue_orphan(pod)
        for job in self._jobs_selecting(pod):
            self._enqueue_batched(job)

    def _update_pod(self, old: Obj, new: Obj) -> None:
        self.index.remove(old)
        self.index.add(new)
        if meta(new).get("resourceVersion") == meta(old).get("resourceVersion"):
            return
        if deleting(new):
            # Replacements need not wait for the kubelet to finish the pod.
            self._pod_gone(new, final=False)
            return
        namespace = str(meta(new).get("namespace") or "")
        finalizer_removed = not has_tracking_finalizer(new)
        ref, old_ref = controller_ref(new), controller_ref(old)
        if ref != old_ref and old_ref is not None:
            previous = self._resolve(namespace, old_ref)
            if previous is not None:
                if finalizer_removed:
                    self.runtime.finalizer_expectations.removal_observed(
                        object_key(previous), uid(new)
                    )
                self._enqueue_batched(previous)
        if ref is not None:
            job = self._resolve(namespace, ref)
            if job is None:
                return
            if finalizer_removed:
                self.runtime.finalizer_expectations.removal_observed(object_key(job), uid(new))
            self._enqueue_batched(job)
            return
        if has_tracking_finalizer(new):
            self._enqueue_orphan(new)
        if (meta(new).get("labels") != meta(old).get("labels")) or ref != old_ref:
            for job in self._jobs_selecting(new):
                self._enqueue_batched(job)

    def _delete_pod_final(self, pod: Obj) -> None:
        self.index.remove(pod)
        self._pod_gone(pod, final=True)

    def _pod_gone(self, pod: Obj, *, final: bool) -> None:
        # deletePod: deletion observed (or under way), finalizer removal observed when final.
        ref = controller_ref(pod)
        tracked = has_tracking_finalizer(pod)
        if ref is None:
            if tracked:
                self._enqueue_orphan(pod)
            return
        job = self._resolve(str(meta(pod).get("namespace") or ""), ref)
        if job is None or conditions.is_finished(job):
            if tracked:
                self._enqueue_orphan(pod)
            return
        key = object_key(job)
        self.runtime.expectations.deletion_observed(key)
        if final or not tracked:
            self.runtime.finalizer_expectations.removal_observed(key, uid(pod))
        self._enqueue_batched(job)

    # ----- orphans -----

    async def _sync_orphan(self, key: str) -> None:
        """``syncOrphanPod``: drop the tracking finalizer of a pod no unfinished Job of this
        controller tracks."""
        namespace, name = _split(key)
        pod = self.pods.get(namespace, name)
        if pod is None or not has_tracking_finalizer(pod):
            return
        ref = controller_ref(pod)
        if ref is not None:
            if ref.get("kind") != "Job" or ref.get("apiVersion") != "batch/v1":
                return
            job = self._resolve(namespace, ref)
            if job is not None and conditions.managed_by_other(job) is not None:
                return
            if job is not None and not conditions.is_finished(job):
                return
        try:
            await self.client.patch(
                "v1", "pods", name, remove_finalizer_patch(), namespace, patch_type="strategic"
            )
        except ApiError as err:
            if not err.is_not_found:
                raise
