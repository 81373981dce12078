"""(Over 400 lines: one class, the cache's whole event and query surface, reads best whole.)

The live quota tree: what every ClusterQueue and Cohort holds and uses right now, updated
event by event (upstream ``pkg/cache/scheduler/cache.go``, ``clusterqueue.go``, ``cohort.go``,
``hierarchy/manager.go``).

Workload events cost O(depth of the tree); only object changes to ClusterQueues and Cohorts
recompute a tree (from its root, as upstream). :meth:`KueueCache.snapshot` copies usage maps and
workload maps and shares everything else, so it stays cheap with 100 queues and 10,000 workloads.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from numaplane.kueue.api.model import (
    AdmissionCheck,
    ClusterQueue,
    Cohort,
    LocalQueue,
    ResourceFlavor,
    Workload,
    quotas_of,
)
from numaplane.kueue.cache import resource_node as rn
from numaplane.kueue.cache import status as st
from numaplane.kueue.cache.fair_sharing import DRS, dominant_resource_share
from numaplane.kueue.cache.live import (
    LiveClusterQueue,
    LiveCohort,
    has_cycle,
    recompute_tree,
    subtree_cqs,
)
from numaplane.kueue.cache.snapshot import (
    REASON_COHORT_HAS_CYCLE,
    ClusterQueueSnapshot,
    CohortSnapshot,
    Snapshot,
)
from numaplane.kueue.constants import PODS_READY


def _counted(wl: Workload) -> bool:
    """Whether ``wl`` holds quota: it has an admission, is active and not finished (upstream
    also requires ``QuotaReserved=True``, which always comes with the admission)."""
    return wl.admission is not None and wl.active and not wl.is_finished


class KueueCache:
    """Kueue's live state of quota: flavors, admission checks, the ClusterQueue/Cohort tree and
    the workloads that reserve quota in it."""

    def __init__(self, *, topology_aware: bool = False) -> None:
        """``topology_aware``: Topology Aware Scheduling on (upstream's feature gate), so a TAS
        flavor whose Topology does not exist makes its queues inactive."""
        #: Existing Topology names; None while Topology Aware Scheduling is off.
        self._topologies: set[str] | None = set() if topology_aware else None
        self._flavors: dict[str, ResourceFlavor] = {}
        self._checks: dict[str, AdmissionCheck] = {}
        self._cqs: dict[str, LiveClusterQueue] = {}
        self._cohorts: dict[str, LiveCohort] = {}
        #: Counted workload → the ClusterQueue its admission names (upstream
        #: ``workloadAssignedQueues``).
        self._assigned: dict[str, str] = {}
        #: Counted workloads whose ClusterQueue does not exist (yet): kept so that creating the
        #: queue later charges them, as upstream's AddClusterQueue does by listing.
        self._orphans: dict[str, dict[str, Workload]] = {}
        self._assumed: set[str] = set()
        self._not_ready: set[str] = set()
        self._local_queues: dict[str, str] = {}

    # --- flavors and admission checks ----------------------------------------------------------

    def upsert_flavor(self, flavor: ResourceFlavor) -> set[str]:
        """Add or replace a ResourceFlavor; returns the queues that became active."""
        self._flavors[flavor.name] = flavor
        return self._refresh_health()

    def delete_flavor(self, name: str) -> set[str]:
        """Remove a ResourceFlavor; returns the queues that became active (none, normally)."""
        self._flavors.pop(name, None)
        return self._refresh_health()

    def upsert_admission_check(self, check: AdmissionCheck) -> set[str]:
        """Add or replace an AdmissionCheck; returns the queues that became active."""
        self._checks[check.name] = check
        return self._refresh_health()

    def delete_admission_check(self, name: str) -> set[str]:
        """Remove an AdmissionCheck; returns the queues that became active (none, normally)."""
        self._checks.pop(name, None)
        return self._refresh_health()

    def upsert_topology(self, name: str) -> set[str]:
        """A Topology exists; returns the queues that became active."""
        if self._topologies is None:
            return set()
        self._topologies.add(name)
        return self._refresh_health()

    def delete_topology(self, name: str) -> set[str]:
        """A Topology is gone; returns the queues that became active (none, normally)."""
        if self._topologies is None:
            return set()
        self._topologies.discard(name)
        return self._refresh_health()

    def _refresh_health(self) -> set[str]:
        woke: set[str] = set()
        for name, cq in self._cqs.items():
            before = cq.health.active
            cq.health = st.queue_health(cq.spec, self._flavors, self._checks, self._topologies)
            if cq.health.active and not before:
                woke.add(name)
        return woke

    # --- the tree ------------------------------------------------------------------------------

    def _cohort(self, name: str) -> LiveCohort:
        cohort = self._cohorts.get(name)
        if cohort is None:
            cohort = self._cohorts[name] = LiveCohort(name)
        return cohort

    def _cleanup(self, cohort: LiveCohort) -> None:
        """Forget an implicit Cohort nothing refers to any more."""
        if cohort.spec is None and not cohort.child_cqs and not cohort.child_cohorts:
            self._cohorts.pop(cohort.name, None)

    def _detach_cq(self, cq: LiveClusterQueue) -> LiveCohort | None:
        parent = cq.parent
        if parent is not None:
            parent.child_cqs.pop(cq.spec.name, None)
            cq.parent = None
            self._cleanup(parent)
        return parent

    def _detach_cohort(self, cohort: LiveCohort) -> LiveCohort | None:
        parent = cohort.parent
        if parent is not None:
            parent.child_cohorts.pop(cohort.name, None)
            cohort.parent = None
            self._cleanup(parent)
        return parent

    def upsert_cluster_queue(self, spec: ClusterQueue) -> None:
        """Add or replace a ClusterQueue (``spec.deleting`` marks it terminating)."""
        cq = self._cqs.get(spec.name)
        created = cq is None
        if cq is None:
            cq = self._cqs[spec.name] = LiveClusterQueue(spec)
        quotas_changed = created or spec.resource_groups != cq.spec.resource_groups
        cq.spec = spec
        old_parent = cq.parent
        if old_parent is None or old_parent.name != spec.cohort:
            self._detach_cq(cq)
            if spec.cohort:
                parent = self._cohort(spec.cohort)
                parent.child_cqs[spec.name] = cq
                cq.parent = parent
        if quotas_changed:
            cq.node.quotas = spec.quotas()
        if quotas_changed or old_parent is not cq.parent:
            if old_parent is not None and old_parent is not cq.parent:
                recompute_tree(self._cohorts.get(old_parent.name))
            cq.node.subtree_quota = rn.nominal_subtree(cq.node.quotas)
            if cq.parent is None or has_cycle(cq.parent):
                cq.generation += 1
            else:
                recompute_tree(cq.parent)
        cq.check_flavors = st.admission_check_flavors(spec)
        cq.health = st.queue_health(spec, self._flavors, self._checks, self._topologies)
        if created:
            for wl in self._orphans.pop(spec.name, {}).values():
                self._charge(cq, wl)

    def delete_cluster_queue(self, name: str) -> None:
        """Remove a ClusterQueue; its workloads wait, uncharged, for a queue of that name."""
        cq = self._cqs.pop(name, None)
        if cq is None:
            return
        old_parent = self._detach_cq(cq)
        if old_parent is not None:
            recompute_tree(self._cohorts.get(old_parent.name))
        if cq.workloads:
            self._orphans[name] = dict(cq.workloads)

    def upsert_cohort(self, spec: Cohort) -> None:
        """Add or replace a Cohort object (quota of its own, ``parent``)."""
        cohort = self._cohort(spec.name)
        cohort.spec = spec
        cohort.node.quotas = quotas_of(spec.resource_groups)
        old_parent = cohort.parent
        if old_parent is None or old_parent.name != spec.parent:
            self._detach_cohort(cohort)
            if spec.parent:
                parent = self._cohort(spec.parent)
                parent.child_cohorts[spec.name] = cohort
                cohort.parent = parent
        if old_parent is not None and old_parent is not cohort.parent:
            recompute_tree(self._cohorts.get(old_parent.name))
        recompute_tree(cohort)

    def delete_cohort(self, name: str) -> None:
        """Remove a Cohort object; while queues or Cohorts still name it, it stays as an implicit
        Cohort without quota and without a parent (upstream ``DeleteCohort``)."""
        cohort = self._cohorts.get(name)
        if cohort is None:
            return
        old_parent = self._detach_cohort(cohort)
        cohort.spec = None
        cohort.node.quotas = {}
        self._cleanup(cohort)
        # Upstream leaves the old parent's sums to the next event that touches its tree; they
        # are recomputed here at once so that no snapshot sees the removed Cohort's quota.
        if old_parent is not None:
            recompute_tree(self._cohorts.get(old_parent.name))
        if name in self._cohorts:
            recompute_tree(cohort)

    def upsert_local_queue(self, lq: LocalQueue) -> None:
        """Record which ClusterQueue a LocalQueue points to (for its usage)."""
        self._local_queues[lq.key] = lq.cluster_queue

    def delete_local_queue(self, namespace: str, name: str) -> None:
        """Forget a LocalQueue."""
        self._local_queues.pop(f"{namespace}/{name}", None)

    # --- workloads -----------------------------------------------------------------------------

    def _charge(self, cq: LiveClusterQueue, wl: Workload) -> None:
        cq.charge(wl)
        if not wl.condition_true(PODS_READY):
            self._not_ready.add(wl.key)

    def _discharge(self, cq: LiveClusterQueue, key: str) -> None:
        cq.discharge(key)
        self._not_ready.discard(key)

    def _uncount(self, key: str) -> None:
        cq_name = self._assigned.pop(key, None)
        self._assumed.discard(key)
        if cq_name is None:
            return
        cq = self._cqs.get(cq_name)
        if cq is not None:
            self._discharge(cq, key)
        orphans = self._orphans.get(cq_name)
        if orphans is not None:
            orphans.pop(key, None)
            if not orphans:
                del self._orphans[cq_name]

    def _count(self, wl: Workload) -> None:
        assert wl.admission is not None
        cq_name = wl.admission.cluster_queue
        self._assigned[wl.key] = cq_name
        cq = self._cqs.get(cq_name)
        if cq is None:
            self._orphans.setdefault(cq_name, {})[wl.key] = wl
        else:
            self._charge(cq, wl)

    def upsert_workload(self, wl: Workload) -> bool:
        """Record the workload's current state: it is counted iff it has an admission, is active
        and not finished. Returns whether it is counted in an existing ClusterQueue.

        Any observed version replaces an assumption, as upstream: one without admission means
        the reservation did not happen (its write, made against an older version, failed)."""
        if not _counted(wl):
            self._uncount(wl.key)
            return False
        self._uncount(wl.key)
        self._count(wl)
        assert wl.admission is not None
        return wl.admission.cluster_queue in self._cqs

    def delete_workload(self, key: str) -> None:
        """Forget a workload (deleted from the API)."""
        self._uncount(key)

    def assume_workload(self, wl: Workload) -> None:
        """Count a workload the scheduler just reserved quota for, before its status write is
        observed (upstream ``AssumeWorkload``)."""
        if wl.admission is None:
            raise ValueError(f"workload {wl.key} has no admission to assume")
        self._uncount(wl.key)
        self._count(wl)
        self._assumed.add(wl.key)

    def forget_workload(self, key: str) -> bool:
        """Undo :meth:`assume_workload` (the status write failed); False when ``key`` is not
        assumed any more."""
        if key not in self._assumed:
            return False
        self._uncount(key)
        return True

    def is_assumed(self, key: str) -> bool:
        """Whether ``key`` is counted only by assumption."""
        return key in self._assumed

    def workload(self, key: str) -> Workload | None:
        """The counted version of workload ``key`` (None if it does not hold quota)."""
        cq_name = self._assigned.get(key)
        if cq_name is None:
            return None
        cq = self._cqs.get(cq_name)
        if cq is not None:
            return cq.workloads.get(key)
        return self._orphans.get(cq_name, {}).get(key)

    def pods_ready_for_all_admitted_workloads(self) -> bool:
        """Whether every counted workload has ``PodsReady=True`` (waitForPodsReady's
        blockAdmission waits for this)."""
        return not self._not_ready

    # --- queries -------------------------------------------------------------------------------

    def flavors(self) -> Mapping[str, ResourceFlavor]:
        """The ResourceFlavors that exist, by name (read-only view)."""
        return MappingProxyType(self._flavors)

    def admission_checks(self) -> Mapping[str, AdmissionCheck]:
        """The AdmissionChecks that exist, by name (read-only view)."""
        return MappingProxyType(self._checks)

    def has_cluster_queue(self, name: str) -> bool:
        """Whether ClusterQueue ``name`` is known."""
        return name in self._cqs

    def cluster_queue_names(self) -> list[str]:
        """Known ClusterQueues, sorted."""
        return sorted(self._cqs)

    def cluster_queue_spec(self, name: str) -> ClusterQueue | None:
        """The ClusterQueue object as last seen."""
        cq = self._cqs.get(name)
        return None if cq is None else cq.spec

    def cluster_queue_empty(self, name: str) -> bool:
        """Whether no workload reserves quota in ``name`` (True if unknown)."""
        cq = self._cqs.get(name)
        return cq is None or not cq.workloads

    def cluster_queue_workloads(self, name: str) -> list[Workload]:
        """Workloads reserving quota in ``name``."""
        cq = self._cqs.get(name)
        return [] if cq is None else list(cq.workloads.values())

    def cluster_queues_using_flavor(self, flavor: str) -> list[str]:
        """Queues whose resource groups list ``flavor``."""
        return sorted(n for n, cq in self._cqs.items() if flavor in st.all_flavors(cq.spec))

    def cluster_queues_using_admission_check(self, check: str) -> list[str]:
        """Queues whose admission checks include ``check``."""
        return sorted(n for n, cq in self._cqs.items() if check in cq.check_flavors)

    def cluster_queue_active(self, name: str) -> tuple[bool, str, str]:
        """``(status, reason, message)`` of the queue's ``Active`` condition."""
        cq = self._cqs.get(name)
        if cq is None:
            return False, st.REASON_NOT_FOUND, st.MESSAGE_NOT_FOUND
        return cq.health.condition()

    def cluster_queue_usage(self, name: str) -> st.ClusterQueueUsage:
        """Usage rows and counts for the queue's status (empty if unknown)."""
        cq = self._cqs.get(name)
        if cq is None:
            return st.ClusterQueueUsage()
        return st.cluster_queue_usage(
            cq.spec,
            cq.node.usage,
            cq.admitted_usage,
            in_cohort=cq.parent is not None,
            reserving_workloads=len(cq.workloads),
            admitted_workloads=cq.admitted_count,
        )

    def local_queue_usage(self, namespace: str, name: str) -> st.LocalQueueUsage:
        """Usage rows and counts for a LocalQueue's status, over its ClusterQueue's flavors."""
        key = f"{namespace}/{name}"
        cq = self._cqs.get(self._local_queues.get(key, ""))
        if cq is None:
            return st.LocalQueueUsage()
        return st.local_queue_usage(cq.spec, cq.local_queues.get(key))

    def cluster_queue_drs(self, name: str) -> DRS | None:
        """The queue's Dominant Resource Share (for ``status.fairSharing``); None when unknown
        or under a Cohort cycle."""
        cq = self._cqs.get(name)
        if cq is None or has_cycle(cq.parent):
            return None
        return dominant_resource_share(cq, cq.spec.fair_weight_milli / 1000)

    def cohort_drs(self, name: str) -> DRS | None:
        """A Cohort's Dominant Resource Share in its parent; None when unknown or in a cycle."""
        cohort = self._cohorts.get(name)
        if cohort is None or has_cycle(cohort):
            return None
        weight = 1.0 if cohort.spec is None else cohort.spec.fair_weight_milli / 1000
        return dominant_resource_share(cohort, weight)

    def cohort_tree_members(self, cq_name: str) -> list[str]:
        """Every ClusterQueue in the same root Cohort tree as ``cq_name`` (sorted), or just
        ``[cq_name]`` when it has no Cohort."""
        cq = self._cqs.get(cq_name)
        if cq is None or cq.parent is None:
            return [cq_name]
        top = cq.parent
        seen = {top.name}
        while top.parent is not None and top.parent.name not in seen:
            top = top.parent
            seen.add(top.name)
        return sorted(subtree_cqs(top, set()))

    # --- snapshot ------------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """A copy of the tree the scheduler may mutate: usage and workload maps copied, specs
        and quotas shared (upstream ``Cache.Snapshot``)."""
        cohorts: dict[str, CohortSnapshot] = {}
        cyclic: set[str] = set()
        for name in sorted(self._cohorts):
            live = self._cohorts[name]
            if has_cycle(live):
                cyclic.add(name)
                continue
            cohorts[name] = CohortSnapshot(name, live.node.clone(), live.spec)
        for name, snap in cohorts.items():
            parent = self._cohorts[name].parent
            if parent is not None:
                snap.parent = cohorts[parent.name]
                snap.parent.child_cohorts.append(snap)
        cqs: dict[str, ClusterQueueSnapshot] = {}
        for name in sorted(self._cqs):
            live_cq = self._cqs[name]
            health = live_cq.health
            reason = ""
            if not health.active:
                reason = health.condition()[1]
            elif live_cq.parent is not None and live_cq.parent.name in cyclic:
                reason = REASON_COHORT_HAS_CYCLE
            snap_cq = ClusterQueueSnapshot(
                live_cq.spec,
                live_cq.node.clone(),
                dict(live_cq.workloads),
                active=not reason,
                inactive_reason=reason,
                allocatable_generation=live_cq.generation,
                admission_checks=live_cq.check_flavors,
                has_multikueue_check=bool(health.multikueue_checks),
                provisioning_flavors=_provisioning_flavors(live_cq),
            )
            if live_cq.parent is not None:
                snap_cq.parent = cohorts.get(live_cq.parent.name)
                if snap_cq.parent is not None and snap_cq.active:
                    snap_cq.parent.child_cqs.append(snap_cq)
            cqs[name] = snap_cq
        return Snapshot(
            cluster_queues=cqs,
            cohorts=cohorts,
            flavors=dict(self._flavors),
            admission_checks=dict(self._checks),
        )


def _provisioning_flavors(cq: LiveClusterQueue) -> frozenset[str]:
    flavors: set[str] = set()
    for check in cq.health.provisioning_checks:
        flavors |= cq.check_flavors.get(check, frozenset())
    return frozenset(flavors)
