"""The order of a cycle's entries under Fair Sharing (upstream ``fair_sharing_iterator.go``):
for each root cohort, a tournament from the leaves up picks at every cohort the child whose
nominee leaves it with the lowest Dominant Resource Share — preferring nominees that do not make
their subtree borrow — and the winner is processed before the next tournament is run on the
changed snapshot."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from numaplane.kueue.cache.fair_sharing import DRS, compare_drs
from numaplane.kueue.cache.snapshot import CohortSnapshot, Snapshot
from numaplane.kueue.resources import FlavorResource
from numaplane.kueue.scheduler.entry import Entry, entry_order_key


def net_usage(e: Entry) -> dict[FlavorResource, int]:
    """What admitting the entry would add: nothing for a workload already reserving."""
    if e.assignment is None or e.workload.has_quota_reservation:
        return {}
    return dict(e.assignment.usage)


class FairSharingIterator:
    """Yields the entries one by one; each tournament sees what the previous ones did to the
    snapshot. Root cohorts (and queues without a cohort) are independent, so which of them goes
    first does not matter; here they go in the entries' order."""

    def __init__(
        self, entries: Sequence[Entry], snapshot: Snapshot, priority_sorting: bool = True
    ) -> None:
        self._snapshot = snapshot
        self._priority_sorting = priority_sorting
        self._by_cq: dict[str, list[Entry]] = {}
        for e in entries:
            self._by_cq.setdefault(e.cluster_queue, []).append(e)
        for queue in self._by_cq.values():
            queue.sort(key=lambda e: entry_order_key(e, priority_sorting))
        self._drs: dict[tuple[str, str], DRS] = {}
        self._requested: dict[str, dict[FlavorResource, int]] = {}

    def __iter__(self) -> Iterator[Entry]:
        while self._by_cq:
            cq = self._snapshot.cluster_queues[next(iter(self._by_cq))]
            if cq.parent is None:
                yield self._pop(cq.name)
                continue
            root = cq.parent.root()
            self._compute_drs(root)
            winner = self._tournament(root)
            assert winner is not None  # cq itself has an entry under root
            yield self._pop(winner.cluster_queue)

    def _pop(self, cq_name: str) -> Entry:
        queue = self._by_cq[cq_name]
        head = queue.pop(0)
        if not queue:
            del self._by_cq[cq_name]
        return head

    def _compute_drs(self, root: CohortSnapshot) -> None:
        """Each nominee's share, counted with its usage, at every level up to the root."""
        self._drs = {}
        self._requested = {}
        for cq in root.subtree_cluster_queues():
            queue = self._by_cq.get(cq.name)
            if not queue:
                continue
            e = queue[0]
            usage = net_usage(e)
            cq.add_usage(usage)
            try:
                self._requested[e.workload.key] = usage
                share = cq.dominant_resource_share()
                for ancestor in cq.path_parent_to_root():
                    self._drs[(ancestor.name, e.workload.key)] = share
                    share = ancestor.dominant_resource_share()
            finally:
                cq.remove_usage(usage)

    def _tournament(self, cohort: CohortSnapshot) -> Entry | None:
        candidates: list[Entry] = []
        for child in cohort.child_cohorts:
            found = self._tournament(child)
            if found is not None:
                candidates.append(found)
        for child_cq in cohort.child_cqs:
            queue = self._by_cq.get(child_cq.name)
            if queue:
                candidates.append(queue[0])
        if not candidates:
            return None
        best = candidates[0]
        for current in candidates[1:]:
            if self._less(current, best, cohort.name):
                best = current
        return best

    def _less(self, a: Entry, b: Entry, parent: str) -> bool:
        a_drs = self._drs[(parent, a.workload.key)]
        b_drs = self._drs[(parent, b.workload.key)]
        # FairSharingPrioritizeNonBorrowing (beta, on): a nominee that keeps its subtree within
        # quota on the flavors it asks for goes first.
        a_borrows = a_drs.is_borrowing_on(self._requested[a.workload.key])
        b_borrows = b_drs.is_borrowing_on(self._requested[b.workload.key])
        if a_borrows != b_borrows:
            return not a_borrows
        order = compare_drs(a_drs, b_drs)
        if order != 0:
            return order == -1
        if self._priority_sorting and a.workload.priority != b.workload.priority:
            return a.workload.priority > b.workload.priority
        return a.workload.queue_order_time < b.workload.queue_order_time
