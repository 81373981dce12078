"""ClusterQueue and LocalQueue status as upstream's ``clusterqueue_controller`` and
``localqueue_controller`` write it: usage from the quota cache, pending counts from the queues,
and the ``Active`` condition."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from numaplane.api.selectors import SelectorError, label_selector_from_dict
from numaplane.kueue.api.conditions import set_condition
from numaplane.kueue.api.model import STOP_NONE
from numaplane.kueue.engine.state import CLUSTER_QUEUE, EngineState, Obj, split_key

ACTIVE: Final = "Active"
# localqueue_controller.go's reasons and messages.
LQ_READY_MESSAGE: Final = "Can submit new workloads to localQueue"
LQ_STOPPED_REASON: Final = "Stopped"
LQ_STOPPED_MESSAGE: Final = "LocalQueue is stopped"
LQ_NO_CQ_REASON: Final = "ClusterQueueDoesNotExist"
LQ_CQ_INACTIVE_REASON: Final = "ClusterQueueIsInactive"
LQ_CQ_INACTIVE_MESSAGE: Final = "Can't submit new workloads to clusterQueue"


def namespace_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """Whether a ClusterQueue's ``namespaceSelector`` selects a namespace with ``labels``
    (``None`` selects none, ``{}`` all; an unusable selector none)."""
    try:
        return label_selector_from_dict(selector).matches(labels)
    except SelectorError:
        return False


def _generation(raw: Mapping[str, Any]) -> int | None:
    value = (raw.get("metadata") or {}).get("generation")
    return int(value) if value is not None else None


def cluster_queue_status(state: EngineState, name: str, raw: Obj, now: float) -> Obj:
    """The status ``raw`` (ClusterQueue ``name``) should have now."""
    status: Obj = copy.deepcopy(dict(raw.get("status") or {}))
    usage = state.cache.cluster_queue_usage(name)
    active, inactive = state.queues.pending_counts(name)
    status.update(usage.to_status())
    status["pendingWorkloads"] = active + inactive
    is_active, reason, message = state.cache.cluster_queue_active(name)
    conditions = list(status.get("conditions") or [])
    set_condition(
        conditions,
        ACTIVE,
        "True" if is_active else "False",
        reason,
        message,
        now,
        _generation(raw),
    )
    status["conditions"] = conditions
    if state.config.fair_sharing.enable:
        drs = state.cache.cluster_queue_drs(name)
        share = drs.rounded_weighted_share()[0] if drs is not None else 0
        status["fairSharing"] = {**(status.get("fairSharing") or {}), "weightedShare": share}
    return status


def cohort_status(state: EngineState, name: str, raw: Obj) -> Obj:
    """The status ``raw`` (Cohort ``name``) should have now: its fair-sharing share when fair
    sharing is enabled (upstream ``CohortReconciler``), else as it is."""
    status: Obj = copy.deepcopy(dict(raw.get("status") or {}))
    if state.config.fair_sharing.enable:
        drs = state.cache.cohort_drs(name)
        share = drs.rounded_weighted_share()[0] if drs is not None else 0
        status["fairSharing"] = {**(status.get("fairSharing") or {}), "weightedShare": share}
    return status


def local_queue_status(state: EngineState, key: str, raw: Obj, now: float) -> Obj:
    """The status ``raw`` (LocalQueue ``key``) should have now (upstream
    ``LocalQueueReconciler.Reconcile`` + ``UpdateStatusIfChanged``)."""
    namespace, name = split_key(key)
    spec = raw.get("spec") or {}
    cq_name = str(spec.get("clusterQueue") or "")
    stopped = (spec.get("stopPolicy") or STOP_NONE) != STOP_NONE
    if stopped:
        cond = ("False", LQ_STOPPED_REASON, LQ_STOPPED_MESSAGE)
    elif cq_name not in state.objects[CLUSTER_QUEUE]:
        cond = ("False", LQ_NO_CQ_REASON, LQ_CQ_INACTIVE_MESSAGE)
    elif _cq_active_condition(state.objects[CLUSTER_QUEUE][cq_name]):
        # Upstream reads the ClusterQueue's *written* Active condition, not the cache's.
        cond = ("True", ACTIVE, LQ_READY_MESSAGE)
    else:
        cond = ("False", LQ_CQ_INACTIVE_REASON, LQ_CQ_INACTIVE_MESSAGE)
    status: Obj = copy.deepcopy(dict(raw.get("status") or {}))
    usage = state.cache.local_queue_usage(namespace, name)
    status["pendingWorkloads"] = 0 if stopped else state.queues.local_queue_pending(namespace, name)
    status.update(usage.to_status())
    conditions = list(status.get("conditions") or [])
    set_condition(conditions, ACTIVE, *cond, now, _generation(raw))
    status["conditions"] = conditions
    return status


def _cq_active_condition(raw: Mapping[str, Any]) -> bool:
    for condition in (raw.get("status") or {}).get("conditions") or []:
        if condition.get("type") == ACTIVE:
            return bool(condition.get("status") == "True")
    return False
