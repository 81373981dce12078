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

import copy
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from numaplane.kueue.api.conditions import format_time
from numaplane.kueue.engine import (
    CREATE,
    DELETE,
    KINDS,
    STATUS,
    UPDATE,
    Engine,
    Event,
    Outcome,
    Touched,
    Write,
    object_key,
)

Obj = dict[str, Any]

#: 2023-11-14T22:13:20Z: a fixed start, so that times in conditions are reproducible.
START = 1_700_000_000.0


class FakeConflictError(Exception):
    """A write on a stale resourceVersion (the API's 409)."""


@dataclass
class _Dirty:
    workloads: set[str] = field(default_factory=set)
    jobs: set[str] = field(default_factory=set)
    cluster_queues: set[str] = field(default_factory=set)
    local_queues: set[str] = field(default_factory=set)

    def add(self, touched: Touched) -> None:
        self.workloads |= touched.workloads
        self.jobs |= touched.jobs
        self.cluster_queues |= touched.cluster_queues
        self.local_queues |= touched.local_queues

    def __bool__(self) -> bool:
        return bool(self.workloads or self.jobs or self.cluster_queues or self.local_queues)


class FakeKueueApi:
    """See the module doc."""

    def __init__(self, config: Any = None, *, start: float = START) -> None:
        self.now = start
        self.engine = Engine(config, clock=lambda: self.now)
        self.store: dict[tuple[str, str], Obj] = {}
        self.events: list[Event] = []
        #: Every write applied, in order (refused ones not included).
        self.applied: list[Write] = []
        self.conflicts = 0
        self.cycles = 0
        self._serial = itertools.count(1)
        self._dirty = _Dirty()
        #: Reconcile again at (fake) time → keys.
        self._later: list[tuple[float, str, str]] = []

    # ----- the API ---------------------------------------------------------------------------

    def get(self, kind: str, key: str) -> Obj | None:
        """The stored object (a copy), or None."""
        found = self.store.get((kind, key))
        return copy.deepcopy(found) if found is not None else None

    def list(self, kind: str) -> list[Obj]:
        """Every stored object of ``kind`` (copies), by key."""
        return [copy.deepcopy(o) for (k, _), o in sorted(self.store.items()) if k == kind]

    def create(self, obj: Mapping[str, Any]) -> Obj:
        """Create ``obj`` (its ``kind`` says what it is); the stored object."""
        new = copy.deepcopy(dict(obj))
        kind = str(new["kind"])
        new.setdefault("apiVersion", KINDS[kind].api_version)
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
        new.setdefault("apiVersion", KINDS[kind].api_version)
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

    def apply(self, write: Write) -> bool:
        """Make one engine write; whether it was made (a stale one is refused)."""
        try:
            if write.verb == STATUS:
                self.update(write.obj, status=True)
            elif write.verb == UPDATE:
                self.update(write.obj)
            elif write.verb == CREATE:
                self.create(write.obj)
            elif write.verb == DELETE:
                self.delete(write.kind, write.key)
            else:
                raise ValueError(write.verb)
        except (FakeConflictError, KeyError):
            self.conflicts += 1
            if write.assumed:
                self._dirty.add(self.engine.write_failed(write))
            # The informer has the fresh object already; its reconciler looks again.
            self._touch_key(write.kind, write.key)
            return False
        self.applied.append(write)
        self.events.extend(write.events)
        return True

    def _touch_key(self, kind: str, key: str) -> None:
        if kind == "Workload":
            self._dirty.workloads.add(key)
        elif kind == "Job":
            self._dirty.jobs.add(key)
        elif kind == "ClusterQueue":
            self._dirty.cluster_queues.add(key)
        elif kind == "LocalQueue":
            self._dirty.local_queues.add(key)

    def _run(self, outcome: Outcome, kind: str = "", key: str = "") -> None:
        self.events.extend(outcome.events)
        for write in outcome.writes:
            self.apply(write)
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
            count += len(dirty.jobs) + len(dirty.workloads)
            count += len(dirty.cluster_queues) + len(dirty.local_queues)
        return count

    def cycle(self) -> Outcome:
        """One scheduling cycle, its writes applied; the outcome."""
        outcome = self.engine.cycle(self.now)
        self.cycles += 1
        self._run(outcome)
        return outcome

    def settle(self, *, max_rounds: int = 10_000) -> int:
        """Reconcile and schedule until nothing is left to do now; the cycles run."""
        for cycles in range(max_rounds):
            self.reconcile()
            if not self.engine.has_work():
                return cycles
            self.cycle()
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

    def admitted(self) -> list[str]:
        """Keys of the Workloads with ``Admitted=True``, sorted."""
        return sorted(
            key
            for (kind, key), obj in self.store.items()
            if kind == "Workload"
            and (self.condition(obj, "Admitted") or {}).get("status") == "True"
        )

    def reserved(self) -> list[str]:
        """Keys of the Workloads with ``QuotaReserved=True``, sorted."""
        return sorted(
            key
            for (kind, key), obj in self.store.items()
            if kind == "Workload"
            and (self.condition(obj, "QuotaReserved") or {}).get("status") == "True"
        )

    def event_reasons(self, name: str) -> list[str]:
        """Reasons of the events recorded about objects named ``name``, in order."""
        return [e.reason for e in self.events if (e.obj.get("metadata") or {}).get("name") == name]


