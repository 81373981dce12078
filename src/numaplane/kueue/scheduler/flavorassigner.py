"""Flavor assignment: which ResourceFlavor each resource of each podSet of a Workload gets in a
ClusterQueue, and whether that fits now, needs preemption or cannot fit, decision for decision as
upstream's ``pkg/scheduler/flavorassigner/flavorassigner.go`` (quota.md §3).

The result types (modes, :class:`Assignment` and its parts) are in :mod:`.assignment`, which
flavor is preferred under ``flavorFungibility`` in :mod:`.fungibility`; this module is the search.

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

from collections.abc import Mapping, Sequence
from typing import Final, Generic, Protocol, TypeVar

from numaplane.kueue.api.model import (
    IGNORE_UNDECLARED,
    NEVER,
    ClusterQueue,
    PodSet,
    ResourceFlavor,
    ResourceGroup,
    Workload,
)
from numaplane.kueue.resources import FlavorResource, resource_quantity_string
from numaplane.kueue.scheduler.assignment import (
    REASON_EXCEEDS_MAX_QUOTA,
    REASON_NO_MATCHING_FLAVOR,
    REASON_WAITING_FOR_QUOTA,
    Assignment,
    FlavorAssignment,
    FlavorAssignmentMode,
    FlavorAttempt,
    PodSetAssignmentResult,
    PreemptionPossibility,
    Status,
    most_severe,
)
from numaplane.kueue.scheduler.fungibility import (
    BEST,
    FROM_POSSIBILITY,
    WORST,
    Granular,
    GranularMode,
    is_preferred,
    should_try_next,
)
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

_PODS: Final = "pods"
_q: Final = resource_quantity_string


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
        best_mode = WORST
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
            rep = BEST
            max_borrow = 0
            flavor_reasons: list[str] = []
            flavor_no_fit = ""
            for r in covered:
                fr = (fname, r)
                pmode, borrow, why = self._fits(fr, usage.get(fr, 0), requests[r])
                if why is not None:
                    flavor_reasons.extend(why.reasons)
                    status.reasons.extend(why.reasons)
                    flavor_no_fit = most_severe(flavor_no_fit, why.no_fit_reason)
                max_borrow = max(max_borrow, borrow)
                mode = Granular(pmode, borrow)
                if is_preferred(rep, mode, self.ff):
                    rep = mode
                if rep.pmode is GranularMode.NO_FIT:
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
            if not should_try_next(rep, self.ff):
                best, best_mode = assignments, rep
                break
            if is_preferred(rep, best_mode, self.ff):
                best, best_mode = assignments, rep
        for fa in best.values():
            # -1: the whole list was tried, a retry starts from the first flavor again.
            fa.tried_flavor_idx = -1 if attempted == len(names) - 1 else attempted
        if best_mode.pmode is GranularMode.FIT:
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
    ) -> tuple[GranularMode, int, Status | None]:
        available = self.cq.available(fr)
        max_capacity = self.cq.potential_available(fr)
        val = assumed + request
        resource, flavor = fr[1], fr[0]
        if val > max_capacity:
            return (
                GranularMode.NO_FIT,
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
            return GranularMode.FIT, borrow, None
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
            return FROM_POSSIBILITY[possibility], borrow_after, status
        return GranularMode.NO_FIT, borrow, status

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
                most_severe(have.no_fit_reason, at.no_fit_reason),
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
