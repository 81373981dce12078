"""Fair Sharing preemption (upstream ``preemption.go`` ``fairPreemptions`` and
``pkg/scheduler/preemption/fairsharing``): candidates are taken from the ClusterQueue whose
subtree is most unfair (highest Dominant Resource Share, walking down from the root), and a
candidate of another queue goes only when a strategy says the preemptor ends up no less fair
(S2-a ``LessThanOrEqualToFinalShare``, then S2-b ``LessThanInitialShare`` for the rest)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Final

from numaplane.kueue.api.model import NEVER, Workload
from numaplane.kueue.cache.fair_sharing import DRS, compare_drs
from numaplane.kueue.cache.snapshot import ClusterQueueSnapshot, CohortSnapshot, Snapshot
from numaplane.kueue.constants import (
    REASON_IN_CLUSTER_QUEUE,
    REASON_IN_COHORT_FAIR_SHARING,
    REASON_IN_COHORT_RECLAMATION,
)
from numaplane.kueue.scheduler.preemption_candidates import PreemptionContext, uses_resources
from numaplane.kueue.scheduler.preemption_policy import (
    candidate_order_key,
    cluster_queue_of,
    satisfies_preemption_policy,
)

LESS_THAN_OR_EQUAL_TO_FINAL_SHARE: Final = "LessThanOrEqualToFinalShare"
LESS_THAN_INITIAL_SHARE: Final = "LessThanInitialShare"
DEFAULT_STRATEGIES: Final = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE)

#: (preemptor's new share, target's old share, target's new share) → may preempt.
Strategy = Callable[[DRS, DRS, DRS], bool]


def less_than_or_equal_to_final_share(preemptor_new: DRS, _old: DRS, target_new: DRS) -> bool:
    """Rule S2-a: the preemptor's share after admission is at most the target's after removal."""
    return compare_drs(preemptor_new, target_new) <= 0


def less_than_initial_share(preemptor_new: DRS, target_old: DRS, _new: DRS) -> bool:
    """Rule S2-b: the preemptor's share after admission is below the target's before removal."""
    return compare_drs(preemptor_new, target_old) < 0


STRATEGIES: Final[dict[str, Strategy]] = {
    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE: less_than_or_equal_to_final_share,
    LESS_THAN_INITIAL_SHARE: less_than_initial_share,
}


def _unsatisfiable(preemptor_new: DRS, target_old: DRS) -> bool:
    """No candidate of the target can pass either strategy (upstream
    ``fsStrategyUnsatisfiable``): a zero-weight borrowing preemptor against a target that is
    not one."""
    return preemptor_new.zero_weight_borrows() and not target_old.zero_weight_borrows()


def find_candidates(ctx: PreemptionContext) -> list[Workload]:
    """Candidates allowed by the policies (upstream ``findCandidates``): the preemptor queue's
    own (``withinClusterQueue``) and those of every borrowing queue of the cohort tree
    (``reclaimWithinCohort``), using a (flavor, resource) that needs preemption."""
    cq = ctx.cq
    frs = ctx.frs_need_preemption
    out: list[Workload] = []

    def collect(queue: ClusterQueueSnapshot, policy: str) -> None:
        for wl in queue.workloads.values():
            if satisfies_preemption_policy(ctx.wl, wl, policy) and uses_resources(wl, frs):
                out.append(wl)

    if cq.spec.preemption.within_cluster_queue != NEVER:
        collect(cq, cq.spec.preemption.within_cluster_queue)
    parent = cq.parent
    if parent is not None and cq.spec.preemption.reclaim_within_cohort != NEVER:
        for other in parent.root().subtree_cluster_queues():
            if other is cq or not any(other.borrowing(fr) for fr in frs):
                continue
            collect(other, cq.spec.preemption.reclaim_within_cohort)
    return out


@dataclass(slots=True)
class _Ordering:
    """Which queue to take the next candidate from (upstream ``TargetClusterQueueOrdering``)."""

    preemptor_cq: ClusterQueueSnapshot
    by_cq: dict[str, list[Workload]]
    now: float
    ancestors: list[CohortSnapshot] = field(default_factory=list)
    pruned_cqs: set[str] = field(default_factory=set)
    pruned_cohorts: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, cq: ClusterQueueSnapshot, candidates: list[Workload], now: float) -> _Ordering:
        by_cq: dict[str, list[Workload]] = {}
        for wl in candidates:
            by_cq.setdefault(cluster_queue_of(wl), []).append(wl)
        return cls(cq, by_cq, now, list(cq.path_parent_to_root()))

    def has_workload(self, cq: ClusterQueueSnapshot) -> bool:
        return bool(self.by_cq.get(cq.name))

    def pop(self, cq: ClusterQueueSnapshot) -> Workload:
        return self.by_cq[cq.name].pop(0)

    def drop(self, cq: ClusterQueueSnapshot) -> None:
        self.pruned_cqs.add(cq.name)

    def targets(self) -> Iterator[ClusterQueueSnapshot]:
        """The queue to take from next, repeatedly; the caller pops or drops in between."""
        cq = self.preemptor_cq
        if cq.parent is None:
            while self.has_workload(cq):
                yield cq
            return
        root = cq.parent.root()
        while root.name not in self.pruned_cohorts:
            target = self._next(root)
            if target is not None:
                yield target

    def _on_preemptor_path(self, cohort: CohortSnapshot) -> bool:
        return any(a is cohort for a in self.ancestors)

    def _next(self, cohort: CohortSnapshot) -> ClusterQueueSnapshot | None:
        best_cq: ClusterQueueSnapshot | None = None
        best_cq_drs = DRS.negative()
        for cq in cohort.child_cqs:
            if cq.name in self.pruned_cqs:
                continue
            drs = cq.dominant_resource_share()
            # The preemptor's own queue stays until it runs out of candidates.
            if (drs.is_zero() and cq is not self.preemptor_cq) or not self.has_workload(cq):
                self.pruned_cqs.add(cq.name)
                continue
            order = compare_drs(drs, best_cq_drs)
            if order == 0 and best_cq is not None:
                # Equal shares: the queue whose next candidate comes first.
                mine = candidate_order_key(self.by_cq[cq.name][0], self.preemptor_cq.name, self.now)
                theirs = candidate_order_key(
                    self.by_cq[best_cq.name][0], self.preemptor_cq.name, self.now
                )
                if mine < theirs:
                    best_cq = cq
            elif order == 1:
                best_cq, best_cq_drs = cq, drs
        best_cohort: CohortSnapshot | None = None
        best_cohort_drs = DRS.negative()
        for child in cohort.child_cohorts:
            if child.name in self.pruned_cohorts:
                continue
            drs = child.dominant_resource_share()
            # A cohort that borrows nothing holds no unfairness, unless the preemptor is
            # below it (imbalance inside, or preemption in the preemptor's own queue).
            if drs.is_zero() and not self._on_preemptor_path(child):
                self.pruned_cohorts.add(child.name)
            elif compare_drs(drs, best_cohort_drs) >= 0:
                best_cohort, best_cohort_drs = child, drs
        if best_cohort is None and best_cq is None:
            self.pruned_cohorts.add(cohort.name)
            return None
        # Ties go to the cohort: the most unfair queue may be inside it.
        if best_cohort is not None and compare_drs(best_cohort_drs, best_cq_drs) >= 0:
            return self._next(best_cohort)
        return best_cq

    def shares(self, target: ClusterQueueSnapshot) -> tuple[DRS, DRS]:
        """(preemptor's almost-LCA share, target's almost-LCA share)."""
        lca = self._lca(target)
        return _almost_lca(self.preemptor_cq, lca), _almost_lca(target, lca)

    def target_share_after_removal(self, target: ClusterQueueSnapshot, wl: Workload) -> DRS:
        """The target's almost-LCA share once ``wl``'s usage is gone from its queue (the whole
        path is updated, since lending limits decide what each cohort is charged)."""
        assert wl.admission is not None
        usage = wl.admission.usage()
        target.remove_usage(usage)
        try:
            return _almost_lca(target, self._lca(target))
        finally:
            target.add_usage(usage)

    def _lca(self, target: ClusterQueueSnapshot) -> CohortSnapshot:
        for ancestor in target.path_parent_to_root():
            if self._on_preemptor_path(ancestor):
                return ancestor
        raise AssertionError("no common ancestor")  # candidates share the preemptor's tree


def _almost_lca(cq: ClusterQueueSnapshot, lca: CohortSnapshot) -> DRS:
    """The share of the node right below ``lca`` on ``cq``'s path (``cq`` itself or a cohort)."""
    node: ClusterQueueSnapshot | CohortSnapshot = cq
    for ancestor in cq.path_parent_to_root():
        if ancestor is lca:
            return node.dominant_resource_share()
        node = ancestor
    raise AssertionError("lca not above the queue")


