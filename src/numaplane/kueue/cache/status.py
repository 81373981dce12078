"""What a ClusterQueue and a LocalQueue show in their status: whether the queue is active (and
why not), and its usage rows (upstream ``clusterqueue.go`` ``updateQueueStatus`` /
``inactiveReason``, ``cache.go`` ``Usage`` / ``LocalQueueUsage``)."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, Final

from numaplane.kueue.api.model import AdmissionCheck, ClusterQueue, ResourceFlavor
from numaplane.kueue.constants import MULTIKUEUE_CONTROLLER
from numaplane.kueue.resources import FlavorResource, resource_quantity_string

#: ``controllerName`` of ProvisioningRequest admission checks (upstream
#: ``kueue.ProvisioningRequestControllerName``).
PROVISIONING_REQUEST_CONTROLLER: Final = "kueue.x-k8s.io/provisioning-request"

# ClusterQueue ``Active`` condition reasons (upstream ``ClusterQueueActiveReason*``).
REASON_READY: Final = "Ready"
REASON_TERMINATING: Final = "Terminating"
REASON_STOPPED: Final = "Stopped"
REASON_FLAVOR_NOT_FOUND: Final = "FlavorNotFound"
REASON_ADMISSION_CHECK_NOT_FOUND: Final = "AdmissionCheckNotFound"
REASON_ADMISSION_CHECK_INACTIVE: Final = "AdmissionCheckInactive"
REASON_MULTIPLE_MULTIKUEUE_CHECKS: Final = "MultipleMultiKueueAdmissionChecks"
REASON_MULTIKUEUE_PER_FLAVOR: Final = "MultiKueueAdmissionCheckAppliedPerFlavor"
REASON_MULTIKUEUE_WITH_PROVISIONING: Final = "MultiKueueWithProvisioningRequest"
REASON_TOPOLOGY_NOT_FOUND: Final = "TopologyNotFound"
REASON_UNKNOWN: Final = "Unknown"
REASON_NOT_FOUND: Final = "NotFound"

MESSAGE_READY: Final = "Can admit new workloads"
MESSAGE_TERMINATING: Final = "Can't admit new workloads; clusterQueue is terminating"
MESSAGE_NOT_FOUND: Final = "ClusterQueue not found"
#: Upstream ``api.TruncateConditionMessage``: metav1.Condition messages hold at most 32 KiB.
_MAX_CONDITION_MESSAGE: Final = 32 * 1024


def all_flavors(cq: ClusterQueue) -> list[str]:
    """Every flavor of the queue's resource groups, in order."""
    return [fq.name for group in cq.resource_groups for fq in group.flavors]


def admission_check_flavors(cq: ClusterQueue) -> dict[str, frozenset[str]]:
    """Check name → flavors it applies to; no ``onFlavors`` means every flavor (upstream
    ``admissioncheck.NewAdmissionChecks``)."""
    every = frozenset(all_flavors(cq))
    return {
        rule.name: frozenset(rule.on_flavors) if rule.on_flavors else every
        for rule in cq.admission_checks
    }


@dataclass(frozen=True, slots=True)
class QueueHealth:
    """What keeps a ClusterQueue from admitting (empty lists: nothing), as upstream tracks it."""

    stopped: bool = False
    terminating: bool = False
    missing_flavors: tuple[str, ...] = ()
    missing_checks: tuple[str, ...] = ()
    inactive_checks: tuple[str, ...] = ()
    multikueue_checks: tuple[str, ...] = ()
    per_flavor_multikueue_checks: tuple[str, ...] = ()
    provisioning_checks: tuple[str, ...] = ()
    #: (flavor, topology) of each TAS flavor whose Topology does not exist (only tracked with
    #: Topology Aware Scheduling on).
    missing_topologies: tuple[tuple[str, str], ...] = ()

    @property
    def active(self) -> bool:
        """Whether the queue may reserve quota."""
        return not self.terminating and not self.pending

    @property
    def pending(self) -> bool:
        """Upstream's ``pending`` status: something the user must fix."""
        return bool(
            self.stopped
            or self.missing_flavors
            or self.missing_checks
            or self.inactive_checks
            or len(self.multikueue_checks) > 1
            or self.per_flavor_multikueue_checks
            or (self.multikueue_checks and self.provisioning_checks)
            # Topologies live on the workers of a MultiKueue manager.
            or (self.missing_topologies and not self.multikueue_checks)
        )

    def condition(self) -> tuple[bool, str, str]:
        """``(status, reason, message)`` of the queue's ``Active`` condition."""
        if self.terminating:
            return False, REASON_TERMINATING, MESSAGE_TERMINATING
        if not self.pending:
            return True, REASON_READY, MESSAGE_READY
        reasons: list[str] = []
        messages: list[str] = []
        if self.stopped:
            reasons.append(REASON_STOPPED)
            messages.append("is stopped")
        if self.missing_flavors:
            reasons.append(REASON_FLAVOR_NOT_FOUND)
            messages.append(
                f"references missing ResourceFlavor(s): {','.join(self.missing_flavors)}"
            )
        if self.missing_checks:
            reasons.append(REASON_ADMISSION_CHECK_NOT_FOUND)
            messages.append(
                f"references missing AdmissionCheck(s): {','.join(self.missing_checks)}"
            )
        if self.inactive_checks:
            reasons.append(REASON_ADMISSION_CHECK_INACTIVE)
            messages.append(
                f"references inactive AdmissionCheck(s): {','.join(self.inactive_checks)}"
            )
        if len(self.multikueue_checks) > 1:
            reasons.append(REASON_MULTIPLE_MULTIKUEUE_CHECKS)
            messages.append(
                "Cannot use multiple MultiKueue AdmissionChecks on the same ClusterQueue, "
                f"found: {','.join(self.multikueue_checks)}"
            )
        if self.per_flavor_multikueue_checks:
            reasons.append(REASON_MULTIKUEUE_PER_FLAVOR)
            messages.append(
                "Cannot specify MultiKueue AdmissionCheck per flavor, "
                f"found: {','.join(self.per_flavor_multikueue_checks)}"
            )
        if self.multikueue_checks and self.provisioning_checks:
            reasons.append(REASON_MULTIKUEUE_WITH_PROVISIONING)
            messages.append(
                "Cannot use both MultiKueue and ProvisioningRequest AdmissionChecks together, "
                f"found: {','.join(self.multikueue_checks)}, "
                f"{','.join(self.provisioning_checks)}"
            )
        for flavor, topology in self.missing_topologies:
            reasons.append(REASON_TOPOLOGY_NOT_FOUND)
            messages.append(f'there is no Topology "{topology}" for TAS flavor "{flavor}"')
        if not reasons:
            return False, REASON_UNKNOWN, "Can't admit new workloads."
        message = f"Can't admit new workloads: {', '.join(messages)}."
        return False, reasons[0], message[:_MAX_CONDITION_MESSAGE]


