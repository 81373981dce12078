"""The ``Active`` condition of MultiKueue AdmissionChecks (controller
``kueue.x-k8s.io/multikueue``), as upstream's ``ACReconciler``: from the check's MultiKueueConfig
and the ``Active`` condition of each MultiKueueCluster it lists. A check is reconciled when it
changes, when its config is created, deleted or has its cluster list changed, and when one of
those clusters appears, goes or changes its ``Active`` state. The condition is written only when
status, reason or message changed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from numaplane.kube.client import KubeClient
from numaplane.kube.errors import ApiError
from numaplane.kube.informer import EventHandler, Informer, object_key
from numaplane.kube.workqueue import WorkQueue
from numaplane.kueue import constants as c
from numaplane.kueue.api.conditions import find_condition, set_condition
from numaplane.kueue.multikueue import clusterstatus as cs
from numaplane.kueue.runtime.queueworker import serve_queue

log = logging.getLogger(__name__)

Obj = dict[str, Any]


def _is_multikueue(check: Obj) -> bool:
    return (check.get("spec") or {}).get("controllerName") == c.MULTIKUEUE_CONTROLLER


def _active_state(cluster: Obj) -> tuple[Any, ...] | None:
    found = find_condition((cluster.get("status") or {}).get("conditions"), cs.ACTIVE)
    if found is None:
        return None
    return (found.get("status"), found.get("reason"), found.get("message"))


class AdmissionCheckController:
    """See the module doc; the informers are shared with (and run by) the caller."""

    def __init__(
        self,
        local: KubeClient,
        clusters: Informer,
        checks: Informer,
        configs: Informer,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.local = local
        self.clusters = clusters
        self.checks = checks
        self.configs = configs
        self.clock = clock
        self.queue = WorkQueue()
        self._written: dict[str, tuple[str, cs.Condition]] = {}
        checks.add_handler(
            EventHandler(self._check_changed, lambda old, new: self._check_changed(new),
                         self._check_deleted)
        )  # fmt: skip
        configs.add_handler(EventHandler(self._config_changed, self._config_updated,
                                         self._config_changed))  # fmt: skip
        clusters.add_handler(EventHandler(self._cluster_changed, self._cluster_updated,
                                          self._cluster_changed))  # fmt: skip

    # ----- events --------------------------------------------------------------------------

    def _check_changed(self, check: Obj) -> None:
        if _is_multikueue(check):
            self.queue.add(object_key(check))

    def _check_deleted(self, check: Obj) -> None:
        self._written.pop(object_key(check), None)

    def _users_of(self, config: str) -> None:
        for check in self.checks.list():
            if _is_multikueue(check) and cs.config_name(check) == config:
                self.queue.add(object_key(check))

    def _config_changed(self, config: Obj) -> None:
        self._users_of(object_key(config))

    def _config_updated(self, old: Obj, new: Obj) -> None:
        if cs.config_clusters(old) != cs.config_clusters(new):
            self._users_of(object_key(new))

    def _cluster_changed(self, cluster: Obj) -> None:
        name = object_key(cluster)
        for config in self.configs.list():
            if name in cs.config_clusters(config):
                self._users_of(object_key(config))

    def _cluster_updated(self, old: Obj, new: Obj) -> None:
        if _active_state(old) != _active_state(new):
            self._cluster_changed(new)

    # ----- reconciling ---------------------------------------------------------------------

    def wanted(self, check: Obj) -> cs.Condition:
        """The ``Active`` condition ``check`` should carry now."""
        error = cs.parameters_error(check)
        config = None
        if error is None:
            name = str(check["spec"]["parameters"]["name"])
            config = self.configs.get(None, name)
            if config is None:
                error = cs.config_not_found(name)
        states: dict[str, bool | None] = {}
        for cluster_name in cs.config_clusters(config or {}):
            cluster = self.clusters.get(None, cluster_name)
            states[cluster_name] = None if cluster is None else cs.is_cluster_active(cluster)
        return cs.admission_check_active(config, error, states)

    async def reconcile(self, name: str) -> None:
        """Write check ``name``'s ``Active`` condition if it changed."""
        check = self.checks.get(None, name)
        if check is None or not _is_multikueue(check):
            return
        wanted = self.wanted(check)
        meta = check.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        conditions = list((check.get("status") or {}).get("conditions") or [])
        last = self._written.get(name)
        if last is not None and last[0] == uid:
            if last[1] == wanted:
                return
        elif not cs.condition_differs(conditions, cs.ACTIVE, wanted):
            return
        fresh = [dict(cond) for cond in conditions]
        set_condition(fresh, cs.ACTIVE, *wanted, self.clock(), meta.get("generation"))
        try:
            await self.local.patch(
                c.API_VERSION, "admissionchecks", name, {"status": {"conditions": fresh}},
                subresource="status", decode=False,
            )  # fmt: skip
        except ApiError as err:
            if err.is_not_found:
                return
            raise
        self._written[name] = (uid, wanted)

    async def run(self) -> None:
        """Reconcile queued checks until cancelled (the informers must be running)."""
        for informer in (self.checks, self.configs, self.clusters):
            await informer.wait_synced()
        try:
            await serve_queue(self.queue, self.reconcile, "multikueue admission check")
        finally:
            self.queue.shutdown()
