"""The agent joined to a cluster: the pod source, the status reporter, the deleter and the
node's heartbeat, on an event loop of their own beside the agent's threads.

``ClusterSide`` runs, in one background thread with one ``KubeClient``:

- ``ApiPodSource.run``: the pods bound to the node (each change wakes the agent's loop);
- ``StatusReporter.run``: after each change the agent reports (an admission, a rejection, a
  release, a process that started or ended), and at least every ``resync`` seconds, the status
  of every API pod the agent knows is computed (``podstatus``) and written with a merge patch
  of ``pods/status``, only when it differs from what was last written (changes in between are
  coalesced; a failed write is retried at the next pass). It then deletes, with grace period 0
  and the pod's uid as precondition, every pod being deleted that the agent no longer runs,
  as the kubelet's status manager does once a pod's containers are gone. A rejection is also
  recorded as a Warning Event with the kubelet's reason and message (component ``kubelet``);
- the heartbeat (``numaplane.agent.cluster.heartbeat.NodeHeartbeat``, given as a factory):
  registered first, then run; told ``changed()`` after each admission and release.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Protocol

from numaplane.agent.agent import Agent
from numaplane.agent.cluster.podsource import TERMINAL_PHASES, ApiPodSource
from numaplane.agent.cluster.podstatus import parse_time, pod_status_dict, rejected_status_dict
from numaplane.kube.client import KubeClient, resource_path
from numaplane.kube.config import KubeConfig
from numaplane.kube.errors import ApiError, KubeError
from numaplane.kube.events import EventRecorder

_log = logging.getLogger(__name__)


class Heartbeat(Protocol):
    """What the node's heartbeat offers (``NodeHeartbeat``)."""

    async def register(self) -> None:
        """Create or adopt the Node."""

    async def run(self) -> None:
        """Renew the Lease, post the node status and the NRT until cancelled."""

    def changed(self) -> None:
        """An admission or release happened (thread-safe)."""


class StatusReporter:
    """Writes the status of the agent's API pods (see the module docstring)."""

    def __init__(
        self,
        client: KubeClient,
        agent: Agent,
        source: ApiPodSource,
        *,
        host_ip: str = "127.0.0.1",
        resync: float = 1.0,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        recorder: EventRecorder | None = None,
    ) -> None:
        self._client = client
        self._recorder = recorder
        self._agent = agent
        self._source = source
        self._host_ip = host_ip
        self._resync = resync
        self._clock = clock
        self._sent: dict[str, dict[str, Any]] = {}
        self._started: dict[str, datetime] = {}
        self._deleted: set[str] = set()
        self._why: dict[str, tuple[str, str]] = {}  # rejected pods: reason and message
        self._event: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def kick(self) -> None:
        """Something changed: a pass soon (thread-safe; passes in between coalesce)."""
        loop, event = self._loop, self._event
        if loop is not None and event is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closing
                loop.call_soon_threadsafe(event.set)

    async def run(self) -> None:
        """Pass after each kick, and every ``resync`` seconds, until cancelled."""
        self._loop = asyncio.get_running_loop()
        self._event = asyncio.Event()
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._event.wait(), self._resync)
            self._event.clear()
            try:
                await self.sync_once()
            except Exception:
                _log.exception("pod status pass failed")

    def desired(self) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
        """The status each API pod should carry now, by uid, with its object."""
        agent = self._agent
        with agent.lock:
            entries = dict(agent.pods)
            rejected = {u: r for u, r in agent.rejected.items() if not r.retry}
        now = self._clock()
        out: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        for obj in self._source.objects():
            uid = str(obj["metadata"]["uid"])
            if (obj.get("status") or {}).get("phase") in TERMINAL_PHASES:
                continue
            entry = entries.get(uid)
            if entry is not None:
                runtime = entry.runtime.status() if entry.runtime is not None else None
                waiting = dict(entry.waiting)
                if entry.error is not None and runtime is None:
                    for c in entry.pod.all_containers():
                        waiting.setdefault(c.name, ("CreateContainerError", entry.error))
                start = self._start_time(uid, obj, now)
                status = pod_status_dict(
                    obj,
                    runtime,
                    host_ip=self._host_ip,
                    now=now,
                    start_time=start,
                    waiting=waiting,
                    previous=self._sent.get(uid),
                )
            elif uid in rejected and not (obj.get("metadata") or {}).get("deletionTimestamp"):
                rejection = rejected[uid]
                status = rejected_status_dict(obj, rejection.reason, rejection.message, now=now)
                self._why[uid] = (rejection.reason, rejection.message)
            else:
                continue
            out[uid] = (obj, status)
        return out

    def _start_time(self, uid: str, obj: dict[str, Any], now: datetime) -> datetime:
        if uid not in self._started:
            known = parse_time((obj.get("status") or {}).get("startTime"))
            self._started[uid] = known or now
        return self._started[uid]

    async def sync_once(self) -> None:
        """Write every status that changed; delete the pods whose deletion is done."""
        desired = self.desired()
        for uid, (obj, status) in desired.items():
            if self._sent.get(uid) == status:
                continue
            meta = obj["metadata"]
            try:
                await self._client.patch(
                    "v1",
                    "pods",
                    meta["name"],
                    {"metadata": {"uid": uid}, "status": status},
                    meta.get("namespace") or "default",
                    subresource="status",
                    decode=False,
                )
            except ApiError as err:
                if err.is_not_found:
                    self._sent.pop(uid, None)
                    continue
                _log.warning(
                    "pod %s/%s: cannot write its status: %s",
                    meta.get("namespace"),
                    meta["name"],
                    err,
                )
                continue
            except KubeError as err:
                _log.warning("pod %s: cannot write its status: %s", meta["name"], err)
                continue
            why = self._why.pop(uid, None)
            if why is not None and self._recorder is not None:
                pod = {**obj, "kind": "Pod", "apiVersion": "v1"}
                self._recorder.event(pod, "Warning", *why)
            self._sent[uid] = status
        await self._delete_finished()
        live = {str(o["metadata"]["uid"]) for o in self._source.objects()}
        for table in (self._sent, self._started, self._why):
            for uid in [u for u in table if u not in live]:
                del table[uid]
        self._deleted &= live

    async def _delete_finished(self) -> None:
        with self._agent.lock:
            running = set(self._agent.pods)
        for obj in self._source.objects():
            meta = obj.get("metadata") or {}
            uid = str(meta.get("uid"))
            if not meta.get("deletionTimestamp") or uid in running or uid in self._deleted:
                continue
            namespace = meta.get("namespace") or "default"
            options = {
                "kind": "DeleteOptions",
                "apiVersion": "v1",
                "gracePeriodSeconds": 0,
                "preconditions": {"uid": uid},
            }
            path = resource_path("v1", "pods", namespace, meta.get("name"))
            try:
                await self._client.request("DELETE", path, body=options)
            except ApiError as err:
                if not (err.is_not_found or err.is_conflict):
                    _log.warning(
                        "pod %s/%s: cannot delete it: %s", namespace, meta.get("name"), err
                    )
                    continue
            except KubeError as err:
                _log.warning("pod %s/%s: cannot delete it: %s", namespace, meta.get("name"), err)
                continue
            self._deleted.add(uid)


