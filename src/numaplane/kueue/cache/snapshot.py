"""(Over 400 lines: the snapshot's two node classes mirror each other and read best together.)

The scheduler's per-cycle copy of the quota tree (upstream ``clusterqueue_snapshot.go``,
``cohort_snapshot.go``, ``snapshot.go``).

:meth:`numaplane.kueue.cache.KueueCache.snapshot` builds it: specs and quotas are shared with
the cache (immutable), usage and the workload maps are copies, so the scheduler may add and remove
usage freely while it simulates admissions and preemptions.

As upstream, only *active* ClusterQueues are children of their Cohorts here (an inactive queue's
workloads are never preemption candidates), but its usage still counts in the Cohorts above it.
Inactive queues are still listed in :attr:`Snapshot.cluster_queues` with ``active=False`` and
their ``inactive_reason``, so the scheduler can tell "inactive" from "not found".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from numaplane.kueue.api.model import (
    AdmissionCheck,
    ClusterQueue,
    Cohort,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Workload,
)
from numaplane.kueue.cache import resource_node as rn
from numaplane.kueue.cache.fair_sharing import DRS, dominant_resource_share, lendable
from numaplane.kueue.resources import FlavorResource

#: ``inactive_reason`` of a ClusterQueue whose Cohort is part of (or leads into) a parent cycle:
#: upstream's snapshot leaves such queues out (``inactiveCQReasonHasCycle``).
REASON_COHORT_HAS_CYCLE = "CohortHasCycle"


class CohortSnapshot:
    """A Cohort in the snapshot: an inner node that may own quota."""

    __slots__ = ("_lendable", "child_cohorts", "child_cqs", "name", "node", "parent", "spec")

    def __init__(self, name: str, node: rn.ResourceNode, spec: Cohort | None = None) -> None:
        self.name = name
        #: None for an implicit Cohort (named by a ClusterQueue or a child, no object).
        self.spec = spec
        self.node = node
        self.parent: CohortSnapshot | None = None
        self.child_cqs: list[ClusterQueueSnapshot] = []
        self.child_cohorts: list[CohortSnapshot] = []
        self._lendable: dict[str, int] | None = None

    def __repr__(self) -> str:
        return f"CohortSnapshot({self.name!r})"

    @property
    def fair_weight(self) -> float:
        """``spec.fairSharing.weight`` (1 for an implicit Cohort)."""
        return 1.0 if self.spec is None else self.spec.fair_weight_milli / 1000

    def lendable(self) -> Mapping[str, int]:
        """Per resource, what this Cohort could ever give a child (quota is fixed for a
        snapshot's lifetime, so it is computed once)."""
        if self._lendable is None:
            self._lendable = lendable(self)
        return self._lendable

    def dominant_resource_share(
        self, workload_request: Mapping[FlavorResource, int] | None = None
    ) -> DRS:
        """The Cohort's Dominant Resource Share in its parent."""
        return dominant_resource_share(self, self.fair_weight, workload_request, _lendable_of)

    def has_parent(self) -> bool:
        """Whether the Cohort has a parent Cohort."""
        return self.parent is not None

    def root(self) -> CohortSnapshot:
        """The root of this Cohort's tree."""
        current = self
        while current.parent is not None:
            current = current.parent
        return current

    def path_self_to_root(self) -> Iterator[CohortSnapshot]:
        """This Cohort, its parent, … the root."""
        current: CohortSnapshot | None = self
        while current is not None:
            yield current
            current = current.parent

    def subtree_cluster_queues(self) -> Iterator[ClusterQueueSnapshot]:
        """Every (active) ClusterQueue below this Cohort, children before grandchildren's."""
        yield from self.child_cqs
        for child in self.child_cohorts:
            yield from child.subtree_cluster_queues()

    def child_count(self) -> int:
        """Child ClusterQueues plus child Cohorts."""
        return len(self.child_cqs) + len(self.child_cohorts)

    def height(self) -> int:
        """Distance to the furthest leaf (upstream ``getNodeHeight``): 1 with only ClusterQueues
        below, 0 for a Cohort with no children."""
        result = min(self.child_count(), 1)
        for child in self.child_cohorts:
            result = max(result, child.height() + 1)
        return result

    # --- quota queries -------------------------------------------------------------------------

    def nominal(self, fr: FlavorResource) -> int:
        """The Cohort's own nominal quota of ``fr`` (0 if it declares none)."""
        return self.node.quota(fr).nominal

    def subtree_quota(self, fr: FlavorResource) -> int:
        """Own quota plus what the children lend up."""
        return self.node.subtree_quota.get(fr, 0)

    def usage(self, fr: FlavorResource) -> int:
        """Usage charged to this Cohort (children's usage beyond their private quota)."""
        return self.node.usage.get(fr, 0)

    def borrowing_limit(self, fr: FlavorResource) -> int | None:
        """The Cohort's borrowing limit from its parent (None: unlimited)."""
        return self.node.quota(fr).borrowing_limit

    def lending_limit(self, fr: FlavorResource) -> int | None:
        """The Cohort's lending limit to its parent (None: lends everything)."""
        return self.node.quota(fr).lending_limit

    def local_quota(self, fr: FlavorResource) -> int:
        """Capacity private to this subtree."""
        return self.node.local_quota(fr)

    def local_available(self, fr: FlavorResource) -> int:
        """Unused private capacity."""
        return rn.local_available(self.node, fr)

    def available(self, fr: FlavorResource) -> int:
        """Capacity left for a request at this Cohort (may be negative when over-admitted)."""
        return rn.available(self, fr)

    def potential_available(self, fr: FlavorResource) -> int:
        """The most this Cohort could ever use of ``fr``."""
        return rn.potential_available(self, fr)

    def borrowing(self, fr: FlavorResource) -> bool:
        """Usage above the subtree quota."""
        return rn.borrowing_with(self.node, fr, 0)

    def borrowing_with(self, fr: FlavorResource, value: int) -> bool:
        """Whether ``usage + value`` would exceed the subtree quota."""
        return rn.borrowing_with(self.node, fr, value)

    def is_within_nominal(self, frs: Iterable[FlavorResource]) -> bool:
        """Usage within the subtree quota in every one of ``frs``."""
        return rn.is_within_nominal_in_resources(self.node, frs)

    def quantities_fit_in_quota(
        self, requests: Mapping[FlavorResource, int]
    ) -> tuple[bool, dict[FlavorResource, int]]:
        """Whether ``requests`` fit in the subtree quota, and what exceeds the private quota."""
        return rn.quantities_fit_in_quota(self.node, requests)


class ClusterQueueSnapshot:
    """A ClusterQueue in the snapshot: a leaf of the quota tree with its reserving workloads."""

    __slots__ = (
        "active",
        "admission_checks",
        "allocatable_generation",
        "has_multikueue_check",
        "inactive_reason",
        "name",
        "node",
        "parent",
        "provisioning_flavors",
        "spec",
        "workloads",
    )

    def __init__(
        self,
        spec: ClusterQueue,
        node: rn.ResourceNode,
        workloads: dict[str, Workload] | None = None,
        *,
        active: bool = True,
        inactive_reason: str = "",
        allocatable_generation: int = 0,
        admission_checks: Mapping[str, frozenset[str]] | None = None,
        has_multikueue_check: bool = False,
        provisioning_flavors: frozenset[str] = frozenset(),
    ) -> None:
        self.name = spec.name
        self.spec = spec
        self.node = node
        self.parent: CohortSnapshot | None = None
        #: Workloads reserving quota here, by ``namespace/name``; each carries its admission.
        self.workloads: dict[str, Workload] = workloads if workloads is not None else {}
        self.active = active
        #: "" when active; otherwise the reason (SPEC §1.2, or :data:`REASON_COHORT_HAS_CYCLE`).
        self.inactive_reason = inactive_reason
        #: Grows when the queue's quota changes or a workload leaves it: a workload that did not
        #: fit before may fit now (upstream ``AllocatableResourceGeneration``).
        self.allocatable_generation = allocatable_generation
        #: Admission check name → the flavors it applies to (upstream ``NewAdmissionChecks``).
        self.admission_checks: Mapping[str, frozenset[str]] = admission_checks or {}
        self.has_multikueue_check = has_multikueue_check
        #: Flavors a ProvisioningRequest admission check applies to.
        self.provisioning_flavors = provisioning_flavors

    def __repr__(self) -> str:
        return f"ClusterQueueSnapshot({self.name!r})"

    def has_parent(self) -> bool:
        """Whether the queue is in a Cohort."""
        return self.parent is not None

    def path(self) -> str:
        """``/root/…/cohort/cq``, ``/cq`` without a Cohort (as preemption messages print it)."""
        names = [self.name]
        current = self.parent
        while current is not None:
            names.append(current.name)
            current = current.parent
        return "/" + "/".join(reversed(names))

    def path_parent_to_root(self) -> Iterator[CohortSnapshot]:
        """The queue's Cohort, its parent, … the root."""
        current = self.parent
        while current is not None:
            yield current
            current = current.parent

    def root_cohort(self) -> CohortSnapshot | None:
        """The root of the queue's Cohort tree, None without a Cohort."""
        return None if self.parent is None else self.parent.root()

    # --- quota queries -------------------------------------------------------------------------

    def quota(self, fr: FlavorResource) -> ResourceQuota:
        """The queue's quota for ``fr`` (nominal 0, no limits when undeclared)."""
        return self.node.quota(fr)

    def nominal(self, fr: FlavorResource) -> int:
        """``nominalQuota`` of ``fr``."""
        return self.node.quota(fr).nominal

    def usage(self, fr: FlavorResource) -> int:
        """What the queue's workloads reserve of ``fr``."""
        return self.node.usage.get(fr, 0)

    def borrowing_limit(self, fr: FlavorResource) -> int | None:
        """``borrowingLimit`` of ``fr`` (None: unlimited)."""
        return self.node.quota(fr).borrowing_limit

    def lending_limit(self, fr: FlavorResource) -> int | None:
        """``lendingLimit`` of ``fr`` (None: lends everything)."""
        return self.node.quota(fr).lending_limit

    def local_available(self, fr: FlavorResource) -> int:
        """Unused capacity the lending limit keeps private to this queue."""
        return rn.local_available(self.node, fr)

    def available(self, fr: FlavorResource) -> int:
        """Capacity left for a new request, borrowing included, never below 0."""
        return max(0, rn.available(self, fr))

    def potential_available(self, fr: FlavorResource) -> int:
        """The largest request this queue could ever admit of ``fr``."""
        return rn.potential_available(self, fr)

    def borrowing(self, fr: FlavorResource) -> bool:
        """Usage above the nominal quota."""
        return self.borrowing_with(fr, 0)

    def borrowing_with(self, fr: FlavorResource, value: int) -> bool:
        """Whether ``usage + value`` would exceed the nominal quota."""
        return self.node.quota(fr).nominal < self.node.usage.get(fr, 0) + value

    def is_within_nominal(self, frs: Iterable[FlavorResource]) -> bool:
        """Usage within nominal in every one of ``frs``."""
        return rn.is_within_nominal_in_resources(self.node, frs)

    def quantities_fit_in_quota(
        self, requests: Mapping[FlavorResource, int]
    ) -> tuple[bool, dict[FlavorResource, int]]:
        """Whether ``requests`` fit in nominal quota, and what exceeds the private quota (to
        ask the Cohort next; upstream ``QuantitiesFitInQuota``)."""
        return rn.quantities_fit_in_quota(self.node, requests)

    def resource_group_for(self, resource: str) -> ResourceGroup | None:
        """The resource group covering ``resource`` (upstream ``RGByResource``)."""
        for group in self.spec.resource_groups:
            if resource in group.covered_resources:
                return group
        return None

    def height_of_lowest_subtree_that_fits(
        self, fr: FlavorResource, value: int
    ) -> tuple[int, bool]:
        """Height of the lowest subtree (the queue alone: 0) that fits ``value`` more of ``fr``,
        and whether that subtree is smaller than the whole tree (so capacity may be reclaimed
        inside it). Without a fit: the height of the whole tree and False. Upstream
        ``FindHeightOfLowestSubtreeThatFits``."""
        parent = self.parent
        if parent is None or not self.borrowing_with(fr, value):
            return 0, parent is not None
        remaining = value - self.local_available(fr)
        tracking: CohortSnapshot | None = parent
        while tracking is not None:
            if not tracking.borrowing_with(fr, remaining):
                return tracking.height(), tracking.parent is not None
            remaining -= tracking.local_available(fr)
            tracking = tracking.parent
        return parent.root().height(), False

    def dominant_resource_share(
        self, workload_request: Mapping[FlavorResource, int] | None = None
    ) -> DRS:
        """The queue's Dominant Resource Share in its Cohort (with ``workload_request`` added
        to its usage when given)."""
        weight = self.spec.fair_weight_milli / 1000
        return dominant_resource_share(self, weight, workload_request, _lendable_of)

    def fits(self, usage: Mapping[FlavorResource, int]) -> bool:
        """Whether every amount of ``usage`` is within :meth:`available`."""
        return all(self.available(fr) >= value for fr, value in usage.items())

    # --- mutation (simulation) -----------------------------------------------------------------

    def add_usage(self, usage: Mapping[FlavorResource, int]) -> None:
        """Charge ``usage`` here and, beyond private quota, up the Cohorts."""
        for fr, value in usage.items():
            rn.add_usage(self, fr, value)

    def remove_usage(self, usage: Mapping[FlavorResource, int]) -> None:
        """Release ``usage`` here and up the Cohorts."""
        for fr, value in usage.items():
            rn.remove_usage(self, fr, value)

    def simulate_usage_addition(self, usage: Mapping[FlavorResource, int]) -> Callable[[], None]:
        """Add ``usage``; the returned function takes it away again."""
        self.add_usage(usage)
        return lambda: self.remove_usage(usage)

    def simulate_usage_removal(self, usage: Mapping[FlavorResource, int]) -> Callable[[], None]:
        """Remove ``usage``; the returned function puts it back."""
        self.remove_usage(usage)
        return lambda: self.add_usage(usage)

    def add_workload(self, wl: Workload) -> None:
        """Record ``wl`` (which must carry its admission) as reserving here, with its usage."""
        if wl.admission is None:
            raise ValueError(f"workload {wl.key} has no admission")
        previous = self.workloads.get(wl.key)
        if previous is not None and previous.admission is not None:
            self.remove_usage(previous.admission.usage())
        self.workloads[wl.key] = wl
        self.add_usage(wl.admission.usage())

    def remove_workload(self, key: str) -> Workload | None:
        """Forget workload ``key`` and its usage; returns it (None if it was not here)."""
        wl = self.workloads.pop(key, None)
        if wl is not None and wl.admission is not None:
            self.remove_usage(wl.admission.usage())
        return wl


def _lendable_of(parent: rn.HierarchicalNode) -> Mapping[str, int]:
    # Parents in a snapshot are always CohortSnapshots, which keep their lendable amounts.
    assert isinstance(parent, CohortSnapshot)
    return parent.lendable()


@dataclass(slots=True)
class Snapshot:
    """The quota tree at the start of a scheduling cycle."""

    cluster_queues: dict[str, ClusterQueueSnapshot] = field(default_factory=dict)
    cohorts: dict[str, CohortSnapshot] = field(default_factory=dict)
    flavors: dict[str, ResourceFlavor] = field(default_factory=dict)
    admission_checks: dict[str, AdmissionCheck] = field(default_factory=dict)

    def cluster_queue(self, name: str) -> ClusterQueueSnapshot | None:
        """The queue ``name`` if it exists and is active (what upstream's snapshot holds)."""
        cq = self.cluster_queues.get(name)
        return cq if cq is not None and cq.active else None

    def inactive_cluster_queues(self) -> set[str]:
        """Names of the queues that exist but may not admit (upstream
        ``InactiveClusterQueueSets``)."""
        return {name for name, cq in self.cluster_queues.items() if not cq.active}

    def add_workload(self, wl: Workload) -> None:
        """Add ``wl`` to the queue its admission names."""
        if wl.admission is None:
            raise ValueError(f"workload {wl.key} has no admission")
        self.cluster_queues[wl.admission.cluster_queue].add_workload(wl)

    def remove_workload(self, wl: Workload) -> None:
        """Remove ``wl`` from the queue its admission names."""
        if wl.admission is None:
            raise ValueError(f"workload {wl.key} has no admission")
        self.cluster_queues[wl.admission.cluster_queue].remove_workload(wl.key)

    def simulate_workload_removal(self, workloads: Iterable[Workload]) -> Callable[[], None]:
        """Remove ``workloads``; the returned function restores them (upstream
        ``SimulateWorkloadRemoval``)."""
        removed = list(workloads)
        for wl in removed:
            self.remove_workload(wl)

        def restore() -> None:
            for wl in removed:
                self.add_workload(wl)

        return restore