def queue_health(
    cq: ClusterQueue,
    flavors: Mapping[str, ResourceFlavor],
    checks: Mapping[str, AdmissionCheck],
    topologies: AbstractSet[str] | None = None,
) -> QueueHealth:
    """Why ``cq`` cannot admit, given the flavors, admission checks and (with Topology Aware
    Scheduling on; None: off) Topologies that exist."""
    missing_flavors = tuple(name for name in all_flavors(cq) if name not in flavors)
    every = frozenset(all_flavors(cq))
    missing: list[str] = []
    inactive: list[str] = []
    multikueue: set[str] = set()
    provisioning: set[str] = set()
    per_flavor: list[str] = []
    for name, on_flavors in admission_check_flavors(cq).items():
        check = checks.get(name)
        if check is None:
            missing.append(name)
            continue
        if not check.active:
            inactive.append(name)
        if check.controller_name == PROVISIONING_REQUEST_CONTROLLER:
            provisioning.add(name)
        if check.controller_name == MULTIKUEUE_CONTROLLER:
            multikueue.add(name)
            if on_flavors != every:
                per_flavor.append(name)
    missing_topologies: list[tuple[str, str]] = []
    if topologies is not None:
        for name in sorted(set(all_flavors(cq))):
            flavor = flavors.get(name)
            if (
                flavor is not None
                and flavor.topology_name
                and flavor.topology_name not in topologies
            ):
                missing_topologies.append((name, flavor.topology_name))
    return QueueHealth(
        stopped=cq.stop_policy not in ("", "None"),
        terminating=cq.deleting,
        missing_flavors=missing_flavors,
        missing_checks=tuple(sorted(missing)),
        inactive_checks=tuple(sorted(inactive)),
        multikueue_checks=tuple(sorted(multikueue)),
        per_flavor_multikueue_checks=tuple(sorted(per_flavor)),
        provisioning_checks=tuple(sorted(provisioning)),
        missing_topologies=tuple(missing_topologies),
    )


# --- usage rows ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResourceUsage:
    """One resource of a flavor in ``flavorsReservation``/``flavorsUsage``."""

    name: str
    total: int
    #: Above nominal; always 0 for a queue in no Cohort (upstream enforces it).
    borrowed: int = 0

    def to_dict(self, *, with_borrowed: bool = True) -> dict[str, Any]:
        """The status JSON, amounts as quantities."""
        out: dict[str, Any] = {
            "name": self.name,
            "total": resource_quantity_string(self.name, self.total),
        }
        if with_borrowed:
            out["borrowed"] = resource_quantity_string(self.name, self.borrowed)
        return out


@dataclass(frozen=True, slots=True)
class FlavorUsage:
    """One flavor's row: its resources sorted by name."""

    name: str
    resources: tuple[ResourceUsage, ...]

    def to_dict(self, *, with_borrowed: bool = True) -> dict[str, Any]:
        """The status JSON."""
        return {
            "name": self.name,
            "resources": [r.to_dict(with_borrowed=with_borrowed) for r in self.resources],
        }


