"""Flavor assignment: which ResourceFlavor each resource of each podSet of a Workload gets in a
ClusterQueue, and whether that fits now, needs preemption or cannot fit, decision for decision as
upstream's ``pkg/scheduler/flavorassigner/flavorassigner.go`` (quota.md §3).

Over ~400 lines: the result types and the search are one upstream file, kept whole for review.

Per podSet (in order), per resource group the podSet requests, the group's flavors are tried in
the ClusterQueue's order (resuming after the last tried index when given); a flavor must accept
the pods (taints, node affinity: :mod:`.podset_match`), then each covered resource is checked
against the quota tree with what earlier podSets already took in that flavor: above the potential
capacity is NoFit (``ExceedsMaxQuota``); within what is available is Fit at a borrowing level;
otherwise preemption is simulated when it could help (the request fits the ClusterQueue's
nominal quota, a hierarchical reclaim is possible, or the queue may preempt while borrowing).
``flavorFungibility`` decides whether to stop at a flavor or keep looking, and which tried flavor
is best. Messages and reasons are upstream's, verbatim.

Left out as in quota.md's minimal subset: Topology-Aware Scheduling, DRA, workload slices,
concurrent admission variants (their podSets always form one group each here).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Final, Generic, Protocol, TypeVar

from numaplane.kueue.api.model import (
    IGNORE_UNDECLARED,
    NEVER,
    PREEMPTION_OVER_BORROWING,
    TRY_NEXT_FLAVOR,
    Admission,
    ClusterQueue,
    FlavorFungibility,
    PodSet,
    PodSetAssignment,
    ResourceFlavor,
    ResourceGroup,
    Workload,
)
from numaplane.kueue.resources import FlavorResource, resource_quantity_string
from numaplane.kueue.scheduler.podset_match import PodSetMatchError, flavor_mismatch

__all__ = [
    "REASON_EXCEEDS_MAX_QUOTA",
    "REASON_NO_MATCHING_FLAVOR",
    "REASON_WAITING_FOR_QUOTA",
    "Assignment",
    "ClusterQueueView",
    "FlavorAssignment",
    "FlavorAssignmentMode",
    "FlavorAttempt",
    "LastTried",
    "PodSetAssignmentResult",
    "PreemptionOracle",
    "PreemptionPossibility",
    "SnapshotView",
    "Status",
    "assign_flavors",
]

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
_PODS: Final = "pods"


_q: Final = resource_quantity_string


def _most_severe(a: str, b: str) -> str:
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


class _PMode(IntEnum):
    # upstream's granular preemptionMode, worst first
    NO_FIT = 0
    NO_CANDIDATES = 1
    PREEMPT = 2
    RECLAIM = 3
    FIT = 4

    def public(self) -> FlavorAssignmentMode:
        if self is _PMode.NO_FIT:
            return FlavorAssignmentMode.NO_FIT
        if self is _PMode.FIT:
            return FlavorAssignmentMode.FIT
        return FlavorAssignmentMode.PREEMPT

    def possibility(self) -> PreemptionPossibility | None:
        return _TO_POSSIBILITY.get(self)


_TO_POSSIBILITY: Final = {
    _PMode.NO_CANDIDATES: PreemptionPossibility.NO_CANDIDATES,
    _PMode.PREEMPT: PreemptionPossibility.PREEMPT,
    _PMode.RECLAIM: PreemptionPossibility.RECLAIM,
}
_FROM_POSSIBILITY: Final = {
    PreemptionPossibility.NO_CANDIDATES: _PMode.NO_CANDIDATES,
    PreemptionPossibility.PREEMPT: _PMode.PREEMPT,
    PreemptionPossibility.RECLAIM: _PMode.RECLAIM,
}


@dataclass(frozen=True, slots=True)
class _Granular:
    pmode: _PMode
    borrow: int


_WORST: Final = _Granular(_PMode.NO_FIT, sys.maxsize)
_BEST: Final = _Granular(_PMode.FIT, 0)


def _is_preferred(a: _Granular, b: _Granular, ff: FlavorFungibility) -> bool:
    """Upstream ``isPreferred``: ``a`` is better than ``b`` under the fungibility preference."""
    if a.pmode is _PMode.NO_FIT:
        return False
    if b.pmode is _PMode.NO_FIT:
        return True
    # A flavor without preemption candidates cannot admit now: it ranks below viable modes
    # whatever the preference says.
    a_none, b_none = a.pmode is _PMode.NO_CANDIDATES, b.pmode is _PMode.NO_CANDIDATES
    if a_none != b_none:
        return not a_none
    if ff.preference == PREEMPTION_OVER_BORROWING:
        if a.borrow != b.borrow:
            return a.borrow < b.borrow
        return a.pmode > b.pmode
    if a.pmode != b.pmode:
        return a.pmode > b.pmode
    return a.borrow < b.borrow


def _should_try_next(mode: _Granular, ff: FlavorFungibility) -> bool:
    if mode.pmode in (_PMode.NO_FIT, _PMode.NO_CANDIDATES):
        return True
    if mode.pmode in (_PMode.PREEMPT, _PMode.RECLAIM) and ff.when_can_preempt == TRY_NEXT_FLAVOR:
        return True
    return mode.borrow != 0 and ff.when_can_borrow == TRY_NEXT_FLAVOR


# --- what the assigner reads (the snapshot of numaplane.kueue.cache satisfies these) -------------


class ClusterQueueView(Protocol):
    """The ClusterQueue snapshot queries flavor assignment needs (``numaplane.kueue.cache``)."""

    @property
    def name(self) -> str:
        """The ClusterQueue's name."""
        ...

    @property
    def spec(self) -> ClusterQueue:
        """The ClusterQueue object."""
        ...

    def nominal(self, fr: FlavorResource) -> int:
        """The queue's own nominal quota of ``fr`` (0 when it declares none)."""
        ...

    def available(self, fr: FlavorResource) -> int:
        """What a new request in this queue may still use of ``fr``."""
        ...

    def potential_available(self, fr: FlavorResource) -> int:
        """What the queue could use of ``fr`` if nothing else used any."""
        ...

    def height_of_lowest_subtree_that_fits(self, fr: FlavorResource, val: int) -> tuple[int, bool]:
        """Upstream ``FindHeightOfLowestSubtreeThatFits``: (borrowing level, may reclaim)."""
        ...


