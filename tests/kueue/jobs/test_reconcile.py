"""One pass of the job reconciler over a batch/v1 Job: the writes, in order, and the events with
upstream's reasons and messages."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from numaplane.kueue.api.conditions import format_time
from numaplane.kueue.api.model import ResourceFlavor
from numaplane.kueue.jobs import JobContext, JobDecision, new_workload, reconcile_job
from numaplane.kueue.jobs.workloads import PriorityClassInfo
from tests.kueue.jobs.helpers import NS, T0, UID, WL_NAME, admitted, cond, job, with_status

Obj = dict[str, Any]
KEY = f"{NS}/{WL_NAME}"
FLAVORS = {
    "default-flavor": ResourceFlavor(
        "default-flavor",
        node_labels={"cloud.example.com/zone": "a"},
        tolerations=({"key": "spot", "operator": "Exists", "effect": "NoSchedule"},),
    )
}
CTX = JobContext(
    now=T0 + 60,
    flavors=FLAVORS,
    workload_priority_classes={"high": 10000},
    priority_classes={"low": PriorityClassInfo("low", 5)},
)


def wl() -> Obj:
    """The Workload the quick-start Job gets."""
    return new_workload(job(), 0, None)


def summary(decision: JobDecision) -> list[tuple[str, str]]:
    """``(kind, op)`` of every write, in order."""
    return [(w.kind, w.op) for w in decision.writes]


def events(decision: JobDecision) -> list[tuple[str, str]]:
    """``(reason, message)`` of every event."""
    return [(e.reason, e.message) for e in decision.events]


def conditions(obj: Any) -> list[tuple[str, str, str, str]]:
    """``(type, status, reason, message)`` of a Workload's conditions."""
    return [
        (c["type"], c["status"], c["reason"], c["message"])
        for c in (obj.get("status") or {}).get("conditions") or []
    ]


@dataclass(frozen=True)
class Case:
    name: str
    job: Obj | None
    owned: tuple[Obj, ...]
    writes: list[tuple[str, str]]
    events: list[tuple[str, str]]
    ctx: JobContext = CTX
    error: str = ""
    #: Further checks on the decision (the written objects).
    check: Callable[[JobDecision], None] = field(default=lambda d: None)


def _created(d: JobDecision) -> None:
    created = d.writes[-1].obj
    assert created == wl()


