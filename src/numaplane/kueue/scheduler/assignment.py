"""What flavor assignment produces (upstream ``pkg/scheduler/flavorassigner``'s result types):
the mode of a flavor (Fit, Preempt, NoFit), what a preemption simulation found, the per-podSet
and per-Workload assignment with its message, ``QuotaReserved=False`` reason, the flavors tried
for the QuotaReserved event, and the ``status.admission`` it becomes. The search that fills them
is :mod:`.flavorassigner`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Final

from numaplane.kueue.api.model import Admission, PodSetAssignment, ResourceGroup
from numaplane.kueue.resources import FlavorResource

#: ``QuotaReserved=False`` reasons a NoFit assignment resolves to (UnadmittedWorkloadsObservability
#: on).
REASON_WAITING_FOR_QUOTA: Final = "WaitingForQuota"
REASON_EXCEEDS_MAX_QUOTA: Final = "ExceedsMaxQuota"
REASON_NO_MATCHING_FLAVOR: Final = "NoMatchingFlavor"
_SEVERITY: Final = {
    "TopologyPlacementFailed": 1,
    REASON_WAITING_FOR_QUOTA: 2,
    REASON_EXCEEDS_MAX_QUOTA: 3,
    REASON_NO_MATCHING_FLAVOR: 4,
}


def most_severe(a: str, b: str) -> str:
    """The more severe of two ``QuotaReserved=False`` reasons (upstream's order)."""
    return a if _SEVERITY.get(a, 0) >= _SEVERITY.get(b, 0) else b


class FlavorAssignmentMode(IntEnum):
    """How a flavor can be assigned, from least to most preferred (upstream's order)."""

    NO_FIT = 0
    PREEMPT = 1
    FIT = 2

    def __str__(self) -> str:
        return {0: "NoFit", 1: "Preempt", 2: "Fit"}[self.value]


class PreemptionPossibility(IntEnum):
    """What a preemption simulation found (upstream ``preemptioncommon.PreemptionPossibility``)."""

    NO_CANDIDATES = 0
    PREEMPT = 1
    RECLAIM = 2

    def __str__(self) -> str:
        return {0: "NoCandidates", 1: "Preempt", 2: "Reclaim"}[self.value]


@dataclass(slots=True)
class Status:
    """Why a podSet's flavors cannot be assigned right away (empty: it fits)."""

    reasons: list[str] = field(default_factory=list)
    error: str | None = None
    no_fit_reason: str = ""

    @property
    def is_fit(self) -> bool:
        """No error and no reasons."""
        return self.error is None and not self.reasons

    def message(self) -> str:
        """The error, or the reasons sorted and joined with ``", "`` (upstream)."""
        if self.error is not None:
            return self.error
        return ", ".join(sorted(self.reasons))


@dataclass(slots=True)
class FlavorAssignment:
    """The flavor a resource got, its mode and where the search stopped."""

    name: str
    mode: FlavorAssignmentMode
    #: Index of the last flavor tried in the group; -1 when the search reached the end.
    tried_flavor_idx: int = -1
    borrow: int = 0


@dataclass(slots=True)
class FlavorAttempt:
    """One flavor tried for a podSet, with its worst outcome over the group's resources."""

    flavor: str
    mode: FlavorAssignmentMode
    borrow: int = 0
    possibility: PreemptionPossibility | None = None
    reasons: list[str] = field(default_factory=list)
    no_fit_reason: str = ""


@dataclass(slots=True)
class PodSetAssignmentResult:
    """A podSet's flavors (resource → assignment), status, total requests and count."""

    name: str
    flavors: dict[str, FlavorAssignment]
    status: Status
    requests: dict[str, int]
    count: int
    attempts: list[FlavorAttempt] = field(default_factory=list)

    @property
    def mode(self) -> FlavorAssignmentMode:
        """The worst mode of its flavors (Fit when the status is empty)."""
        if self.status.is_fit:
            return FlavorAssignmentMode.FIT
        if self.status.error is not None or not self.flavors:
            return FlavorAssignmentMode.NO_FIT
        return min(fa.mode for fa in self.flavors.values())


@dataclass(slots=True)
class Assignment:
    """The flavors of every podSet considered (the assignment stops at the first podSet that
    gets none), the borrowing level, the quota it takes and where each search stopped."""

    pod_sets: list[PodSetAssignmentResult] = field(default_factory=list)
    #: Height of the smallest cohort subtree the usage fits in; 0 when not borrowing.
    borrowing: int = 0
    usage: dict[FlavorResource, int] = field(default_factory=dict)
    last_tried_flavor_idx: list[dict[str, int]] = field(default_factory=list)
    #: The resolved ``QuotaReserved=False`` reason of a NoFit assignment ("" otherwise).
    no_fit_reason: str = ""

    @property
    def mode(self) -> FlavorAssignmentMode:
        """The worst podSet mode (NoFit when no podSet was assigned)."""
        if not self.pod_sets:
            return FlavorAssignmentMode.NO_FIT
        return min(ps.mode for ps in self.pod_sets)

    @property
    def requires_borrowing(self) -> bool:
        """Borrowing at any level."""
        return self.borrowing > 0

    def pending_flavors(self) -> bool:
        """Whether some search stopped before the last flavor (a retry would resume there)."""
        return any(idx != -1 for per_ps in self.last_tried_flavor_idx for idx in per_ps.values())

    def message(self) -> str:
        """Upstream's ``Assignment.Message``: per podSet that does not fit,
        ``couldn't assign flavors to pod set <ps>: <reasons>``, joined with ``"; "``."""
        parts: list[str] = []
        for ps in self.pod_sets:
            if ps.status.is_fit:
                continue
            if ps.status.error is not None:
                return f"failed to assign flavors to pod set {ps.name}: {ps.status.error}"
            parts.append(f"couldn't assign flavors to pod set {ps.name}: {ps.status.message()}")
        return "; ".join(parts)

    def reason(self) -> str:
        """The ``QuotaReserved=False`` reason of a NoFit assignment (``WaitingForQuota``,
        ``ExceedsMaxQuota`` or ``NoMatchingFlavor``); "" when it is not NoFit or nothing
        resolved (the scheduler then uses its own reason)."""
        return self.no_fit_reason

    def flavors_considered(self) -> str:
        """The flavors tried that did not simply fit, as upstream's QuotaReserved event appends
        them (``FormatFlavorAssignmentAttemptsForEvents``): ``<ps>: <flavor>(<mode>[;borrow=N]
        [;<reasons>]), ...`` per podSet, joined with ``" | "``; "" when every try fit."""
        per_pod_set: list[str] = []
        for ps in self.pod_sets:
            shown: list[str] = []
            for att in ps.attempts:
                if att.mode is FlavorAssignmentMode.FIT and att.borrow == 0:
                    continue
                mode = (
                    str(att.mode)
                    if att.possibility is None
                    else f"preemptionMode={att.possibility}"
                )
                borrow = f";borrow={att.borrow}" if att.borrow > 0 else ""
                reasons = ";" + ";".join(att.reasons) if att.reasons else ""
                shown.append(f"{att.flavor}({mode}{borrow}{reasons})")
            if shown:
                per_pod_set.append(f"{ps.name}: {', '.join(shown)}")
        return " | ".join(per_pod_set)

    def to_admission(self, cq_name: str) -> Admission:
        """``status.admission`` for this assignment in ClusterQueue ``cq_name``."""
        return Admission(
            cluster_queue=cq_name,
            pod_set_assignments=tuple(
                PodSetAssignment(
                    name=ps.name,
                    flavors={res: fa.name for res, fa in ps.flavors.items()},
                    resource_usage={res: ps.requests.get(res, 0) for res in ps.flavors},
                    count=ps.count,
                )
                for ps in self.pod_sets
            ),
        )

    def _append(self, psa: PodSetAssignmentResult) -> None:
        self.pod_sets.append(psa)
        tried: dict[str, int] = {}
        for res, fa in psa.flavors.items():
            self.borrowing = max(self.borrowing, fa.borrow)
            fr = (fa.name, res)
            self.usage[fr] = self.usage.get(fr, 0) + psa.requests.get(res, 0)
            tried[res] = fa.tried_flavor_idx
        self.last_tried_flavor_idx.append(tried)

    def _resolve_no_fit_reason(self, groups: Sequence[ResourceGroup]) -> None:
        if self.mode is not FlavorAssignmentMode.NO_FIT:
            return
        overall = ""
        for ps in self.pod_sets:
            if ps.mode is not FlavorAssignmentMode.NO_FIT:
                continue
            if not ps.attempts:
                overall = most_severe(overall, REASON_NO_MATCHING_FLAVOR)
                continue
            # Alternatives within a group: the mildest blocker; across groups: the worst.
            per_group: dict[int, str] = {}
            for i, att in enumerate(ps.attempts):
                if att.mode is not FlavorAssignmentMode.NO_FIT:
                    continue
                indices = [
                    g
                    for g, rg in enumerate(groups)
                    if any(f.name == att.flavor for f in rg.flavors)
                ] or [-1 - i]
                for g in indices:
                    have = per_group.get(g)
                    if have is None or _SEVERITY.get(att.no_fit_reason, 0) < _SEVERITY.get(have, 0):
                        per_group[g] = att.no_fit_reason
            ps_reason = ps.status.no_fit_reason
            for reason in per_group.values():
                ps_reason = most_severe(ps_reason, reason)
            overall = most_severe(overall, ps_reason)
        self.no_fit_reason = overall
