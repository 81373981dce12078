"""The engine's vocabulary and state: the kinds it watches, the writes and events it asks for,
what a change touches, and :class:`EngineState` (the objects last observed, the quota cache and
the pending queues) that the rules, the cycle and the status builders share."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from numaplane.kueue import constants as c
from numaplane.kueue.api.model import AdmissionCheck, ClusterQueue, LocalQueue, Workload
from numaplane.kueue.api.workload_parse import parse_workload
from numaplane.kueue.cache import KueueCache
from numaplane.kueue.config import KueueConfig
from numaplane.kueue.queue import QueueManager

Obj = dict[str, Any]

# Kinds the engine knows, as the API names them.
RESOURCE_FLAVOR: Final = "ResourceFlavor"
CLUSTER_QUEUE: Final = "ClusterQueue"
COHORT: Final = "Cohort"
LOCAL_QUEUE: Final = "LocalQueue"
WORKLOAD: Final = "Workload"
WORKLOAD_PRIORITY_CLASS: Final = "WorkloadPriorityClass"
ADMISSION_CHECK: Final = "AdmissionCheck"
JOB: Final = "Job"
NAMESPACE: Final = "Namespace"
PRIORITY_CLASS: Final = "PriorityClass"


@dataclass(frozen=True)
class KindInfo:
    """Where a kind lives in the API."""

    kind: str
    api_version: str
    resource: str
    namespaced: bool


#: Every kind the runtime watches, in the order its informers start.
KINDS: Final[dict[str, KindInfo]] = {
    k.kind: k
    for k in (
        KindInfo(RESOURCE_FLAVOR, c.API_VERSION, "resourceflavors", False),
        KindInfo(COHORT, c.API_VERSION, "cohorts", False),
        KindInfo(ADMISSION_CHECK, c.API_VERSION, "admissionchecks", False),
        KindInfo(CLUSTER_QUEUE, c.API_VERSION, "clusterqueues", False),
        KindInfo(WORKLOAD_PRIORITY_CLASS, c.API_VERSION, "workloadpriorityclasses", False),
        KindInfo(NAMESPACE, "v1", "namespaces", False),
        KindInfo(PRIORITY_CLASS, "scheduling.k8s.io/v1", "priorityclasses", False),
        KindInfo(LOCAL_QUEUE, c.API_VERSION, "localqueues", True),
        KindInfo(WORKLOAD, c.API_VERSION, "workloads", True),
        KindInfo(JOB, "batch/v1", "jobs", True),
    )
}

#: Write verbs: a status-subresource update, a whole-object update, a create, a delete.
STATUS: Final = "status"
UPDATE: Final = "update"
CREATE: Final = "create"
DELETE: Final = "delete"


def object_key(obj: Mapping[str, Any]) -> str:
    """``namespace/name``, or ``name`` for a cluster-scoped object."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    name = str(meta.get("name") or "")
    return f"{namespace}/{name}" if namespace else name


def split_key(key: str) -> tuple[str, str]:
    """``(namespace, name)`` of an :func:`object_key` (namespace ``""``: cluster-scoped)."""
    namespace, _, name = key.rpartition("/")
    return namespace, name


@dataclass(frozen=True)
class Event:
    """A core/v1 Event to record about ``obj`` (the object as last seen, with its kind)."""

    obj: Obj
    type: str
    reason: str
    message: str


@dataclass(frozen=True)
class Write:
    """One API call to make. ``obj`` is the whole object to send (``status``, ``update``,
    ``create``) or the one to delete; its ``resourceVersion`` makes an update conditional.
    ``events`` are recorded once the write succeeded; ``assumed`` names the workload whose
    reservation the write carries (forgotten when it fails)."""

    verb: str
    kind: str
    obj: Obj
    events: tuple[Event, ...] = ()
    assumed: str = ""
    #: For an ``update``: the same change as a JSON merge patch, sent instead of the object
    #: (no resourceVersion: the Job integration's edits of a Job).
    patch: Mapping[str, Any] | None = None
    #: The same decision applied to a fresher version of the object (None: it no longer
    #: applies), tried when the write meets a conflict: upstream makes the scheduler's writes
    #: with server-side apply and retries on conflict, so a concurrent status change by a
    #: controller does not undo a decision of the cycle.
    redo: Callable[[Obj], Obj | None] | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> str:
        """The written object's key."""
        return object_key(self.obj)

    def redone(self, obj: Obj) -> Write:
        """This write with ``obj`` (what :attr:`redo` made of a fresher version)."""
        return dataclasses.replace(self, obj=obj)


