"""Kueue's objects (``kueue.x-k8s.io/v1beta2``) as immutable values with upstream's defaults
applied, the shape every part of the core reads. Amounts are Kueue's integers
(:mod:`numaplane.kueue.resources`). :mod:`numaplane.kueue.api.parse` builds them from the JSON
form the API serves; tests build them directly.

Each value keeps ``raw`` (the object it was read from, never mutated) where the I/O edge needs to
write the object back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from numaplane.kueue.resources import FlavorResource

# --- enumerations (the API's strings) -----------------------------------------------------------

NEVER: Final = "Never"
LOWER_PRIORITY: Final = "LowerPriority"
LOWER_OR_NEWER_EQUAL_PRIORITY: Final = "LowerOrNewerEqualPriority"
ANY: Final = "Any"

BEST_EFFORT_FIFO: Final = "BestEffortFIFO"
STRICT_FIFO: Final = "StrictFIFO"

MAY_STOP_SEARCH: Final = "MayStopSearch"
TRY_NEXT_FLAVOR: Final = "TryNextFlavor"
BORROWING_OVER_PREEMPTION: Final = "BorrowingOverPreemption"
PREEMPTION_OVER_BORROWING: Final = "PreemptionOverBorrowing"

STOP_NONE: Final = "None"
STOP_HOLD: Final = "Hold"
STOP_HOLD_AND_DRAIN: Final = "HoldAndDrain"

#: The configuration's ``resources.quotaCheckStrategy`` (default ``BlockUndeclared``).
BLOCK_UNDECLARED: Final = "BlockUndeclared"
IGNORE_UNDECLARED: Final = "IgnoreUndeclared"


# --- quota --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResourceQuota:
    """One resource of a flavor in a resource group."""

    name: str
    nominal: int
    #: None: unlimited borrowing.
    borrowing_limit: int | None = None
    #: None: everything may be lent.
    lending_limit: int | None = None


@dataclass(frozen=True, slots=True)
class FlavorQuotas:
    """A flavor of a resource group with its quota for every covered resource (in order)."""

    name: str
    resources: tuple[ResourceQuota, ...]


@dataclass(frozen=True, slots=True)
class ResourceGroup:
    """Resources that must all get the same flavor; flavors in preference order."""

    covered_resources: tuple[str, ...]
    flavors: tuple[FlavorQuotas, ...]


def quotas_of(groups: tuple[ResourceGroup, ...]) -> dict[FlavorResource, ResourceQuota]:
    """Every (flavor, resource) of ``groups`` with its quota."""
    return {
        (fq.name, rq.name): rq for group in groups for fq in group.flavors for rq in fq.resources
    }


# --- ClusterQueue, Cohort -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BorrowWithinCohort:
    """``spec.preemption.borrowWithinCohort``."""

    policy: str = NEVER
    max_priority_threshold: int | None = None


@dataclass(frozen=True, slots=True)
class PreemptionPolicy:
    """``spec.preemption`` with upstream's defaults."""

    reclaim_within_cohort: str = NEVER
    within_cluster_queue: str = NEVER
    borrow_within_cohort: BorrowWithinCohort = field(default_factory=BorrowWithinCohort)


@dataclass(frozen=True, slots=True)
class FlavorFungibility:
    """``spec.flavorFungibility`` with upstream's v1beta2 defaults."""

    when_can_borrow: str = MAY_STOP_SEARCH
    when_can_preempt: str = TRY_NEXT_FLAVOR
    #: None acts as ``BorrowingOverPreemption``.
    preference: str | None = None


@dataclass(frozen=True, slots=True)
class AdmissionCheckRule:
    """An entry of ``spec.admissionChecksStrategy.admissionChecks`` (empty ``on_flavors``: all)."""

    name: str
    on_flavors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ClusterQueue:
    """``ClusterQueue``: cluster-scoped, the unit of quota."""

    name: str
    resource_groups: tuple[ResourceGroup, ...] = ()
    #: ``spec.cohortName``; "" when in no cohort.
    cohort: str = ""
    queueing_strategy: str = BEST_EFFORT_FIFO
    #: ``spec.namespaceSelector`` as written; None matches **no** namespace, ``{}`` all.
    namespace_selector: Mapping[str, Any] | None = None
    preemption: PreemptionPolicy = field(default_factory=PreemptionPolicy)
    flavor_fungibility: FlavorFungibility = field(default_factory=FlavorFungibility)
    admission_checks: tuple[AdmissionCheckRule, ...] = ()
    stop_policy: str = STOP_NONE
    quota_check_strategy: str = BLOCK_UNDECLARED
    #: ``spec.fairSharing.weight`` in thousandths (upstream's milli-value); 1000 by default.
    fair_weight_milli: int = 1000
    uid: str = ""
    deleting: bool = False
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def quotas(self) -> dict[FlavorResource, ResourceQuota]:
        """Every (flavor, resource) this queue declares, with its quota."""
        return quotas_of(self.resource_groups)


@dataclass(frozen=True, slots=True)
class Cohort:
    """``Cohort``: an inner node of the quota tree; may own quota and have a parent."""

    name: str
    parent: str = ""
    resource_groups: tuple[ResourceGroup, ...] = ()
    fair_weight_milli: int = 1000
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


# --- flavors, queues, checks, priorities --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResourceFlavor:
    """``ResourceFlavor``: labels to inject and match, taints to tolerate, tolerations to add."""

    name: str
    node_labels: Mapping[str, str] = field(default_factory=dict)
    #: Taint dicts as in the API (``key``, ``value``, ``effect``).
    node_taints: tuple[Mapping[str, Any], ...] = ()
    #: Toleration dicts as in the API.
    tolerations: tuple[Mapping[str, Any], ...] = ()
    topology_name: str | None = None


