"""Classical preemption (upstream ``pkg/scheduler/preemption/preemption.go`` and
``preemption_oracle.go``): the minimal set of Workloads to evict so a preemptor fits, found by
removing candidates in order until it fits and then putting back, newest removal excluded, every
one whose return still lets it fit; and the oracle the flavor assigner asks whether preempting
for one (flavor, resource) could work."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from numaplane.kueue.api.model import ANY, Workload
from numaplane.kueue.cache.snapshot import ClusterQueueSnapshot, Snapshot
from numaplane.kueue.resources import FlavorResource
from numaplane.kueue.scheduler.flavorassigner import (
    Assignment,
    FlavorAssignmentMode,
    PreemptionPossibility,
)
from numaplane.kueue.scheduler.preemption_candidates import (
    CandidateIterator,
    PreemptionContext,
    borrow_within_cohort_forbidden,
)
from numaplane.kueue.scheduler.preemption_fair import fair_preemptions
from numaplane.kueue.scheduler.preemption_policy import cluster_queue_of, preemption_message


@dataclass(frozen=True, slots=True)
class Target:
    """A Workload to evict for a preemptor: ``reason`` is its ``Preempted`` condition reason
    and ``message`` the ``Evicted``/``Preempted`` message."""

    workload: Workload
    reason: str
    message: str
    #: The ClusterQueue the target reserves quota in.
    cluster_queue: str


@dataclass(frozen=True, slots=True)
class PreemptionOptions:
    """How the preemptor decides: classical, or Fair Sharing with its preemption strategies
    (``fairSharing.preemptionStrategies``; empty: upstream's default, S2-a then S2-b)."""

    fair_sharing: bool = False
    strategies: tuple[str, ...] = ()


def can_always_reclaim(cq: ClusterQueueSnapshot) -> bool:
    """Whether ``cq`` is guaranteed to get back the capacity others borrow from it (upstream
    ``CanAlwaysReclaim``): only ``reclaimWithinCohort: Any`` ignores priorities."""
    return cq.spec.preemption.reclaim_within_cohort == ANY


def frs_need_preemption(assignment: Assignment) -> frozenset[FlavorResource]:
    """The (flavor, resource)s the assignment got in ``Preempt`` mode."""
    return frozenset(
        (fa.name, resource)
        for ps in assignment.pod_sets
        for resource, fa in ps.flavors.items()
        if fa.mode is FlavorAssignmentMode.PREEMPT
    )


class Preemptor:
    """Classical preemption at time ``now`` (used for "most recently reserved first" when a
    candidate has no reservation time)."""

    def __init__(self, now: float, options: PreemptionOptions | None = None) -> None:
        self.now = now
        self.options = options or PreemptionOptions()

    def get_targets(
        self, wl: Workload, cq_name: str, assignment: Assignment, snapshot: Snapshot
    ) -> list[Target]:
        """The Workloads to evict so ``wl`` fits in ``cq_name`` with ``assignment`` (empty when
        no set of candidates makes room). ``snapshot`` is left as it was."""
        return self.targets_for(
            wl, cq_name, frs_need_preemption(assignment), assignment.usage, snapshot
        )

    def targets_for(
        self,
        wl: Workload,
        cq_name: str,
        frs: frozenset[FlavorResource],
        requests: Mapping[FlavorResource, int],
        snapshot: Snapshot,
    ) -> list[Target]:
        """:meth:`get_targets` from its inputs: the (flavor, resource)s the assignment must
        preempt for and the preemptor's total requests per (flavor, resource)."""
        cq = snapshot.cluster_queues[cq_name]
        ctx = PreemptionContext(wl=wl, cq=cq, frs_need_preemption=frs, requests=dict(requests))
        return self._targets(ctx, snapshot)

    def _targets(self, ctx: PreemptionContext, snapshot: Snapshot) -> list[Target]:
        found = self.search(ctx, snapshot)
        preemptor_path = ctx.cq.path()
        targets: list[Target] = []
        for wl, reason in found:
            target_cq = cluster_queue_of(wl)
            target_path = snapshot.cluster_queues[target_cq].path()
            message = preemption_message(ctx.wl, reason, preemptor_path, target_path)
            targets.append(Target(wl, reason, message, target_cq))
        return targets

    def search(self, ctx: PreemptionContext, snapshot: Snapshot) -> list[tuple[Workload, str]]:
        """The minimal set of (target, reason) for ``ctx``, by the configured strategy;
        ``snapshot`` is left as it was."""
        if not self.options.fair_sharing:
            return self._classical(ctx, snapshot)
        removed = fair_preemptions(
            ctx, snapshot, self.now, self.options.strategies, lambda: _fits(ctx, True)
        )
        if not removed:
            return []
        chosen = _fill_back(ctx, snapshot, removed, True)
        _restore(snapshot, (w for w, _ in chosen))
        return chosen

    def _classical(self, ctx: PreemptionContext, snapshot: Snapshot) -> list[tuple[Workload, str]]:
        candidates = CandidateIterator(ctx, snapshot, self.now)
        forbidden, _ = borrow_within_cohort_forbidden(ctx.cq)
        # Hierarchy candidates may go regardless of priority; priority candidates only as
        # borrowWithinCohort allows; without borrowWithinCohort a queue already at its nominal
        # quota can only preempt its own. Trying "no borrowing" first when borrowWithinCohort is
        # off keeps the choice upstream made before hierarchical cohorts.
        if candidates.no_candidate_from_other_queues or (forbidden and not _under_nominal(ctx)):
            attempts = [True]
        elif forbidden and candidates.no_candidate_for_hierarchical_reclaim:
            attempts = [False, True]
        else:
            attempts = [True, False]
        for borrowing in attempts:
            removed: list[tuple[Workload, str]] = []
            for wl, reason in candidates.run(borrowing):
                snapshot.remove_workload(wl)
                removed.append((wl, reason))
                if _fits(ctx, borrowing):
                    chosen = _fill_back(ctx, snapshot, removed, borrowing)
                    _restore(snapshot, (w for w, _ in chosen))
                    return chosen
            _restore(snapshot, (w for w, _ in removed))
        return []


def _fits(ctx: PreemptionContext, borrowing: bool) -> bool:
    """Whether the preemptor's requests fit its queue now (upstream ``workloadFits``)."""
    for fr, value in ctx.requests.items():
        if not borrowing and ctx.cq.borrowing_with(fr, value):
            return False
        if value > ctx.cq.available(fr):
            return False
    return True


def _under_nominal(ctx: PreemptionContext) -> bool:
    """Usage strictly below nominal in every (flavor, resource) needing preemption."""
    return all(ctx.cq.nominal(fr) > ctx.cq.usage(fr) for fr in ctx.frs_need_preemption)


def _fill_back(
    ctx: PreemptionContext,
    snapshot: Snapshot,
    removed: list[tuple[Workload, str]],
    borrowing: bool,
) -> list[tuple[Workload, str]]:
    """Put back, newest first and never the last removed, every target whose return still lets
    the preemptor fit. A returned target is replaced by the current last one, as upstream's O(1)
    deletion does, so the order of the result matches upstream's."""
    targets = list(removed)
    for i in range(len(targets) - 2, -1, -1):
        snapshot.add_workload(targets[i][0])
        if _fits(ctx, borrowing):
            targets[i] = targets[-1]
            targets.pop()
        else:
            snapshot.remove_workload(targets[i][0])
    return targets


def _restore(snapshot: Snapshot, workloads: Iterable[Workload]) -> None:
    for wl in workloads:
        snapshot.add_workload(wl)


class PreemptionOracle:
    """What the flavor assigner asks while it weighs a flavor: could preemption (or reclaim)
    make ``quantity`` of ``fr`` fit, and at which borrowing height afterwards (upstream
    ``PreemptionOracle.SimulatePreemption``)."""

    def __init__(self, preemptor: Preemptor, snapshot: Snapshot) -> None:
        self._preemptor = preemptor
        self._snapshot = snapshot

    def simulate_preemption(
        self, cq: ClusterQueueSnapshot, wl: Workload, fr: FlavorResource, quantity: int
    ) -> tuple[PreemptionPossibility, int]:
        """(NoCandidates / Preempt / Reclaim, the borrowing height after the preemptions)."""
        ctx = PreemptionContext(
            wl=wl, cq=cq, frs_need_preemption=frozenset({fr}), requests={fr: quantity}
        )
        found = self._preemptor.search(ctx, self._snapshot)
        if not found:
            height, _ = cq.height_of_lowest_subtree_that_fits(fr, quantity)
            return PreemptionPossibility.NO_CANDIDATES, height
        restore = self._snapshot.simulate_workload_removal(w for w, _ in found)
        height, _ = cq.height_of_lowest_subtree_that_fits(fr, quantity)
        restore()
        if any(cluster_queue_of(w) == cq.name for w, _ in found):
            return PreemptionPossibility.PREEMPT, height
        return PreemptionPossibility.RECLAIM, height