@dataclass
class Outcome:
    """What one decision asks for: writes, events not tied to a write, and when to look
    again (seconds from now; ``None``: only on a change)."""

    writes: list[Write] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    requeue_after: float | None = None
    #: The writes depend on each other: made one after the other, stopping at the first that
    #: fails, a later write of the same object carrying the resourceVersion the earlier one
    #: left (:func:`chained`).
    ordered: bool = False
    #: Non-empty: the decision ended in an error (after its writes): retry with backoff.
    error: str = ""

    def extend(self, other: Outcome) -> Outcome:
        """Add ``other``'s writes and events; the earlier requeue wins. Returns self."""
        self.writes.extend(other.writes)
        self.events.extend(other.events)
        if other.requeue_after is not None and (
            self.requeue_after is None or other.requeue_after < self.requeue_after
        ):
            self.requeue_after = other.requeue_after
        return self


@dataclass
class Touched:
    """What an observed change makes worth reconciling again."""

    workloads: set[str] = field(default_factory=set)
    jobs: set[str] = field(default_factory=set)
    cluster_queues: set[str] = field(default_factory=set)
    local_queues: set[str] = field(default_factory=set)
    #: The scheduler should run a cycle (something may have become admissible).
    schedule: bool = False
    #: Cohorts whose status (fair sharing) may have changed.
    cohorts: set[str] = field(default_factory=set)

    def merge(self, other: Touched) -> Touched:
        """Add ``other`` into this one; returns self."""
        self.workloads |= other.workloads
        self.jobs |= other.jobs
        self.cluster_queues |= other.cluster_queues
        self.local_queues |= other.local_queues
        self.cohorts |= other.cohorts
        self.schedule = self.schedule or other.schedule
        return self

    def __bool__(self) -> bool:
        return bool(
            self.workloads or self.jobs or self.cluster_queues or self.local_queues or self.schedule
        )


def chained(write: Write, versions: Mapping[tuple[str, str], str]) -> Write:
    """``write`` carrying the resourceVersion an earlier write of the same object in the same
    ordered outcome left (``versions``: (kind, key) → resourceVersion)."""
    rv = versions.get((write.kind, write.key))
    if rv is None:
        return write
    meta = {**(write.obj.get("metadata") or {}), "resourceVersion": rv}
    return dataclasses.replace(write, obj={**write.obj, "metadata": meta})


def with_kind(kind: str, obj: Mapping[str, Any]) -> Obj:
    """``obj`` with ``kind`` and ``apiVersion`` set (a list's items lack them; events and
    writes need them)."""
    info = KINDS[kind]
    if obj.get("kind") == kind and obj.get("apiVersion") == info.api_version:
        return dict(obj)
    return {**obj, "kind": kind, "apiVersion": info.api_version}


def with_status(raw: Mapping[str, Any], status: Mapping[str, Any]) -> Obj:
    """``raw`` with ``status`` replaced (shallow: the rest is shared and never mutated)."""
    out = dict(raw)
    out["status"] = dict(status)
    return out