class ClusterSide:
    """The agent's cluster side on a thread of its own (see the module docstring)."""

    def __init__(
        self,
        agent: Agent,
        source: ApiPodSource,
        config: KubeConfig,
        *,
        host_ip: str = "127.0.0.1",
        heartbeat: Callable[[KubeClient], Heartbeat] | None = None,
    ) -> None:
        self.agent = agent
        self.source = source
        self._config = config
        self._host_ip = host_ip
        self._heartbeat_factory = heartbeat
        self._heartbeat: Heartbeat | None = None
        self._reporter: StatusReporter | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._main: asyncio.Task[None] | None = None
        self._ready = threading.Event()
        agent.listeners.append(self._agent_changed)
        source.on_change = self.source_changed

    def source_changed(self) -> None:
        """The pod source changed: the agent polls at once, the reporter passes."""
        self.agent.wake()
        if self._reporter is not None:
            self._reporter.kick()

    def _agent_changed(self) -> None:
        if self._reporter is not None:
            self._reporter.kick()
        if self._heartbeat is not None:
            self._heartbeat.changed()

    def start(self) -> None:
        """Start the thread; returns once its loop runs."""
        self._thread = threading.Thread(target=self._run, name="agent-cluster", daemon=True)
        self._thread.start()
        self._ready.wait(30)

    def stop(self) -> None:
        """Cancel everything and wait for the thread."""
        loop, main = self._loop, self._main
        if loop is not None and main is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(main.cancel)
        if self._thread is not None:
            self._thread.join(30)

    def _run(self) -> None:
        asyncio.run(self._amain())

    async def _amain(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._main = asyncio.current_task()
        async with KubeClient(self._config) as client:
            recorder = EventRecorder(client, "kubelet", host=self.source.node_name)
            reporter = StatusReporter(
                client, self.agent, self.source, host_ip=self._host_ip, recorder=recorder
            )
            self._reporter = reporter
            self._ready.set()
            tasks = [
                asyncio.create_task(self.source.run(client)),
                asyncio.create_task(reporter.run()),
            ]
            try:
                if self._heartbeat_factory is not None:
                    heartbeat = self._heartbeat_factory(client)
                    await _register(heartbeat)
                    self._heartbeat = heartbeat
                    tasks.append(asyncio.create_task(heartbeat.run()))
                await asyncio.gather(*tasks)
            except asyncio.CancelledError:
                pass
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                self._reporter = None
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(recorder.close(), 5)
        # The client's TLS transports finish closing on the loop's next turns.
        await asyncio.sleep(0.1)


async def _register(heartbeat: Heartbeat) -> None:
    """Register the node, retrying (with back-off) while the API server cannot be reached."""
    delay = 0.5
    while True:
        try:
            await heartbeat.register()
            return
        except KubeError as err:
            _log.warning("cannot register the node: %s (retrying in %gs)", err, delay)
        await asyncio.sleep(delay)
        delay = min(delay * 2, 10.0)
