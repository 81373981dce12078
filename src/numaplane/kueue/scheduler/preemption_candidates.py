"""Classical preemption's candidates (upstream ``pkg/scheduler/preemption/classical``): who may
be evicted for a preemptor, with which variant (same ClusterQueue, hierarchical reclaim, reclaim
with or without borrowing), collected through hierarchical cohorts and walked in
``CandidatesOrdering`` order while the snapshot changes under the walk."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum

from numaplane.kueue.api.model import NEVER, Workload
from numaplane.kueue.cache import resource_node as rn
from numaplane.kueue.cache.snapshot import ClusterQueueSnapshot, CohortSnapshot, Snapshot
from numaplane.kueue.constants import (
    REASON_IN_CLUSTER_QUEUE,
    REASON_IN_COHORT_RECLAIM_WHILE_BORROWING,
    REASON_IN_COHORT_RECLAMATION,
)
from numaplane.kueue.resources import FlavorResource
from numaplane.kueue.scheduler.preemption_policy import (
    candidate_order_key,
    satisfies_preemption_policy,
)


class Variant(Enum):
    """How a candidate may be preempted (upstream ``preemptionVariant``)."""

    NEVER = 0
    #: In the preemptor's own ClusterQueue.
    WITHIN_CQ = 1
    #: The preemptor is closer, in the cohort tree, to the quota the candidate uses.
    HIERARCHICAL_RECLAIM = 2
    #: Only if the preemptor's ClusterQueue will not borrow after the preemptions.
    RECLAIM_WITHOUT_BORROWING = 3
    #: Even while the preemptor's ClusterQueue borrows (``borrowWithinCohort``).
    RECLAIM_WHILE_BORROWING = 4

    def reason(self) -> str:
        """The ``Preempted`` condition reason a target of this variant gets."""
        if self is Variant.WITHIN_CQ:
            return REASON_IN_CLUSTER_QUEUE
        if self is Variant.RECLAIM_WHILE_BORROWING:
            return REASON_IN_COHORT_RECLAIM_WHILE_BORROWING
        if self in (Variant.HIERARCHICAL_RECLAIM, Variant.RECLAIM_WITHOUT_BORROWING):
            return REASON_IN_COHORT_RECLAMATION
        return "Unknown"


@dataclass(frozen=True, slots=True)
class PreemptionContext:
    """The preemptor, its ClusterQueue, the (flavor, resource)s that need preemption and the
    preemptor's requests (upstream ``HierarchicalPreemptionCtx``)."""

    wl: Workload
    cq: ClusterQueueSnapshot
    frs_need_preemption: frozenset[FlavorResource]
    requests: Mapping[FlavorResource, int]


@dataclass(frozen=True, slots=True)
class _Candidate:
    wl: Workload
    cq_name: str
    #: The lowest common ancestor of the candidate's ClusterQueue and the preemptor's.
    lca: CohortSnapshot | None
    variant: Variant


def borrow_within_cohort_forbidden(cq: ClusterQueueSnapshot) -> tuple[bool, int | None]:
    """(whether ``borrowWithinCohort`` is off, its ``maxPriorityThreshold``)."""
    bwc = cq.spec.preemption.borrow_within_cohort
    if bwc.policy == NEVER:
        return True, None
    return False, bwc.max_priority_threshold


def uses_resources(wl: Workload, frs: frozenset[FlavorResource]) -> bool:
    """Whether ``wl``'s admission takes any of ``frs`` (upstream ``WorkloadUsesResources``)."""
    if wl.admission is None:
        return False
    for psa in wl.admission.pod_set_assignments:
        for resource, flavor in psa.flavors.items():
            if (flavor, resource) in frs:
                return True
    return False


def _is_above_borrowing_threshold(candidate: int, incoming: int, threshold: int | None) -> bool:
    if candidate >= incoming:
        return True
    return threshold is not None and candidate > threshold


def _from_cq(
    ctx: PreemptionContext, cq: ClusterQueueSnapshot, lca: CohortSnapshot | None, advantage: bool
) -> list[_Candidate]:
    """The workloads of ``cq`` the preemptor may evict, with their variant (upstream
    ``getCandidatesFromCQ`` and ``classifyPreemptionVariant``). Both filters must pass; the
    policy (priorities) is cheaper than the resources, so it goes first (upstream checks the
    resources first: same result)."""
    same_cq = cq.name == ctx.cq.name
    policy = ctx.cq.spec.preemption
    rule = policy.within_cluster_queue if same_cq else policy.reclaim_within_cohort
    preemptor = ctx.wl
    frs = ctx.frs_need_preemption
    fixed: Variant | None = None
    if same_cq:
        fixed = Variant.WITHIN_CQ
    elif advantage:
        fixed = Variant.HIERARCHICAL_RECLAIM
    forbidden, threshold = borrow_within_cohort_forbidden(ctx.cq)
    found: list[_Candidate] = []
    for wl in cq.workloads.values():
        if not satisfies_preemption_policy(preemptor, wl, rule) or not uses_resources(wl, frs):
            continue
        variant = fixed
        if variant is None:
            above = _is_above_borrowing_threshold(wl.priority, preemptor.priority, threshold)
            variant = (
                Variant.RECLAIM_WITHOUT_BORROWING
                if forbidden or above
                else Variant.RECLAIM_WHILE_BORROWING
            )
        found.append(_Candidate(wl, cq.name, lca, variant))
    return found


