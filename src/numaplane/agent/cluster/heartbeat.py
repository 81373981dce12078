"""``NodeHeartbeat``: a node's presence in a cluster, kept as the kubelet keeps it.

(Over 400 lines: registration, lease, status and NRT share one loop and one node's state.)

- Registration (``registerWithAPIServer``): create the Node; when one of that name exists, take
  it over: its default labels are set again and its status replaced by this node's.
- The node lease (the kubelet's ``nodelease`` controller): Lease ``kube-node-lease/<name>``,
  ``holderIdentity`` the node's name, ``leaseDurationSeconds`` 40, owned by the Node, renewed
  every quarter of its duration (10 s) by an update of the last lease read (re-read on a
  conflict, re-created when gone).
- Node status (``nodeStatusUpdateFrequency`` 10 s, ``nodeStatusReportFrequency`` 5 min):
  computed every update period and after each ``changed()``, and posted (a merge patch of
  ``nodes/<name>/status``) only when it differs from the last one posted, or when the report
  period has passed; a condition keeps its ``lastTransitionTime`` while its status holds.
- The NodeResourceTopology: published once at start, then after ``changed()`` once the node
  has been quiet for ``nrt_quiet`` (1 s) or, on a node that keeps changing, ``nrt_max_delay``
  (10 s) after the first change not yet published, and never twice within ``nrt_interval``
  (0.5 s); not at all when identical to the last one written. The CRD is installed first (once
  per client; lease and status do not wait for it). Why not after every change: a scheduler
  keeps its own replica of the node (what it bound there, in order), so the NRT is a correction
  for what it cannot see, not its source of truth; each write is 10-25 KB through the server's
  CRD validation, and a node admitting a pod every few tens of milliseconds would otherwise
  write one per admission. NFD's topology-updater publishes every 60 s (``--sleep-interval``)
  plus on kubelet state changes; 10 s keeps a zone-estimating scheduler reasonably current.
- A Node deleted while the heartbeat runs (``kubectl delete node``) is registered again: its
  lease, owned by it, goes with it, and the next renewal re-creates the lease (an update may
  create a Lease), which tells.

Many nodes share one process and one ``KubeClient`` (the simulated agent runs a hundred): a
heartbeat is one task that sleeps until its next due time or a ``changed()``, so an idle node
costs one lease update per renewal period and a status comparison per update period, nothing
else. Every request failure (connection lost, server errors) is logged and retried with
exponential backoff (0.2 s doubling up to 7 s, the kubelet's cap); ``run`` ends only when
cancelled or after ``stop()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Final

from numaplane.agent.cluster.nodeobject import (
    DEFAULT_MAX_PODS,
    NodeSystemInfo,
    condition_transitions,
    node_object,
)
from numaplane.agent.cluster.nrt import NRT_API_VERSION, NRT_RESOURCE, nrt_object
from numaplane.agent.cluster.nrtcrd import ensure_nrt_crd
from numaplane.agent.cluster.pacing import Backoff, micro_time, nrt_due
from numaplane.kube import ApiError, KubeClient
from numaplane.node.admission import Node

__all__ = ["LEASE_NAMESPACE", "NodeHeartbeat"]

_log = logging.getLogger(__name__)

LEASE_NAMESPACE: Final = "kube-node-lease"
LEASE_API_VERSION: Final = "coordination.k8s.io/v1"
# The fields of a condition that change on every post without the condition changing.
_TIMES: Final = ("lastHeartbeatTime", "lastTransitionTime")

# One CRD installation per client, shared by every heartbeat using it.
_CRD_TASKS: weakref.WeakKeyDictionary[KubeClient, asyncio.Task[None]] = weakref.WeakKeyDictionary()


def _comparable(obj: Mapping[str, Any]) -> dict[str, Any]:
    # The status without the times every post changes.
    status = dict(obj["status"])
    status["conditions"] = [
        {k: v for k, v in c.items() if k not in _TIMES} for c in status["conditions"]
    ]
    return status


class NodeHeartbeat:
    """Registers one Node, keeps its lease, status and NodeResourceTopology current.

    ``node`` is read under ``lock`` (the agent's) when one is given. ``clock`` gives the wall
    time the objects carry; due times follow the event loop's monotonic clock.
    """

    def __init__(
        self,
        client: KubeClient,
        name: str,
        node: Node,
        lock: threading.RLock | None = None,
        *,
        labels: Mapping[str, str] = MappingProxyType({}),
        annotations: Mapping[str, str] = MappingProxyType({}),
        address: str = "127.0.0.1",
        kubelet_port: int = 0,
        clock: Callable[[], float] = time.time,
        lease_duration_s: int = 40,
        status_update_frequency_s: float = 10.0,
        status_report_frequency_s: float = 300.0,
        nrt_interval_s: float = 0.5,
        nrt_quiet_s: float = 1.0,
        nrt_max_delay_s: float = 10.0,
        publish_nrt: bool = True,
        system: NodeSystemInfo | None = None,
        max_pods: int = DEFAULT_MAX_PODS,
        ephemeral_storage_bytes: int | None = None,
    ) -> None:
        self._client = client
        self.name = name
        self._node = node
        self._lock = lock
        self._labels = dict(labels)
        self._annotations = dict(annotations)
        self._address = address
        self._kubelet_port = kubelet_port
        self._clock = clock
        self._lease_duration = lease_duration_s
        self._renew_interval = lease_duration_s / 4
        self._update_frequency = status_update_frequency_s
        self._report_frequency = status_report_frequency_s
        self._nrt_interval = nrt_interval_s
        self._nrt_quiet = nrt_quiet_s
        self._nrt_max_delay = max(nrt_max_delay_s, nrt_quiet_s)
        # Monotonic times of the first and the last change not yet published (``None``: the
        # pending publication is the one at start or a retry, due at once).
        self._first_change: float | None = None
        self._last_change = 0.0
        self._publish_nrt = publish_nrt
        self._system = system
        self._max_pods = max_pods
        self._ephemeral = ephemeral_storage_bytes
        self._ready = True
        self._not_ready_message = ""
        self.node_uid: str | None = None
        self._lease: dict[str, Any] | None = None
        self._posted: dict[str, Any] | None = None
        self._posted_at = 0.0
        self._nrt_version: str | None = None
        self._nrt_written: dict[str, Any] | None = None
        self._dirty = True  # the first NRT is published at start
        self._status_dirty = False
        self._stopped = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None

    # -- what other threads call ----------------------------------------------------------

    def changed(self) -> None:
        """An admission or a release happened (thread-safe): publish the NRT and recheck the
        status soon."""
        now = self._monotonic()
        if self._first_change is None:
            self._first_change = now
        self._last_change = now
        self._dirty = True
        self._status_dirty = True
        self._wake_up()

    def stop(self) -> None:
        """End ``run`` at its next pause, between requests (thread-safe): no request is cut
        off, so the shared client's connections stay usable and close cleanly."""
        self._stopped = True
        self._wake_up()

    def _wake_up(self) -> None:
        loop, wake = self._loop, self._wake
        if loop is None or wake is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            wake.set()
        else:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nothing to wake
                loop.call_soon_threadsafe(wake.set)

    def set_ready(self, ready: bool, message: str = "") -> None:
        """Report the node Ready, or not Ready with ``message`` (thread-safe)."""
        self._ready = ready
        self._not_ready_message = message
        self.changed()

    # -- registration ---------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        if self._lock is None:
            yield
        else:
            with self._lock:
                yield

    def _desired(self) -> dict[str, Any]:
        with self._locked():
            return node_object(
                self.name,
                self._node,
                now=datetime.fromtimestamp(self._clock(), UTC),
                labels=self._labels,
                annotations=self._annotations,
                address=self._address,
                kubelet_port=self._kubelet_port,
                ready=self._ready,
                not_ready_message=self._not_ready_message or "container runtime is not ready",
                system=self._system,
                max_pods=self._max_pods,
                ephemeral_storage_bytes=self._ephemeral,
            )

    async def register(self) -> None:
        """Create the Node, or take over the one of this name; retried until it succeeds."""
        backoff = Backoff(0.1, 7.0)
        while not self._stopped:
            try:
                await self._register_once()
                return
            except Exception as err:  # any failure is retried, never fatal
                delay = backoff.next()
                _log.warning(
                    "node %s: registration failed (retry in %.1fs): %s", self.name, delay, err
                )
                await asyncio.sleep(delay)

    async def _register_once(self) -> None:
        desired = self._desired()
        try:
            created = await self._client.create("v1", "nodes", desired)
            self.node_uid = created["metadata"]["uid"]
            _log.info("node %s: registered", self.name)
        except ApiError as err:
            if err.code != 409:
                raise
            existing = await self._client.get("v1", "nodes", self.name)
            self.node_uid = existing["metadata"]["uid"]
            # The kubelet's reconcile of an existing Node: its default labels set again.
            meta = desired["metadata"]
            await self._client.patch(
                "v1",
                "nodes",
                self.name,
                {"metadata": {"labels": meta["labels"], "annotations": meta["annotations"]}},
            )
            _log.info("node %s: took over the existing Node", self.name)
        self._posted = None
        await self._post_status(desired)
        # The NRT names its owner's uid (a new Node: the old NRT went with the old one).
        self._dirty = True

    # -- status ---------------------------------------------------------------------------

    async def _post_status(self, desired: dict[str, Any]) -> None:
        status = dict(desired["status"])
        previous = self._posted["status"] if self._posted is not None else None
        status["conditions"] = condition_transitions(
            status["conditions"], previous["conditions"] if previous else None
        )
        patch: dict[str, Any] = dict(status)
        if previous is not None:
            # A merge patch merges maps: resources gone since the last post are set to null.
            for key in ("capacity", "allocatable"):
                gone = {k: None for k in previous[key] if k not in status[key]}
                patch[key] = {**gone, **status[key]}
        await self._client.patch(
            "v1", "nodes", self.name, {"status": patch}, subresource="status", decode=False
        )
        self._posted = {**desired, "status": status}
        self._posted_at = self._monotonic()

    async def sync_status(self, *, force: bool = False) -> bool:
        """Post the node status if it changed, the report period passed, or ``force``;
        whether it posted."""
        desired = self._desired()
        stale = self._monotonic() - self._posted_at >= self._report_frequency
        if (
            not force
            and not stale
            and self._posted is not None
            and _comparable(desired) == _comparable(self._posted)
        ):
            return False
        try:
            await self._post_status(desired)
        except ApiError as err:
            if not err.is_not_found:
                raise
            # The Node was deleted (kubectl delete node): register it again, as at start.
            _log.warning("node %s: the Node is gone; registering again", self.name)
            await self._register_once()
        return True

    async def _check_registered(self) -> None:
        # Before a lease is created: the Node may have been deleted (its lease goes with it,
        # being owned by it), or replaced under the same name (another uid to own the lease).
        try:
            found = await self._client.get("v1", "nodes", self.name)
        except ApiError as err:
            if not err.is_not_found:
                raise
            _log.warning("node %s: the Node is gone; registering again", self.name)
            await self._register_once()
            return
        self.node_uid = found["metadata"]["uid"]

    # -- lease ----------------------------------------------------------------------------

    def _lease_body(self, base: dict[str, Any] | None) -> dict[str, Any]:
        lease: dict[str, Any]
        if base is not None:
            lease = copy.deepcopy(base)
        else:
            lease = {
                "apiVersion": LEASE_API_VERSION,
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": LEASE_NAMESPACE},
            }
        spec: dict[str, Any] = lease.setdefault("spec", {})
        spec["holderIdentity"] = self.name
        spec["leaseDurationSeconds"] = self._lease_duration
        spec["renewTime"] = micro_time(self._clock())
        if self.node_uid:
            lease["metadata"]["ownerReferences"] = [
                {"apiVersion": "v1", "kind": "Node", "name": self.name, "uid": self.node_uid}
            ]
        return lease

    async def renew_lease(self) -> None:
        """Renew (or create) the node's lease once."""
        client = self._client
        if self._lease is None:
            try:
                self._lease = await client.get(
                    LEASE_API_VERSION, "leases", self.name, LEASE_NAMESPACE
                )
            except ApiError as err:
                if not err.is_not_found:
                    raise
                await self._check_registered()
                self._lease = await client.create(
                    LEASE_API_VERSION, "leases", self._lease_body(None), LEASE_NAMESPACE
                )
                return
        before = self._lease["metadata"].get("uid")
        try:
            self._lease = await client.update(
                LEASE_API_VERSION, "leases", self._lease_body(self._lease), LEASE_NAMESPACE
            )
        except ApiError as err:
            if err.is_conflict or err.is_not_found:
                self._lease = None  # read (or create) it again, at once
                await self.renew_lease()
                return
            raise
        if self._lease["metadata"].get("uid") != before:
            # Leases may be created by an update: this one had been deleted, with the Node
            # that owned it (kubectl delete node) if that is gone too.
            await self._check_registered()
            self._lease = await client.update(
                LEASE_API_VERSION, "leases", self._lease_body(self._lease), LEASE_NAMESPACE
            )

    # -- NodeResourceTopology -------------------------------------------------------------

    async def publish_nrt(self) -> None:
        """Write the NodeResourceTopology now (create, or replace the one there), the CRD
        installed first if the cluster lacks it."""
        await self._install_crd()
        with self._locked():
            body = nrt_object(self.name, self._node, owner_uid=self.node_uid)
        if self._nrt_version is not None and body == self._nrt_written:
            return  # nothing changed since the last write (a refused pod, say)
        await self._write_nrt(body)
        self._nrt_written = body

    async def _write_nrt(self, body: dict[str, Any]) -> None:
        # ``body`` is left as given (it is what the next publication compares with).
        client = self._client

        def at(version: str) -> dict[str, Any]:
            return {**body, "metadata": {**body["metadata"], "resourceVersion": version}}

        if self._nrt_version is not None:
            try:
                written = await client.update(NRT_API_VERSION, NRT_RESOURCE, at(self._nrt_version))
                self._nrt_version = written["metadata"]["resourceVersion"]
                return
            except ApiError as err:
                if not (err.is_conflict or err.is_not_found):
                    raise
                self._nrt_version = None
        try:
            written = await client.create(NRT_API_VERSION, NRT_RESOURCE, body)
        except ApiError as err:
            if err.code != 409:
                raise
            there = await client.get(NRT_API_VERSION, NRT_RESOURCE, self.name)
            version = there["metadata"]["resourceVersion"]
            written = await client.update(NRT_API_VERSION, NRT_RESOURCE, at(version))
        self._nrt_version = written["metadata"]["resourceVersion"]

    # -- the loop -------------------------------------------------------------------------

    def _monotonic(self) -> float:
        loop = self._loop
        return loop.time() if loop is not None else time.monotonic()

    async def run(self) -> None:
        """Register, then keep lease, status and NRT current until cancelled or ``stop``."""
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        if self.node_uid is None and not self._stopped:
            await self.register()
        lease_backoff, status_backoff, nrt_backoff = Backoff(), Backoff(), Backoff()
        now = self._monotonic()
        next_lease, next_status, next_nrt = now, now + self._update_frequency, now
        next_recheck = now  # the status is rechecked at most every ``nrt_interval`` on changes
        while not self._stopped:
            now = self._monotonic()
            if now >= next_lease:
                next_lease = now + await self._attempt(
                    "renew the lease", self.renew_lease, lease_backoff, self._renew_interval
                )
            if self._status_dirty and now >= next_recheck:
                # An admission may change allocatable (devices), set_ready the conditions.
                self._status_dirty = False
                next_recheck = now + self._nrt_interval
                next_status = now
            if not self._publish_nrt:
                self._dirty = False
                self._first_change = None
            elif self._dirty and now >= self._nrt_due(next_nrt):
                self._dirty = False
                self._first_change = None
                delay = await self._attempt("publish the NRT", self.publish_nrt, nrt_backoff, 0)
                if delay:
                    self._dirty = True  # failed: publish again after the backoff
                next_nrt = now + max(delay, self._nrt_interval)
            if now >= next_status:
                next_status = now + await self._attempt(
                    "post the node status", self.sync_status, status_backoff, self._update_frequency
                )
            # Cleared before the flags are read: a ``changed()`` after this line wakes the wait.
            self._wake.clear()
            due = min(next_lease, next_status)
            if self._dirty:
                due = min(due, self._nrt_due(next_nrt))
            if self._status_dirty:
                due = min(due, next_recheck)
            timeout = due - self._monotonic()
            if timeout > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout)

    def _nrt_due(self, next_nrt: float) -> float:
        return nrt_due(
            next_nrt, self._first_change, self._last_change, self._nrt_quiet, self._nrt_max_delay
        )

    async def _attempt(
        self,
        what: str,
        action: Callable[[], Any],
        backoff: Backoff,
        period: float,
    ) -> float:
        # Run ``action``; the delay before the next run: ``period`` after a success, the
        # backoff's next delay after a failure (logged, never raised).
        try:
            await action()
        except Exception as err:  # a failed request is retried, never fatal
            delay = backoff.next()
            _log.warning("node %s: could not %s (retry in %.1fs): %s", self.name, what, delay, err)
            return delay
        backoff.reset()
        return period

    async def _install_crd(self) -> None:
        # One installation per client, awaited by every heartbeat sharing it; a failed one is
        # tried again by the next caller. Only the NRT waits for it: a cluster that refuses
        # the CRD still gets the Node, its lease and status.
        task = _CRD_TASKS.get(self._client)
        if task is None or (task.done() and (task.cancelled() or task.exception() is not None)):
            task = asyncio.ensure_future(ensure_nrt_crd(self._client))
            _CRD_TASKS[self._client] = task
        await asyncio.shield(task)