@dataclass(frozen=True, slots=True)
class LocalQueue:
    """``LocalQueue``: a namespace's door to a ClusterQueue."""

    namespace: str
    name: str
    cluster_queue: str
    stop_policy: str = STOP_NONE

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class AdmissionCheck:
    """``AdmissionCheck``: ``active`` is its ``Active`` condition being True."""

    name: str
    controller_name: str
    parameters: Mapping[str, Any] | None = None
    active: bool = False


@dataclass(frozen=True, slots=True)
class WorkloadPriorityClass:
    """``WorkloadPriorityClass``."""

    name: str
    value: int


# --- Workload -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PodSet:
    """A podSet of a Workload: ``requests`` per pod (already including overhead and limits
    standing in for missing requests), what flavor matching reads from the template."""

    name: str
    count: int
    requests: Mapping[str, int]
    min_count: int | None = None
    node_selector: Mapping[str, str] = field(default_factory=dict)
    #: ``affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms``.
    required_node_affinity: tuple[Mapping[str, Any], ...] = ()
    tolerations: tuple[Mapping[str, Any], ...] = ()

    def total(self, count: int | None = None) -> dict[str, int]:
        """Requests of ``count`` pods (the podSet's own count by default)."""
        n = self.count if count is None else count
        return {name: value * n for name, value in self.requests.items()}


@dataclass(frozen=True, slots=True)
class PodSetAssignment:
    """``status.admission.podSetAssignments[]``."""

    name: str
    #: resource → flavor
    flavors: Mapping[str, str]
    #: resource → amount for all ``count`` pods
    resource_usage: Mapping[str, int]
    count: int


@dataclass(frozen=True, slots=True)
class Admission:
    """``status.admission``."""

    cluster_queue: str
    pod_set_assignments: tuple[PodSetAssignment, ...]

    def usage(self) -> dict[FlavorResource, int]:
        """The quota this admission takes, per (flavor, resource)."""
        total: dict[FlavorResource, int] = {}
        for psa in self.pod_set_assignments:
            for resource, value in psa.resource_usage.items():
                flavor = psa.flavors.get(resource)
                if flavor is None:
                    continue
                key = (flavor, resource)
                total[key] = total.get(key, 0) + value
        return total


@dataclass(frozen=True, slots=True)
class Workload:
    """A ``Workload`` as the core reads it. Times are seconds since the epoch."""

    namespace: str
    name: str
    uid: str
    queue_name: str
    pod_sets: tuple[PodSet, ...]
    priority: int = 0
    creation_time: float = 0.0
    #: The FIFO key: creation time, or the eviction time for workloads evicted by
    #: PodsReadyTimeout or AdmissionCheck (upstream's ``GetQueueOrderTimestamp``).
    queue_order_time: float = 0.0
    admission: Admission | None = None
    #: ``spec.active`` (default True).
    active: bool = True
    #: Condition type → (status, reason, message, lastTransitionTime seconds).
    conditions: Mapping[str, tuple[str, str, str, float]] = field(default_factory=dict)
    #: ``status.admissionChecks``: name → state (Pending/Ready/Retry/Rejected).
    check_states: Mapping[str, str] = field(default_factory=dict)
    #: ``status.requeueState.requeueAt`` in seconds, if set.
    requeue_at: float | None = None
    requeue_count: int = 0
    #: Label ``kueue.x-k8s.io/job-uid`` (or the owner's uid), used in preemption messages.
    job_uid: str = ""
    deleting: bool = False
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    #: ``status.reclaimablePods``: podSet → pods that are done and give their quota back.
    reclaimable_pods: Mapping[str, int] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    def usage(self) -> dict[FlavorResource, int]:
        """The quota this workload holds: its admission's usage with each podSet scaled down to
        its pods not yet reclaimable (upstream ``totalRequestsFromAdmission`` with the
        ``ReclaimablePods`` feature, GA). Without reclaimable pods it is ``admission.usage()``."""
        if self.admission is None:
            return {}
        counts = {ps.name: ps.count for ps in self.pod_sets}
        total: dict[FlavorResource, int] = {}
        for psa in self.admission.pod_set_assignments:
            spec_count = counts.get(psa.name, 0)
            remaining = spec_count - min(self.reclaimable_pods.get(psa.name, 0), spec_count)
            for resource, value in psa.resource_usage.items():
                flavor = psa.flavors.get(resource)
                if flavor is None:
                    continue
                if remaining < psa.count:
                    # Per pod first, as upstream divides then multiplies (integer amounts).
                    value = value // psa.count * remaining
                key = (flavor, resource)
                total[key] = total.get(key, 0) + value
        return total

    def condition_true(self, kind: str) -> bool:
        """Whether condition ``kind`` is present with status True."""
        found = self.conditions.get(kind)
        return found is not None and found[0] == "True"

    @property
    def has_quota_reservation(self) -> bool:
        """``QuotaReserved=True``."""
        return self.condition_true("QuotaReserved")

    @property
    def is_admitted(self) -> bool:
        """``Admitted=True``."""
        return self.condition_true("Admitted")

    @property
    def is_finished(self) -> bool:
        """``Finished=True``."""
        return self.condition_true("Finished")

    @property
    def is_evicted(self) -> bool:
        """``Evicted=True``."""
        return self.condition_true("Evicted")

    def total_requests(self) -> list[dict[str, int]]:
        """Per podSet, the requests of all its pods (in podSet order)."""
        return [ps.total() for ps in self.pod_sets]
