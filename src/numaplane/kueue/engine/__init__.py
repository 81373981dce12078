"""Kueue's controllers and scheduler as one pure state machine: the objects the informers see go
in (:meth:`Engine.observe`, :meth:`Engine.forget`), the writes to make come out
(:meth:`Engine.cycle` for the scheduler; :meth:`Engine.reconcile_workload`,
:meth:`Engine.reconcile_job`, :meth:`Engine.cluster_queue_status`,
:meth:`Engine.local_queue_status` for the controllers).

It composes the pure core as upstream's ``kueue-controller-manager`` wires it: the quota cache
(:class:`~numaplane.kueue.cache.KueueCache`), the pending queues
(:class:`~numaplane.kueue.queue.QueueManager`), the scheduling cycle
(:func:`~numaplane.kueue.scheduler.schedule`), the workload rules
(:mod:`numaplane.kueue.workload`) and the Job integration (:mod:`numaplane.kueue.jobs`). A
reservation is *assumed* in the cache as soon as the cycle decides it, before its API write,
and forgotten when that write fails (upstream ``scheduler.admit``), so the next cycle never
hands the same quota out twice.

The runtime (:mod:`numaplane.kueue.runtime`) drives it from informers and writes through the
API; tests, the hypothesis invariant and the benchmark drive it in memory
(:class:`numaplane.testing.kueue.FakeKueueApi`).
"""

from __future__ import annotations

import logging

from numaplane.kueue.engine import controllers, cycle, rules
from numaplane.kueue.engine.state import (
    ADMISSION_CHECK,
    CLUSTER_QUEUE,
    COHORT,
    CREATE,
    DELETE,
    JOB,
    KINDS,
    LOCAL_QUEUE,
    NAMESPACE,
    PRIORITY_CLASS,
    RESOURCE_FLAVOR,
    STATUS,
    UPDATE,
    WORKLOAD,
    WORKLOAD_PRIORITY_CLASS,
    EngineState,
    Event,
    KindInfo,
    Obj,
    Outcome,
    Touched,
    Write,
    chained,
    object_key,
    split_key,
    with_kind,
    with_status,
)
from numaplane.kueue.engine.status import (
    cluster_queue_status,
    cohort_status,
    local_queue_status,
)
from numaplane.kueue.errors import KueueError

__all__ = [
    "ADMISSION_CHECK",
    "CLUSTER_QUEUE",
    "COHORT",
    "CREATE",
    "DELETE",
    "JOB",
    "KINDS",
    "LOCAL_QUEUE",
    "NAMESPACE",
    "PRIORITY_CLASS",
    "RESOURCE_FLAVOR",
    "STATUS",
    "UPDATE",
    "WORKLOAD",
    "WORKLOAD_PRIORITY_CLASS",
    "Engine",
    "Event",
    "KindInfo",
    "Outcome",
    "Touched",
    "Write",
    "chained",
    "object_key",
    "split_key",
]

log = logging.getLogger(__name__)


def _rv(obj: Obj) -> int | None:
    text = str((obj.get("metadata") or {}).get("resourceVersion") or "")
    return int(text) if text.isdigit() else None


def _older(new: Obj, old: Obj) -> bool:
    """Whether ``new`` is an older version than ``old`` (resourceVersions are opaque to
    clients, but every server numaplane talks to, its own and etcd's, counts up)."""
    a, b = _rv(new), _rv(old)
    return a is not None and b is not None and a < b


class Engine(EngineState):
    """See the package doc. Not thread-safe: one event loop drives it."""

    def observe(self, kind: str, obj: Obj) -> Touched:
        """An object was added or changed: update the cache and queues; what to look at."""
        key = object_key(obj)
        old = self.objects[kind].get(key)
        if old is not None and _older(obj, old):
            # A read that raced the watch (a refresh after a conflict) must not take the
            # engine back: a pending version after our reservation would queue it again.
            return Touched()
        self.objects[kind][key] = obj
        try:
            touched = rules.observe(self, kind, key, old, obj)
        except KueueError as err:
            # A malformed object (a real server's schema would have refused most of these):
            # it takes no part until fixed.
            log.warning("%s %s ignored: %s", kind, key, err)
            self._drop(kind, key, old)
            return Touched()
        touched.cohorts |= self.cohorts_above(touched.cluster_queues)
        if kind == COHORT:
            touched.cohorts.add(key)
        return touched

    def _drop(self, kind: str, key: str, old: Obj | None) -> None:
        # What the malformed object's earlier, valid version contributed goes too.
        self.objects[kind].pop(key, None)
        if old is not None:
            rules.forget(self, kind, key, old)

    def forget(self, kind: str, obj: Obj) -> Touched:
        """An object was deleted."""
        key = object_key(obj)
        old = self.objects[kind].pop(key, None)
        touched = rules.forget(self, kind, key, old if old is not None else obj)
        touched.cohorts |= self.cohorts_above(touched.cluster_queues)
        return touched

    # ----- the scheduler ------------------------------------------------------------------

    def has_work(self) -> bool:
        """Whether a cycle would find a head to try."""
        return bool(self.queues.has_heads())

    def next_wakeup(self) -> float | None:
        """When the next requeue backoff ends (``None``: none waiting)."""
        at: float | None = self.queues.next_backoff_at()
        return at

    def cycle(self, now: float) -> Outcome:
        """One scheduling cycle: reservations (assumed), preemptions, pending updates."""
        return cycle.cycle(self, now)

    def write_failed(self, write: Write) -> Touched:
        """``write`` (from :meth:`cycle`) failed: forget its reservation, requeue."""
        return cycle.write_failed(self, write)

    # ----- controllers --------------------------------------------------------------------

    def reconcile_workload(self, key: str, now: float) -> Outcome:
        """The Workload controller's decision for ``key``."""
        return controllers.reconcile_workload(self, key, now)

    def reconcile_job(self, key: str, now: float) -> Outcome:
        """The Job integration's decision for the batch/v1 Job ``key``."""
        return controllers.reconcile_job(self, key, now)

    def cluster_queue_status(self, name: str, now: float) -> Outcome:
        """The ClusterQueue's status write, when it differs from the object's."""
        raw = self.objects[CLUSTER_QUEUE].get(name)
        if raw is None:
            return Outcome()
        status = cluster_queue_status(self, name, raw, now)
        if status == (raw.get("status") or {}):
            return Outcome()
        obj = with_kind(CLUSTER_QUEUE, with_status(raw, status))
        return Outcome(writes=[Write(STATUS, CLUSTER_QUEUE, obj)])

    def cohort_status(self, name: str, now: float) -> Outcome:
        """The Cohort's status write (fair sharing), when it differs from the object's."""
        del now
        raw = self.objects[COHORT].get(name)
        if raw is None:
            return Outcome()
        status = cohort_status(self, name, raw)
        if status == (raw.get("status") or {}):
            return Outcome()
        return Outcome(writes=[Write(STATUS, COHORT, with_kind(COHORT, with_status(raw, status)))])

    def local_queue_status(self, key: str, now: float) -> Outcome:
        """The LocalQueue's status write, when it differs from the object's."""
        raw = self.objects[LOCAL_QUEUE].get(key)
        if raw is None:
            return Outcome()
        status = local_queue_status(self, key, raw, now)
        if status == (raw.get("status") or {}):
            return Outcome()
        obj = with_kind(LOCAL_QUEUE, with_status(raw, status))
        return Outcome(writes=[Write(STATUS, LOCAL_QUEUE, obj)])