@dataclass(frozen=True, slots=True)
class ClusterQueueUsage:
    """``status.flavorsReservation``, ``flavorsUsage``, ``reservingWorkloads``,
    ``admittedWorkloads`` of a ClusterQueue."""

    flavors_reservation: tuple[FlavorUsage, ...] = ()
    flavors_usage: tuple[FlavorUsage, ...] = ()
    reserving_workloads: int = 0
    admitted_workloads: int = 0

    def to_status(self) -> dict[str, Any]:
        """The status fields as JSON (``pendingWorkloads`` is the queue manager's)."""
        return {
            "flavorsReservation": [f.to_dict() for f in self.flavors_reservation],
            "flavorsUsage": [f.to_dict() for f in self.flavors_usage],
            "reservingWorkloads": self.reserving_workloads,
            "admittedWorkloads": self.admitted_workloads,
        }


@dataclass(frozen=True, slots=True)
class LocalQueueUsage:
    """``status.flavorsReservation``, ``flavorsUsage``, ``reservingWorkloads``,
    ``admittedWorkloads`` of a LocalQueue (rows carry no ``borrowed``)."""

    flavors_reservation: tuple[FlavorUsage, ...] = ()
    flavors_usage: tuple[FlavorUsage, ...] = ()
    reserving_workloads: int = 0
    admitted_workloads: int = 0

    def to_status(self) -> dict[str, Any]:
        """The status fields as JSON (``pendingWorkloads`` is the queue manager's)."""
        return {
            "flavorsReservation": [
                f.to_dict(with_borrowed=False) for f in self.flavors_reservation
            ],
            "flavorsUsage": [f.to_dict(with_borrowed=False) for f in self.flavors_usage],
            "reservingWorkloads": self.reserving_workloads,
            "admittedWorkloads": self.admitted_workloads,
        }


@dataclass(slots=True)
class UsageCounter:
    """Usage and counts of a set of workloads (a LocalQueue's, within one ClusterQueue)."""

    reserved: dict[FlavorResource, int] = field(default_factory=dict)
    admitted: dict[FlavorResource, int] = field(default_factory=dict)
    reserving_workloads: int = 0
    admitted_workloads: int = 0

    def change(self, usage: Mapping[FlavorResource, int], *, admitted: bool, sign: int) -> None:
        """Add (``sign`` 1) or subtract (-1) a workload's usage."""
        for fr, value in usage.items():
            self.reserved[fr] = self.reserved.get(fr, 0) + sign * value
        self.reserving_workloads += sign
        if admitted:
            for fr, value in usage.items():
                self.admitted[fr] = self.admitted.get(fr, 0) + sign * value
            self.admitted_workloads += sign

    @property
    def empty(self) -> bool:
        """No workload counted."""
        return self.reserving_workloads == 0


def usage_rows(
    cq: ClusterQueue,
    usage: Mapping[FlavorResource, int],
    *,
    in_cohort: bool,
) -> tuple[FlavorUsage, ...]:
    """One row per flavor of every resource group (in order), its covered resources sorted by
    name; ``borrowed`` = usage above nominal, only for a queue in a Cohort (upstream
    ``getUsage``)."""
    quotas = cq.quotas()
    rows: list[FlavorUsage] = []
    for group in cq.resource_groups:
        resources = sorted(set(group.covered_resources))
        for fq in group.flavors:
            cells: list[ResourceUsage] = []
            for resource in resources:
                fr = (fq.name, resource)
                used = usage.get(fr, 0)
                borrowed = 0
                if in_cohort:
                    quota = quotas.get(fr)
                    borrowed = max(0, used - (quota.nominal if quota is not None else 0))
                cells.append(ResourceUsage(resource, used, borrowed))
            rows.append(FlavorUsage(fq.name, tuple(cells)))
    return tuple(rows)


def cluster_queue_usage(
    cq: ClusterQueue,
    reserved: Mapping[FlavorResource, int],
    admitted: Mapping[FlavorResource, int],
    *,
    in_cohort: bool,
    reserving_workloads: int,
    admitted_workloads: int,
) -> ClusterQueueUsage:
    """The usage a ClusterQueue's status shows."""
    return ClusterQueueUsage(
        flavors_reservation=usage_rows(cq, reserved, in_cohort=in_cohort),
        flavors_usage=usage_rows(cq, admitted, in_cohort=in_cohort),
        reserving_workloads=reserving_workloads,
        admitted_workloads=admitted_workloads,
    )


def local_queue_usage(cq: ClusterQueue | None, counter: UsageCounter | None) -> LocalQueueUsage:
    """The usage a LocalQueue's status shows: rows over its ClusterQueue's flavors (none when the
    ClusterQueue is unknown)."""
    if cq is None:
        return LocalQueueUsage()
    counter = counter or UsageCounter()
    return LocalQueueUsage(
        flavors_reservation=usage_rows(cq, counter.reserved, in_cohort=False),
        flavors_usage=usage_rows(cq, counter.admitted, in_cohort=False),
        reserving_workloads=counter.reserving_workloads,
        admitted_workloads=counter.admitted_workloads,
    )
