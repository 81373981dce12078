"""``SimulatedNodes``: many simulated nodes in one process, sharing one client and one pod watch.

Every pod bound to one of the nodes (``spec.nodeName``; one watch of all bound pods, filtered
by a dict lookup) goes through the node's real engine when it is first seen, in the watch's
order, which is the order of the bindings: the scheduler predicts a node's decisions from the
node's snapshot plus the pods it bound since, in that order. A rejected pod gets ``Failed``
with the kubelet's reason and message (and a Warning event); an admitted one ``Running``,
then ``Succeeded`` once its simulated duration has passed (see ``pods``), freeing its
resources. A graceful deletion frees them at once (the simulated containers stop on SIGTERM)
and deletes the pod with ``gracePeriodSeconds: 0`` and a uid precondition, as the kubelet's
status manager does.

The API sees the pods through a work queue drained by ``max_in_flight`` concurrent requests:
a pod changed several times before its turn is written once, with its newest status.

A restart (the simulator killed and started again) takes back what the API shows: the pods
``Running`` on its nodes are re-admitted in their start order (or, with ``--state-dir``, the
nodes come back from their snapshot files holding exactly what they held, and only pods
admitted after the last save are admitted again); pods restored but no longer live are
released; bound pods not yet handled are admitted in the order of their resourceVersion (the
order of their bindings when nothing else wrote them since). See ``restart``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from numaplane.agent.simulated.checkpoint import SnapshotFiles
from numaplane.agent.simulated.clock import Clock, WallClock
from numaplane.agent.simulated.nodes import SimNode, build_nodes
from numaplane.agent.simulated.pods import TERMINAL, SimPod, pod_duration
from numaplane.agent.simulated.restart import (
    Backlog,
    RunningTimes,
    initial_order,
    running_times,
)
from numaplane.agent.simulated.status import pod_status
from numaplane.api.kubeletconfig import KubeletConfiguration
from numaplane.api.manifest import pod_from_dict
from numaplane.errors import NumaplaneError
from numaplane.kube import ApiError, KubeClient, resource_path
from numaplane.kube.informer import EventHandler, Informer
from numaplane.kube.workqueue import ShutDown, WorkQueue
from numaplane.topology.model import Machine

__all__ = ["SimulatedNodes", "SimulatedOptions"]

_log = logging.getLogger(__name__)

#: The reason of a pod the engine cannot even read (the kubelet's catch-all admission reason).
UNEXPECTED = "UnexpectedAdmissionError"


@dataclass(frozen=True)
class SimulatedOptions:
    """What to simulate: ``nodes`` nodes named ``name-0`` ... cycling over ``machines``."""

    name: str
    nodes: int
    machines: tuple[Machine, ...]
    config: KubeletConfiguration
    state_dir: Path | None = None
    address: str = "127.0.0.1"
    labels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: Concurrent status writes and deletions.
    max_in_flight: int = 16
    #: Least seconds between two NodeResourceTopology publications of one node.
    nrt_interval: float = 0.5
    #: Quiet seconds after a node's last change before its NRT is published, and the most
    #: seconds a change of a busy node waits (see ``NodeHeartbeat``).
    nrt_quiet: float = 1.0
    nrt_max_delay: float = 10.0
    #: Seconds between two saves of the changed nodes' snapshot files (``state_dir``).
    checkpoint_interval: float = 2.0


class SimulatedNodes:
    """The nodes of ``options``; ``run`` until cancelled."""

    def __init__(
        self, client: KubeClient, options: SimulatedOptions, *, clock: Clock | None = None
    ) -> None:
        if options.nodes < 1 or not options.machines:
            raise ValueError("at least one node and one machine")
        self.client = client
        self.options = options
        self.clock: Clock = clock if clock is not None else WallClock()
        self._files = SnapshotFiles(options.state_dir) if options.state_dir else None
        try:
            self.nodes: dict[str, SimNode] = build_nodes(
                client,
                options.name,
                options.nodes,
                options.machines,
                options.config,
                files=self._files,
                clock=self.clock.now,
                labels=options.labels,
                address=options.address,
                nrt_interval=options.nrt_interval,
                nrt_quiet=options.nrt_quiet,
                nrt_max_delay=options.nrt_max_delay,
            )
        except BaseException:
            self.close()
            raise
        self.pods: dict[str, SimPod] = {}
        self._informer = Informer(client, "v1", "pods", field_selector="spec.nodeName!=")
        self._queue = WorkQueue()
        self._backlog: Backlog | None = Backlog()
        self._dirty: set[SimNode] = set()
        self._ready = asyncio.Event()

    # -- running --------------------------------------------------------------------------

    async def wait_ready(self) -> None:
        """Return once every node is registered and the pods already bound are taken back."""
        await self._ready.wait()

    async def run(self) -> None:
        """Register the nodes, then admit, run and report their pods until cancelled."""
        self._informer.add_handler(
            EventHandler(
                on_add=lambda o: self._event(o, False),
                on_update=lambda old, new: self._event(new, False),
                on_delete=lambda o: self._event(o, True),
            )
        )
        tasks: list[asyncio.Task[None]] = []
        try:
            await asyncio.gather(*(n.heartbeat.register() for n in self.nodes.values()))
            tasks.append(asyncio.create_task(self._informer.run()))
            tasks += [asyncio.create_task(n.heartbeat.run()) for n in self.nodes.values()]
            tasks += [
                asyncio.create_task(self._writer())
                for _ in range(max(1, self.options.max_in_flight))
            ]
            if self._files is not None:
                tasks.append(asyncio.create_task(self._checkpoints()))
            await self._informer.wait_synced()
            self._take_back()
            self._ready.set()
            await asyncio.gather(*tasks)
        finally:
            self._queue.shutdown()
            for task in tasks:
                task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(*tasks, return_exceptions=True)
            await self._close_recorders()
            self._save_dirty()
            self.close()

    def close(self) -> None:
        """Release the state directory (``run`` does it when it ends)."""
        if self._files is not None:
            self._files.close()

    async def _close_recorders(self) -> None:
        for node in self.nodes.values():
            if node.recorder is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(node.recorder.close(), 5.0)

    # -- events ---------------------------------------------------------------------------

    def _event(self, obj: dict[str, Any], deleted: bool) -> None:
        # Until the first list is taken back, events wait in the backlog (in their order).
        if self._backlog is not None:
            self._backlog.add(obj, deleted, listed=not self._informer.synced)
            return
        self._handle(obj, deleted)

    def _take_back(self) -> None:
        backlog, self._backlog = self._backlog, None
        assert backlog is not None
        live: set[str] = set()
        order = initial_order(backlog.listed, self.nodes)
        for item in order.running + order.pending:
            live.add(item["metadata"]["uid"])
        for node in self.nodes.values():
            for uid in sorted(node.restored - live):  # restored from its file, gone since
                node.engine.release(uid)
                node.restored.discard(uid)
                self._node_changed(node)
        for obj in order.running:
            self._handle(obj, False, running=True)
        for obj in [*order.pending, *order.terminal]:
            self._handle(obj, False)
        for obj, deleted in backlog.later:
            self._handle(obj, deleted)

    def _handle(self, obj: dict[str, Any], deleted: bool, *, running: bool = False) -> None:
        meta = obj.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        sim = self.pods.get(uid)
        if deleted:
            if sim is not None:
                self._forget(sim)
            return
        node = self.nodes.get((obj.get("spec") or {}).get("nodeName") or "")
        if node is None:
            return
        if sim is None:
            sim = SimPod(uid, node.name, obj)
            self.pods[uid] = sim
            phase = (obj.get("status") or {}).get("phase")
            if phase in TERMINAL:
                sim.phase = str(phase)  # ended before: nothing to run, nothing to write
            else:
                self._admit(node, sim, running=running)
        else:
            sim.obj = obj
            if sim.held and sim.phase in TERMINAL and _phase(obj) in TERMINAL:
                # The API now shows the pod ended: only from here, in the watch's order, do its
                # resources go back (see ``_exited``).
                self._release(sim)
        if meta.get("deletionTimestamp") and not sim.delete_requested:
            self._terminate(sim)

    def _admit(self, node: SimNode, sim: SimPod, *, running: bool) -> None:
        now = self.clock.now()
        times = running_times(sim.obj) if running else RunningTimes()
        try:
            pod = pod_from_dict(sim.obj, f"pod {sim.namespace}/{sim.name}")
        except NumaplaneError as err:
            self._reject(node, sim, UNEXPECTED, str(err))
            return
        if pod.uid in node.restored:
            # Restored from the node's snapshot file: it holds its resources already.
            node.restored.discard(pod.uid)
        else:
            admission = node.engine.admit(pod)
            if not admission.admitted:
                self._reject(node, sim, admission.reason or UNEXPECTED, admission.message or "")
                return
            self._node_changed(node)
        sim.pod = pod
        sim.duration, problem = pod_duration(sim.obj)
        if problem:
            _log.warning("pod %s/%s: %s", sim.namespace, sim.name, problem)
        sim.start_time = times.start_time
        sim.restart_count = times.restart_count
        sim.last_run = times.last_run
        sim.start(times.started_at if times.started_at is not None else now)
        if running:
            sim.written = sim.version  # the API shows it running already
        else:
            self._queue.add(sim.uid)
        self._arm(sim)

    def _reject(self, node: SimNode, sim: SimPod, reason: str, message: str) -> None:
        sim.reject(reason, message)
        node.events().event(
            {**sim.obj, "kind": "Pod", "apiVersion": "v1"}, "Warning", reason, message
        )
        self._queue.add(sim.uid)

    def _arm(self, sim: SimPod) -> None:
        deadline = sim.deadline
        if deadline is not None:
            sim.timer = self.clock.call_at(deadline, lambda: self._exited(sim))

    def _exited(self, sim: SimPod) -> None:
        sim.timer = None
        if not sim.held or sim.delete_requested or self.pods.get(sim.uid) is not sim:
            return
        if not sim.exited(self.clock.now()):
            self._arm(sim)
        # A pod that ended keeps its resources until the watch shows its terminal status
        # (``_handle``): the node then frees them at that status's place among the bindings,
        # the order the scheduler sees too, so its replica of the node can free them at the
        # same point (freed here, at the timer, a binding the scheduler decided while the pod
        # still looked alive could be admitted on CPUs the scheduler never gave it).
        self._queue.add(sim.uid)

    def _terminate(self, sim: SimPod) -> None:
        # A graceful deletion: the containers stop at once, their resources are freed, then
        # the pod is deleted for good.
        sim.delete_requested = True
        if sim.timer is not None:
            sim.timer.cancel()
            sim.timer = None
        if sim.held:
            self._release(sim)
        self._queue.add(sim.uid)

    def _forget(self, sim: SimPod) -> None:
        del self.pods[sim.uid]
        if sim.timer is not None:
            sim.timer.cancel()
            sim.timer = None
        if sim.held:
            self._release(sim)

    def _release(self, sim: SimPod) -> None:
        node = self.nodes[sim.node_name]
        node.engine.release(sim.uid)
        sim.held = False
        self._node_changed(node)

    def _node_changed(self, node: SimNode) -> None:
        node.heartbeat.changed()
        self._dirty.add(node)

    # -- writing to the API ---------------------------------------------------------------

    async def _writer(self) -> None:
        queue = self._queue
        while True:
            try:
                uid = await queue.get()
            except ShutDown:
                return
            try:
                await self._sync(uid)
            except Exception as err:  # retried with backoff, never fatal
                _log.warning("pod %s: %s (retrying)", uid, err)
                queue.add_rate_limited(uid)
            else:
                queue.forget(uid)
            finally:
                queue.done(uid)

    async def _sync(self, uid: str) -> None:
        sim = self.pods.get(uid)
        if sim is None:
            return
        try:
            if sim.delete_requested:
                await self._delete(sim)
            elif sim.written < sim.version:
                version = sim.version
                status = pod_status(sim, host_ip=self.options.address, now=self.clock.now())
                await self.client.patch(
                    "v1",
                    "pods",
                    sim.name,
                    {"metadata": {"uid": uid}, "status": status},
                    sim.namespace,
                    subresource="status",
                    decode=False,
                )
                sim.written = max(sim.written, version)
        except ApiError as err:
            # Gone, or replaced by another pod of that name: nothing of ours to write.
            if err.is_not_found or err.is_conflict or err.code == 422:
                return
            raise

    async def _delete(self, sim: SimPod) -> None:
        options = {
            "kind": "DeleteOptions",
            "apiVersion": "v1",
            "gracePeriodSeconds": 0,
            "preconditions": {"uid": sim.uid},
        }
        path = resource_path("v1", "pods", sim.namespace, sim.name)
        await self.client.request("DELETE", path, body=options)

    # -- state directory ------------------------------------------------------------------

    async def _checkpoints(self) -> None:
        while True:
            await asyncio.sleep(self.options.checkpoint_interval)
            self._save_dirty()

    def _save_dirty(self) -> None:
        files = self._files
        dirty, self._dirty = self._dirty, set()
        if files is None:
            return
        for node in dirty:
            try:
                files.save(node.name, node.engine)
            except OSError as err:
                _log.warning("node %s: cannot save its snapshot: %s", node.name, err)
                self._dirty.add(node)


async def run_simulated_nodes(
    client: KubeClient,
    options: SimulatedOptions,
    *,
    clock: Clock | None = None,
) -> None:
    """Run the simulated nodes of ``options`` until cancelled."""
    await SimulatedNodes(client, options, clock=clock).run()


def _phase(obj: dict[str, Any]) -> str | None:
    phase = (obj.get("status") or {}).get("phase")
    return None if phase is None else str(phase)
