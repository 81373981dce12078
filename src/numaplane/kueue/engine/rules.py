"""What each observed change does to the engine's state (upstream's event handlers of the
ClusterQueue, LocalQueue, Workload, ResourceFlavor, Cohort and AdmissionCheck controllers, which
update the cache and the queue manager before any reconcile runs) and what it touches."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numaplane.kueue.api import parse
from numaplane.kueue.api.model import Workload
from numaplane.kueue.engine.state import (
    ADMISSION_CHECK,
    CLUSTER_QUEUE,
    COHORT,
    JOB,
    LOCAL_QUEUE,
    NAMESPACE,
    PRIORITY_CLASS,
    RESOURCE_FLAVOR,
    WORKLOAD,
    WORKLOAD_PRIORITY_CLASS,
    EngineState,
    Obj,
    Touched,
)


def owner_job_key(obj: Mapping[str, Any]) -> str:
    """``namespace/name`` of the batch/v1 Job controlling a Workload ("" when none)."""
    meta = obj.get("metadata") or {}
    for ref in meta.get("ownerReferences") or []:
        if ref.get("kind") == "Job" and str(ref.get("apiVersion", "")).startswith("batch/"):
            return f"{meta.get('namespace') or ''}/{ref.get('name')}"
    return ""


def _reserved(wl: Workload | None) -> bool:
    """Counted in the quota: reserved and not finished."""
    return wl is not None and wl.has_quota_reservation and not wl.is_finished


def observe(state: EngineState, kind: str, key: str, old: Obj | None, obj: Obj) -> Touched:
    """Apply an added or changed object (already stored in ``state.objects``)."""
    if kind == WORKLOAD:
        return _observe_workload(state, key, obj)
    if kind == JOB:
        return Touched(jobs={key})
    if kind == CLUSTER_QUEUE:
        # The configuration's resources.quotaCheckStrategy applies to every queue.
        cq = parse.parse_cluster_queue(obj, quota_check_strategy=state.config.quota_check_strategy)
        previous = state.cluster_queues.get(key)
        before = state.tree_members([key]) if previous is not None else set()
        state.cluster_queues[key] = cq
        state.cache.upsert_cluster_queue(cq)
        # Its cohort's other members may change activity (a cycle formed or broken).
        flipped = state.sync_active(state.tree_members([key]) | before)
        # Parked workloads are retried only when the spec changed (upstream
        # UpdateClusterQueue(..., specUpdated)): Kueue's own status writes must not wake them,
        # or decisions would depend on when those writes are observed.
        if previous is None or previous != cq:
            touched = state.wake_tree([key]).merge(Touched(cluster_queues=before | {key}))
        else:
            touched = Touched(cluster_queues={key}, schedule=bool(flipped))
        touched.local_queues |= set(state.local_queues_of(key))
        # The workload controller reads the ClusterQueue (stop policy, checks, activity).
        touched.workloads |= state.workloads_of(flipped | {key})
        return touched
    if kind == LOCAL_QUEUE:
        lq = parse.parse_local_queue(obj)
        state.local_queues[key] = lq
        state.cache.upsert_local_queue(lq)
        # Workloads filed under it before it existed join its ClusterQueue now.
        state.queues.upsert_local_queue(lq)
        return Touched(
            workloads=set(state.by_queue.get(key, ())),
            local_queues={key},
            cluster_queues={lq.cluster_queue},
            schedule=True,
        )
    if kind == RESOURCE_FLAVOR:
        state.cache.upsert_flavor(parse.parse_resource_flavor(obj))
        return _tree_changed(state)
    if kind == COHORT:
        cohort = parse.parse_cohort(obj)
        state.cache.upsert_cohort(cohort)
        state.queues.upsert_cohort(cohort)
        return _tree_changed(state)
    if kind == ADMISSION_CHECK:
        check = parse.parse_admission_check(obj)
        state.admission_checks[key] = check
        state.cache.upsert_admission_check(check)
        flipped = state.sync_active(state.cluster_queues)
        users = {
            name
            for name, cq in state.cluster_queues.items()
            if any(rule.name == key for rule in cq.admission_checks)
        }
        touched = state.wake_tree(users)
        touched.workloads |= state.workloads_of(users | flipped)
        return touched
    if kind == WORKLOAD_PRIORITY_CLASS:
        parse.parse_workload_priority_class(obj)
        return Touched(jobs=_jobs_with_priority_class(state, key))
    if kind == NAMESPACE:
        labels_before = state.namespace_labels_all.get(key)
        labels_after = dict((obj.get("metadata") or {}).get("labels") or {})
        state.namespace_labels_all[key] = labels_after
        if labels_before != labels_after:
            # A namespace that now matches a selector makes parked workloads admissible.
            return state.wake_tree(state.cluster_queues)
        return Touched()
    if kind == PRIORITY_CLASS:
        return Touched()
    raise KeyError(kind)


def forget(state: EngineState, kind: str, key: str, obj: Obj) -> Touched:
    """Apply a deletion (the object already dropped from ``state.objects``)."""
    if kind == WORKLOAD:
        return _forget_workload(state, key, obj)
    if kind == JOB:
        return Touched(jobs={key})
    if kind == CLUSTER_QUEUE:
        before = state.tree_members([key]) if key in state.cluster_queues else set()
        state.cluster_queues.pop(key, None)
        state.active.pop(key, None)
        state.cache.delete_cluster_queue(key)
        state.queues.delete_cluster_queue(key)
        touched = state.wake_tree(before - {key})
        touched.local_queues |= set(state.local_queues_of(key))
        touched.workloads |= state.workloads_of([key])
        return touched
    if kind == LOCAL_QUEUE:
        lq = state.local_queues.pop(key, None)
        if lq is None:
            return Touched()
        state.queues.delete_local_queue(lq.namespace, lq.name)
        state.cache.delete_local_queue(lq.namespace, lq.name)
        return Touched(
            workloads=set(state.by_queue.get(key, ())), cluster_queues={lq.cluster_queue}
        )
    if kind == RESOURCE_FLAVOR:
        state.cache.delete_flavor(key)
    elif kind == COHORT:
        state.cache.delete_cohort(key)
        state.queues.delete_cohort(key)
    elif kind == ADMISSION_CHECK:
        state.admission_checks.pop(key, None)
        state.cache.delete_admission_check(key)
    if kind in (RESOURCE_FLAVOR, COHORT, ADMISSION_CHECK):
        return _tree_changed(state)
    if kind == NAMESPACE:
        state.namespace_labels_all.pop(key, None)
        return Touched()
    if kind in (WORKLOAD_PRIORITY_CLASS, PRIORITY_CLASS):
        return Touched()
    raise KeyError(kind)


def _tree_changed(state: EngineState) -> Touched:
    """A flavor, cohort or check changed: any queue's activity and quota may have."""
    flipped = state.sync_active(state.cluster_queues)
    touched = state.wake_tree(state.cluster_queues)
    touched.workloads |= state.workloads_of(flipped)
    return touched


