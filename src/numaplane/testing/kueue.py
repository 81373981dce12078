"""Kueue in memory, for tests and benchmarks: :class:`FakeKueueApi` stands in for the API server,
the informers and the work queues in front of a real :class:`~numaplane.kueue.engine.Engine`.

Objects are created, updated and deleted as through the API (uid, resourceVersion,
creationTimestamp, generation set; status writes conditional on the resourceVersion, refused
with a conflict when stale; deleting an owner deletes its dependents). Every change is fed to
the engine as an informer would; :meth:`FakeKueueApi.settle` then runs the reconcilers and the
scheduler, applying their writes, until nothing is left to do. Time is the fake's own
(:attr:`FakeKueueApi.now`, moved by :meth:`FakeKueueApi.advance`), so results never depend on
the machine's speed.
"""

from __future__ import annotations

import builtins
import copy
import datetime
import importlib
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from numaplane.testing.kueue_objects import (
    cluster_queue,
    local_queue,
    namespace,
    resource_flavor,
    workload,
    workload_priority_class,
)

Obj = dict[str, Any]

__all__ = [
    "FakeKueueApi",
    "cluster_queue",
    "local_queue",
    "namespace",
    "resource_flavor",
    "workload",
    "workload_priority_class",
]

# The engine's write verbs (numaplane.kueue.engine; this layer may not import it).
STATUS = "status"
UPDATE = "update"
CREATE = "create"
DELETE = "delete"


