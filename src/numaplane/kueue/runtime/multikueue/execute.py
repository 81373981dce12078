"""The writes the pure MultiKueue reconciler asks for, made through the standard API: local
status writes with their resourceVersion (a conflict fails the pass, which is retried from a
fresh view), remote creates, updates and deletes, events and counters (upstream's
``wlReconciler`` helpers: ``RemoveRemoteObjects``, ``syncJob``, ``updateACS``...).

SPEC §3.14, an intentional divergence from upstream: when the MultiKueue check goes ``Retry``
because the admitting worker was lost, upstream leaves the manager's Job with the last mirrored
``status.active`` and so its quota reserved forever (nothing mirrors from an unreachable
worker). Here the lost worker counts as proof that nothing runs: the local Job's mirrored
active/ready/terminating counters are cleared after the check's write (a merge patch of the
status subresource: Kueue's job reconciler suspends the Job at the same moment, and a write with
the cached resourceVersion would lose that race), so the job reconciler sees the stopped Job
inactive and releases the quota (as upstream PR #15682 converges to). The pure reconciler asks
for the same (``stop_local_job``) with the cached resourceVersion; here the clear is kept up
until the Workload's quota is released, because Kueue's own stop of the Job writes the Job's
status from its cache (clearing ``startTime``) and can put the old counters back.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Mapping
from typing import Any, Final, Protocol

from numaplane.kube.client import KubeClient
from numaplane.kube.errors import ApiError
from numaplane.kube.events import EventRecorder
from numaplane.kueue import constants as c
from numaplane.kueue.errors import KueueError
from numaplane.kueue.multikueue import (
    Action,
    CountMetric,
    CreateRemoteJob,
    CreateRemoteWorkload,
    PatchRemoteWorkloadStatus,
    RecordEvent,
    RemoveRemoteObjects,
    UpdateLocalJobStatus,
    UpdateLocalWorkloadStatus,
    UpdateRemoteWorkload,
)
from numaplane.kueue.multikueue import constants as mkc
from numaplane.kueue.runtime.multikueue.remote import remove_remote_objects

log = logging.getLogger(__name__)

Obj = dict[str, Any]
JOBS: Final = ("batch/v1", "jobs")
WORKLOADS: Final = (c.API_VERSION, "workloads")
#: The Job status counters that say pods run (cleared after a lost worker, see the module doc).
ACTIVE_COUNTERS: Final = ("active", "ready", "terminating")


class ClientSource(Protocol):
    """The client of a worker cluster by name (None: no connected client)."""

    def __call__(self, cluster: str) -> KubeClient | None: ...


def _ns(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "")


def _check_state(workload: Mapping[str, Any] | None, check: str) -> tuple[str, str]:
    for state in ((workload or {}).get("status") or {}).get("admissionChecks") or ():
        if state.get("name") == check:
            return str(state.get("state") or ""), str(state.get("message") or "")
    return "", ""


def lost_worker_retry(
    before: Mapping[str, Any] | None, after: Mapping[str, Any], check: str
) -> bool:
    """Whether writing ``after`` turns the MultiKueue check ``check`` to Retry because the
    admitting worker was lost (SPEC §3.4 R6a, after ``workerLostTimeout``)."""
    state, message = _check_state(after, check)
    was, _ = _check_state(before, check)
    return (
        state == c.CHECK_RETRY
        and was != c.CHECK_RETRY
        and message.startswith(mkc.MSG_ADMITTING_REMOTE_LOST)
    )


def has_active_counters(job: Mapping[str, Any]) -> bool:
    """Whether ``job``'s status says some pod is active, ready or terminating."""
    status = job.get("status") or {}
    return any(status.get(name) for name in ACTIVE_COUNTERS)


def holds_quota(workload: Mapping[str, Any] | None) -> bool:
    """Whether ``workload`` (None: gone) still has ``QuotaReserved=True``."""
    for cond in ((workload or {}).get("status") or {}).get("conditions") or ():
        if cond.get("type") == c.QUOTA_RESERVED:
            return bool(cond.get("status") == "True")
    return False


def object_key(obj: Mapping[str, Any]) -> str:
    """``namespace/name``."""
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


#: The actions made on a worker cluster.
RemoteAction = (
    CreateRemoteWorkload
    | CreateRemoteJob
    | UpdateRemoteWorkload
    | PatchRemoteWorkloadStatus
    | RemoveRemoteObjects
)

#: The merge patch that clears them (null deletes a field).
CLEAR_ACTIVE: Final = {"status": dict.fromkeys(ACTIVE_COUNTERS)}