def _started(d: JobDecision) -> None:
    started = d.writes[0].obj
    assert started["spec"]["suspend"] is False
    template = started["spec"]["template"]
    assert template["spec"]["nodeSelector"] == {"cloud.example.com/zone": "a"}
    assert template["spec"]["tolerations"] == [
        {"key": "spot", "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert template["metadata"]["labels"] == {
        "batch.kubernetes.io/controller-uid": UID,
        "batch.kubernetes.io/job-name": "sample-job",
        "controller-uid": UID,
        "job-name": "sample-job",
        "kueue.x-k8s.io/podset": "main",
        "kueue.x-k8s.io/local-queue-name": "user-queue",
        "kueue.x-k8s.io/cluster-queue-name": "cluster-queue",
    }
    assert started["spec"]["parallelism"] == 3  # no partial admission: untouched
    assert d.writes[0].patch == {
        "spec": {
            "suspend": False,
            "template": {
                "metadata": {
                    "labels": {
                        "kueue.x-k8s.io/podset": "main",
                        "kueue.x-k8s.io/local-queue-name": "user-queue",
                        "kueue.x-k8s.io/cluster-queue-name": "cluster-queue",
                    }
                },
                "spec": {
                    "nodeSelector": {"cloud.example.com/zone": "a"},
                    "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}],
                },
            },
        }
    }


def _partial(d: JobDecision) -> None:
    assert d.writes[0].obj["spec"]["parallelism"] == 2
    assert d.writes[0].obj["spec"]["completions"] == 5  # not synced without the annotation


def _failed_to_start(d: JobDecision) -> None:
    assert conditions(d.writes[0].obj)[-1] == (
        "Finished",
        "True",
        "FailedToStart",
        "invalid admission check PodSetUpdate: conflict for nodeSelector: conflict for "
        "key=cloud.example.com/zone, value1=b, value2=a",
    )


def _running(**status: Any) -> Obj:
    """The quick-start Job running with the admission's injections (as started)."""
    running = job(suspend=False, status=status)
    template = running["spec"]["template"]
    template["metadata"]["labels"]["kueue.x-k8s.io/podset"] = "main"
    template["spec"]["nodeSelector"] = {"cloud.example.com/zone": "a"}
    template["spec"]["tolerations"] = [
        {"key": "spot", "operator": "Exists", "effect": "NoSchedule"}
    ]
    return running


def _evicted(
    base: Obj, reason: str = "Preempted", message: str = "Preempted to accommodate"
) -> Obj:
    new = copy.deepcopy(base)
    new["status"]["conditions"].append(cond("Evicted", "True", reason, message))
    return new


def _stopped(d: JobDecision) -> None:
    suspend, clear, restore = (w.obj for w in d.writes)
    assert suspend["spec"]["suspend"] is True
    assert suspend["metadata"]["annotations"] == {"kueue.x-k8s.io/stopping": "true"}
    assert "startTime" not in clear["status"]
    assert d.writes[1].patch == {"status": {"startTime": None}}
    assert "annotations" not in restore["metadata"]
    template = restore["spec"]["template"]
    assert "nodeSelector" not in template["spec"]
    assert "tolerations" not in template["spec"]
    assert "kueue.x-k8s.io/podset" not in template["metadata"]["labels"]
    assert template["metadata"]["labels"]["batch.kubernetes.io/job-name"] == "sample-job"


def _released(d: JobDecision) -> None:
    released = d.writes[-1].obj
    assert "admission" not in released["status"]
    got = {c[0]: c for c in conditions(released)}
    assert got["QuotaReserved"] == (
        "QuotaReserved",
        "False",
        "PendingEvaluation",
        "Preempted to accommodate",
    )
    assert got["Requeued"] == ("Requeued", "True", "Preempted", "Preempted to accommodate")


def _finished_succeeded(d: JobDecision) -> None:
    assert conditions(d.writes[0].obj)[-1] == (
        "Finished",
        "True",
        "Succeeded",
        "Reached expected number of succeeded pods",
    )


def _no_finalizer(d: JobDecision) -> None:
    assert d.writes[0].obj["metadata"]["finalizers"] == []


def _with_label(source: Obj, key: str, value: str) -> Obj:
    new = copy.deepcopy(source)
    new["metadata"]["labels"][key] = value
    return new


def _prebuilt(owner: bool, count: int = 3) -> Obj:
    w = copy.deepcopy(wl())
    w["metadata"]["name"] = "prebuilt"
    w["metadata"]["labels"] = {}
    w["spec"]["podSets"][0]["count"] = count
    if not owner:
        w["metadata"]["ownerReferences"] = []
    return w


def _adopted(d: JobDecision) -> None:
    adopted = d.writes[0].obj
    assert adopted["metadata"]["ownerReferences"][0]["uid"] == UID
    assert adopted["metadata"]["labels"] == {"kueue.x-k8s.io/job-uid": UID}


def _out_of_sync(d: JobDecision) -> None:
    assert conditions(d.writes[1].obj)[-1] == (
        "Finished",
        "True",
        "OutOfSync",
        "The prebuilt workload is out of sync with its user job",
    )


def _stale(count: int) -> Obj:
    w = copy.deepcopy(wl())
    w["metadata"]["name"] = f"stale-{count}"
    w["spec"]["podSets"][0]["count"] = count
    return w


def _rebuilt(d: JobDecision) -> None:
    updated = d.writes[0].obj
    assert updated["metadata"]["name"] == "stale-2"
    assert updated["spec"] == wl()["spec"]


def _priority_updated(d: JobDecision) -> None:
    spec = d.writes[0].obj["spec"]
    assert spec["priorityClassRef"] == {
        "group": "kueue.x-k8s.io",
        "kind": "WorkloadPriorityClass",
        "name": "high",
    }
    assert spec["priority"] == 10000


def _queue_moved(d: JobDecision) -> None:
    assert d.writes[0].obj["spec"]["queueName"] == "other-queue"


def _pending_checks() -> Obj:
    return with_status(
        wl(),
        admission=admitted(wl())["status"]["admission"],
        conditions=[
            cond(
                "QuotaReserved",
                "True",
                "QuotaReserved",
                "Quota reserved in ClusterQueue cluster-queue",
            )
        ],
        admissionChecks=[
            {
                "name": "mk",
                "state": "Pending",
                "message": 'The workload got reservation on "w1"',
                "lastTransitionTime": format_time(T0),
            },
            {
                "name": "prov",
                "state": "Pending",
                "message": "",
                "lastTransitionTime": format_time(T0),
            },
            {
                "name": "ready",
                "state": "Ready",
                "message": "done",
                "lastTransitionTime": format_time(T0),
            },
        ],
    )


def _deleting(w: Obj) -> Obj:
    new = copy.deepcopy(w)
    new["metadata"]["deletionTimestamp"] = format_time(T0)
    return new


CASES = [
    Case(
        "a queued Job gets its Workload",
        job(),
        (),
        [("Workload", "create")],
        [("CreatedWorkload", f"Created Workload: {KEY}")],
        check=_created,
    ),
    Case("a Job without a queue name is not Kueue's", job(queue=None), (), [], []),
    Case(
        "jobs without a queue name managed in a selected namespace",
        job(queue=None),
        (),
        [("Workload", "create")],
        [("CreatedWorkload", f"Created Workload: {KEY}")],
        ctx=JobContext(
            now=T0,
            manage_jobs_without_queue_name=True,
            managed_jobs_namespace_selector={"matchLabels": {"kueue": "on"}},
            namespace_labels={"kueue": "on"},
        ),
    ),
    Case(
        "jobs without a queue name, namespace not selected",
        job(queue=None),
        (),
        [],
        [],
        ctx=JobContext(
            now=T0,
            manage_jobs_without_queue_name=True,
            managed_jobs_namespace_selector={"matchLabels": {"kueue": "on"}},
            namespace_labels={},
        ),
    ),
    Case(
        "an unsuspended Job without a Workload is stopped, then gets one",
        job(suspend=False),
        (),
        [("Job", "update"), ("Job", "update"), ("Workload", "create")],
        [
            ("Stopped", "Missing Workload; unable to restore pod templates"),
            ("CreatedWorkload", f"Created Workload: {KEY}"),
        ],
    ),
    Case(
        "a stopped Job with pods still active waits for them before creating its Workload",
        job(status={"active": 2}),
        (),
        [],
        [],
    ),
    Case(
        "admitted: the Job starts on the flavor",
        job(),
        (admitted(wl()),),
        [("Job", "update")],
        [("Started", "Admitted by clusterQueue cluster-queue")],
        check=_started,
    ),
    Case(
        "partial admission: parallelism is the admitted count",
        job(parallelism=5, completions=5, annotations={"kueue.x-k8s.io/job-min-parallelism": "2"}),
        (
            admitted(
                new_workload(
                    job(
                        parallelism=5,
                        completions=5,
                        annotations={"kueue.x-k8s.io/job-min-parallelism": "2"},
                    ),
                    0,
                    None,
                ),
                count=2,
            ),
        ),
        [("Job", "update")],
        [("Started", "Admitted by clusterQueue cluster-queue")],
        check=_partial,
    ),
    Case(
        "a flavor label conflicting with the Job's node selector: FailedToStart",
        job(node_selector={"cloud.example.com/zone": "b"}),
        (admitted(new_workload(job(node_selector={"cloud.example.com/zone": "b"}), 0, None)),),
        [("Workload", "status")],
        [],
        error="invalid admission check PodSetUpdate: conflict for nodeSelector: conflict for "
        "key=cloud.example.com/zone, value1=b, value2=a",
        check=_failed_to_start,
    ),
    Case(
        "admitted on a flavor that is gone: retried",
        job(),
        (admitted(wl()),),
        [],
        [],
        ctx=JobContext(now=T0),
        error='resourceflavors.kueue.x-k8s.io "default-flavor" not found',
    ),
    Case(
        "evicted while running: suspended, start time cleared, template restored",
        _running(active=3, startTime=format_time(T0)),
        (_evicted(admitted(wl())),),
        [("Job", "update"), ("Job", "status"), ("Job", "update")],
        [("Stopped", "Preempted to accommodate")],
        check=_stopped,
    ),
    Case(
        "evicted and no pod active any more: the quota is released",
        job(status={"active": 0}),
        (_evicted(admitted(wl())),),
        [("Workload", "status")],
        [],
        check=_released,
    ),
    Case(
        "the Job completed: its Workload finishes",
        _running(
            succeeded=3,
            conditions=[
                {
                    "type": "Complete",
                    "status": "True",
                    "message": "Reached expected number of succeeded pods",
                }
            ],
        ),
        (admitted(wl()),),
        [("Workload", "status")],
        [("FinishedWorkload", f"Workload '{KEY}' is declared finished")],
        check=_finished_succeeded,
    ),
    Case(
        "a finished Workload loses its finalizer",
        job(),
        (with_status(wl(), conditions=[cond("Finished", "True", "Succeeded", "done")]),),
        [("Workload", "update")],
        [("FinishedWorkload", f"Workload '{KEY}' is declared finished")],
        check=_no_finalizer,
    ),
    Case(
        "a Workload being deleted: the Job stops and the finalizer goes",
        _running(active=1),
        (_deleting(admitted(wl())),),
        [("Job", "update"), ("Job", "update"), ("Workload", "update")],
        [("Stopped", "Workload is deleted")],
    ),
    Case(
        "unsuspended by hand before admission: suspended again",
        job(suspend=False),
        (wl(),),
        [("Job", "update"), ("Job", "update")],
        [("Stopped", "Not admitted by cluster queue")],
    ),
    Case(
        "suspended and waiting: nothing to do",
        job(),
        (wl(),),
        [],
        [],
    ),
    Case(
        "running and admitted: nothing to do",
        _running(active=3),
        (admitted(wl()),),
        [],
        [],
    ),
    Case(
        "a missing WorkloadPriorityClass: no Workload, retried",
        _with_label(job(), "kueue.x-k8s.io/priority-class", "nope"),
        (),
        [],
        [],
        error='workloadpriorityclasses.kueue.x-k8s.io "nope" not found',
    ),
    Case(
        "the priority-class label changed: the Workload follows",
        _with_label(job(), "kueue.x-k8s.io/priority-class", "high"),
        (wl(),),
        [("Workload", "update")],
        [("UpdatedWorkload", f"Updated workload priority class: {KEY}")],
        check=_priority_updated,
    ),
    Case(
        "the queue-name label changed while suspended: the Workload moves",
        job(queue="other-queue"),
        (wl(),),
        [("Workload", "update")],
        [],
        check=_queue_moved,
    ),
    Case(
        "a suspended Job changed: its unreserved Workload is rebuilt",
        job(),
        (_stale(2),),
        [("Workload", "update")],
        [("UpdatedWorkload", f"Updated not matching Workload for suspended job: {NS}/stale-2")],
        check=_rebuilt,
    ),
    Case(
        "an extra Workload is deleted",
        job(),
        (wl(), _stale(2)),
        [("Workload", "update"), ("Workload", "delete")],
        [("DeletedWorkload", f"Deleted not matching Workload: {NS}/stale-2")],
        error="extra workloads: deleted 1 workloads",
    ),
    Case(
        "a running Job whose only Workload no longer matches: stopped to it, deleted",
        _running(active=0),
        (_stale(2),),
        [("Job", "update"), ("Job", "update"), ("Workload", "update"), ("Workload", "delete")],
        [
            (
                "Stopped",
                "No matching Workload; restoring pod templates according to existent Workload",
            ),
            ("DeletedWorkload", f"Deleted not matching Workload: {NS}/stale-2"),
        ],
        error="no matching workloads: deleted 1 workloads",
    ),
    Case(
        "pending admission checks are reported on the Job",
        job(),
        (_pending_checks(),),
        [],
        [("UpdatedAdmissionCheck", 'mk: The workload got reservation on "w1"')],
    ),
    Case(
        "prebuilt Workload missing: retried",
        _with_label(job(), "kueue.x-k8s.io/prebuilt-workload-name", "prebuilt"),
        (),
        [],
        [],
        error="prebuilt workload not found",
    ),
    Case(
        "prebuilt Workload adopted",
        _with_label(job(), "kueue.x-k8s.io/prebuilt-workload-name", "prebuilt"),
        (),
        [("Workload", "update")],
        [],
        ctx=JobContext(now=T0, prebuilt_workload=_prebuilt(owner=False)),
        check=_adopted,
    ),
    Case(
        "prebuilt Workload out of sync with its Job: finished",
        _with_label(job(), "kueue.x-k8s.io/prebuilt-workload-name", "prebuilt"),
        (),
        [("Workload", "update"), ("Workload", "status")],
        [],
        ctx=JobContext(now=T0, prebuilt_workload=_prebuilt(owner=False, count=1)),
        error="prebuilt workload not found",
        check=_out_of_sync,
    ),
    Case(
        "the Job is gone: its Workloads lose the finalizer",
        None,
        (admitted(wl()),),
        [("Workload", "update")],
        [],
        check=_no_finalizer,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_reconcile_job(case: Case) -> None:
    snapshot = copy.deepcopy((case.job, case.owned))
    decision = reconcile_job(case.job, case.owned, case.ctx)
    assert summary(decision) == case.writes
    assert events(decision) == case.events
    assert decision.error == case.error
    case.check(decision)
    assert (case.job, case.owned) == snapshot  # inputs never mutated


def test_pods_ready_condition_with_wait_for_pods_ready() -> None:
    ctx = JobContext(now=T0, flavors=FLAVORS, wait_for_pods_ready=True)
    decision = reconcile_job(_running(active=3, ready=3), (admitted(wl()),), ctx)
    assert summary(decision) == [("Workload", "status")]
    assert conditions(decision.writes[0].obj)[-1] == (
        "PodsReady",
        "True",
        "Started",
        "All pods reached readiness and the workload is running",
    )
    # Written once: the next pass sees it and moves on.
    again = reconcile_job(_running(active=3, ready=3), (decision.writes[0].obj,), ctx)
    assert summary(again) == []


@dataclass(frozen=True)
class ReclaimCase:
    name: str
    parallelism: int
    completions: int
    succeeded: int
    have: tuple[dict[str, Any], ...]
    want: list[dict[str, Any]] | None  # None: no write


RECLAIM_CASES = [
    ReclaimCase("nothing succeeded yet", 3, 6, 0, (), None),
    ReclaimCase("more left than the parallelism", 3, 6, 2, (), None),
    ReclaimCase(
        "two of the last three done: one pod's quota back",
        3,
        6,
        4,
        (),
        [{"name": "main", "count": 1}],
    ),
    ReclaimCase("already written", 3, 6, 4, ({"name": "main", "count": 1},), None),
    ReclaimCase(
        "count changed", 3, 6, 5, ({"name": "main", "count": 1},), [{"name": "main", "count": 2}]
    ),
]


@pytest.mark.parametrize("case", RECLAIM_CASES, ids=lambda c: c.name)
def test_reclaimable_pods(case: ReclaimCase) -> None:
    source = job(parallelism=case.parallelism, completions=case.completions)
    running = _running(active=case.parallelism, succeeded=case.succeeded)
    running["spec"]["completions"] = case.completions
    workload = admitted(new_workload(source, 0, None))
    if case.have:
        workload["status"]["reclaimablePods"] = list(case.have)
    decision = reconcile_job(running, (workload,), CTX)
    if case.want is None:
        assert summary(decision) == []
    else:
        assert summary(decision) == [("Workload", "status")]
        assert decision.writes[0].obj["status"]["reclaimablePods"] == case.want


def _last(decision: JobDecision, kind: str) -> Obj:
    """The object of the decision's last write of ``kind``."""
    return dict(next(w.obj for w in reversed(decision.writes) if w.kind == kind))


def test_a_job_through_its_whole_life() -> None:
    """Each pass's written objects feed the next: created, admitted and started, preempted and
    stopped, quota released, admitted and started again, completed, finished, released."""
    stored = job()
    first = reconcile_job(stored, (), CTX)
    workload = _last(first, "Workload")

    started = reconcile_job(stored, (admitted(workload),), CTX)
    running = _last(started, "Job")
    running["status"] = {"active": 3, "startTime": format_time(T0)}
    assert events(started) == [("Started", "Admitted by clusterQueue cluster-queue")]

    preempted = _evicted(admitted(workload), "Preempted", "Preempted to accommodate")
    stopping = reconcile_job(running, (preempted,), CTX)
    assert events(stopping) == [("Stopped", "Preempted to accommodate")]
    stopped = _last(stopping, "Job")
    assert stopped["spec"] == stored["spec"]  # the template is the user's again
    assert stopped["status"] == {"active": 3}  # quota held while pods still run

    stopped["status"] = {}  # the Job controller removed the pods
    released = _last(reconcile_job(stopped, (preempted,), CTX), "Workload")
    assert "admission" not in released["status"]

    again = reconcile_job(stopped, (admitted(released),), CTX)
    restarted = _last(again, "Job")
    assert restarted["spec"]["suspend"] is False
    assert events(again) == [("Started", "Admitted by clusterQueue cluster-queue")]

    restarted["status"] = {
        "succeeded": 3,
        "conditions": [{"type": "Complete", "status": "True", "message": "done"}],
    }
    finishing = reconcile_job(restarted, (admitted(released),), CTX)
    done = _last(finishing, "Workload")
    assert conditions(done)[-1] == ("Finished", "True", "Succeeded", "done")
    closing = reconcile_job(restarted, (done,), CTX)
    assert _last(closing, "Workload")["metadata"]["finalizers"] == []
