"""The local Workload and its remote copies as the MultiKueue reconciler compares and edits them
(upstream ``cloneForCreate``, ``isRemoteSpecOutOfSync``, ``workload.PriorityChanged``,
``bestMatchByCondition``, ``SetAdmissionCheckState``, the delayed topology hand-over).

Pure: objects are the API's JSON dicts; edits happen on copies the caller owns.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from numaplane.kueue.api.conditions import find_condition, format_time, parse_time
from numaplane.kueue.constants import API_VERSION
from numaplane.kueue.jobs.workloads import (
    POD_PRIORITY_CLASS_GROUP,
    POD_PRIORITY_CLASS_KIND,
    WORKLOAD_PRIORITY_CLASS_GROUP,
    WORKLOAD_PRIORITY_CLASS_KIND,
)
from numaplane.kueue.multikueue.constants import JOB_UID_LABEL, ORIGIN_LABEL
from numaplane.kueue.workload.status import checks_of, truncate_condition_message

Obj = dict[str, Any]


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def clone_for_create(local: Mapping[str, Any], origin: str) -> Obj:
    """Upstream ``cloneForCreate`` (SPEC §3.6): name, namespace, labels and annotations of
    the local Workload (no owner references, uid, finalizers or status) without the
    ``job-uid`` label and with ``kueue.x-k8s.io/multikueue-origin=<origin>``; the spec
    copied as it is (same queue name, priority and podSets)."""
    meta = _meta(local)
    labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
    labels.pop(JOB_UID_LABEL, None)
    labels[ORIGIN_LABEL] = origin
    metadata: Obj = {
        "name": meta.get("name", ""),
        "namespace": meta.get("namespace", ""),
        "labels": labels,
    }
    annotations = meta.get("annotations")
    if annotations:
        metadata["annotations"] = {str(k): str(v) for k, v in annotations.items()}
    return {
        "apiVersion": local.get("apiVersion") or API_VERSION,
        "kind": "Workload",
        "metadata": metadata,
        "spec": copy.deepcopy(dict(local.get("spec") or {})),
    }


def _pruned(value: Any) -> Any:
    # Go's omitempty makes an absent field and an empty one the same object after a round
    # trip through the API, so neither counts as a difference.
    if isinstance(value, dict):
        kept = {k: _pruned(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


def _comparable_spec(wl: Mapping[str, Any]) -> Any:
    spec = dict(wl.get("spec") or {})
    # Preemption gates are the manager's and each worker's own (SPEC §3.20).
    spec.pop("preemptionGates", None)
    if spec.get("active", True) is True:
        spec.pop("active", None)
    return _pruned(spec)


def spec_out_of_sync(local: Mapping[str, Any], remote: Mapping[str, Any]) -> bool:
    """Upstream ``isRemoteSpecOutOfSync``: the specs differ, preemption gates aside."""
    if local.get("spec") == remote.get("spec"):
        return False  # the common case, without normalising either side
    return bool(_comparable_spec(local) != _comparable_spec(remote))


def _priority_ref(wl: Mapping[str, Any]) -> Mapping[str, Any]:
    return (wl.get("spec") or {}).get("priorityClassRef") or {}


def _is_ref(wl: Mapping[str, Any], group: str, kind: str) -> bool:
    ref = _priority_ref(wl)
    return ref.get("group") == group and ref.get("kind") == kind


def priority_changed(local: Mapping[str, Any], remote: Mapping[str, Any]) -> bool:
    """Upstream ``PriorityChanged(local, remote)``: pod priority classes are never synced;
    with a WorkloadPriorityClass on the copy, a different class name or a different
    priority value is a change to copy over."""
    if _is_ref(local, POD_PRIORITY_CLASS_GROUP, POD_PRIORITY_CLASS_KIND):
        return False
    if not _is_ref(remote, WORKLOAD_PRIORITY_CLASS_GROUP, WORKLOAD_PRIORITY_CLASS_KIND):
        return False
    remote_name = str(_priority_ref(remote).get("name") or "")
    if remote_name and str(_priority_ref(local).get("name") or "") != remote_name:
        return True
    local_priority = (local.get("spec") or {}).get("priority") or 0
    return bool(local_priority != ((remote.get("spec") or {}).get("priority") or 0))


def with_priority_of(local: Mapping[str, Any], remote: Mapping[str, Any]) -> Obj:
    """The copy with the local ``priorityClassRef`` and ``priority`` (the rest kept)."""
    updated = copy.deepcopy(dict(remote))
    spec = updated.setdefault("spec", {})
    local_spec = local.get("spec") or {}
    for key in ("priorityClassRef", "priority"):
        if key in local_spec:
            spec[key] = copy.deepcopy(local_spec[key])
        else:
            spec.pop(key, None)
    return updated


def earliest_true(remotes: Iterable[tuple[str, Mapping[str, Any] | None]], kind: str) -> str | None:
    """Upstream ``bestMatchByCondition``: the cluster whose copy has condition ``kind`` True
    with the earliest ``lastTransitionTime`` (equal times: the first in ``remotes``)."""
    best: str | None = None
    best_at = 0.0
    for cluster, wl in remotes:
        if wl is None:
            continue
        found = find_condition((wl.get("status") or {}).get("conditions"), kind)
        if found is None or found.get("status") != "True":
            continue
        at = parse_time(found.get("lastTransitionTime"))
        if best is None or at < best_at:
            best, best_at = cluster, at
    return best


def condition_of(wl: Mapping[str, Any], kind: str) -> Mapping[str, Any]:
    """Condition ``kind`` of ``wl`` ({} when absent)."""
    return find_condition((wl.get("status") or {}).get("conditions"), kind) or {}


def find_check(status: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    """The admission check state ``name`` of a status, or None."""
    for check in checks_of(status):
        if check.get("name") == name:
            return check
    return None


def set_check_state(
    status: dict[str, Any], name: str, state: str, message: str, now: float
) -> bool:
    """Upstream ``SetAdmissionCheckState`` for an existing check (in place): the state, with
    ``lastTransitionTime`` moved to ``now`` only when the state changes; the message
    (truncated to the condition limit). Retry count, requeue delay and pod set updates are
    kept. Returns whether anything changed."""
    check = find_check(status, name)
    if check is None:
        return False
    message = truncate_condition_message(message)
    changed = False
    if check.get("state") != state:
        check["state"] = state
        check["lastTransitionTime"] = format_time(now)
        changed = True
    if check.get("message") != message:
        check["message"] = message
        changed = True
    return changed


def ready_delayed_topology(status: dict[str, Any], remote: Mapping[str, Any]) -> bool:
    """Upstream ``updateDelayedTopologyRequest`` (in place): a local podSet assignment whose
    delayed topology request is Pending becomes Ready once the admitting copy's assignment
    of that podSet has a topology. Returns whether anything changed."""
    remote_admission = (remote.get("status") or {}).get("admission") or {}
    local_admission = status.get("admission") or {}
    local_psas = {psa.get("name"): psa for psa in local_admission.get("podSetAssignments") or ()}
    changed = False
    for psa in remote_admission.get("podSetAssignments") or ():
        if psa.get("topologyAssignment") is None:
            continue
        local_psa = local_psas.get(psa.get("name"))
        if local_psa is not None and local_psa.get("delayedTopologyRequest") == "Pending":
            local_psa["delayedTopologyRequest"] = "Ready"
            changed = True
    return changed