class EngineState:
    """The objects last observed, parsed, and the core's live structures."""

    def __init__(
        self, config: KueueConfig | None = None, *, clock: Callable[[], float] = time.time
    ) -> None:
        #: Kueue's Configuration (upstream's defaults when not given).
        self.config = config if config is not None else KueueConfig()
        self.clock = clock
        self.cache = KueueCache()
        self.queues = QueueManager(clock)
        #: Raw objects by kind and key, as last observed.
        self.objects: dict[str, dict[str, Obj]] = {kind: {} for kind in KINDS}
        self.workloads: dict[str, Workload] = {}
        self.cluster_queues: dict[str, ClusterQueue] = {}
        self.local_queues: dict[str, LocalQueue] = {}
        self.admission_checks: dict[str, AdmissionCheck] = {}
        #: Workload keys by the key of the Job that owns them.
        self.owned: dict[str, set[str]] = {}
        self.owner_of: dict[str, str] = {}
        #: Workload keys by the key (``namespace/spec.queueName``) of the LocalQueue they name.
        self.by_queue: dict[str, set[str]] = {}
        #: Each ClusterQueue's ``Active`` as the queues were last told.
        self.active: dict[str, bool] = {}
        #: Reservations assumed in the cache whose write is in flight, by workload key.
        self.assumed: dict[str, Workload] = {}
        #: Labels of every namespace seen (the cycle checks namespace selectors on it).
        self.namespace_labels_all: dict[str, Mapping[str, str]] = {}
        #: Where each pending workload's flavor search stopped (scheduler ``last_tried``).
        self.last_tried: dict[str, Any] = {}

    def parse_workload(self, obj: Mapping[str, Any]) -> Workload:
        """A Workload as the model reads it, with this configuration's queue-order rule."""
        strategy = self.config.wait_for_pods_ready.requeuing_strategy
        return parse_workload(obj, requeuing_timestamp=strategy.timestamp)

    def get(self, kind: str, key: str) -> Obj | None:
        """The raw object of ``kind`` last observed under ``key``."""
        return self.objects[kind].get(key)

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        """The labels of ``namespace`` (none when not seen)."""
        return self.namespace_labels_all.get(namespace, {})

    def local_queues_of(self, cq_name: str) -> list[str]:
        """Keys of the LocalQueues bound to ``cq_name``."""
        return sorted(k for k, lq in self.local_queues.items() if lq.cluster_queue == cq_name)

    def cluster_queue_of(self, wl: Workload) -> str:
        """The ClusterQueue ``wl`` counts in or goes to ("" when its LocalQueue is unknown)."""
        if wl.admission is not None:
            return wl.admission.cluster_queue
        lq = self.local_queues.get(f"{wl.namespace}/{wl.queue_name}")
        return lq.cluster_queue if lq is not None else ""

    def workloads_of_job(self, job_key: str) -> list[Obj]:
        """Raw Workloads owned by the Job ``job_key``, by name."""
        found = []
        for key in sorted(self.owned.get(job_key, ())):
            raw = self.objects[WORKLOAD].get(key)
            if raw is not None:
                found.append(raw)
        return found

    def tree_members(self, cq_names: Iterable[str]) -> set[str]:
        """Every ClusterQueue sharing a cohort tree with one of ``cq_names``."""
        members: set[str] = set()
        for name in cq_names:
            if name and name in self.cluster_queues:
                members.update(self.cache.cohort_tree_members(name))
            elif name:
                members.add(name)
        return members

    def sync_active(self, cq_names: Iterable[str]) -> set[str]:
        """Tell the queues whether each of ``cq_names`` is active now (the cache decides: a
        flavor, check or cohort change can flip it); only active queues give heads. Returns
        the queues whose activity changed."""
        flipped = set()
        for name in cq_names:
            cq = self.cluster_queues.get(name)
            if cq is None:
                continue
            active = self.cache.cluster_queue_active(name)[0]
            if self.active.get(name) != active:
                flipped.add(name)
            self.active[name] = active
            self.queues.upsert_cluster_queue(cq, active=active)
        return flipped

    def cohorts_above(self, cq_names: Iterable[str]) -> set[str]:
        """The Cohorts above ``cq_names`` up to their roots (their fair-sharing status
        follows the queues' usage); none unless fair sharing is enabled."""
        if not self.config.fair_sharing.enable:
            return set()
        found: set[str] = set()
        for name in cq_names:
            cq = self.cluster_queues.get(name)
            cohort = cq.cohort if cq is not None else ""
            while cohort and cohort not in found:
                found.add(cohort)
                raw = self.objects[COHORT].get(cohort) or {}
                cohort = str((raw.get("spec") or {}).get("parentName") or "")
        return found

    def workloads_of(self, cq_names: Iterable[str]) -> set[str]:
        """Workloads whose LocalQueue points at one of ``cq_names`` (the workload controller
        looks again at them when their ClusterQueue changes)."""
        found: set[str] = set()
        for name in cq_names:
            for lq in self.local_queues_of(name):
                found |= self.by_queue.get(lq, set())
        return found

    def wake_tree(self, cq_names: Iterable[str]) -> Touched:
        """Quota may have been freed (or added) in the trees of ``cq_names``: their parked
        workloads go back to the heaps (upstream ``QueueAssociatedInadmissibleWorkloadsAfter``)
        and their statuses are refreshed."""
        members = self.tree_members(cq_names)
        if members:
            self.queues.queue_inadmissible(sorted(members))
        return Touched(cluster_queues=members, schedule=bool(members))
