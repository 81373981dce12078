"""The binder: ``POST pods/<name>/binding``, concurrent across nodes (bounded), serialized per
node.

The node's agent admits pods in the order it sees them bound, and the NUMA filter's replica
admitted them in the order they were chosen: so the next binding to a node is written only once
the previous one to that node has been answered. Bindings to different nodes run concurrently,
at most ``concurrency`` at a time.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from typing import Any

from numaplane.controllers.scheduler.podinfo import PodInfo
from numaplane.kube import KubeClient
from numaplane.kube.errors import KubeError

__all__ = ["Binder", "binding_body"]

log = logging.getLogger(__name__)

#: Called with (pod, node name, the error or None) when a binding was answered.
BindResult = Callable[[PodInfo, str, KubeError | None], None]


def binding_body(pod: PodInfo, node_name: str) -> dict[str, Any]:
    """The ``v1 Binding`` of ``pod`` to ``node_name`` (with the pod's uid: a pod deleted and
    re-created under the same name is not bound by mistake)."""
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
    }


class Binder:
    """See the module doc."""

    def __init__(self, client: KubeClient, on_result: BindResult, *, concurrency: int = 32) -> None:
        self._client = client
        self._on_result = on_result
        self._slots = asyncio.Semaphore(concurrency)
        self._queues: dict[str, deque[PodInfo]] = {}
        self._workers: dict[str, asyncio.Task[None]] = {}
        #: Bindings answered so far (successful or not).
        self.answered = 0

    @property
    def in_flight(self) -> int:
        """Bindings queued or being written."""
        return sum(len(q) for q in self._queues.values()) + len(self._workers)

    def bind(self, pod: PodInfo, node_name: str) -> None:
        """Write the binding after those already queued for ``node_name``."""
        self._queues.setdefault(node_name, deque()).append(pod)
        if node_name not in self._workers:
            self._workers[node_name] = asyncio.get_running_loop().create_task(
                self._drain(node_name)
            )

    async def _drain(self, node_name: str) -> None:
        queue = self._queues[node_name]
        try:
            while queue:
                pod = queue.popleft()
                error: KubeError | None = None
                async with self._slots:
                    try:
                        await self._client.create(
                            "v1",
                            "pods",
                            binding_body(pod, node_name),
                            pod.namespace,
                            subresource="binding",
                            decode=False,
                        )
                    except KubeError as err:
                        error = err
                self.answered += 1
                try:
                    self._on_result(pod, node_name, error)
                except Exception:
                    log.exception("bind result handler failed for %s", pod.key)
        finally:
            del self._workers[node_name]
            if not queue:
                self._queues.pop(node_name, None)

    async def close(self) -> None:
        """Cancel the bindings not yet written."""
        tasks = list(self._workers.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
