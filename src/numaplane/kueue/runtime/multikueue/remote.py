"""One worker cluster as the manager sees it (upstream's ``remoteClient``): a client, two
informers on the worker's Workloads and batch/v1 Jobs that carry the manager's origin label
(with manager quota automation, two more on all its LocalQueues and ClusterQueues), and the
connection state the workload reconciler reads (``connected``, ``lost_since``).

:func:`connect` opens both informers and returns only once both listed (or raises the first
list/watch failure, or times out); the caller marks the cluster connected and only then lets
events through (upstream's fix #12824: an event from a just-reconnected worker must find it
connected). :func:`remove_remote_objects` is ``RemoveRemoteObjects``/``DeleteRemoteObjectIfOwned``.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from collections.abc import Callable
from typing import Any, Final

from numaplane.kube.client import KubeClient
from numaplane.kube.config import KubeConfig
from numaplane.kube.errors import ApiError, KubeConnectionError, KubeError
from numaplane.kube.informer import Informer
from numaplane.kueue import constants as c

log = logging.getLogger(__name__)

Obj = dict[str, Any]
JOBS_API: Final = "batch/v1"
#: How long a connection may take to list both resources before it counts as failed
#: (upstream's watch-establish timeout: 1m doubling per failed attempt up to 10m).
ESTABLISH_TIMEOUT_S: Final = (60.0, 600.0)


class EstablishTimeoutError(KubeError):
    """The worker did not answer the first lists in time."""


class RemoteCluster:
    """A worker cluster's client and connection state. ``client``, ``workloads`` and ``jobs``
    change on every (re)connection: read them again after each ``await``."""

    def __init__(self, name: str, origin: str, now: float) -> None:
        self.name = name
        self.origin = origin
        #: A client exists and both watches are open.
        self.connected = False
        #: When the connection first dropped (creation time for one never connected); None
        #: while connected.
        self.lost_since: float | None = now
        self.client: KubeClient | None = None
        #: The worker's Workloads with our origin label.
        self.workloads: Informer | None = None
        #: The worker's batch/v1 Jobs with our origin label.
        self.jobs: Informer | None = None
        #: Only with manager quota automation: all the worker's LocalQueues and ClusterQueues.
        self.local_queues: Informer | None = None
        self.cluster_queues: Informer | None = None
        #: The kubeconfig the current (or last tried) connection uses.
        self.config: KubeConfig | None = None
        #: Failed connection attempts since the last success or config change.
        self.failed_attempts = 0
        #: When the next attempt may start (seconds since the epoch; 0: now).
        self.next_attempt = 0.0
        self._tasks: list[asyncio.Task[None]] = []
        #: Which connection is current (0: none): a late error of an older one is ignored.
        self.generation = 0

    def mark_connected(self) -> None:
        """All watches are open: connected, the loss forgotten."""
        self.connected = True
        self.lost_since = None

    def mark_disconnected(self, now: float) -> bool:
        """Disconnected, the first drop of a streak recorded; whether it was connected."""
        was = self.connected
        self.connected = False
        if self.lost_since is None:
            self.lost_since = now
        return was

    def adopt(
        self,
        generation: int,
        client: KubeClient,
        workloads: Informer,
        jobs: Informer,
        tasks: list[asyncio.Task[None]],
        queues: tuple[Informer, Informer] | None = None,
    ) -> None:
        """Make a freshly made connection (its informers running as ``tasks``) current."""
        self.generation = generation
        self.client, self.workloads, self.jobs = client, workloads, jobs
        self.local_queues, self.cluster_queues = queues or (None, None)
        self._tasks = tasks

    async def stop_watchers(self) -> None:
        """Stop the informers and close the client (the connection state is left as is)."""
        self.generation = 0
        tasks, self._tasks = self._tasks, []
        client = self.client
        self.client = self.workloads = self.jobs = None
        self.local_queues = self.cluster_queues = None
        await stop(tasks, client)


async def stop(tasks: list[asyncio.Task[None]], client: KubeClient | None) -> None:
    """Cancel ``tasks``, wait for them, close ``client``."""
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
    if client is not None:
        with contextlib.suppress(Exception):
            await client.close()


def selector(origin: str) -> str:
    """The label selector of what a manager with ``origin`` created on a worker."""
    return f"{c.MULTIKUEUE_ORIGIN_LABEL}={origin}"


async def connect(
    config: KubeConfig,
    origin: str,
    timeout: float,
    on_error: Callable[[KubeError], None],
    *,
    queues: bool = False,
) -> tuple[
    KubeClient, Informer, Informer, list[asyncio.Task[None]], tuple[Informer, Informer] | None
]:
    """A client to the worker and its two informers, both listed; raises the first failure
    (a :class:`KubeError`; :class:`EstablishTimeoutError` after ``timeout`` seconds). Failures after
    the lists go to ``on_error``. With ``queues`` (manager quota automation), two more
    informers on all the worker's LocalQueues and ClusterQueues, listed too."""
    client = KubeClient(config)  # KubeconfigError when its certificate is unusable
    failed: asyncio.Future[KubeError] = asyncio.get_running_loop().create_future()
    established = False

    def errored(err: KubeError) -> None:
        if not established:
            if not failed.done():
                failed.set_result(err)
            return
        on_error(err)

    label = selector(origin)
    workloads = Informer(client, c.API_VERSION, "workloads", label_selector=label, on_error=errored)
    jobs = Informer(client, JOBS_API, "jobs", label_selector=label, on_error=errored)
    informers = [workloads, jobs]
    if queues:
        informers += [
            Informer(client, c.API_VERSION, resource, on_error=errored)
            for resource in ("localqueues", "clusterqueues")
        ]
    tasks = [
        asyncio.create_task(i.run(), name=f"multikueue-{config.server}-{i.resource}")
        for i in informers
    ]

    async def all_synced() -> None:
        for informer in informers:
            await informer.wait_synced()

    synced = asyncio.ensure_future(all_synced())
    waited: set[asyncio.Future[Any]] = {synced, failed}
    try:
        done, _ = await asyncio.wait(waited, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        synced.cancel()
        await stop(tasks, client)
        raise
    if synced not in done:
        synced.cancel()
        await stop(tasks, client)
        if failed.done():
            raise failed.result()
        raise EstablishTimeoutError(f"{config.server}: watch establishment timed out")
    established = True
    return client, workloads, jobs, tasks, (informers[2], informers[3]) if queues else None


async def probe(client: KubeClient, origin: str, timeout: float) -> None:
    """One cheap request to the worker (a one-item list of our Workloads); raises a
    :class:`KubeError` when it fails or gets no answer in ``timeout`` seconds (a partitioned
    worker leaves the watches hanging without an error)."""
    try:
        async with asyncio.timeout(timeout):
            await client.list(c.API_VERSION, "workloads", label_selector=selector(origin), limit=1)
    except TimeoutError:
        raise KubeConnectionError(
            f"{client.config.server}: no answer to the connection check in {timeout:g}s"
        ) from None


def workload_key_of_job(job: Obj) -> str | None:
    """``ns/name`` of the Workload a remote Job was made for (its prebuilt-workload label, or
    the annotation used when the name is too long for a label)."""
    meta = job.get("metadata") or {}
    name = (meta.get("labels") or {}).get(c.PREBUILT_WORKLOAD_LABEL) or (
        meta.get("annotations") or {}
    ).get(c.PREBUILT_WORKLOAD_LABEL)
    if not name:
        return None
    return f"{meta.get('namespace') or ''}/{name}"


def _ignore_not_found(err: ApiError) -> None:
    if not err.is_not_found:
        raise err


async def remove_remote_objects(
    client: KubeClient, namespace: str, workload: str, job: str | None, origin: str
) -> None:
    """Delete remote Job ``job`` (only if it carries our origin label: a foreign Job of the
    same name is never touched; background propagation, so its pods go too), then take
    Kueue's ``resource-in-use`` finalizer off remote Workload ``workload`` and delete it.
    Missing objects are skipped; other failures raise (the caller retries)."""
    if job:
        try:
            remote_job = await client.get(JOBS_API, "jobs", job, namespace)
        except ApiError as err:
            _ignore_not_found(err)
        else:
            labels = (remote_job.get("metadata") or {}).get("labels") or {}
            if labels.get(c.MULTIKUEUE_ORIGIN_LABEL) == origin:
                try:
                    await client.delete(
                        JOBS_API, "jobs", job, namespace, propagation_policy="Background"
                    )
                except ApiError as err:
                    _ignore_not_found(err)
    try:
        remote = await client.get(c.API_VERSION, "workloads", workload, namespace)
    except ApiError as err:
        _ignore_not_found(err)
        return
    finalizers = (remote.get("metadata") or {}).get("finalizers") or []
    if c.RESOURCE_IN_USE_FINALIZER in finalizers:
        body = copy.deepcopy(remote)
        body["metadata"]["finalizers"] = [f for f in finalizers if f != c.RESOURCE_IN_USE_FINALIZER]
        try:
            await client.update(c.API_VERSION, "workloads", body, namespace, decode=False)
        except ApiError as err:
            _ignore_not_found(err)
            return
    try:
        await client.delete(c.API_VERSION, "workloads", workload, namespace)
    except ApiError as err:
        _ignore_not_found(err)