def _jobs_with_priority_class(state: EngineState, name: str) -> set[str]:
    from numaplane.kueue import constants as c

    found = set()
    for key, job in state.objects[JOB].items():
        labels = (job.get("metadata") or {}).get("labels") or {}
        if labels.get(c.PRIORITY_CLASS_LABEL) == name:
            found.add(key)
    return found


def _index_owner(state: EngineState, key: str, owner: str) -> None:
    previous = state.owner_of.get(key, "")
    if previous == owner:
        return
    if previous:
        keys = state.owned.get(previous)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del state.owned[previous]
    if owner:
        state.owned.setdefault(owner, set()).add(key)
        state.owner_of[key] = owner
    else:
        state.owner_of.pop(key, None)


def _unindex_queue(state: EngineState, wl: Workload) -> None:
    lq = f"{wl.namespace}/{wl.queue_name}"
    keys = state.by_queue.get(lq)
    if keys is not None:
        keys.discard(wl.key)
        if not keys:
            del state.by_queue[lq]


def _observe_workload(state: EngineState, key: str, obj: Obj) -> Touched:
    wl = state.parse_workload(obj)
    old = state.workloads.get(key)
    state.workloads[key] = wl
    owner = owner_job_key(obj)
    _index_owner(state, key, owner)
    if old is not None and old.queue_name != wl.queue_name:
        _unindex_queue(state, old)
    state.by_queue.setdefault(f"{wl.namespace}/{wl.queue_name}", set()).add(key)
    state.cache.upsert_workload(wl)
    assumed = state.assumed.get(key)
    if assumed is not None:
        if wl.has_quota_reservation or wl.is_finished or not wl.active or wl.deleting:
            # Our reservation landed, or the workload no longer wants quota (then our write
            # is refused on its stale resourceVersion).
            del state.assumed[key]
        else:
            # A version older than our write (a pending status landing late): our
            # reservation is still in flight, keep counting it so no one else gets the quota.
            state.cache.assume_workload(assumed)
    # While a reservation is in flight the workload must not become a head again.
    queued = key not in state.assumed and state.queues.upsert_workload(wl)
    touched = Touched(workloads={key}, schedule=queued)
    if owner:
        touched.jobs.add(owner)
    for version in (old, wl):
        if version is not None:
            touched.local_queues.add(f"{version.namespace}/{version.queue_name}")
            cq = state.cluster_queue_of(version)
            if cq:
                touched.cluster_queues.add(cq)
    if _reserved(old) and not _reserved(wl):
        # Quota freed (released, finished): parked workloads of the tree may fit now.
        assert old is not None
        touched.merge(state.wake_tree([state.cluster_queue_of(old)]))
    elif _reserved(old) and _reserved(wl) and old is not None and old.priority != wl.priority:
        # Upstream's Update handler (workload.PriorityChanged): a workload holding quota whose
        # priority changed may now be a preemption target, so its tree's parked workloads
        # go back to the heaps.
        touched.merge(state.wake_tree([state.cluster_queue_of(wl)]))
    return touched


def _forget_workload(state: EngineState, key: str, obj: Obj) -> Touched:
    old = state.workloads.pop(key, None)
    state.assumed.pop(key, None)
    state.last_tried.pop(key, None)
    if old is not None:
        _unindex_queue(state, old)
    _index_owner(state, key, "")
    state.cache.delete_workload(key)
    state.queues.delete_workload(key)
    touched = Touched()
    owner = owner_job_key(obj)
    if owner:
        touched.jobs.add(owner)
    if old is not None:
        touched.local_queues.add(f"{old.namespace}/{old.queue_name}")
        cq = state.cluster_queue_of(old)
        if cq:
            touched.cluster_queues.add(cq)
            if _reserved(old):
                touched.merge(state.wake_tree([cq]))
    return touched