def fair_preemptions(
    ctx: PreemptionContext,
    snapshot: Snapshot,
    now: float,
    strategies: tuple[str, ...],
    fits: Callable[[], bool],
) -> list[tuple[Workload, str]]:
    """The candidates removed, in order, until ``fits`` (evaluated without the preemptor's
    usage) holds; empty when the strategies run out first. Removed candidates stay removed
    from ``snapshot``: the caller fills back and restores."""
    candidates = find_candidates(ctx)
    if not candidates:
        return []
    candidates.sort(key=lambda wl: candidate_order_key(wl, ctx.cq.name, now))
    strategy = STRATEGIES[(strategies or DEFAULT_STRATEGIES)[0]]
    second = len(strategies or DEFAULT_STRATEGIES) > 1
    targets: list[tuple[Workload, str]] = []
    # Shares must count the incoming workload.
    ctx.cq.add_usage(ctx.requests)
    try:

        def take(wl: Workload, reason: str) -> bool:
            snapshot.remove_workload(wl)
            targets.append((wl, reason))
            ctx.cq.remove_usage(ctx.requests)
            try:
                return fits()
            finally:
                ctx.cq.add_usage(ctx.requests)

        ordering = _Ordering.of(ctx.cq, candidates, now)
        # FairSharingPreemptWithinNominal (beta, on): a preemptor within its nominal quota
        # takes other queues' candidates whatever the shares.
        within_nominal = not any(ctx.cq.borrowing(fr) for fr in ctx.frs_need_preemption)
        retry: list[Workload] = []
        for target in ordering.targets():
            if target is ctx.cq:
                if take(ordering.pop(target), REASON_IN_CLUSTER_QUEUE):
                    return targets
                continue
            if within_nominal:
                if take(ordering.pop(target), REASON_IN_COHORT_RECLAMATION):
                    return targets
                continue
            preemptor_new, target_old = ordering.shares(target)
            if _unsatisfiable(preemptor_new, target_old):
                while ordering.has_workload(target):
                    retry.append(ordering.pop(target))
                continue
            while ordering.has_workload(target):
                wl = ordering.pop(target)
                target_new = ordering.target_share_after_removal(target, wl)
                if strategy(preemptor_new, target_old, target_new):
                    if take(wl, REASON_IN_COHORT_FAIR_SHARING):
                        return targets
                    # Shares changed: maybe another queue is the most unfair now.
                    break
                retry.append(wl)
        if second:
            again = _Ordering.of(ctx.cq, retry, now)
            for target in again.targets():
                preemptor_new, target_old = again.shares(target)
                wl = again.pop(target)
                if less_than_initial_share(preemptor_new, target_old, target_old) and take(
                    wl, REASON_IN_COHORT_FAIR_SHARING
                ):
                    return targets
                # Rule S2-b applies at most once per queue.
                again.drop(target)
    finally:
        ctx.cq.remove_usage(ctx.requests)
    for wl, _ in targets:
        snapshot.add_workload(wl)
    return []
