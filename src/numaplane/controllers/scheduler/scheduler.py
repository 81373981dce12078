"""The scheduler: informers feed the cache and the queue; one loop takes the next pod, filters
the nodes (cheap plugins first, the NUMA prediction only on nodes that passed them), scores the
feasible ones, assumes the pod on the best and hands the binding to the binder; a pod that fits
nowhere gets the FailedScheduling event and the ``PodScheduled=False`` condition and waits for
a cluster change.

The decision itself (filters and scores) is ``framework.decide``.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import random
import time
from typing import Any

from numaplane.controllers.scheduler.binder import Binder
from numaplane.controllers.scheduler.cache import Cache
from numaplane.controllers.scheduler.framework import Decision, decide
from numaplane.controllers.scheduler.numa import NRT_API_VERSION, NRT_RESOURCE
from numaplane.controllers.scheduler.options import SchedulerOptions
from numaplane.controllers.scheduler.podinfo import PodInfo, is_terminal, pod_info
from numaplane.controllers.scheduler.queue import SchedulingQueue
from numaplane.errors import NumaplaneError
from numaplane.kube import KubeClient
from numaplane.kube.errors import ApiError, KubeError
from numaplane.kube.events import EventRecorder
from numaplane.kube.informer import EventHandler, Informer

__all__ = ["Scheduler"]

log = logging.getLogger(__name__)


class Scheduler:
    """See the module doc."""

    def __init__(
        self,
        client: KubeClient,
        options: SchedulerOptions | None = None,
        *,
        recorder: EventRecorder | None = None,
        clock: Any = time.monotonic,
    ) -> None:
        self.client = client
        self.options = options or SchedulerOptions()
        self.recorder = recorder
        self.cache = Cache()
        self.queue = SchedulingQueue(
            clock=clock,
            initial_backoff=self.options.initial_backoff,
            max_backoff=self.options.max_backoff,
            max_unschedulable=self.options.max_unschedulable,
        )
        self.binder = Binder(client, self._bind_result, concurrency=self.options.bind_concurrency)
        self._random = random.Random(self.options.seed)
        self._clock = clock
        #: Pods chosen and being bound, by key (their informer updates are not queued).
        self._binding: dict[str, PodInfo] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self.pods = Informer(
            client,
            "v1",
            "pods",
            field_selector="status.phase!=Succeeded,status.phase!=Failed",
        )
        self.nodes = Informer(client, "v1", "nodes")
        self.nrts = Informer(client, NRT_API_VERSION, NRT_RESOURCE)
        #: Counters: pods bound, failed attempts, bind errors.
        self.bound = 0
        self.failed_attempts = 0
        self.bind_errors = 0

    # -- the decision --------------------------------------------------------------------

    def decide(self, pod: PodInfo) -> Decision:
        """Filter and score every node for ``pod`` (see ``framework.decide``)."""
        return decide(self.cache, self.options, pod, self._random)

    def schedule_one(self, pod: PodInfo) -> Decision:
        """Decide for ``pod``; assume it and hand its binding to the binder, or record why it
        fits nowhere."""
        decision = self.decide(pod)
        node = decision.node
        if node is not None and self.cache.assume(pod, node, check_numa=self.options.numa_filter):
            self._binding[pod.key] = pod
            self.binder.bind(pod, node)
            return decision
        if node is not None:
            # The replica refused what its prediction admitted: never bind there; try again.
            log.warning("%s: node %s refused the pod on assume", pod.key, node)
            self.queue.backoff(pod)
            return decision
        self.failed_attempts += 1
        self.queue.unschedulable(pod)
        self._report_unschedulable(pod, decision.message)
        return decision

    def _report_unschedulable(self, pod: PodInfo, message: str) -> None:
        if self.recorder is not None:
            obj = {"kind": "Pod", "apiVersion": "v1", **pod.obj}
            self.recorder.event(obj, "Warning", "FailedScheduling", message)
        if message != pod.last_message:
            pod.last_message = message
            self._spawn(self._set_condition(pod, message))

    async def _set_condition(self, pod: PodInfo, message: str) -> None:
        patch = {
            "status": {
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": message,
                        "lastProbeTime": None,
                        "lastTransitionTime": _now(),
                    }
                ]
            }
        }
        try:
            await self.client.patch(
                "v1",
                "pods",
                pod.name,
                patch,
                pod.namespace,
                patch_type="strategic",
                subresource="status",
                decode=False,
            )
        except KubeError as err:
            log.info("%s: PodScheduled condition not written: %s", pod.key, err)

    def _bind_result(self, pod: PodInfo, node: str, error: KubeError | None) -> None:
        self._binding.pop(pod.key, None)
        if error is None:
            self.bound += 1
            return
        self.bind_errors += 1
        self.cache.forget(pod)
        self.queue.move_all_to_active()
        if isinstance(error, ApiError) and (error.is_not_found or error.is_conflict):
            # Deleted, or bound meanwhile (the informer tells which): nothing to retry.
            log.info("%s: binding to %s refused: %s", pod.key, node, error)
            return
        log.warning("%s: binding to %s failed: %s", pod.key, node, error)
        self.queue.backoff(pod)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- informer events ------------------------------------------------------------------

    def _on_pod(self, old: dict[str, Any] | None, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        uid = str(meta.get("uid") or "")
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
        if is_terminal(obj):
            self._on_pod_gone(obj)
            return
        node_name = spec.get("nodeName")
        if node_name:
            self.queue.delete(key)
            if self.cache.pod_node.get(uid) == node_name:
                if uid in self.cache.assumed:
                    self.cache.confirm(uid, str(node_name))
                    # Pods refused while the node waited for this binding may go there now.
                    self.queue.move_all_to_active()
                return
            info = self._parse(obj)
            if info is not None:
                self.cache.add_assigned(info, str(node_name))
            return
        if (spec.get("schedulerName") or "default-scheduler") != self.options.scheduler_name:
            return
        if meta.get("deletionTimestamp") or key in self._binding or uid in self.cache.pod_node:
            # Being deleted, being bound, or bound already (an event older than the binding's).
            return
        if old is not None and key in self.queue and _same_pod(old, obj):
            # Only the status changed (our own condition, say): nothing to try again for.
            return
        info = self._parse(obj)
        if info is not None:
            self.queue.add(info)

    def _on_pod_gone(self, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
        self.queue.delete(key)
        if self.cache.remove_assigned(str(meta.get("uid") or "")):
            self.queue.move_all_to_active()

    def _parse(self, obj: dict[str, Any]) -> PodInfo | None:
        try:
            return pod_info(obj)
        except NumaplaneError as err:
            log.warning("pod not schedulable as given: %s", err)
            return None

    def _on_node(self, obj: dict[str, Any]) -> None:
        if self.cache.set_node(obj):
            self.queue.move_all_to_active()

    def _on_node_delete(self, obj: dict[str, Any]) -> None:
        self.cache.remove_node(str(obj["metadata"]["name"]))

    def _on_nrt(self, obj: dict[str, Any]) -> None:
        if self.cache.set_nrt(obj):
            self.queue.move_all_to_active()

    def _on_nrt_delete(self, obj: dict[str, Any]) -> None:
        self.cache.remove_nrt(str(obj["metadata"]["name"]))
        self.queue.move_all_to_active()

    # -- running --------------------------------------------------------------------------

    async def run(self) -> None:
        """Watch the cluster and schedule until cancelled."""
        self.nodes.add_handler(
            EventHandler(
                on_add=self._on_node,
                on_update=lambda old, new: self._on_node(new),
                on_delete=self._on_node_delete,
            )
        )
        self.nrts.add_handler(
            EventHandler(
                on_add=self._on_nrt,
                on_update=lambda old, new: self._on_nrt(new),
                on_delete=self._on_nrt_delete,
            )
        )
        self.pods.add_handler(
            EventHandler(
                on_add=lambda obj: self._on_pod(None, obj),
                on_update=self._on_pod,
                on_delete=self._on_pod_gone,
            )
        )
        informers = [
            asyncio.create_task(i.run(), name=f"scheduler-{i.resource}")
            for i in (self.nodes, self.nrts, self.pods)
        ]
        try:
            await self.nodes.wait_synced()
            try:
                await asyncio.wait_for(self.nrts.wait_synced(), self.options.nrt_sync_timeout)
            except TimeoutError:
                log.info("no NodeResourceTopology list yet: scheduling without them for now")
            await self.pods.wait_synced()
            self.cache.start_sequence()
            if self.options.freeze_gc_after_sync:
                # The node replicas and the listed objects live long: a full collection
                # walking them every few hundred events cost a third of the process's CPU.
                gc.collect()
                gc.freeze()
            await self._loop()
        finally:
            for task in informers:
                task.cancel()
            await asyncio.gather(*informers, return_exceptions=True)
            await self.binder.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _loop(self) -> None:
        next_flush = self._clock() + self.options.flush_interval
        while True:
            now = self._clock()
            if now >= next_flush:
                next_flush = now + self.options.flush_interval
                self.queue.flush()
            pod = self.queue.pop()
            if pod is None:
                deadline = self.queue.next_backoff_deadline()
                wake = next_flush if deadline is None else min(deadline, next_flush)
                await self.queue.wait(max(0.0, wake - self._clock()))
                self.queue.flush()
                continue
            self.schedule_one(pod)
            # Let the informers and the binder run between decisions.
            await asyncio.sleep(0)


def _same_pod(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether only the status (or bookkeeping metadata) differs."""
    if old.get("spec") != new.get("spec"):
        return False
    om, nm = old.get("metadata") or {}, new.get("metadata") or {}
    same_labels = om.get("labels") == nm.get("labels")
    return bool(same_labels and om.get("annotations") == nm.get("annotations"))


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