# ----- object builders (the JSON a user would apply) --------------------------------------------

API = "kueue.x-k8s.io/v1beta2"


def namespace(name: str, labels: Mapping[str, str] | None = None) -> Obj:
    """A core/v1 Namespace."""
    meta: Obj = {"name": name}
    if labels:
        meta["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def resource_flavor(name: str, node_labels: Mapping[str, str] | None = None) -> Obj:
    """A ResourceFlavor."""
    spec: Obj = {"nodeLabels": dict(node_labels)} if node_labels else {}
    return {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


def cluster_queue(
    name: str,
    quotas: Mapping[str, Mapping[str, Any]],
    *,
    cohort: str = "",
    preemption: Mapping[str, Any] | None = None,
    namespace_selector: Mapping[str, Any] | None = None,
    **spec: Any,
) -> Obj:
    """A ClusterQueue with one resource group: ``quotas`` maps flavor → resource → nominal
    quantity, or → ``{"nominalQuota": q, "borrowingLimit": b, "lendingLimit": l}``. Every
    namespace is selected unless ``namespace_selector`` says otherwise."""
    covered: list[str] = []
    flavors = []
    for flavor, resources in quotas.items():
        rows = []
        for resource, quota in resources.items():
            if resource not in covered:
                covered.append(resource)
            row = dict(quota) if isinstance(quota, Mapping) else {"nominalQuota": quota}
            rows.append({"name": resource, **row})
        flavors.append({"name": flavor, "resources": rows})
    body: Obj = {
        "namespaceSelector": dict(namespace_selector) if namespace_selector is not None else {},
        "resourceGroups": [{"coveredResources": covered, "flavors": flavors}],
        **spec,
    }
    if cohort:
        body["cohortName"] = cohort
    if preemption is not None:
        body["preemption"] = dict(preemption)
    return {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": body}


def local_queue(namespace: str, name: str, cluster_queue: str) -> Obj:
    """A LocalQueue."""
    return {
        "apiVersion": API,
        "kind": "LocalQueue",
        "metadata": {"namespace": namespace, "name": name},
        "spec": {"clusterQueue": cluster_queue},
    }


def workload(
    namespace: str,
    name: str,
    queue: str,
    requests: Mapping[str, Any],
    *,
    count: int = 1,
    priority: int | None = None,
    min_count: int | None = None,
) -> Obj:
    """A Workload with one podSet ``main`` of ``count`` pods, each requesting ``requests``."""
    pod_set: Obj = {
        "name": "main",
        "count": count,
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "c",
                        "image": "busybox",
                        "resources": {"requests": {k: str(v) for k, v in requests.items()}},
                    }
                ],
            }
        },
    }
    if min_count is not None:
        pod_set["minCount"] = min_count
    spec: Obj = {"queueName": queue, "podSets": [pod_set]}
    if priority is not None:
        spec["priority"] = priority
    return {
        "apiVersion": API,
        "kind": "Workload",
        "metadata": {"namespace": namespace, "name": name},
        "spec": spec,
    }
