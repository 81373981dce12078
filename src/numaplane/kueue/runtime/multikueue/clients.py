"""The manager's connections to its worker clusters (upstream's ``clustersReconciler``): one
:class:`~numaplane.kueue.runtime.multikueue.remote.RemoteCluster` per MultiKueueCluster.
(Over 400 lines: the connection's life — load, check, connect, back off, lose, rotate, GC — is
one state machine, read best in one place.)

Each MultiKueueCluster is reconciled from a work queue: its kubeconfig is loaded (Secret
``<namespace>/<location>`` key ``kubeconfig``, or a file) and checked; a new or changed
kubeconfig (re)builds the client and its two remote informers, and the cluster counts as
connected only once both listed. A failure counts an attempt and the next one waits
``base * 2^(n-1)`` (n capped at 7); a list/watch failure of a connected cluster marks it
disconnected (``lost_since`` kept from the first drop of a streak) and reconnects the same way.
The ``Active`` condition is written only when its status, reason or message changed.

Secrets in the namespace are watched (a change requeues every cluster naming the Secret) and
kubeconfig files are polled (their ``stat`` every ``file_poll_interval``), so a rotated
kubeconfig takes effect by itself. Every ``gc_interval`` the remote Workloads of each
connected cluster whose local Workload is gone are deleted with their Job (orphan GC).
The MultiKueue AdmissionChecks' ``Active`` controller runs alongside (see ``admissioncheck``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Callable
from typing import Any, Final

from numaplane.kube.client import KubeClient
from numaplane.kube.config import KubeConfig
from numaplane.kube.errors import ApiError, KubeError
from numaplane.kube.events import EventRecorder
from numaplane.kube.informer import EventHandler, Informer, object_key
from numaplane.kube.workqueue import WorkQueue
from numaplane.kueue import constants as c
from numaplane.kueue.api.conditions import set_condition
from numaplane.kueue.errors import KueueError
from numaplane.kueue.multikueue import clusterstatus as cs
from numaplane.kueue.multikueue import kubeconfig as kc
from numaplane.kueue.runtime.multikueue.admissioncheck import AdmissionCheckController
from numaplane.kueue.runtime.multikueue.gc import collect_orphans
from numaplane.kueue.runtime.multikueue.remote import (
    ESTABLISH_TIMEOUT_S,
    RemoteCluster,
    connect,
    probe,
    stop,
    workload_key_of_job,
)
from numaplane.kueue.runtime.multikueue.sources import (
    FileStamp,
    file_stamp,
    kubeconfig_location,
    load_cluster_config,
)
from numaplane.kueue.runtime.queueworker import serve_queue

log = logging.getLogger(__name__)

Obj = dict[str, Any]
CLUSTERS: Final = "multikueueclusters"
FILE_POLL_INTERVAL_S: Final = 0.2
#: Concurrent MultiKueueCluster reconciles: one slow worker must not hold up the others.
WORKERS: Final = 8


def _noop_change(cluster: str, key: str = "") -> None:
    pass


class RemoteClusters:
    """See the module doc; :meth:`run` works until cancelled. ``is_local_gone`` (set by the
    workload controller) tells the GC whether the local Workload ``ns/name`` is missing or
    being deleted."""

    def __init__(
        self,
        local: KubeClient,
        *,
        namespace: str,
        origin: str = "multikueue",
        clock: Callable[[], float] = time.time,
        gc_interval: float = 60.0,
        on_remote_change: Callable[[str, str], None] = _noop_change,
        on_cluster_change: Callable[[str], None] = _noop_change,
        retry_base: float = cs.RETRY_INCREMENT_S,
        validate_paths: bool = True,
        path_prefix: str = kc.DEFAULT_PATH_PREFIX,
        file_poll_interval: float = FILE_POLL_INTERVAL_S,
        establish_timeout: tuple[float, float] = ESTABLISH_TIMEOUT_S,
        admission_checks: bool = True,
        health_interval: float = 0.0,
        health_timeout: float = 10.0,
        recorder: EventRecorder | None = None,
        remote_queues: Callable[[RemoteCluster], None] | None = None,
    ) -> None:
        self.local = local
        self.namespace = namespace
        self.origin = origin
        self.clock = clock
        self.gc_interval = gc_interval
        self.on_remote_change = on_remote_change
        self.on_cluster_change = on_cluster_change
        self.retry_base = retry_base
        self.validate_paths = validate_paths
        self.path_prefix = path_prefix
        self.file_poll_interval = file_poll_interval
        self.establish_timeout = establish_timeout
        #: Beyond upstream: every ``health_interval`` seconds (0: never) each connected worker
        #: must answer a request within ``health_timeout``, or it counts as dropped (a
        #: partition leaves watches hanging silently; upstream waits for TCP to notice).
        self.health_interval = health_interval
        self.health_timeout = health_timeout
        #: Where the DeprecatedPathUsage warning goes (None: not recorded).
        self.recorder = recorder
        #: Set with manager quota automation only: each connection also watches the worker's
        #: LocalQueues and ClusterQueues, and this gets every new connection to handle them.
        self.remote_queues = remote_queues
        self.is_local_gone: Callable[[str], bool] = lambda key: False
        #: The manager's MultiKueueClusters, Secrets in ``namespace``, AdmissionChecks and
        #: MultiKueueConfigs (shared with the workload controller: one watch each).
        self.clusters = Informer(local, c.API_VERSION, CLUSTERS)
        self.secrets = Informer(local, "v1", "secrets", namespace=namespace)
        self.admission_checks = Informer(local, c.API_VERSION, "admissionchecks")
        self.configs = Informer(local, c.API_VERSION, "multikueueconfigs")
        self.checks: AdmissionCheckController | None = None
        if admission_checks:
            self.checks = AdmissionCheckController(
                local, self.clusters, self.admission_checks, self.configs, clock=clock
            )
        self.queue = WorkQueue()
        self._remotes: dict[str, RemoteCluster] = {}
        self._paths: dict[str, tuple[str, FileStamp]] = {}
        #: The Active condition last written per cluster: this controller is its only writer,
        #: so its memory is fresher than the informer's copy.
        self._written: dict[str, tuple[str, cs.Condition]] = {}
        self._serial = itertools.count(1)
        self.clusters.add_handler(
            EventHandler(self._cluster_added, self._cluster_updated, self._cluster_added)
        )
        self.secrets.add_handler(
            EventHandler(self._secret_changed, lambda old, new: self._secret_changed(new),
                         self._secret_changed)
        )  # fmt: skip

    # ----- what the workload controller reads ----------------------------------------------

    def get(self, name: str) -> RemoteCluster | None:
        """The client of MultiKueueCluster ``name``, or None when there is none."""
        return self._remotes.get(name)

    def names(self) -> list[str]:
        """Every cluster that has a client."""
        return list(self._remotes)

    # ----- events --------------------------------------------------------------------------

    def _cluster_added(self, obj: Obj) -> None:
        self.queue.add(object_key(obj))

    def _cluster_updated(self, old: Obj, new: Obj) -> None:
        # Only spec changes and deletion matter (upstream 0.18): our own status writes would
        # otherwise requeue the cluster after every attempt.
        old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
        if old_meta.get("generation") != new_meta.get("generation") or (
            new_meta.get("deletionTimestamp") and not old_meta.get("deletionTimestamp")
        ):
            self.queue.add(object_key(new))

    def _secret_changed(self, secret: Obj) -> None:
        name = (secret.get("metadata") or {}).get("name")
        for cluster in self.clusters.list():
            if kubeconfig_location(cluster) == (name, kc.LOCATION_SECRET):
                self.queue.add(object_key(cluster))

    def _remote_handlers(self, name: str) -> tuple[EventHandler, EventHandler]:
        def workload(obj: Obj) -> None:
            self.on_remote_change(name, object_key(obj))

        def job(obj: Obj) -> None:
            key = workload_key_of_job(obj)
            if key is not None:
                self.on_remote_change(name, key)

        return (
            EventHandler(workload, lambda old, new: workload(new), workload),
            EventHandler(job, lambda old, new: job(new), job),
        )

    def _dropped(self, rc: RemoteCluster, generation: int, err: KubeError) -> None:
        if rc.generation != generation or self._remotes.get(rc.name) is not rc:
            return  # an older connection's informer, already replaced
        log.info("multikueue cluster %s: connection lost: %s", rc.name, err)
        if rc.mark_disconnected(self.clock()):
            self.on_cluster_change(rc.name)
            self.queue.add(rc.name)

    # ----- reconciling one MultiKueueCluster -----------------------------------------------

    async def reconcile(self, name: str) -> None:
        """Bring cluster ``name``'s client in line with its object (upstream ``Reconcile``)."""
        obj = self.clusters.get(None, name)
        if obj is None or (obj.get("metadata") or {}).get("deletionTimestamp"):
            await self._forget(name)
            return
        try:
            config = self._load_config(name, obj)
        except kc.KubeconfigRejected as err:
            rc = self._remotes.get(name)
            if rc is not None:
                await self._disconnect(rc)
            attempts, at = (rc.failed_attempts, rc.next_attempt) if rc else (0, 0.0)
            await self._write_status(obj, cs.load_failed(err.reason, err.message, attempts, at))
            if err.not_found:
                return  # the Secret's creation requeues it
            raise KueueError(f"multikueue cluster {name}: {err.message}") from None
        rc = self._remotes.get(name)
        if rc is None:
            rc = self._remotes[name] = RemoteCluster(name, self.origin, self.clock())
        changed = config != rc.config
        if not changed and rc.connected:
            await self._write_status(obj, cs.CONNECTED)
            return
        if changed:
            rc.config = config
            rc.failed_attempts, rc.next_attempt = 0, 0.0
        if not rc.connected:
            await rc.stop_watchers()
            wait = rc.next_attempt - self.clock()
            if wait > 0:
                self.queue.add_after(name, wait)
                return
        await self._attempt(rc, config, obj)

    async def _attempt(self, rc: RemoteCluster, config: KubeConfig, obj: Obj) -> None:
        first, cap = self.establish_timeout
        timeout = min(first * 2.0 ** min(rc.failed_attempts, 16), cap)
        generation = next(self._serial)

        def on_error(err: KubeError) -> None:
            self._dropped(rc, generation, err)

        try:
            client, workloads, jobs, tasks, queues = await connect(
                config, self.origin, timeout, on_error, queues=self.remote_queues is not None
            )
        except KubeError as err:
            rc.failed_attempts += 1
            delay = cs.retry_after(rc.failed_attempts, self.retry_base)
            rc.next_attempt = self.clock() + delay
            log.info("multikueue cluster %s: connection failed: %s", rc.name, err)
            await self._disconnect(rc)
            state = cs.connection_failed(str(err), rc.failed_attempts, rc.next_attempt)
            await self._write_status(obj, state)
            self.queue.add_after(rc.name, delay)
            return
        if self._remotes.get(rc.name) is not rc or rc.config != config:
            # Forgotten or re-pointed while connecting: this connection is not wanted.
            await stop(tasks, client)
            return
        await rc.stop_watchers()  # the previous connection, when a rotation replaced it
        rc.adopt(generation, client, workloads, jobs, tasks, queues)
        rc.mark_connected()
        rc.failed_attempts, rc.next_attempt = 0, 0.0
        # Connected before any event is delivered (upstream #12824): handlers added now
        # replay what the lists found.
        on_workload, on_job = self._remote_handlers(rc.name)
        workloads.add_handler(on_workload)
        jobs.add_handler(on_job)
        if self.remote_queues is not None:
            self.remote_queues(rc)
        log.info("multikueue cluster %s: connected to %s", rc.name, config.server)
        self.on_cluster_change(rc.name)
        await self._write_status(obj, cs.CONNECTED)

    async def _disconnect(self, rc: RemoteCluster) -> None:
        # Disconnected before the watchers stop: while they stop (an await) a reconcile must
        # not read a connected cluster without caches, which looks like its copies are gone
        # and requeues the Workloads at once instead of after workerLostTimeout.
        was = rc.mark_disconnected(self.clock())
        await rc.stop_watchers()
        if was:
            self.on_cluster_change(rc.name)

    async def _forget(self, name: str) -> None:
        self._paths.pop(name, None)
        self._written.pop(name, None)
        rc = self._remotes.get(name)
        if rc is not None:
            rc.connected = False  # before it disappears: whoever still holds it sees it gone
            del self._remotes[name]
            await rc.stop_watchers()
            self.on_cluster_change(name)

    def _load_config(self, name: str, obj: Obj) -> KubeConfig:
        location = kubeconfig_location(obj)
        if location is not None and location[1] == kc.LOCATION_PATH:
            self._watch_file(name, location[0])
            if not self.validate_paths and self.recorder is not None:
                about = {**obj, "apiVersion": c.API_VERSION, "kind": "MultiKueueCluster"}
                self.recorder.event(
                    about, "Warning", kc.REASON_DEPRECATED_PATH, kc.MESSAGE_DEPRECATED_PATH
                )
        else:
            self._paths.pop(name, None)
        return load_cluster_config(
            obj,
            lambda secret: self.secrets.get(self.namespace, secret),
            namespace=self.namespace,
            validate_paths=self.validate_paths,
            path_prefix=self.path_prefix,
        )

    def _watch_file(self, name: str, path: str) -> None:
        known = self._paths.get(name)
        if known is None or known[0] != path:
            self._paths[name] = (path, file_stamp(path))

    async def _write_status(self, obj: Obj, state: cs.ConnectionState) -> None:
        name = object_key(obj)
        uid = str((obj.get("metadata") or {}).get("uid") or "")
        wanted = cs.cluster_active_condition(state)
        last = self._written.get(name)
        conditions = list((obj.get("status") or {}).get("conditions") or [])
        if last is not None and last[0] == uid:
            if last[1] == wanted:
                return
        elif not cs.condition_differs(conditions, cs.ACTIVE, wanted):
            return
        fresh = [dict(cond) for cond in conditions]
        generation = (obj.get("metadata") or {}).get("generation")
        set_condition(fresh, cs.ACTIVE, *wanted, self.clock(), generation)
        try:
            await self.local.patch(
                c.API_VERSION, CLUSTERS, name, {"status": {"conditions": fresh}},
                subresource="status", decode=False,
            )  # fmt: skip
        except ApiError as err:
            if err.is_not_found:
                return
            raise
        self._written[name] = (uid, wanted)

    # ----- loops ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Watch, connect and collect until cancelled; every client is closed on the way out."""
        informers = [self.clusters, self.secrets, self.admission_checks, self.configs]
        tasks = [asyncio.create_task(i.run(), name=f"multikueue-{i.resource}") for i in informers]
        try:
            for informer in informers:
                await informer.wait_synced()
            tasks += [
                asyncio.create_task(serve_queue(self.queue, self.reconcile, "multikueue cluster"))
                for _ in range(WORKERS)
            ]
            tasks.append(asyncio.create_task(self._poll_files(), name="multikueue-files"))
            if self.gc_interval > 0:
                tasks.append(asyncio.create_task(self._gc_loop(), name="multikueue-gc"))
            if self.health_interval > 0:
                tasks.append(asyncio.create_task(self._health_loop(), name="multikueue-health"))
            if self.checks is not None:
                tasks.append(asyncio.create_task(self.checks.run(), name="multikueue-checks"))
            await asyncio.gather(*tasks)
        finally:
            self.queue.shutdown()
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            # Every client is closed even if this task is cancelled again meanwhile: a second
            # cancellation must not leave the later clusters' sessions open.
            stopping = asyncio.gather(
                *(rc.stop_watchers() for rc in list(self._remotes.values())),
                return_exceptions=True,
            )
            try:
                await asyncio.shield(stopping)
            except asyncio.CancelledError:
                await stopping
                raise

    async def _poll_files(self) -> None:
        # Upstream watches the files' directories with fsnotify; a stat poll sees the same
        # writes, renames and removals without a platform API.
        while True:
            await asyncio.sleep(self.file_poll_interval)
            for name, (path, stamp) in list(self._paths.items()):
                now = file_stamp(path)
                if now != stamp:
                    self._paths[name] = (path, now)
                    self.queue.add(name)

    async def _gc_loop(self) -> None:
        while True:
            await asyncio.sleep(self.gc_interval)
            for rc in list(self._remotes.values()):
                try:
                    await self.collect(rc)
                except KubeError as err:
                    log.info("multikueue cluster %s: garbage collection: %s", rc.name, err)

    async def _health_loop(self) -> None:
        while True:
            await asyncio.sleep(self.health_interval)
            connected = [rc for rc in self._remotes.values() if rc.connected]
            await asyncio.gather(*(self._check(rc) for rc in connected))

    async def _check(self, rc: RemoteCluster) -> None:
        client, generation = rc.client, rc.generation
        if client is None or not rc.connected:
            return
        try:
            await probe(client, self.origin, self.health_timeout)
        except KubeError as err:
            self._dropped(rc, generation, err)
        except Exception as err:  # the client closed under the probe by a reconnection
            log.debug("multikueue cluster %s: connection check: %s", rc.name, err)

    async def collect(self, rc: RemoteCluster) -> int:
        """Delete ``rc``'s orphans (see :func:`collect_orphans`); how many."""
        return await collect_orphans(rc, self.is_local_gone, self.origin)