def format_time(now: float) -> str:
    """``now`` as a metav1.Time."""
    moment = datetime.datetime.fromtimestamp(int(now), tz=datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def object_key(obj: Mapping[str, Any]) -> str:
    """``namespace/name``, or ``name`` for a cluster-scoped object."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    name = str(meta.get("name") or "")
    return f"{namespace}/{name}" if namespace else name


class TouchedLike(Protocol):
    """``numaplane.kueue.engine.Touched``."""

    workloads: set[str]
    jobs: set[str]
    cluster_queues: set[str]
    local_queues: set[str]


class WriteLike(Protocol):
    """``numaplane.kueue.engine.Write``."""

    @property
    def verb(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def obj(self) -> Obj: ...
    @property
    def assumed(self) -> str: ...
    @property
    def events(self) -> Sequence[Any]: ...
    @property
    def key(self) -> str: ...
    def redone(self, obj: Obj) -> WriteLike: ...


class OutcomeLike(Protocol):
    """``numaplane.kueue.engine.Outcome``."""

    @property
    def writes(self) -> Sequence[WriteLike]: ...
    @property
    def events(self) -> Sequence[Any]: ...
    @property
    def requeue_after(self) -> float | None: ...


class EngineLike(Protocol):
    """What the fake drives: :class:`numaplane.kueue.engine.Engine`."""

    def observe(self, kind: str, obj: Obj) -> TouchedLike: ...
    def forget(self, kind: str, obj: Obj) -> TouchedLike: ...
    def has_work(self) -> bool: ...
    def cycle(self, now: float) -> OutcomeLike: ...
    def write_failed(self, write: Any) -> TouchedLike: ...
    def reconcile_workload(self, key: str, now: float) -> OutcomeLike: ...
    def reconcile_job(self, key: str, now: float) -> OutcomeLike: ...
    def cluster_queue_status(self, name: str, now: float) -> OutcomeLike: ...
    def local_queue_status(self, key: str, now: float) -> OutcomeLike: ...


#: 2023-11-14T22:13:20Z: a fixed start, so that times in conditions are reproducible.
START = 1_700_000_000.0


class FakeConflictError(Exception):
    """A write on a stale resourceVersion (the API's 409)."""


def _kueue_engine(config: Any) -> Callable[[Callable[[], float]], EngineLike]:
    # Imported by name when used: numaplane.testing sits below numaplane.kueue in the layers
    # (the node tests use it), so it only reaches the engine at run time, as the controller
    # manager reaches its optional controllers.
    module: Any = importlib.import_module("numaplane.kueue.engine")

    def build(clock: Callable[[], float]) -> EngineLike:
        engine: EngineLike = module.Engine(config, clock=clock)
        return engine

    return build


@dataclass
class _Dirty:
    workloads: set[str] = field(default_factory=set)
    jobs: set[str] = field(default_factory=set)
    cluster_queues: set[str] = field(default_factory=set)
    local_queues: set[str] = field(default_factory=set)
    cohorts: set[str] = field(default_factory=set)

    def add(self, touched: TouchedLike) -> None:
        self.workloads |= touched.workloads
        self.jobs |= touched.jobs
        self.cluster_queues |= touched.cluster_queues
        self.local_queues |= touched.local_queues
        self.cohorts |= getattr(touched, "cohorts", set())

    def __bool__(self) -> bool:
        return bool(
            self.workloads or self.jobs or self.cluster_queues or self.local_queues or self.cohorts
        )


class FakeKueueApi:
    """See the module doc."""

    def __init__(
        self,
        engine: Callable[[Callable[[], float]], EngineLike] | None = None,
        *,
        config: Any = None,
        start: float = START,
    ) -> None:
        self.now = start
        #: Built by ``engine`` with the fake's clock (default: numaplane's
        #: ``Engine(config, clock=clock)``).
        self.engine = (engine or _kueue_engine(config))(lambda: self.now)
        self.store: dict[tuple[str, str], Obj] = {}
        #: Every event recorded (``numaplane.kueue.engine.Event``), in order.
        self.events: builtins.list[Any] = []
        #: Every write applied, in order (refused ones not included).
        self.applied: builtins.list[WriteLike] = []
        self.conflicts = 0
        self.cycles = 0
        self._serial = itertools.count(1)
        self._dirty = _Dirty()
        #: Reconcile again at (fake) time → keys.
        self._later: builtins.list[tuple[float, str, str]] = []

    # ----- the API ---------------------------------------------------------------------------

    def get(self, kind: str, key: str) -> Obj | None:
        """The stored object (a copy), or None."""
        found = self.store.get((kind, key))
        return copy.deepcopy(found) if found is not None else None

    def list(self, kind: str) -> builtins.list[Obj]:
        """Every stored object of ``kind`` (copies), by key."""
        return [copy.deepcopy(o) for (k, _), o in sorted(self.store.items()) if k == kind]

    def create(self, obj: Mapping[str, Any]) -> Obj:
        """Create ``obj`` (its ``kind`` says what it is); the stored object."""
        new = copy.deepcopy(dict(obj))
        kind = str(new["kind"])
        meta = new.setdefault("metadata", {})
        if not meta.get("name"):
            meta["name"] = f"{meta.get('generateName', 'obj-')}{next(self._serial):05d}"
        serial = next(self._serial)
        meta.setdefault("uid", f"uid-{serial:06d}")
        meta.setdefault("creationTimestamp", format_time(self.now))
        meta["generation"] = 1
        meta["resourceVersion"] = str(serial)
        key = object_key(new)
        if (kind, key) in self.store:
            raise FakeConflictError(f"{kind} {key} already exists")
        self.store[(kind, key)] = new
        self._dirty.add(self.engine.observe(kind, copy.deepcopy(new)))
        return copy.deepcopy(new)

    def update(self, obj: Mapping[str, Any], *, status: bool = False) -> Obj:
        """Replace ``obj`` (its spec and metadata, or with ``status`` only its status);
        conditional on its resourceVersion when it carries one."""
        kind = str(obj["kind"])
        key = object_key(obj)
        current = self.store.get((kind, key))
        if current is None:
            raise KeyError(f"{kind} {key} not found")
        given_rv = (obj.get("metadata") or {}).get("resourceVersion")
        if given_rv and given_rv != current["metadata"]["resourceVersion"]:
            raise FakeConflictError(f"{kind} {key}: stale resourceVersion {given_rv}")
        new = copy.deepcopy(dict(obj))
        if status:
            body = copy.deepcopy(current)
            body["status"] = new.get("status") or {}
        else:
            body = new
            body["status"] = copy.deepcopy(current.get("status") or {})
            meta = body.setdefault("metadata", {})
            for kept in ("uid", "creationTimestamp"):
                meta[kept] = current["metadata"][kept]
            generation = int(current["metadata"].get("generation", 1))
            meta["generation"] = generation + (new.get("spec") != current.get("spec"))
        if body == current:
            return copy.deepcopy(current)
        body["metadata"]["resourceVersion"] = str(next(self._serial))
        self.store[(kind, key)] = body
        self._dirty.add(self.engine.observe(kind, copy.deepcopy(body)))
        return copy.deepcopy(body)

    def delete(self, kind: str, key: str) -> None:
        """Delete ``kind`` ``key`` and, as the garbage collector does, its dependents."""
        current = self.store.pop((kind, key), None)
        if current is None:
            return
        self._dirty.add(self.engine.forget(kind, copy.deepcopy(current)))
        uid = current["metadata"].get("uid")
        for (dep_kind, dep_key), dep in list(self.store.items()):
            refs = (dep.get("metadata") or {}).get("ownerReferences") or []
            if any(r.get("uid") == uid for r in refs):
                self.delete(dep_kind, dep_key)

    # ----- driving the engine ------------------------------------------------------------------

    def advance(self, seconds: float) -> None:
        """Move the fake clock forward."""
        self.now += seconds

    def apply(self, write: WriteLike, *, version: str | None = None) -> str | None:
        """Make one engine write; the resourceVersion it left, or None when it was refused
        (stale). ``version``: the resourceVersion to send instead of the write's own (an
        earlier write of an ordered outcome changed the object)."""
        obj = write.obj
        if version is not None or getattr(write, "patch", None) is not None:
            meta = dict(obj.get("metadata") or {})
            if version is None:
                # A merge patch carries no resourceVersion: it applies to what is stored.
                meta.pop("resourceVersion", None)
            else:
                meta["resourceVersion"] = version
            obj = {**obj, "metadata": meta}
        stored: Obj | None = None
        try:
            if write.verb == STATUS:
                stored = self.update(obj, status=True)
            elif write.verb == UPDATE:
                stored = self.update(obj)
            elif write.verb == CREATE:
                stored = self.create(obj)
            elif write.verb == DELETE:
                self.delete(write.kind, write.key)
            else:
                raise ValueError(write.verb)
        except (FakeConflictError, KeyError) as err:
            self.conflicts += 1
            redo = getattr(write, "redo", None)
            fresh = self.store.get((write.kind, write.key))
            if isinstance(err, FakeConflictError) and redo is not None and fresh is not None:
                # As the runtime does: the decision applied to the object read again.
                obj = redo(copy.deepcopy(fresh))
                if obj is not None:
                    return self.apply(write.redone(obj))
            if write.assumed:
                self._dirty.add(self.engine.write_failed(write))
            # The informer has the fresh object already; its reconciler looks again.
            self._touch_key(write.kind, write.key)
            return None
        self.applied.append(write)
        self.events.extend(write.events)
        return str((stored or {}).get("metadata", {}).get("resourceVersion") or "")

    def _touch_key(self, kind: str, key: str) -> None:
        if kind == "Workload":
            self._dirty.workloads.add(key)
        elif kind == "Job":
            self._dirty.jobs.add(key)
        elif kind == "ClusterQueue":
            self._dirty.cluster_queues.add(key)
        elif kind == "LocalQueue":
            self._dirty.local_queues.add(key)
        elif kind == "Cohort":
            self._dirty.cohorts.add(key)

    def _run(self, outcome: OutcomeLike, kind: str = "", key: str = "") -> None:
        self.events.extend(outcome.events)
        if getattr(outcome, "ordered", False):
            versions: dict[tuple[str, str], str] = {}
            for write in outcome.writes:
                rv = self.apply(write, version=versions.get((write.kind, write.key)))
                if rv is None:
                    break
                if rv:
                    versions[(write.kind, write.key)] = rv
        else:
            for write in outcome.writes:
                self.apply(write)
        if getattr(outcome, "error", "") and kind:
            # The runtime retries an error with backoff; here, at the next reconcile.
            self._later.append((self.now, kind, key))
        if outcome.requeue_after is not None and kind:
            self._later.append((self.now + outcome.requeue_after, kind, key))

    def reconcile(self) -> int:
        """Run the reconcilers over every key touched so far (and those due now); how many
        reconciles ran."""
        due = [item for item in self._later if item[0] <= self.now]
        self._later = [item for item in self._later if item[0] > self.now]
        for _, kind, key in due:
            self._touch_key(kind, key)
        count = 0
        while self._dirty:
            dirty, self._dirty = self._dirty, _Dirty()
            for key in sorted(dirty.jobs):
                self._run(self.engine.reconcile_job(key, self.now), "Job", key)
            for key in sorted(dirty.workloads):
                self._run(self.engine.reconcile_workload(key, self.now), "Workload", key)
            for key in sorted(dirty.cluster_queues):
                self._run(self.engine.cluster_queue_status(key, self.now))
            for key in sorted(dirty.local_queues):
                self._run(self.engine.local_queue_status(key, self.now))
            cohort_status: Any = getattr(self.engine, "cohort_status", None)
            if cohort_status is not None:
                for key in sorted(dirty.cohorts):
                    self._run(cohort_status(key, self.now))
            count += len(dirty.jobs) + len(dirty.workloads)
            count += len(dirty.cluster_queues) + len(dirty.local_queues) + len(dirty.cohorts)
        return count

    def cycle(self) -> OutcomeLike:
        """One scheduling cycle, its writes applied; the outcome."""
        outcome = self.engine.cycle(self.now)
        self.cycles += 1
        self._run(outcome)
        return outcome

    def settle(self, *, max_rounds: int = 10_000) -> int:
        """Reconcile and schedule until nothing is left to do now: no head to try, or a cycle
        that changed nothing (heads waiting for preemptions to complete only spin, as
        upstream's loop does between its backoffs). Returns the cycles run."""
        for cycles in range(max_rounds):
            self.reconcile()
            if not self.engine.has_work():
                return cycles
            before = len(self.applied)
            self.cycle()
            if len(self.applied) == before and not self._dirty:
                return cycles + 1
        raise RuntimeError(f"not settled after {max_rounds} rounds")

    # ----- reading results -----------------------------------------------------------------

    def workload(self, namespace: str, name: str) -> Obj:
        """The stored Workload ``namespace/name`` (KeyError when missing)."""
        found = self.get("Workload", f"{namespace}/{name}")
        if found is None:
            raise KeyError(f"Workload {namespace}/{name}")
        return found

    def condition(self, obj: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
        """Condition ``kind`` of ``obj``'s status, or None."""
        for cond in (obj.get("status") or {}).get("conditions") or []:
            if cond.get("type") == kind:
                found: Mapping[str, Any] = cond
                return found
        return None

    def admitted(self) -> builtins.list[str]:
        """Keys of the Workloads with ``Admitted=True``, sorted."""
        return sorted(
            key
            for (kind, key), obj in self.store.items()
            if kind == "Workload"
            and (self.condition(obj, "Admitted") or {}).get("status") == "True"
        )

    def reserved(self) -> builtins.list[str]:
        """Keys of the Workloads with ``QuotaReserved=True``, sorted."""
        return sorted(
            key
            for (kind, key), obj in self.store.items()
            if kind == "Workload"
            and (self.condition(obj, "QuotaReserved") or {}).get("status") == "True"
        )

    def event_reasons(self, name: str) -> builtins.list[str]:
        """Reasons of the events recorded about objects named ``name``, in order."""
        return [e.reason for e in self.events if (e.obj.get("metadata") or {}).get("name") == name]
