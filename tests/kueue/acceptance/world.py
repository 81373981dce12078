"""The acceptance tables' in-process run: the real :class:`~numaplane.kueue.engine.Engine` fed
the table's objects, its writes applied to the objects and observed back, as the runtime does
through the API (every write succeeds; the clock is the table's)."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from numaplane.kueue.engine import (
    CLUSTER_QUEUE,
    CREATE,
    DELETE,
    LOCAL_QUEUE,
    WORKLOAD,
    Engine,
    Outcome,
    Touched,
    Write,
    object_key,
)

from numaplane.kueue import workload as workload_rules

Obj = dict[str, Any]

#: Enough rounds of cycle + controllers for any table to settle; more means a write loop.
MAX_ROUNDS = 50


class EngineWorld:
    """An :class:`Engine` and the objects it decided about, keyed by (kind, key)."""

    def __init__(self, now: float) -> None:
        self.now = now
        self.engine = Engine(clock=lambda: self.now)
        self.objects: dict[tuple[str, str], Obj] = {}
        self.writes: list[Write] = []
        self._version = 0
        self._touched = Touched()

    # ----- the objects --------------------------------------------------------------------

    def put(self, obj: Obj) -> None:
        """Create or replace ``obj`` (as a client would) and let the engine observe it."""
        self._version += 1
        stored = copy.deepcopy(obj)
        stored.setdefault("metadata", {})["resourceVersion"] = str(self._version)
        kind = str(stored["kind"])
        self.objects[(kind, object_key(stored))] = stored
        self._touched.merge(self.engine.observe(kind, stored))

    def delete(self, kind: str, key: str) -> None:
        """Delete an object; the engine forgets it."""
        obj = self.objects.pop((kind, key))
        self._touched.merge(self.engine.forget(kind, obj))

    def get(self, kind: str, key: str) -> Obj:
        """The object as stored now."""
        return self.objects[(kind, key)]

    def workload(self, key: str) -> Obj:
        """The Workload ``key`` as stored now."""
        return self.get(WORKLOAD, key)

    def workloads(self) -> list[Obj]:
        """Every Workload, by key."""
        return [obj for (kind, _), obj in sorted(self.objects.items()) if kind == WORKLOAD]

    # ----- the engine's decisions ---------------------------------------------------------

    def apply(self, outcome: Outcome) -> None:
        """Make ``outcome``'s writes (each one succeeds)."""
        for write in outcome.writes:
            self.writes.append(write)
            if write.verb == DELETE:
                self.delete(write.kind, write.key)
            elif write.verb == CREATE or (write.kind, write.key) in self.objects:
                self.put(write.obj)

    def cycle(self) -> Outcome:
        """One scheduling cycle, its writes made."""
        outcome = self.engine.cycle(self.now)
        self.apply(outcome)
        return outcome

    def controllers(self) -> bool:
        """Reconcile what the last changes touched (workloads, queue statuses); whether any
        write came of it."""
        touched, self._touched = self._touched, Touched()
        wrote = False
        for key in sorted(touched.workloads):
            outcome = self.engine.reconcile_workload(key, self.now)
            wrote = wrote or bool(outcome.writes)
            self.apply(outcome)
        for name in sorted(touched.cluster_queues):
            if (CLUSTER_QUEUE, name) in self.objects:
                outcome = self.engine.cluster_queue_status(name, self.now)
                wrote = wrote or bool(outcome.writes)
                self.apply(outcome)
        for key in sorted(touched.local_queues):
            if (LOCAL_QUEUE, key) in self.objects:
                outcome = self.engine.local_queue_status(key, self.now)
                wrote = wrote or bool(outcome.writes)
                self.apply(outcome)
        return wrote

    def settle(self) -> None:
        """Controllers and cycles until nothing changes (nothing to schedule, no write)."""
        for _ in range(MAX_ROUNDS):
            wrote = self.controllers()
            if self.engine.has_work():
                wrote = bool(self.cycle().writes) or wrote
            if not wrote and not self._touched and not self.engine.has_work():
                return
        raise AssertionError(f"no steady state after {MAX_ROUNDS} rounds")

    def release(self, keys: Iterable[str]) -> None:
        """What the job integration does once an evicted workload's job is inactive: its
        quota is released (``QuotaReserved=False``, no admission, ``Requeued``)."""
        for key in keys:
            raw = self.workload(key)
            status = workload_rules.release_quota(raw, self.now)
            self.put({**raw, "status": status})
