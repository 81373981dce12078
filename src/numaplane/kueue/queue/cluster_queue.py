"""The pending workloads of one ClusterQueue, as upstream's ``pkg/cache/queue/cluster_queue.go``
keeps them: an ordered heap of *active* workloads (the ones the scheduler may pop) and a set of
*inadmissible* ones parked until something in the cohort changes.

Order (``baseCompareFunc``): the sticky preemptor first (BestEffortFIFO only), then higher
priority, then the earlier queue-order timestamp, then the UID. The heap is a ``heapq`` with lazy
deletion: an update or removal only forgets the live entry, and stale heap tuples are skipped when
they surface (rebuilt when they outnumber the live ones), so every operation stays O(log n) at
10,000 workloads.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from numaplane.kueue.api.model import BEST_EFFORT_FIFO, STRICT_FIFO, Workload
from numaplane.kueue.constants import REQUEUED

# Upstream's RequeueReason values (``cluster_queue.go``): why the scheduler gives a head back.
REQUEUE_GENERIC: Final = ""
REQUEUE_FAILED_AFTER_NOMINATION: Final = "FailedAfterNomination"
REQUEUE_NAMESPACE_MISMATCH: Final = "NamespaceMismatch"
REQUEUE_PREEMPTION_GATED: Final = "PreemptionGated"
REQUEUE_PENDING_PREEMPTION: Final = "PendingPreemption"
REQUEUE_PENDING_MIGRATION: Final = "PendingMigration"
REQUEUE_PREEMPTION_FAILED: Final = "PreemptionFailed"
REQUEUE_NO_FIT: Final = "NoFit"
REQUEUE_PREEMPTION_NO_CANDIDATES: Final = "PreemptionNoCandidates"
REQUEUE_SNAPSHOT_FAILED: Final = "SnapshotFailed"

#: BestEffortFIFO gives these straight back to the heap: the workload may fit next cycle without
#: any cluster event (upstream ``RequeueIfNotPresent``).
_BEST_EFFORT_IMMEDIATE: Final = frozenset(
    {
        REQUEUE_FAILED_AFTER_NOMINATION,
        REQUEUE_SNAPSHOT_FAILED,
        REQUEUE_PENDING_PREEMPTION,
        REQUEUE_PENDING_MIGRATION,
        REQUEUE_PREEMPTION_FAILED,
    }
)

#: Rebuild the heap once stale tuples outnumber live entries by this factor (and a floor), so
#: lazy deletion never lets the heap grow without bound under churn.
_STALE_FACTOR: Final = 2
_STALE_FLOOR: Final = 64


def backoff_expired(wl: Workload, now: float) -> bool:
    """Upstream ``backoffWaitingTimeExpired``: a ``Requeued=False`` workload waits for the
    workload controller to flip it; otherwise it may run once ``requeueAt`` is reached."""
    requeued = wl.conditions.get(REQUEUED)
    if requeued is not None and requeued[0] == "False":
        return False
    if wl.requeue_at is None:
        return True
    return now >= wl.requeue_at


def _sort_key(wl: Workload) -> tuple[int, float, str, str]:
    # Higher priority first, then FIFO by queue-order time; the UID breaks ties as upstream
    # does, the key keeps the order total when UIDs are missing (tests, hand-built objects).
    return (-wl.priority, wl.queue_order_time, wl.uid, wl.key)


def _parked_relevantly_same(old: Workload, new: Workload) -> bool:
    """Whether an update of a parked workload cannot make it admissible (upstream
    ``PushOrUpdate``: same spec, same requeue state, same Evicted and Requeued conditions)."""
    return (
        old.pod_sets == new.pod_sets
        and old.priority == new.priority
        and old.queue_name == new.queue_name
        and old.active == new.active
        and old.requeue_at == new.requeue_at
        and old.requeue_count == new.requeue_count
        and old.conditions.get("Evicted") == new.conditions.get("Evicted")
        and old.conditions.get(REQUEUED) == new.conditions.get(REQUEUED)
    )


@dataclass(slots=True)
class _Entry:
    seq: int
    workload: Workload


class PendingWorkloads:
    """One ClusterQueue's pending workloads: the active heap and the inadmissible set."""

    def __init__(self, name: str, queueing_strategy: str = BEST_EFFORT_FIFO) -> None:
        self.name = name
        self.queueing_strategy = queueing_strategy
        self._heap: list[tuple[int, float, str, str, int]] = []
        self._live: dict[str, _Entry] = {}
        self._inadmissible: dict[str, Workload] = {}
        self._seq = itertools.count()
        #: BestEffortFIFO's preempting head, kept at the front until it is admitted, fails
        #: for another reason or is deleted (upstream ``preemptorWorkload``, Kueue#6929).
        self._sticky: str | None = None
        # Upstream's popCycle/queueInadmissibleCycle: a head given back after a
        # QueueInadmissibleWorkloads call that happened while it was out is not parked.
        self._pop_cycle = 0
        self._queue_inadmissible_cycle = -1

    # --- queries ----------------------------------------------------------------------------

    def pending_active(self) -> int:
        """Workloads in the heap."""
        return len(self._live)

    def pending_inadmissible(self) -> int:
        """Workloads parked as inadmissible."""
        return len(self._inadmissible)

    def __contains__(self, key: object) -> bool:
        return key in self._live or key in self._inadmissible

    def is_inadmissible(self, key: str) -> bool:
        """Whether ``key`` is parked."""
        return key in self._inadmissible

    def get_inadmissible(self, key: str) -> Workload | None:
        """The parked workload ``key``, if parked."""
        return self._inadmissible.get(key)

    def is_active(self, key: str) -> bool:
        """Whether ``key`` is in the heap."""
        return key in self._live

    def inadmissible(self) -> Iterator[Workload]:
        """The parked workloads (no order)."""
        return iter(self._inadmissible.values())

    def ordered(self) -> list[Workload]:
        """Every pending workload in queue order (the visibility snapshot; O(n log n))."""
        everything = [e.workload for e in self._live.values()]
        everything.extend(self._inadmissible.values())
        sticky = self._sticky
        everything.sort(key=lambda wl: (wl.key != sticky, _sort_key(wl)))
        return everything

    # --- heap primitives --------------------------------------------------------------------

    def _push_active(self, wl: Workload) -> None:
        seq = next(self._seq)
        self._live[wl.key] = _Entry(seq, wl)
        heapq.heappush(self._heap, (*_sort_key(wl), seq))
        if len(self._heap) > _STALE_FLOOR and len(self._heap) > _STALE_FACTOR * (
            len(self._live) + 1
        ):
            self._rebuild()

    def _rebuild(self) -> None:
        self._heap = [(*_sort_key(e.workload), e.seq) for e in self._live.values()]
        heapq.heapify(self._heap)

    def _push_if_absent(self, wl: Workload) -> bool:
        if wl.key in self._live or wl.key in self._inadmissible:
            return False
        self._push_active(wl)
        return True

    # --- operations -------------------------------------------------------------------------

    def push_or_update(self, wl: Workload, now: float) -> None:
        """Upstream ``PushOrUpdate``: a parked workload stays parked unless the update could
        make it admissible; a workload still in backoff is parked; otherwise it is (re)placed
        in the heap."""
        key = wl.key
        old = self._inadmissible.get(key)
        if old is not None:
            if _parked_relevantly_same(old, wl):
                self._inadmissible[key] = wl
                return
            del self._inadmissible[key]
        if key not in self._live and not backoff_expired(wl, now):
            self._inadmissible[key] = wl
            return
        self._push_active(wl)

    def add_if_absent(self, wl: Workload, now: float) -> bool:
        """Upstream ``AddFromLocalQueue``: into the heap unless already tracked; a workload in
        backoff is parked instead. Whether it entered the heap."""
        if wl.key in self:
            return False
        if not backoff_expired(wl, now):
            self._inadmissible[wl.key] = wl
            return False
        self._push_active(wl)
        return True

    def delete(self, key: str) -> None:
        """Forget ``key`` wherever it is (its heap tuple goes stale)."""
        self._live.pop(key, None)
        self._inadmissible.pop(key, None)
        if self._sticky == key:
            self._sticky = None

    def pop(self) -> Workload | None:
        """The head, removed from the queue; None when the heap is empty."""
        self._pop_cycle += 1
        sticky = self._sticky
        if sticky is not None and sticky in self._live:
            return self._live.pop(sticky).workload
        heap = self._heap
        while heap:
            item = heapq.heappop(heap)
            key, seq = item[3], item[4]
            entry = self._live.get(key)
            if entry is not None and entry.seq == seq:
                del self._live[key]
                return entry.workload
        return None

    def has_active(self) -> bool:
        """Whether a pop would return a workload."""
        return bool(self._live)

    def requeue(self, wl: Workload, *, immediate: bool, reason: str, now: float) -> bool:
        """Upstream ``RequeueIfNotPresent``: give a popped head back. StrictFIFO puts it back in
        the heap (it keeps blocking the queue) except on a namespace mismatch; BestEffortFIFO
        parks it unless ``immediate`` or the reason says it may fit without a cluster event.
        Returns whether the workload was inserted."""
        if self.queueing_strategy == STRICT_FIFO:
            immediate = reason != REQUEUE_NAMESPACE_MISMATCH
        else:
            immediate = immediate or reason in _BEST_EFFORT_IMMEDIATE
        key = wl.key
        if reason in (REQUEUE_PENDING_PREEMPTION, REQUEUE_PENDING_MIGRATION):
            # Only BestEffortFIFO makes the preemptor sticky: StrictFIFO keeps its head anyway.
            self._sticky = key if self.queueing_strategy == BEST_EFFORT_FIFO else None
        elif self._sticky == key:
            self._sticky = None
        parked = self._inadmissible.get(key)
        if backoff_expired(wl, now) and (
            immediate or self._queue_inadmissible_cycle >= self._pop_cycle
        ):
            if parked is not None:
                del self._inadmissible[key]
                self._push_active(wl)
                return True
            return self._push_if_absent(wl)
        if parked is not None or key in self._live:
            return False
        self._inadmissible[key] = wl
        return True

    def queue_inadmissible(self, now: float) -> int:
        """Upstream ``QueueInadmissibleWorkloads`` for this queue: every parked workload whose
        backoff is over goes back to the heap. Returns how many moved."""
        self._queue_inadmissible_cycle = self._pop_cycle
        if not self._inadmissible:
            return 0
        moved = 0
        kept: dict[str, Workload] = {}
        for key, wl in self._inadmissible.items():
            if not backoff_expired(wl, now):
                kept[key] = wl
                continue
            if key not in self._live:
                self._push_active(wl)
                moved += 1
        self._inadmissible = kept
        return moved