class SnapshotView(Protocol):
    """The part of the scheduling snapshot flavor assignment reads."""

    @property
    def flavors(self) -> Mapping[str, ResourceFlavor]:
        """The ResourceFlavors that exist, by name."""
        ...


_CQ = TypeVar("_CQ", bound=ClusterQueueView)
_CQ_contra = TypeVar("_CQ_contra", bound=ClusterQueueView, contravariant=True)


class PreemptionOracle(Protocol[_CQ_contra]):
    """Simulates preemption for one FlavorResource (implemented by the preemptor)."""

    def simulate_preemption(
        self, cq: _CQ_contra, wl: Workload, fr: FlavorResource, quantity: int
    ) -> tuple[PreemptionPossibility, int]:
        """Whether preempting could free ``quantity`` of ``fr`` for ``wl``, and the borrowing
        level the workload would have afterwards."""
        ...


#: Per podSet index, resource → index of the flavor tried last (-1: start over next time).
LastTried = Sequence[Mapping[str, int]] | Mapping[int, Mapping[str, int]]


# --- results ------------------------------------------------------------------------------------


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
                overall = _most_severe(overall, REASON_NO_MATCHING_FLAVOR)
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
                ps_reason = _most_severe(ps_reason, reason)
            overall = _most_severe(overall, ps_reason)
        self.no_fit_reason = overall


# --- the search ---------------------------------------------------------------------------------


