"""The queue manager (upstream ``pkg/cache/queue/manager.go`` and ``local_queue.go``): which
pending workload waits in which ClusterQueue, through the LocalQueue of its namespace.

A workload is held here while it is *pending*: no quota reservation, active, not finished. It is
filed under its LocalQueue (``namespace/spec.queueName``) even while that LocalQueue or its
ClusterQueue does not exist yet, so creating them later adopts it, as upstream's listing of
existing workloads does. Whether the namespace matches the ClusterQueue's selector is the
scheduler's question, not this module's.

Pure: time comes from the ``clock`` given at construction (seconds since the epoch).
(Over 400 lines: one upstream type whose operations all maintain the same indexes.)
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Iterable, Mapping

from numaplane.kueue.api.model import (
    STOP_NONE,
    ClusterQueue,
    Cohort,
    LocalQueue,
    Workload,
)
from numaplane.kueue.queue.cluster_queue import (
    REQUEUE_GENERIC,
    PendingWorkloads,
    backoff_expired,
)


def is_pending(wl: Workload) -> bool:
    """Upstream ``IsAdmissible`` (plus deletion): the workload belongs in a queue."""
    return (
        not wl.has_quota_reservation
        and wl.active
        and not wl.is_finished
        and not wl.deleting
        and wl.admission is None
    )


def local_queue_key(namespace: str, name: str) -> str:
    """``namespace/name`` of a LocalQueue (upstream ``queue.Key``)."""
    return f"{namespace}/{name}"


class QueueManager:
    """Pending workloads of every ClusterQueue; see the module docstring."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._cqs: dict[str, PendingWorkloads] = {}
        self._cq_specs: dict[str, ClusterQueue] = {}
        self._cq_active: dict[str, bool] = {}
        self._cq_order: list[str] = []
        self._cohort_parent: dict[str, str] = {}
        self._lqs: dict[str, LocalQueue] = {}
        #: Pending workloads filed by LocalQueue key, whether or not that LocalQueue exists.
        self._by_lq: dict[str, dict[str, Workload]] = {}
        self._assigned: dict[str, str] = {}
        #: Heads popped and not given back yet → their ClusterQueue, so deleting one (it was
        #: reserved, finished or deleted meanwhile) still clears that queue's preemptor mark.
        self._inflight: dict[str, str] = {}
        #: (requeueAt, workload key) of parked workloads in backoff; validated lazily.
        self._backoffs: list[tuple[float, str]] = []
        #: ClusterQueue → the members of its cohort tree (None: in a cycle); rebuilt lazily
        #: after a ClusterQueue or cohort change, so requeueing a tree costs O(tree).
        self._trees: dict[str, tuple[str, ...] | None] | None = None

    # --- ClusterQueues and cohorts ------------------------------------------------------------

    def upsert_cluster_queue(self, cq: ClusterQueue, *, active: bool = True) -> None:
        """Add or update a ClusterQueue. ``active`` is its ``Active`` condition (the cache
        decides it); only active queues give heads. A new queue adopts the workloads of the
        LocalQueues already pointing at it; a spec change (or activation) requeues the
        inadmissible workloads of its whole cohort tree, as upstream's Add/UpdateClusterQueue."""
        now = self._clock()
        name = cq.name
        queue = self._cqs.get(name)
        if queue is None:
            queue = PendingWorkloads(name, cq.queueing_strategy)
            self._cqs[name] = queue
            self._cq_order = sorted(self._cqs)
            self._trees = None
            self._cq_specs[name] = cq
            self._cq_active[name] = active
            for lq_key, lq in self._lqs.items():
                if lq.cluster_queue == name and lq.stop_policy == STOP_NONE:
                    for wl in self._by_lq.get(lq_key, {}).values():
                        queue.add_if_absent(wl, now)
                        self._note_backoff(wl, now)
            self._queue_inadmissible_tree(name, now)
            return
        old_spec = self._cq_specs[name]
        was_active = self._cq_active[name]
        queue.queueing_strategy = cq.queueing_strategy
        if old_spec.cohort != cq.cohort:
            self._trees = None
        self._cq_specs[name] = cq
        self._cq_active[name] = active
        if old_spec != cq or (active and not was_active):
            self._queue_inadmissible_tree(name, now)

    def set_cluster_queue_active(self, name: str, active: bool) -> None:
        """Record a change of a ClusterQueue's ``Active`` condition alone (see
        :meth:`upsert_cluster_queue`)."""
        spec = self._cq_specs.get(name)
        if spec is not None:
            self.upsert_cluster_queue(spec, active=active)

    def delete_cluster_queue(self, name: str) -> None:
        """Forget a ClusterQueue; its workloads stay filed under their LocalQueues."""
        if self._cqs.pop(name, None) is None:
            return
        del self._cq_specs[name]
        del self._cq_active[name]
        self._cq_order = sorted(self._cqs)
        self._trees = None

    def upsert_cohort(self, cohort: Cohort) -> None:
        """Add or update a Cohort's parent edge; requeues the inadmissible workloads of its
        tree (upstream ``AddOrUpdateCohort``)."""
        self._cohort_parent[cohort.name] = cohort.parent
        self._trees = None
        now = self._clock()
        root = self._root_of_cohort(cohort.name)
        if root is None:
            return
        for cq_name in self._cq_order:
            if self._root_of_cq(cq_name) == f"cohort:{root}":
                self._cqs[cq_name].queue_inadmissible(now)

    def delete_cohort(self, name: str) -> None:
        """Forget a Cohort object (a ClusterQueue may still name it: an implicit cohort)."""
        self._cohort_parent.pop(name, None)
        self._trees = None

    def cluster_queue_names(self) -> list[str]:
        """Known ClusterQueues, sorted."""
        return list(self._cq_order)

    # --- LocalQueues --------------------------------------------------------------------------

    def upsert_local_queue(self, lq: LocalQueue) -> None:
        """Add or update a LocalQueue. Its pending workloads join its ClusterQueue; a changed
        ClusterQueue moves them; a stopped LocalQueue (``stopPolicy`` not ``None``) feeds
        nothing until restarted."""
        now = self._clock()
        key = lq.key
        old = self._lqs.get(key)
        self._lqs[key] = lq
        items = self._by_lq.get(key, {})
        old_feeds = old is not None and old.stop_policy == STOP_NONE
        new_feeds = lq.stop_policy == STOP_NONE
        if (
            old is not None
            and old_feeds
            and (old.cluster_queue != lq.cluster_queue or not new_feeds)
        ):
            old_queue = self._cqs.get(old.cluster_queue)
            if old_queue is not None:
                for wl_key in items:
                    old_queue.delete(wl_key)
        if not new_feeds:
            return
        if old is not None and old_feeds and old.cluster_queue == lq.cluster_queue:
            return
        queue = self._cqs.get(lq.cluster_queue)
        if queue is None:
            return
        for wl in items.values():
            queue.add_if_absent(wl, now)
            self._note_backoff(wl, now)

    def delete_local_queue(self, namespace: str, name: str) -> None:
        """Forget a LocalQueue: its workloads leave the ClusterQueue but stay filed, waiting."""
        key = local_queue_key(namespace, name)
        lq = self._lqs.pop(key, None)
        if lq is None:
            return
        queue = self._cqs.get(lq.cluster_queue)
        if queue is not None:
            for wl_key in self._by_lq.get(key, {}):
                queue.delete(wl_key)

    def local_queue(self, namespace: str, name: str) -> LocalQueue | None:
        """The LocalQueue ``namespace/name`` if known."""
        return self._lqs.get(local_queue_key(namespace, name))

    def cluster_queue_for(self, wl: Workload) -> str | None:
        """The ClusterQueue a workload's LocalQueue points at (upstream
        ``ClusterQueueForWorkload``), None when the LocalQueue does not exist."""
        lq = self._lqs.get(local_queue_key(wl.namespace, wl.queue_name))
        return None if lq is None else lq.cluster_queue

    # --- workloads ----------------------------------------------------------------------------

    def upsert_workload(self, wl: Workload) -> bool:
        """Add or update a workload. A workload that is not pending is removed. Returns whether
        it now waits in a ClusterQueue (its LocalQueue and ClusterQueue exist, the LocalQueue
        is not stopped)."""
        queue = self._file(wl)
        if queue is None:
            return False
        now = self._clock()
        queue.push_or_update(wl, now)
        self._note_backoff(wl, now)
        return True

    def _file(self, wl: Workload) -> PendingWorkloads | None:
        """File a pending ``wl`` under its LocalQueue (dropping it when it is not pending) and
        return the ClusterQueue queue that should hold it (None: none does now)."""
        key = wl.key
        if not is_pending(wl):
            self.delete_workload(key)
            return None
        self._inflight.pop(key, None)
        lq_key = local_queue_key(wl.namespace, wl.queue_name)
        previous = self._assigned.get(key)
        if previous is not None and previous != lq_key:
            self.delete_workload(key)
        # Filed even when its LocalQueue is gone, so the LocalQueue's return adopts it.
        self._by_lq.setdefault(lq_key, {})[key] = wl
        self._assigned[key] = lq_key
        return self._feeding_queue(lq_key)

    def delete_workload(self, key: str) -> None:
        """Forget a workload (deleted, reserved, finished or deactivated)."""
        popped_from = self._inflight.pop(key, None)
        if popped_from is not None and popped_from in self._cqs:
            self._cqs[popped_from].delete(key)
        lq_key = self._assigned.pop(key, None)
        if lq_key is None:
            return
        items = self._by_lq.get(lq_key)
        if items is not None:
            items.pop(key, None)
            if not items:
                del self._by_lq[lq_key]
        lq = self._lqs.get(lq_key)
        if lq is not None:
            queue = self._cqs.get(lq.cluster_queue)
            if queue is not None:
                queue.delete(key)

    def requeue(self, wl: Workload, *, immediate: bool, reason: str = REQUEUE_GENERIC) -> bool:
        """Give back a head the scheduler did not admit (upstream ``RequeueWorkload``):
        ``wl`` must be its latest version. ``reason`` is upstream's RequeueReason (see
        :mod:`numaplane.kueue.queue.cluster_queue`); StrictFIFO ignores ``immediate`` and keeps
        the head in the heap unless the reason is ``NamespaceMismatch``. Returns whether it was
        inserted."""
        queue = self._file(wl)
        if queue is None:
            return False
        now = self._clock()
        inserted = queue.requeue(wl, immediate=immediate, reason=reason, now=now)
        self._note_backoff(wl, now)
        return inserted

    def heads(self) -> list[Workload]:
        """Pop the head of every active ClusterQueue that has one, in ClusterQueue name order.
        A popped workload leaves its LocalQueue too, until :meth:`requeue` or
        :meth:`upsert_workload` brings it back (upstream ``heads``)."""
        out: list[Workload] = []
        for name in self._cq_order:
            if not self._cq_active[name]:
                continue
            wl = self._cqs[name].pop()
            if wl is None:
                continue
            out.append(wl)
            self._inflight[wl.key] = name
            lq_key = self._assigned.pop(wl.key, None)
            if lq_key is not None:
                items = self._by_lq.get(lq_key)
                if items is not None:
                    items.pop(wl.key, None)
                    if not items:
                        del self._by_lq[lq_key]
        return out

    def has_heads(self) -> bool:
        """Whether :meth:`heads` would return anything."""
        return any(self._cq_active[n] and self._cqs[n].has_active() for n in self._cq_order)

    def queue_inadmissible(self, cq_names: Iterable[str]) -> int:
        """Move the parked workloads of the named ClusterQueues *and of every ClusterQueue in
        their cohort trees* back to the heaps (upstream ``QueueInadmissibleWorkloads``); trees
        with a cohort cycle are skipped. Returns how many moved."""
        now = self._clock()
        moved = 0
        done: set[str] = set()
        for name in cq_names:
            if name in self._cqs and name not in done:
                moved += self._queue_inadmissible_tree(name, now, done)
        return moved

    # --- counts -------------------------------------------------------------------------------

    def pending_counts(self, cq_name: str) -> tuple[int, int]:
        """(active, inadmissible) pending workloads of a ClusterQueue; (0, 0) if unknown."""
        queue = self._cqs.get(cq_name)
        if queue is None:
            return (0, 0)
        return (queue.pending_active(), queue.pending_inadmissible())

    def pending_total(self, cq_name: str) -> int:
        """``status.pendingWorkloads`` of a ClusterQueue."""
        active, inadmissible = self.pending_counts(cq_name)
        return active + inadmissible

    def local_queue_pending(self, namespace: str, name: str) -> int:
        """``status.pendingWorkloads`` of a LocalQueue (upstream counts its items); 0 for an
        unknown LocalQueue."""
        key = local_queue_key(namespace, name)
        if key not in self._lqs:
            return 0
        return len(self._by_lq.get(key, ()))

    def pending_workloads(self, cq_name: str) -> list[Workload]:
        """A ClusterQueue's pending workloads in queue order (the visibility view)."""
        queue = self._cqs.get(cq_name)
        return [] if queue is None else queue.ordered()

    def next_backoff_at(self) -> float | None:
        """The earliest future ``requeueAt`` of a workload parked for backoff, if any: when the
        caller should look again (reconcile it so its ``Requeued`` condition flips)."""
        now = self._clock()
        heap = self._backoffs
        while heap:
            at, key = heap[0]
            if at > now and self._parked_requeue_at(key) == at:
                return at
            heapq.heappop(heap)
        return None

    # --- internals ----------------------------------------------------------------------------

    def _feeding_queue(self, lq_key: str) -> PendingWorkloads | None:
        lq = self._lqs.get(lq_key)
        if lq is None or lq.stop_policy != STOP_NONE:
            return None
        return self._cqs.get(lq.cluster_queue)

    def _note_backoff(self, wl: Workload, now: float) -> None:
        at = wl.requeue_at
        if at is not None and at > now and not backoff_expired(wl, now):
            heapq.heappush(self._backoffs, (at, wl.key))

    def _parked_requeue_at(self, key: str) -> float | None:
        lq_key = self._assigned.get(key)
        if lq_key is None:
            return None
        queue = self._feeding_queue(lq_key)
        if queue is None:
            return None
        parked = queue.get_inadmissible(key)
        return None if parked is None else parked.requeue_at

    def _root_of_cohort(self, cohort: str) -> str | None:
        """The root of a cohort's tree; None when its ancestry has a cycle."""
        seen: set[str] = set()
        node = cohort
        while True:
            if node in seen:
                return None
            seen.add(node)
            parent = self._cohort_parent.get(node, "")
            if not parent:
                return node
            node = parent

    def _root_of_cq(self, cq_name: str) -> str | None:
        """``"cohort:<root>"`` for a ClusterQueue in a cohort, ``"cq:<name>"`` alone, None when
        its cohort tree has a cycle."""
        cohort = self._cq_specs[cq_name].cohort
        if not cohort:
            return f"cq:{cq_name}"
        root = self._root_of_cohort(cohort)
        return None if root is None else f"cohort:{root}"

    def _tree_of(self, cq_name: str) -> tuple[str, ...] | None:
        trees = self._trees
        if trees is None:
            by_root: dict[str, list[str]] = {}
            roots: dict[str, str | None] = {}
            for name in self._cq_order:
                root = self._root_of_cq(name)
                roots[name] = root
                if root is not None:
                    by_root.setdefault(root, []).append(name)
            trees = {
                name: None if root is None else tuple(by_root[root]) for name, root in roots.items()
            }
            self._trees = trees
        return trees.get(cq_name)

    def _queue_inadmissible_tree(
        self, cq_name: str, now: float, done: set[str] | None = None
    ) -> int:
        members = self._tree_of(cq_name)
        if members is None:
            return 0
        moved = 0
        for member in members:
            if done is not None:
                if member in done:
                    continue
                done.add(member)
            moved += self._cqs[member].queue_inadmissible(now)
        return moved

    def snapshot_counts(self) -> Mapping[str, tuple[int, int]]:
        """(active, inadmissible) of every ClusterQueue, for status writers."""
        return {name: self.pending_counts(name) for name in self._cq_order}
