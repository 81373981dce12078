"""The rules preemption shares between its strategies (upstream
``pkg/scheduler/preemption/common``): which candidates a preemption policy allows, the order in
which candidates are tried (``CandidatesOrdering``), the reasons and the message a preempted
Workload gets."""

from __future__ import annotations

from typing import Final

from numaplane.kueue.api.model import (
    ANY,
    LOWER_OR_NEWER_EQUAL_PRIORITY,
    LOWER_PRIORITY,
    Workload,
)
from numaplane.kueue.constants import (
    QUOTA_RESERVED,
    REASON_IN_CLUSTER_QUEUE,
    REASON_IN_COHORT_FAIR_SHARING,
    REASON_IN_COHORT_RECLAIM_WHILE_BORROWING,
    REASON_IN_COHORT_RECLAMATION,
)

#: Upstream's ``HumanReadablePreemptionReasons``: the words the message uses for each reason.
HUMAN_READABLE_REASONS: Final = {
    REASON_IN_CLUSTER_QUEUE: "prioritization in the ClusterQueue",
    REASON_IN_COHORT_RECLAMATION: "reclamation within the cohort",
    REASON_IN_COHORT_FAIR_SHARING: "Fair Sharing within the cohort",
    REASON_IN_COHORT_RECLAIM_WHILE_BORROWING: "reclamation within the cohort while borrowing",
    "": "UNKNOWN",
}


def satisfies_preemption_policy(preemptor: Workload, candidate: Workload, policy: str) -> bool:
    """Whether ``policy`` (``withinClusterQueue`` or ``reclaimWithinCohort``) lets
    ``preemptor`` evict ``candidate`` (upstream ``SatisfiesPreemptionPolicy``; the alpha
    time-based protections are off by default and not modelled)."""
    lower = preemptor.priority > candidate.priority
    if policy == LOWER_PRIORITY:
        return lower
    if policy == LOWER_OR_NEWER_EQUAL_PRIORITY:
        if preemptor.priority < candidate.priority:
            return False
        newer_equal = (
            preemptor.priority == candidate.priority
            and preemptor.queue_order_time < candidate.queue_order_time
        )
        return lower or newer_equal
    return policy == ANY


def quota_reservation_time(wl: Workload, now: float) -> float:
    """When ``wl`` got its reservation (``QuotaReserved=True`` transition), ``now`` when it has
    none yet (upstream ``quotaReservationTime``)."""
    found = wl.conditions.get(QUOTA_RESERVED)
    if found is None or found[0] != "True":
        return now
    return found[3]


def cluster_queue_of(wl: Workload) -> str:
    """The ClusterQueue a reserving workload is charged to ("" when it has no admission)."""
    return wl.admission.cluster_queue if wl.admission is not None else ""


def candidate_order_key(
    wl: Workload, preemptor_cq: str, now: float
) -> tuple[bool, bool, int, float, str]:
    """Sort key of ``CandidatesOrdering`` (ascending = tried first): workloads already evicted
    first; then other ClusterQueues' before the preemptor's own; lower priority first; the most
    recently reserved first; then by UID so the order is total. (Admission Fair Sharing's
    LocalQueue usage key applies only with AFS, which numaplane does not model.)"""
    return (
        not wl.is_evicted,
        cluster_queue_of(wl) == preemptor_cq,
        wl.priority,
        -quota_reservation_time(wl, now),
        wl.uid,
    )


def preemption_message(
    preemptor: Workload, reason: str, preemptor_path: str, target_path: str
) -> str:
    """The ``Evicted``/``Preempted`` message of a preempted Workload (upstream
    ``preemptionMessage``): unknown UIDs and paths read ``UNKNOWN``."""
    return (
        f"Preempted to accommodate a workload (UID: {preemptor.uid or 'UNKNOWN'}, "
        f"JobUID: {preemptor.job_uid or 'UNKNOWN'}) due to "
        f"{HUMAN_READABLE_REASONS.get(reason, 'UNKNOWN')}; "
        f"preemptor path: {preemptor_path or 'UNKNOWN'}; "
        f"preemptee path: {target_path or 'UNKNOWN'}"
    )
