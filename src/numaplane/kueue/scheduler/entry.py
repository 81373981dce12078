"""A head of a ClusterQueue as one scheduling cycle sees it (upstream ``scheduler.entry``), the
order the cycle processes entries in (upstream ``makeClassicalIterator``) and the partial
admission search over podSet counts (upstream ``flavorassigner.PodSetReducer``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, Generic, TypeVar

from numaplane.kueue.api.model import Workload
from numaplane.kueue.scheduler.flavorassigner import Assignment
from numaplane.kueue.scheduler.preemption import Target

# Entry statuses (upstream ``entryStatus``).
NOT_NOMINATED: Final = ""
NOMINATED: Final = "nominated"
SKIPPED: Final = "skipped"
ASSUMED: Final = "assumed"

# Why an entry goes back to its queue (upstream ``qcache.RequeueReason``); the queue decides
# from it, with its queueing strategy, whether the workload is retried at once or parked.
REQUEUE_GENERIC: Final = ""
REQUEUE_FAILED_AFTER_NOMINATION: Final = "FailedAfterNomination"
REQUEUE_NAMESPACE_MISMATCH: Final = "NamespaceMismatch"
REQUEUE_PENDING_PREEMPTION: Final = "PendingPreemption"
REQUEUE_PREEMPTION_NO_CANDIDATES: Final = "PreemptionNoCandidates"
REQUEUE_NO_FIT: Final = "NoFit"


@dataclass(slots=True)
class Entry:
    """A head with what nomination found for it in its ClusterQueue."""

    workload: Workload
    cluster_queue: str
    assignment: Assignment | None = None
    targets: list[Target] = field(default_factory=list)
    status: str = NOT_NOMINATED
    #: The ``QuotaReserved=False`` message and reason if the entry is not admitted.
    message: str = ""
    quota_reason: str = ""
    requeue_reason: str = REQUEUE_GENERIC
    #: Whether the next attempt resumes each flavor search where this one stopped; skipping
    #: or issuing preemptions makes the next attempt try every flavor again.
    keep_last_tried: bool = True
    #: Where the previous attempt's searches stopped (what the queue handed back).
    prior_last_tried: list[dict[str, int]] | None = None


def entry_order_key(entry: Entry, priority_sorting: bool) -> tuple[bool, int, int, float]:
    """Sort key of the classical cycle order (ascending = processed first): entries already
    holding a reservation (second pass) first; then fewer borrowing levels; then higher priority
    (``PrioritySortingWithinCohort``, on by default); then FIFO on the queue-order time."""
    assignment = entry.assignment
    borrows = assignment.borrowing if assignment is not None else 0
    priority = -entry.workload.priority if priority_sorting else 0
    return (
        not entry.workload.has_quota_reservation,
        borrows,
        priority,
        entry.workload.queue_order_time,
    )


def order_entries(entries: Sequence[Entry], priority_sorting: bool = True) -> list[Entry]:
    """``entries`` in processing order (stable: ties keep the heads' order)."""
    return sorted(entries, key=lambda e: entry_order_key(e, priority_sorting))


R = TypeVar("R")


@dataclass(slots=True)
class PodSetReducer(Generic[R]):
    """Binary search, from the full counts down to every podSet's ``minCount``, for the largest
    counts ``fits`` accepts (upstream ``PodSetReducer``). ``fits`` may be called on counts that do
    not fit; the result is the last accepted one."""

    full_counts: list[int]
    deltas: list[int]
    fits: Callable[[list[int]], tuple[R | None, bool]]

    @classmethod
    def of(
        cls, workload: Workload, fits: Callable[[list[int]], tuple[R | None, bool]]
    ) -> PodSetReducer[R]:
        """The reducer for ``workload``'s podSets."""
        full = [ps.count for ps in workload.pod_sets]
        deltas = [
            ps.count - (ps.min_count if ps.min_count is not None else ps.count)
            for ps in workload.pod_sets
        ]
        return cls(full, deltas, fits)

    def counts_at(self, index: int) -> list[int]:
        """The counts of search step ``index`` (0: full counts, total delta: all at minimum)."""
        total = sum(self.deltas)
        return [
            full - delta * index // total
            for full, delta in zip(self.full_counts, self.deltas, strict=True)
        ]

    def search(self) -> R | None:
        """The result for the largest counts that fit, or None."""
        total = sum(self.deltas)
        if total == 0:
            return None
        last_good = -1
        last: R | None = None
        # sort.Search over [0, total]: the smallest index whose counts fit, assuming smaller
        # counts fit whenever larger ones do.
        lo, hi = 0, total + 1
        while lo < hi:
            mid = (lo + hi) // 2
            result, ok = self.fits(self.counts_at(mid))
            if ok:
                last_good, last = mid, result
                hi = mid
            else:
                lo = mid + 1
        return last if lo == last_good else None


def can_be_partially_admitted(workload: Workload) -> bool:
    """Whether some podSet may run with fewer pods (``minCount`` below ``count``)."""
    return any(ps.min_count is not None and ps.min_count < ps.count for ps in workload.pod_sets)