def _collect_in_subtree(
    ctx: PreemptionContext,
    current: CohortSnapshot,
    subtree_root: CohortSnapshot,
    skip: CohortSnapshot | None,
    advantage: bool,
    out: list[_Candidate],
) -> None:
    for child in current.child_cohorts:
        # The subtree the walk came from was searched on the previous level already; subtrees
        # within their quota cannot be lending to anyone.
        if child is skip or child.is_within_nominal(ctx.frs_need_preemption):
            continue
        _collect_in_subtree(ctx, child, subtree_root, skip, advantage, out)
    for child_cq in current.child_cqs:
        if child_cq is ctx.cq:
            continue
        if not child_cq.is_within_nominal(ctx.frs_need_preemption):
            out.extend(_from_cq(ctx, child_cq, subtree_root, advantage))


def _collect_hierarchical(ctx: PreemptionContext) -> tuple[list[_Candidate], list[_Candidate]]:
    """(hierarchy candidates, priority candidates) from the other ClusterQueues of the tree."""
    hierarchy: list[_Candidate] = []
    priority: list[_Candidate] = []
    if ctx.cq.parent is None or ctx.cq.spec.preemption.reclaim_within_cohort == NEVER:
        return hierarchy, priority
    advantage, remaining = rn.quantities_fit_in_quota(ctx.cq.node, ctx.requests)
    previous: CohortSnapshot | None = None
    for subtree_root in ctx.cq.path_parent_to_root():
        target = hierarchy if advantage else priority
        _collect_in_subtree(ctx, subtree_root, subtree_root, previous, advantage, target)
        fits, remaining = rn.quantities_fit_in_quota(subtree_root.node, remaining)
        # Once a subtree holding the preemptor fits the request, the preemptor is closer than
        # anyone using that subtree's quota from outside: the advantage holds further up.
        advantage = advantage or fits
        previous = subtree_root
    return hierarchy, priority


_OrderKey = tuple[bool, bool, int, float, str]


def _first(item: tuple[_OrderKey, _Candidate]) -> _OrderKey:
    return item[0]


class CandidateIterator:
    """The ordered candidates of one preemptor, walked once per attempt (with or without
    borrowing). Validity is checked lazily against the snapshot, because removing earlier
    candidates can bring a lender back within its quota."""

    def __init__(self, ctx: PreemptionContext, snapshot: Snapshot, now: float) -> None:
        self._ctx = ctx
        self._snapshot = snapshot
        same_queue: list[_Candidate] = []
        if ctx.cq.spec.preemption.within_cluster_queue != NEVER:
            same_queue = _from_cq(ctx, ctx.cq, None, False)
        hierarchy, priority = _collect_hierarchical(ctx)

        keyed = [
            sorted(((candidate_order_key(c.wl, ctx.cq.name, now), c) for c in group), key=_first)
            for group in (hierarchy, priority, same_queue)
        ]
        # Already evicted candidates first (they cost nothing more), each group keeping the
        # hierarchy -> priority -> same queue precedence. The key's first item is "not evicted".
        evicted = [c for group in keyed for k, c in group if not k[0]]
        rest = [c for group in keyed for k, c in group if k[0]]
        self._candidates = evicted + rest
        self.no_candidate_from_other_queues = not hierarchy and not priority
        self.no_candidate_for_hierarchical_reclaim = not hierarchy

    def run(self, borrowing: bool) -> Iterator[tuple[Workload, str]]:
        """The valid candidates with their reasons, for an attempt that may (or may not) leave
        the preemptor borrowing."""
        for candidate in self._candidates:
            if self._valid(candidate, borrowing):
                yield candidate.wl, candidate.variant.reason()

    def _valid(self, candidate: _Candidate, borrowing: bool) -> bool:
        if candidate.cq_name == self._ctx.cq.name:
            return True
        if borrowing and candidate.variant is Variant.RECLAIM_WITHOUT_BORROWING:
            return False
        frs = self._ctx.frs_need_preemption
        cq = self._snapshot.cluster_queues[candidate.cq_name]
        if cq.is_within_nominal(frs):
            return False
        # Only up to the common ancestor: above it, the preemptor's quota is shared anyway.
        for node in cq.path_parent_to_root():
            if node is candidate.lca:
                break
            if node.is_within_nominal(frs):
                return False
        return True