class Executor:
    """Makes one reconcile pass's actions in order, except that consecutive remote actions on
    distinct clusters go at once; the first failure raises (the caller retries the key with
    backoff)."""

    def __init__(
        self,
        local: KubeClient,
        remote: ClientSource,
        recorder: EventRecorder,
        *,
        origin: str,
    ) -> None:
        self.local = local
        self.remote = remote
        self.recorder = recorder
        self.origin = origin
        #: ``(metric name, labels)`` → count (upstream's Prometheus counters).
        self.counters: Counter[tuple[str, tuple[tuple[str, str], ...]]] = Counter()
        #: Every remote Job created, by ``cluster`` (for tests and the benchmark).
        self.jobs_created: Counter[str] = Counter()
        #: Local Jobs (``namespace/name``) whose mirrored pod counters are kept cleared until
        #: their Workload (the value) no longer holds quota.
        self.to_clear: dict[str, str] = {}

    def count(self, name: str, **labels: str) -> int:
        """The counter ``name`` summed over the series whose labels include ``labels``."""
        return sum(
            n
            for (metric, series), n in self.counters.items()
            if metric == name and labels.items() <= dict(series).items()
        )

    def _client(self, cluster: str) -> KubeClient:
        client = self.remote(cluster)
        if client is None:
            raise KueueError(f"{mkc.ERR_NO_REMOTE_CLIENT} {cluster!r}")
        return client

    async def run(
        self,
        actions: list[Action],
        *,
        check: str,
        local_workload: Obj | None,
        job_key: str | None,
        local_job: Obj | None,
    ) -> None:
        """Make ``actions``; ``job_key`` names the manager's Job and ``local_job`` is its
        cached copy (for the lost-worker divergence of the module doc)."""
        if job_key is not None and job_key in self.to_clear:
            if not holds_quota(local_workload):
                del self.to_clear[job_key]
            elif local_job is None or has_active_counters(local_job):
                await self._clear(job_key)
        pending: list[RemoteAction] = []
        for action in actions:
            if isinstance(action, RemoteAction):
                if any(other.cluster == action.cluster for other in pending):
                    await self._remote_all(pending)
                    pending = []
                pending.append(action)
                continue
            # A local action (or an event, a counter) follows what came before it: the remote
            # writes it may report on are made first, and a failed one stops it.
            await self._remote_all(pending)
            pending = []
            if isinstance(action, UpdateLocalWorkloadStatus):
                await self._write_status(self.local, WORKLOADS, action.obj)
                if job_key is not None and lost_worker_retry(local_workload, action.obj, check):
                    log.info("multikueue: %s lost its worker: clearing %s", check, job_key)
                    self.to_clear[job_key] = object_key(action.obj)
                    await self._clear(job_key)
            elif isinstance(action, UpdateLocalJobStatus):
                await self._write_status(self.local, JOBS, action.obj)
            elif isinstance(action, RecordEvent):
                self.recorder.event(action.obj, action.type, action.reason, action.message)
            elif isinstance(action, CountMetric):
                self.counters[(action.name, action.labels)] += 1
        await self._remote_all(pending)

    async def _remote_all(self, actions: list[RemoteAction]) -> None:
        """Make remote actions of distinct clusters at once: each waits on its own worker's
        round trip, and a pass that copies a Workload to N workers (or removes N losing copies)
        would otherwise take N round trips. Every one is let finish; the first failure (in
        action order) is raised, and the retried pass reads what did land."""
        if not actions:
            return
        if len(actions) == 1:
            await self._remote(actions[0])
            return
        results = await asyncio.gather(
            *(self._remote(action) for action in actions), return_exceptions=True
        )
        for result in results:
            if isinstance(result, BaseException):
                raise result

    async def _remote(self, action: RemoteAction) -> None:
        client = self._client(action.cluster)
        if isinstance(action, CreateRemoteWorkload):
            await self._create(client, WORKLOADS, action.obj)
        elif isinstance(action, CreateRemoteJob):
            await self._create(client, JOBS, action.obj)
            self.jobs_created[action.cluster] += 1
        elif isinstance(action, UpdateRemoteWorkload):
            await client.update(*WORKLOADS, action.obj, _ns(action.obj), decode=False)
        elif isinstance(action, PatchRemoteWorkloadStatus):
            await self._write_status(client, WORKLOADS, action.obj)
        else:
            await remove_remote_objects(
                client, action.namespace, action.workload, action.job, self.origin
            )

    async def _clear(self, job_key: str) -> None:
        namespace, _, name = job_key.partition("/")
        try:
            await self.local.patch(
                *JOBS, name, CLEAR_ACTIVE, namespace, subresource="status", decode=False
            )
        except ApiError as err:
            if not err.is_not_found:
                raise

    async def _write_status(self, client: KubeClient, what: tuple[str, str], obj: Obj) -> None:
        await client.update(*what, obj, _ns(obj), subresource="status", decode=False)

    async def _create(self, client: KubeClient, what: tuple[str, str], obj: Obj) -> None:
        body = dict(obj)
        meta = dict(body.get("metadata") or {})
        for field in ("resourceVersion", "uid", "creationTimestamp"):
            meta.pop(field, None)
        body["metadata"] = meta
        try:
            await client.create(*what, body, _ns(body), decode=False)
        except ApiError as err:
            # Already there (a create whose answer was lost, or a cache behind): the next pass
            # reads it from the informer.
            if not err.is_conflict:
                raise
