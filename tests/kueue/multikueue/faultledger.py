"""The ledger of the MultiKueue fault tests: every cluster watched for the whole test, and
what counts as a duplicate run or a lost Job (see :mod:`tests.kueue.multikueue.faultworld`).

* a **run** of manager Job ``J`` is a remote Job of ``J`` (by UID, on a worker) with at least one
  pod bound to a node; any pod of ``J`` on the manager is a run there too (there must be none);
* a **duplicate run**: ``J`` has more runs than ``1 + retries`` where ``retries`` is the
  ``retryCount`` of ``J``'s MultiKueue admission check on the manager (each retry is the manager
  declaring the admitting worker lost after ``workerLostTimeout`` — SPEC §3.14 — the only reason
  a second run may legitimately start), or two remote Jobs of ``J`` on one worker without a
  retry, or a pod of ``J`` on the manager;
* a **lost Job**: ``J`` does not end ``Complete`` with ``succeeded == 1``, or its ``Complete``
  condition turned True more than once.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from numaplane.kube.informer import EventHandler
from tests.kueue.multikueue.faultobjects import CHECK

Obj = dict[str, Any]

WORKERS = ("worker1", "worker2")


def condition(obj: Obj, kind: str) -> str | None:
    for cond in (obj.get("status") or {}).get("conditions") or ():
        if cond.get("type") == kind:
            return str(cond.get("status"))
    return None


def owner(obj: Obj, kind: str) -> tuple[str, str] | None:
    for ref in obj["metadata"].get("ownerReferences") or ():
        if ref.get("kind") == kind:
            return str(ref["name"]), str(ref.get("uid") or "")
    return None


@dataclass
class Verdict:
    """What the ledger counted for a set of manager Jobs."""

    jobs: int
    complete: int
    duplicates: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    #: Jobs whose check the manager retried (their worker lost), and those that did run twice.
    retried: int = 0
    ran_twice: int = 0
    #: What each Job that ran twice went through (for the report).
    twice: list[str] = field(default_factory=list)
    runs_by_worker: dict[str, int] = field(default_factory=dict)


class Ledger:
    """Every cluster watched from the test's own event loop thread (straight to the API
    server, never through a :class:`Link`): per manager Job name its remote Jobs
    ``(worker, uid)``, its runs (remote Jobs with a pod bound to a node), its pods on the
    manager and how many times its ``Complete`` condition turned True."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.remote_jobs: dict[str, set[tuple[str, str]]] = {}
        self.runs: dict[str, set[tuple[str, str]]] = {}
        self.manager_pods: set[str] = set()
        self.completions: dict[str, int] = {}
        self._complete: dict[str, bool] = {}
        #: Per manager Job: the distinct (check state, retryCount, clusterName) of its
        #: Workload's MultiKueue check, in the order seen, and how often it turned Retry.
        self.history: dict[str, list[tuple[str, int, str]]] = {}
        self.retries: dict[str, int] = {}

    def workload_handler(self) -> EventHandler:
        """The handler of the manager's Workloads."""

        def on_workload(obj: Obj) -> None:
            found = owner(obj, "Job")
            status = obj.get("status") or {}
            check = next(
                (a for a in status.get("admissionChecks") or () if a.get("name") == CHECK), None
            )
            if found is None or check is None:
                return
            state = str(check.get("state"))
            seen = (state, int(check.get("retryCount") or 0), str(status.get("clusterName")))
            with self.lock:
                history = self.history.setdefault(found[0], [])
                if history and history[-1] == seen:
                    return
                if state == "Retry" and (not history or history[-1][0] != "Retry"):
                    self.retries[found[0]] = self.retries.get(found[0], 0) + 1
                history.append(seen)

        return EventHandler(on_add=on_workload, on_update=lambda _old, new: on_workload(new))

    def handlers(self, cluster: str) -> tuple[EventHandler, EventHandler]:
        """(jobs, pods) handlers for ``cluster`` (``manager`` or a worker)."""

        def on_job(obj: Obj) -> None:
            name = str(obj["metadata"]["name"])
            uid = str(obj["metadata"].get("uid") or "")
            with self.lock:
                if cluster == "manager":
                    done = condition(obj, "Complete") == "True"
                    if done and not self._complete.get(uid, False):
                        self.completions[name] = self.completions.get(name, 0) + 1
                    self._complete[uid] = done
                else:
                    self.remote_jobs.setdefault(name, set()).add((cluster, uid))

        def on_pod(obj: Obj) -> None:
            found = owner(obj, "Job")
            # Any pod on the manager counts: it must never make one.
            bound = cluster == "manager" or (obj.get("spec") or {}).get("nodeName")
            if found is None or not bound:
                return
            with self.lock:
                if cluster == "manager":
                    self.manager_pods.add(found[0])
                else:
                    self.runs.setdefault(found[0], set()).add((cluster, found[1]))

        jobs = EventHandler(on_add=on_job, on_update=lambda _old, new: on_job(new))
        pods = EventHandler(on_add=on_pod, on_update=lambda _old, new: on_pod(new))
        return jobs, pods

    def completed(self, names: list[str]) -> int:
        """How many of ``names`` turned Complete so far."""
        with self.lock:
            return sum(1 for n in names if self.completions.get(n, 0) >= 1)

    def running_on(self, worker: str, names: list[str]) -> list[str]:
        """Those of ``names`` that have a run on ``worker`` and are not Complete yet."""
        with self.lock:
            return [
                n
                for n in names
                if not self.completions.get(n) and any(w == worker for w, _ in self.runs.get(n, ()))
            ]

    def runs_of(self, name: str) -> set[tuple[str, str]]:
        """The runs of manager Job ``name`` so far: ``(worker, remote Job uid)``."""
        with self.lock:
            return set(self.runs.get(name, ()))

    def verdict(self, names: list[str], jobs: dict[str, Obj], retries: dict[str, int]) -> Verdict:
        """Count ``names`` (manager Jobs as read at the end: ``jobs``; their check's
        ``retries``); see the module doc."""
        with self.lock:
            found = Verdict(jobs=len(names), complete=0)
            for name in names:
                # A Retry the watch saw, or one the check's count kept.
                retry = max(retries.get(name, 0), self.retries.get(name, 0))
                found.retried += 1 if retry else 0
                if len(self.runs.get(name, ())) > 1:
                    found.ran_twice += 1
                    found.twice.append(
                        f"{name}: runs {sorted(self.runs[name])} check {self.history.get(name)}"
                    )
                runs = self.runs.get(name, set())
                for worker, _ in runs:
                    found.runs_by_worker[worker] = found.runs_by_worker.get(worker, 0) + 1
                remote = self.remote_jobs.get(name, set())
                per_worker = [w for w in WORKERS if sum(1 for x, _ in remote if x == w) > 1]
                twice = len(runs) > 1 + retry or len(remote) > 1 + retry
                if name in self.manager_pods or twice or (per_worker and not retry):
                    found.duplicates.append(
                        f"{name}: runs {sorted(runs)} remote jobs {sorted(remote)} "
                        f"retries {retry} manager pods {name in self.manager_pods} "
                        f"check history {self.history.get(name)}"
                    )
                obj = jobs.get(name)
                times = self.completions.get(name, 0)
                ok = (
                    obj is not None
                    and condition(obj, "Complete") == "True"
                    and (obj.get("status") or {}).get("succeeded") == 1
                    and times == 1
                )
                if ok:
                    found.complete += 1
                else:
                    status = (obj or {}).get("status")
                    found.lost.append(f"{name}: Complete turned True {times}x, status {status}")
            return found
