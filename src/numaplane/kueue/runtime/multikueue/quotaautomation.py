"""Manager quota automation's I/O (upstream's MultiKueue ``cqReconciler``; runs only with
feature gate ``MultiKueueManagerQuotaAutomation``): the decision is
:func:`numaplane.kueue.multikueue.quota.automate_quota`; this controller feeds it from the
manager's informers and from each connected worker's LocalQueue and ClusterQueue informers
(opened by the connections only while this controller exists), then writes the ClusterQueue's
flavor quotas and its ``MultiKueueManagerQuotaAutomation`` condition.

A manager ClusterQueue is recomputed, ``events_batch_period`` after the event as upstream
batches them, when its admission checks or resource groups change, when a manager LocalQueue
pointing to it is created or deleted, when a MultiKueue check, its config (created, deleted,
spec changed) or one of the config's clusters (connected, disconnected) changes, and when a
worker's LocalQueue is created or deleted or a worker's ClusterQueue spec changes.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from numaplane.kube.client import KubeClient
from numaplane.kube.errors import ApiError
from numaplane.kube.informer import EventHandler, Informer, object_key
from numaplane.kube.workqueue import WorkQueue
from numaplane.kueue import constants as c
from numaplane.kueue.api.conditions import find_condition, remove_condition, set_condition
from numaplane.kueue.multikueue import clusterstatus as cs
from numaplane.kueue.multikueue import quota
from numaplane.kueue.runtime.multikueue.clients import RemoteClusters
from numaplane.kueue.runtime.multikueue.remote import RemoteCluster
from numaplane.kueue.runtime.queueworker import serve_queue

log = logging.getLogger(__name__)

Obj = dict[str, Any]
CLUSTER_QUEUES = "clusterqueues"


def _spec(obj: Obj) -> Any:
    return obj.get("spec") or {}


def _generation(obj: Obj) -> Any:
    return (obj.get("metadata") or {}).get("generation")


class QuotaAutomation:
    """See the module doc; :meth:`run` works until cancelled once the informers are running.
    ``remotes`` must hand each new connection to :meth:`watch_worker` (its ``remote_queues``)
    and report every connection change to :meth:`on_cluster_change`."""

    def __init__(
        self,
        local: KubeClient,
        *,
        cluster_queues: Informer,
        local_queues: Informer,
        checks: Informer,
        remotes: RemoteClusters,
        clock: Callable[[], float] = time.time,
        events_batch_period: float = 1.0,
    ) -> None:
        self.local = local
        self.cluster_queues = cluster_queues
        self.local_queues = local_queues
        self.checks = checks
        self.remotes = remotes
        #: The MultiKueueConfigs, one watch shared with the connections.
        self.configs = remotes.configs
        self.clock = clock
        self.batch = events_batch_period
        self.queue = WorkQueue()
        cluster_queues.add_handler(
            EventHandler(on_add=self._enqueue_obj, on_update=self._cluster_queue_updated)
        )
        local_queues.add_handler(
            EventHandler(on_add=self._local_queue, on_delete=self._local_queue)
        )
        checks.add_handler(EventHandler(self._check, self._check_updated, self._check))
        self.configs.add_handler(EventHandler(self._config, self._config_updated, self._config))

    # ----- events --------------------------------------------------------------------------

    def _enqueue(self, name: str) -> None:
        self.queue.add_after(name, self.batch)

    def _enqueue_obj(self, obj: Obj) -> None:
        self._enqueue(object_key(obj))

    def _cluster_queue_updated(self, old: Obj, new: Obj) -> None:
        # Only what the decision reads of the ClusterQueue itself (our status writes and
        # Kueue's usage updates would otherwise requeue it for nothing).
        if quota.check_names(old) != quota.check_names(new) or _spec(old).get(
            "resourceGroups"
        ) != _spec(new).get("resourceGroups"):
            self._enqueue_obj(new)

    def _local_queue(self, lq: Obj) -> None:
        # A LocalQueue's clusterQueue is immutable: creation and deletion are what count.
        target = _spec(lq).get("clusterQueue")
        if target:
            self._enqueue(str(target))

    def _users_of_check(self, check: str) -> None:
        for cq in self.cluster_queues.list():
            if check in quota.check_names(cq):
                self._enqueue_obj(cq)

    def _check(self, check: Obj) -> None:
        self._users_of_check(object_key(check))

    def _check_updated(self, old: Obj, new: Obj) -> None:
        if _generation(old) != _generation(new):
            self._check(new)

    def _users_of_config(self, config: str) -> None:
        for check in self.checks.list():
            if cs.config_name(check) == config:
                self._users_of_check(object_key(check))

    def _config(self, config: Obj) -> None:
        self._users_of_config(object_key(config))

    def _config_updated(self, old: Obj, new: Obj) -> None:
        if _generation(old) != _generation(new) or _spec(old) != _spec(new):
            self._config(new)

    def on_cluster_change(self, cluster: str) -> None:
        """Worker ``cluster`` connected, disconnected or went: recompute its users."""
        for config in self.configs.list():
            if cluster in cs.config_clusters(config):
                self._config(config)

    def watch_worker(self, rc: RemoteCluster) -> None:
        """Handle the LocalQueue and ClusterQueue events of ``rc``'s new connection (its
        lists are replayed as additions)."""
        name = rc.name

        def changed(_: Obj) -> None:
            self.on_cluster_change(name)

        def cq_updated(old: Obj, new: Obj) -> None:
            if _spec(old) != _spec(new):
                self.on_cluster_change(name)

        if rc.local_queues is not None:
            rc.local_queues.add_handler(EventHandler(on_add=changed, on_delete=changed))
        if rc.cluster_queues is not None:
            rc.cluster_queues.add_handler(EventHandler(changed, cq_updated, changed))

    # ----- reconciling ---------------------------------------------------------------------

    def _workers(self, config: Obj | None) -> dict[str, quota.WorkerQueues]:
        found: dict[str, quota.WorkerQueues] = {}
        if config is None:
            return found
        for name in cs.config_clusters(config):
            rc = self.remotes.get(name)
            if rc is None or not rc.connected:
                continue  # upstream skips a worker without a client or still connecting
            lqs, cqs = rc.local_queues, rc.cluster_queues
            if lqs is not None and cqs is not None:
                found[name] = quota.WorkerQueues(lqs.list(), cqs.list())
        return found

    def decide(self, cq: Obj) -> quota.QuotaDecision:
        """The decision for manager ClusterQueue ``cq`` from what the informers hold now."""
        check = quota.multikueue_check(cq, sorted(self.checks.list(), key=_name))
        config_name = None if check is None else cs.config_name(check)
        config = None if config_name is None else self.configs.get(None, config_name)
        return quota.automate_quota(
            cq, check, config, self.local_queues.list(), self._workers(config)
        )

    async def reconcile(self, name: str) -> None:
        """Bring ClusterQueue ``name``'s quotas and condition in line with the decision."""
        cq = self.cluster_queues.get(None, name)
        if cq is None:
            return
        decision = self.decide(cq)
        if decision.error is not None:
            log.info("multikueue quota automation %s: %s", name, decision.error)
            return
        try:
            if decision.resources is not None:
                body = copy.deepcopy(cq)
                flavor = body["spec"]["resourceGroups"][0]["flavors"][0]
                flavor["resources"] = [dict(r) for r in decision.resources]
                cq = await self.local.update(c.API_VERSION, CLUSTER_QUEUES, body)
            await self._write_condition(cq, decision.condition)
        except ApiError as err:
            if err.is_not_found:
                return
            raise  # a conflict: retried (rate-limited) on the informer's newer copy

    async def _write_condition(self, cq: Obj, wanted: quota.Condition | None) -> None:
        conditions = [dict(x) for x in (cq.get("status") or {}).get("conditions") or []]
        if wanted is None:
            if not remove_condition(conditions, quota.CONDITION):
                return
        else:
            found = find_condition(conditions, quota.CONDITION)
            have = None if found is None else tuple(found.get(k) for k in _STATE)
            if have == wanted:
                return  # upstream compares status, reason and message only
            set_condition(conditions, quota.CONDITION, *wanted, self.clock(), _generation(cq))
        body = {**cq, "status": {**(cq.get("status") or {}), "conditions": conditions}}
        # An update, not a patch: Kueue writes this status too, and a conflict must not let a
        # stale list of conditions overwrite its newer Active condition.
        await self.local.update(
            c.API_VERSION, CLUSTER_QUEUES, body, subresource="status", decode=False
        )

    async def run(self) -> None:
        """Reconcile queued ClusterQueues until cancelled."""
        for informer in (self.cluster_queues, self.local_queues, self.checks, self.configs):
            await informer.wait_synced()
        try:
            await serve_queue(self.queue, self.reconcile, "multikueue quota automation")
        finally:
            self.queue.shutdown()


_STATE = ("status", "reason", "message")


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")