def assign_flavors(
    wl: Workload,
    cq: _CQ,
    snapshot: SnapshotView,
    oracle: PreemptionOracle[_CQ] | None,
    *,
    counts: Sequence[int] | None = None,
    last_tried: LastTried | None = None,
    enable_fair_sharing: bool = False,
) -> Assignment:
    """Assign flavors to every podSet of ``wl`` in ``cq`` (``counts``: pods per podSet for
    partial admission; ``last_tried``: resume each search after the flavor tried last).
    Without an oracle, a flavor that would need preemption counts as having no candidates."""
    assigner = _Assigner(wl, cq, snapshot, oracle, last_tried, enable_fair_sharing)
    return assigner.assign(counts)


class _Assigner(Generic[_CQ]):
    def __init__(
        self,
        wl: Workload,
        cq: _CQ,
        snapshot: SnapshotView,
        oracle: PreemptionOracle[_CQ] | None,
        last_tried: LastTried | None,
        enable_fair_sharing: bool,
    ) -> None:
        self.wl = wl
        self.cq = cq
        self.flavors = snapshot.flavors
        self.oracle = oracle
        self.last_tried = last_tried
        self.spec = cq.spec
        self.groups = self.spec.resource_groups
        self.ff = self.spec.flavor_fungibility
        self.ignore_undeclared = self.spec.quota_check_strategy == IGNORE_UNDECLARED
        policy = self.spec.preemption
        self.preempt_while_borrowing = policy.borrow_within_cohort.policy != NEVER or (
            enable_fair_sharing and policy.reclaim_within_cohort != NEVER
        )
        self.group_of: dict[str, ResourceGroup] = {}
        for rg in self.groups:
            for res in rg.covered_resources:
                self.group_of.setdefault(res, rg)

    def assign(self, counts: Sequence[int] | None) -> Assignment:
        assignment = Assignment()
        covers_pods = _PODS in self.group_of
        # Pods that finished give their quota back (upstream's TotalRequests, ReclaimablePods
        # GA). Read by name: the field arrives with the model's parser.
        reclaimable: Mapping[str, int] = getattr(self.wl, "reclaimable_pods", None) or {}
        for i, ps in enumerate(self.wl.pod_sets):
            count = max(0, ps.count - reclaimable.get(ps.name, 0))
            if counts and count != 0:
                # upstream ScaledTo: a podSet with no pods left stays at 0
                count = counts[i]
            requests = {res: value * count for res, value in ps.requests.items()}
            probe: dict[str, int] | None = None
            if covers_pods:
                requests[_PODS] = count
            if count == 0:
                # A zero-count podSet still prefers a flavor that could host one pod.
                probe = dict(ps.requests)
                if covers_pods:
                    probe[_PODS] = 1
            psa = self._assign_pod_set(i, ps, count, requests, probe, assignment.usage)
            assignment._append(psa)
            if psa.status.error is not None or (requests and not psa.flavors):
                assignment._resolve_no_fit_reason(self.groups)
                return assignment
        assignment._resolve_no_fit_reason(self.groups)
        return assignment

    def _assign_pod_set(
        self,
        ps_index: int,
        ps: PodSet,
        count: int,
        requests: dict[str, int],
        probe: dict[str, int] | None,
        usage: Mapping[FlavorResource, int],
    ) -> PodSetAssignmentResult:
        considered: dict[str, FlavorAttempt] = {}
        group_flavors: dict[str, FlavorAssignment] = {}
        group_status = Status()
        for res in sorted(requests):
            if res not in self.group_of and (requests[res] == 0 or self.ignore_undeclared):
                continue
            if res in group_flavors:
                continue  # assigned with an earlier resource of its group
            flavors, status, tried = self._find_flavor(ps_index, ps, requests, probe, res, usage)
            if probe is not None and not flavors and (status is None or status.error is None):
                # The probe is a preference, never a reason to refuse a zero-count podSet.
                flavors, status, tried = self._find_flavor(ps_index, ps, requests, None, res, usage)
            self._merge_attempts(considered, tried, res)
            if (status is not None and status.error is not None) or (not flavors and requests):
                group_flavors = {}
                group_status = status if status is not None else Status()
                break
            group_flavors.update(flavors)
            if status is not None:
                group_status.reasons.extend(status.reasons)
        return PodSetAssignmentResult(
            name=ps.name,
            flavors={res: fa for res, fa in group_flavors.items() if res in requests},
            status=group_status,
            requests=requests,
            count=count,
            attempts=[considered[name] for name in sorted(considered)],
        )

    def _next_flavor(self, ps_index: int, res: str) -> int:
        last = self.last_tried
        if last is None:
            return 0
        if isinstance(last, Mapping):
            per_ps = last.get(ps_index)
        else:
            per_ps = last[ps_index] if ps_index < len(last) else None
        if per_ps is None or res not in per_ps:
            return 0
        return per_ps[res] + 1

    def _find_flavor(
        self,
        ps_index: int,
        ps: PodSet,
        requests: Mapping[str, int],
        probe: Mapping[str, int] | None,
        res: str,
        usage: Mapping[FlavorResource, int],
    ) -> tuple[dict[str, FlavorAssignment], Status | None, list[FlavorAttempt]]:
        rg = self.group_of.get(res)
        if rg is None:
            missing = Status([f"resource {res} unavailable in ClusterQueue"])
            missing.no_fit_reason = REASON_NO_MATCHING_FLAVOR
            return {}, missing, []
        status = Status()
        covered = [r for r in rg.covered_resources if r in requests]
        probed = [r for r in rg.covered_resources if probe is not None and r in probe]
        best: dict[str, FlavorAssignment] = {}
        best_mode = _WORST
        tried: list[FlavorAttempt] = []
        attempted = -1
        names = [fq.name for fq in rg.flavors]
        start = self._next_flavor(ps_index, res)
        if start >= len(names):
            # Upstream drops the resume state when the ClusterQueue changes (its generation);
            # an index past the flavors left can only come from such a change: start over.
            start = 0
        for idx in range(start, len(names)):
            attempted = idx
            fname = names[idx]
            mismatch = self._check_flavor(fname, ps)
            if mismatch is not None:
                status.reasons.extend(mismatch.reasons)
                tried.append(
                    FlavorAttempt(
                        fname,
                        FlavorAssignmentMode.NO_FIT,
                        reasons=list(mismatch.reasons),
                        no_fit_reason=REASON_NO_MATCHING_FLAVOR,
                    )
                )
                if mismatch.error is not None:
                    status.error = mismatch.error
                    return {}, status, tried
                continue
            if probe is not None:
                short = [
                    f"insufficient quota for {r} in flavor {fname}, one pod per zero-count podset "
                    f"request ({resource_quantity_string(r, probe[r])}) > maximum capacity "
                    f"({resource_quantity_string(r, cap)})"
                    for r in probed
                    if (cap := self.cq.potential_available((fname, r))) < probe[r]
                ]
                if short:
                    status.reasons.extend(short)
                    tried.append(
                        FlavorAttempt(
                            fname,
                            FlavorAssignmentMode.NO_FIT,
                            reasons=short,
                            no_fit_reason=REASON_EXCEEDS_MAX_QUOTA,
                        )
                    )
                    continue
            assignments: dict[str, FlavorAssignment] = {}
            rep = _BEST
            max_borrow = 0
            flavor_reasons: list[str] = []
            flavor_no_fit = ""
            for r in covered:
                fr = (fname, r)
                pmode, borrow, why = self._fits(fr, usage.get(fr, 0), requests[r])
                if why is not None:
                    flavor_reasons.extend(why.reasons)
                    status.reasons.extend(why.reasons)
                    flavor_no_fit = _most_severe(flavor_no_fit, why.no_fit_reason)
                max_borrow = max(max_borrow, borrow)
                mode = _Granular(pmode, borrow)
                if _is_preferred(rep, mode, self.ff):
                    rep = mode
                if rep.pmode is _PMode.NO_FIT:
                    continue  # the flavor cannot take this group; later resources add reasons
                assignments[r] = FlavorAssignment(fname, pmode.public(), borrow=borrow)
            tried.append(
                FlavorAttempt(
                    fname,
                    rep.pmode.public(),
                    borrow=max_borrow,
                    possibility=rep.pmode.possibility(),
                    reasons=sorted(flavor_reasons),
                    no_fit_reason=flavor_no_fit,
                )
            )
            if not _should_try_next(rep, self.ff):
                best, best_mode = assignments, rep
                break
            if _is_preferred(rep, best_mode, self.ff):
                best, best_mode = assignments, rep
        for fa in best.values():
            # -1: the whole list was tried, a retry starts from the first flavor again.
            fa.tried_flavor_idx = -1 if attempted == len(names) - 1 else attempted
        if best_mode.pmode is _PMode.FIT:
            return best, None, tried
        return best, status, tried

    def _check_flavor(self, fname: str, ps: PodSet) -> Status | None:
        flavor = self.flavors.get(fname)
        if flavor is None:
            return Status([f"flavor {fname} not found"])
        try:
            why = flavor_mismatch(ps, flavor)
        except PodSetMatchError as err:
            return Status(error=str(err))
        return None if why is None else Status([why])

    def _fits(
        self, fr: FlavorResource, assumed: int, request: int
    ) -> tuple[_PMode, int, Status | None]:
        available = self.cq.available(fr)
        max_capacity = self.cq.potential_available(fr)
        val = assumed + request
        resource, flavor = fr[1], fr[0]
        if val > max_capacity:
            return (
                _PMode.NO_FIT,
                0,
                Status(
                    [
                        f"insufficient quota for {resource} in flavor {flavor}, previously "
                        f"considered podsets requests ({_q(resource, assumed)}) + current podset "
                        f"request ({_q(resource, request)}) > maximum capacity "
                        f"({_q(resource, max_capacity)})"
                    ],
                    no_fit_reason=REASON_EXCEEDS_MAX_QUOTA,
                ),
            )
        borrow, may_reclaim = self.cq.height_of_lowest_subtree_that_fits(fr, val)
        if val <= available:
            return _PMode.FIT, borrow, None
        status = Status(
            [
                f"insufficient unused quota for {resource} in flavor {flavor}, "
                f"{resource_quantity_string(resource, val - available)} more needed"
            ],
            no_fit_reason=REASON_WAITING_FOR_QUOTA,
        )
        if self.cq.nominal(fr) >= val or may_reclaim or self.preempt_while_borrowing:
            if self.oracle is None:
                possibility, borrow_after = PreemptionPossibility.NO_CANDIDATES, borrow
            else:
                possibility, borrow_after = self.oracle.simulate_preemption(
                    self.cq, self.wl, fr, val
                )
            status.no_fit_reason = ""
            return _FROM_POSSIBILITY[possibility], borrow_after, status
        return _PMode.NO_FIT, borrow, status

    def _merge_attempts(
        self, dst: dict[str, FlavorAttempt], src: list[FlavorAttempt], res: str
    ) -> None:
        for at in src:
            have = dst.get(at.flavor)
            if have is None:
                dst[at.flavor] = FlavorAttempt(
                    at.flavor,
                    at.mode,
                    at.borrow,
                    at.possibility,
                    sorted(set(at.reasons)),
                    at.no_fit_reason,
                )
                continue
            possibility = have.possibility
            if at.possibility is not None and (possibility is None or at.possibility < possibility):
                possibility = at.possibility
            dst[at.flavor] = FlavorAttempt(
                at.flavor,
                min(have.mode, at.mode),
                max(have.borrow, at.borrow),
                possibility,
                sorted(set(have.reasons) | set(at.reasons)),
                _most_severe(have.no_fit_reason, at.no_fit_reason),
            )
        if not src:
            return
        rg = self.group_of[res]
        group_flavors = {fq.name for fq in rg.flavors}
        present = {at.flavor for at in src}
        for name, at in dst.items():
            if name in group_flavors and name not in present:
                msg = f"flavor {name} does not provide resource {res}"
                at.mode = FlavorAssignmentMode.NO_FIT
                at.reasons = sorted(set(at.reasons) | {msg})
                at.no_fit_reason = REASON_NO_MATCHING_FLAVOR
