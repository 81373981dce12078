"""One scheduling cycle (upstream ``pkg/scheduler/scheduler.go``): nominate every head against
one snapshot (flavors, preemption targets, partial admission), order the entries, then process
them in order against that same snapshot — reserve what fits, issue preemptions for what needs
them, and say for everything else why it waits and how it goes back to its queue."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from numaplane.api.selectors import label_selector_from_dict
from numaplane.kueue.api.model import STRICT_FIFO, Admission, Workload
from numaplane.kueue.cache.snapshot import ClusterQueueSnapshot, Snapshot
from numaplane.kueue.constants import CHECK_REJECTED, CHECK_RETRY
from numaplane.kueue.resources import FlavorResource
from numaplane.kueue.scheduler import entry as en
from numaplane.kueue.scheduler.entry import Entry, PodSetReducer
from numaplane.kueue.scheduler.entry_fair_sharing import FairSharingIterator
from numaplane.kueue.scheduler.flavorassigner import (
    Assignment,
    FlavorAssignmentMode,
    LastTried,
    assign_flavors,
)
from numaplane.kueue.scheduler.preemption import (
    PreemptionOptions,
    PreemptionOracle,
    Preemptor,
    Target,
    can_always_reclaim,
)

# ``QuotaReserved=False`` reasons the scheduler sets (upstream's UnadmittedWorkloadsObservability
# reasons, which SPEC §2.4 and quota.md use).
REASON_WAITING_FOR_QUOTA: Final = "WaitingForQuota"
REASON_WAITING_FOR_PREEMPTED_WORKLOADS: Final = "WaitingForPreemptedWorkloads"
REASON_PENDING_EVALUATION: Final = "PendingEvaluation"
REASON_MISCONFIGURED: Final = "Misconfigured"

#: How a pending workload goes back to its queue.
REQUEUE_IMMEDIATE: Final = "immediate"
REQUEUE_INADMISSIBLE: Final = "inadmissible"

MSG_FAILED_CHECKS: Final = "The workload has failed admission checks"
MSG_NAMESPACE_MISMATCH: Final = "Workload namespace doesn't match ClusterQueue selector"
MSG_NO_LONGER_FITS: Final = "Workload no longer fits after processing another workload"
MSG_OVERLAPPING: Final = "Workload has overlapping preemption targets with another workload"
MSG_WAITING_FOR_PODS_READY: Final = (
    "waiting for all admitted workloads to be in PodsReady condition"
)
REASON_WAITING_FOR_PODS_READY: Final = "WaitingForPodsReady"


@dataclass(frozen=True, slots=True)
class SchedulerOptions:
    """Feature switches of the cycle (upstream feature gates and configuration)."""

    #: ``PrioritySortingWithinCohort`` (beta, on).
    priority_sorting_within_cohort: bool = True
    #: ``PartialAdmission`` (beta, on).
    partial_admission: bool = True
    #: ``fairSharing.enable``: entries in Dominant Resource Share order, fair preemption.
    fair_sharing: bool = False
    #: ``fairSharing.preemptionStrategies`` (empty: upstream's default).
    fair_preemption_strategies: tuple[str, ...] = ()
    #: ``waitForPodsReady.blockAdmission`` (with waitForPodsReady enabled): a reservation waits
    #: until every reserving workload has ``PodsReady=True``.
    block_admission: bool = False


@dataclass(frozen=True, slots=True)
class Reservation:
    """A head that got quota: ``QuotaReserved=True`` with ``message`` and ``admission``."""

    workload: Workload
    admission: Admission
    message: str
    #: The flavors tried that did not simply fit, for the ``QuotaReserved`` event's
    #: ``; Flavors considered: …`` suffix ("" when every try fit).
    flavors_considered: str = ""


@dataclass(frozen=True, slots=True)
class Preemption:
    """A Workload to evict: ``Evicted=True`` (reason ``Preempted``) and ``Preempted=True`` with
    ``reason`` (InClusterQueue, InCohortReclamation, …) and ``message``."""

    target: Workload
    preemptor: Workload
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class Pending:
    """A head that stays pending: ``QuotaReserved=False`` with ``reason`` and ``message``; it goes
    back to its queue at once (``immediate``) or is parked until something changes
    (``inadmissible``)."""

    workload: Workload
    reason: str
    message: str
    requeue: str
    #: Upstream's requeue reason (``FailedAfterNomination``, ``PendingPreemption``, …, "").
    requeue_reason: str = ""
    #: The ClusterQueue the head was evaluated for.
    cluster_queue: str = ""
    #: Where each flavor search stopped, for the next attempt (``last_tried`` of
    #: :func:`schedule`); None: start over.
    last_tried: list[dict[str, int]] | None = None


@dataclass(slots=True)
class CycleResult:
    """What one cycle decided."""

    reserved: list[Reservation] = field(default_factory=list)
    preempted: list[Preemption] = field(default_factory=list)
    pending: list[Pending] = field(default_factory=list)


def schedule(
    snapshot: Snapshot,
    heads: Sequence[Workload],
    *,
    now: float,
    options: SchedulerOptions = SchedulerOptions(),
    local_queues: Mapping[str, str] | None = None,
    namespace_labels: Mapping[str, Mapping[str, str]] | None = None,
    last_tried: Mapping[str, LastTried] | None = None,
    all_pods_ready: bool = True,
) -> CycleResult:
    """Run one cycle over ``heads``. ``local_queues`` maps ``namespace/name`` of a LocalQueue to
    its ClusterQueue (how a head finds its queue); ``namespace_labels`` gives the labels of each
    namespace for the ClusterQueue's ``namespaceSelector`` (None: every namespace has no labels;
    a namespace missing from the mapping cannot be read, as upstream when the lookup fails).
    ``last_tried`` (by workload key) is what an earlier cycle's :class:`Pending` returned, so
    flavor searches resume where they stopped. ``all_pods_ready``: every workload reserving
    quota has ``PodsReady=True`` (only read with ``block_admission``).
    ``snapshot`` gets the usage of what this cycle reserves (and what it holds back for
    preemptors), nothing else."""
    preemptor = Preemptor(
        now,
        PreemptionOptions(options.fair_sharing, options.fair_preemption_strategies),
    )
    entries, inadmissible = _nominate(
        snapshot, heads, preemptor, options, local_queues or {}, namespace_labels, last_tried or {}
    )
    result = CycleResult()
    preempted: dict[str, Workload] = {}
    gate = _PodsReadyGate(options.block_admission, all_pods_ready)
    ordered: Iterable[Entry] = (
        FairSharingIterator(entries, snapshot, options.priority_sorting_within_cohort)
        if options.fair_sharing
        else en.order_entries(entries, options.priority_sorting_within_cohort)
    )
    for e in ordered:
        _process(e, snapshot, preempted, result, gate)
    for e in entries:
        if e.status != en.ASSUMED:
            result.pending.append(_pending(e, snapshot))
    for e in inadmissible:
        result.pending.append(_pending(e, snapshot))
    return result


def _as_list(last: LastTried | None) -> list[dict[str, int]] | None:
    if last is None:
        return None
    if isinstance(last, Mapping):
        return [dict(last[i]) for i in sorted(last)]
    return [dict(per_ps) for per_ps in last]


def _cluster_queue_for(wl: Workload, local_queues: Mapping[str, str]) -> str:
    return local_queues.get(f"{wl.namespace}/{wl.queue_name}", "")


def _nominate(
    snapshot: Snapshot,
    heads: Sequence[Workload],
    preemptor: Preemptor,
    options: SchedulerOptions,
    local_queues: Mapping[str, str],
    namespace_labels: Mapping[str, Mapping[str, str]] | None,
    last_tried: Mapping[str, LastTried],
) -> tuple[list[Entry], list[Entry]]:
    """(entries with an assignment, entries that failed a precondition), as upstream
    ``nominate``."""
    entries: list[Entry] = []
    inadmissible: list[Entry] = []
    for wl in heads:
        cq_name = _cluster_queue_for(wl, local_queues)
        e = Entry(wl, cq_name, prior_last_tried=_as_list(last_tried.get(wl.key)))
        cq = snapshot.cluster_queues.get(cq_name)
        if cq is not None and wl.key in cq.workloads:
            # Already reserving here (assumed in an earlier cycle): nothing to do.
            continue
        if any(state in (CHECK_RETRY, CHECK_REJECTED) for state in wl.check_states.values()):
            e.message, e.quota_reason = MSG_FAILED_CHECKS, REASON_PENDING_EVALUATION
        elif cq is not None and not cq.active:
            e.message, e.quota_reason = f"ClusterQueue {cq_name} is inactive", REASON_MISCONFIGURED
        elif cq is None:
            e.message, e.quota_reason = f"ClusterQueue {cq_name} not found", REASON_MISCONFIGURED
        elif namespace_labels is not None and wl.namespace not in namespace_labels:
            e.message = (
                f'Could not obtain workload namespace: namespaces "{wl.namespace}" not found'
            )
            e.quota_reason = REASON_MISCONFIGURED
        elif not label_selector_from_dict(cq.spec.namespace_selector).matches(
            (namespace_labels or {}).get(wl.namespace, {})
        ):
            e.message, e.quota_reason = MSG_NAMESPACE_MISMATCH, REASON_MISCONFIGURED
            e.requeue_reason = en.REQUEUE_NAMESPACE_MISMATCH
        else:
            e.assignment, e.targets = _assignments(
                wl, cq, snapshot, preemptor, options, last_tried.get(wl.key)
            )
            e.message = e.assignment.message()
            e.quota_reason = e.assignment.reason() or REASON_WAITING_FOR_QUOTA
            entries.append(e)
            continue
        inadmissible.append(e)
    return entries, inadmissible


def _assignments(
    wl: Workload,
    cq: ClusterQueueSnapshot,
    snapshot: Snapshot,
    preemptor: Preemptor,
    options: SchedulerOptions,
    last_tried: LastTried | None,
) -> tuple[Assignment, list[Target]]:
    """The full assignment, or a reduced one when partial admission finds counts that fit
    (upstream ``getInitialAssignments``)."""
    oracle = PreemptionOracle(preemptor, snapshot)
    fair = options.fair_sharing
    full = assign_flavors(wl, cq, snapshot, oracle, last_tried=last_tried, enable_fair_sharing=fair)
    if full.mode is FlavorAssignmentMode.FIT:
        return full, []
    if full.mode is FlavorAssignmentMode.PREEMPT:
        targets = preemptor.get_targets(wl, cq.name, full, snapshot)
        if targets:
            return full, targets
    if options.partial_admission and en.can_be_partially_admitted(wl):

        def fits(counts: list[int]) -> tuple[tuple[Assignment, list[Target]] | None, bool]:
            reduced = assign_flavors(wl, cq, snapshot, oracle, counts=counts, last_tried=last_tried)
            if reduced.mode is FlavorAssignmentMode.FIT:
                return (reduced, []), True
            if reduced.mode is FlavorAssignmentMode.PREEMPT:
                found = preemptor.get_targets(wl, cq.name, reduced, snapshot)
                if found:
                    return (reduced, found), True
            return None, False

        best = PodSetReducer.of(wl, fits).search()
        if best is not None:
            return best
    return full, []


@dataclass(slots=True)
class _PodsReadyGate:
    """``waitForPodsReady.blockAdmission``: upstream blocks the cycle until every reserving
    workload is PodsReady and then admits; a pure cycle cannot block, so the entry keeps its
    place in the snapshot, waits with upstream's message and is retried at once. A reservation
    made in this cycle is not PodsReady yet, so it blocks the entries after it."""

    enabled: bool
    ready: bool

    def blocks(self) -> bool:
        return self.enabled and not self.ready


def _process(
    e: Entry,
    snapshot: Snapshot,
    preempted: dict[str, Workload],
    result: CycleResult,
    gate: _PodsReadyGate,
) -> None:
    """One entry of the ordered cycle (upstream ``processEntry``)."""
    assert e.assignment is not None
    cq = snapshot.cluster_queues[e.cluster_queue]
    mode = e.assignment.mode
    if mode is FlavorAssignmentMode.NO_FIT:
        return
    if mode is FlavorAssignmentMode.PREEMPT and not e.targets:
        e.requeue_reason = en.REQUEUE_PREEMPTION_NO_CANDIDATES
        e.quota_reason = REASON_WAITING_FOR_QUOTA
        # A queue that cannot always reclaim holds back what it would take, so that lower
        # entries (e.g. in another ClusterQueue of the cohort) cannot grab it first.
        if not can_always_reclaim(cq):
            cq.add_usage(_net_usage(e, _quota_to_reserve(e, cq)))
        return
    if any(t.workload.key in preempted for t in e.targets):
        _skip(e, MSG_OVERLAPPING)
        return
    usage = _net_usage(e, e.assignment.usage)
    restore = snapshot.simulate_workload_removal(
        [*preempted.values(), *(t.workload for t in e.targets)]
    )
    fits = cq.fits(usage)
    restore()
    if not fits:
        _skip(e, MSG_NO_LONGER_FITS)
        return
    for t in e.targets:
        preempted[t.workload.key] = t.workload
    cq.add_usage(usage)
    if mode is FlavorAssignmentMode.PREEMPT:
        for t in e.targets:
            # A target already evicted needs no new write, but still counts as pending.
            if not t.workload.is_evicted:
                result.preempted.append(Preemption(t.workload, e.workload, t.reason, t.message))
        e.keep_last_tried = False
        e.message += f". Pending the preemption of {len(e.targets)} workload(s)"
        e.quota_reason = REASON_WAITING_FOR_PREEMPTED_WORKLOADS
        e.requeue_reason = en.REQUEUE_PENDING_PREEMPTION
        return
    if gate.blocks():
        e.status = en.SKIPPED
        e.message, e.quota_reason = MSG_WAITING_FOR_PODS_READY, REASON_WAITING_FOR_PODS_READY
        return
    gate.ready = False
    e.status = en.ASSUMED
    admission = e.assignment.to_admission(e.cluster_queue)
    message = f"Quota reserved in ClusterQueue {e.cluster_queue}"
    considered = e.assignment.flavors_considered()
    result.reserved.append(Reservation(e.workload, admission, message, considered))


def _skip(e: Entry, message: str) -> None:
    e.status = en.SKIPPED
    e.keep_last_tried = False
    e.message = message
    e.quota_reason = REASON_WAITING_FOR_QUOTA


def _net_usage(e: Entry, quota: Mapping[FlavorResource, int]) -> dict[FlavorResource, int]:
    """The quota an entry adds: none for a workload already holding a reservation (a second
    pass only completes it)."""
    if e.workload.has_quota_reservation:
        return {}
    return dict(quota)


def _quota_to_reserve(e: Entry, cq: ClusterQueueSnapshot) -> dict[FlavorResource, int]:
    """What a preempting entry without targets holds back (upstream
    ``quotaResourcesToReserve``): up to its borrowing limit when it borrows, else up to its
    nominal quota."""
    assert e.assignment is not None
    reserved: dict[FlavorResource, int] = {}
    for fr, value in e.assignment.usage.items():
        nominal = cq.nominal(fr)
        if e.assignment.borrowing > 0:
            limit = cq.borrowing_limit(fr)
            reserved[fr] = value if limit is None else min(value, nominal + limit - cq.usage(fr))
        else:
            reserved[fr] = max(0, min(value, nominal - cq.usage(fr)))
    return reserved


def _pending(e: Entry, snapshot: Snapshot) -> Pending:
    """The ``Pending`` of an entry not admitted, with how its queue takes it back (upstream
    ``requeueAndUpdate`` and ``ClusterQueue.RequeueIfNotPresent``)."""
    reason = e.requeue_reason
    if e.status != en.NOT_NOMINATED and reason == en.REQUEUE_GENERIC:
        reason = en.REQUEUE_FAILED_AFTER_NOMINATION
    cq = snapshot.cluster_queues.get(e.cluster_queue)
    if cq is not None and cq.spec.queueing_strategy == STRICT_FIFO:
        immediate = reason != en.REQUEUE_NAMESPACE_MISMATCH
    else:
        immediate = reason in (en.REQUEUE_FAILED_AFTER_NOMINATION, en.REQUEUE_PENDING_PREEMPTION)
    # An entry that never got an assignment keeps where the previous search stopped.
    last = e.prior_last_tried if e.assignment is None else None
    if e.assignment is not None and e.keep_last_tried:
        last = [dict(per_ps) for per_ps in e.assignment.last_tried_flavor_idx]
        # A search that stopped before its last flavor has more to try: retry at once.
        immediate = immediate or e.assignment.pending_flavors()
    return Pending(
        workload=e.workload,
        reason=e.quota_reason,
        message=e.message,
        requeue=REQUEUE_IMMEDIATE if immediate else REQUEUE_INADMISSIBLE,
        requeue_reason=reason,
        cluster_queue=e.cluster_queue,
        last_tried=last,
    )
