"""What a copy's state on its worker does to the manager's Workload: finished (R3, scenario
F7, the OutOfSync case), evicted (R4 both ways, scenario E13) and out of sync with the local
spec (R5: priority synced in place, anything else removed; scenario F13)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from numaplane.kueue.api.conditions import format_time
from numaplane.kueue.multikueue import (
    CountMetric,
    CreateRemoteWorkload,
    RecordEvent,
    UpdateLocalJobStatus,
    UpdateLocalWorkloadStatus,
    UpdateRemoteWorkload,
    reconcile,
)

from .helpers import (
    ADMITTED,
    CHECK,
    NOW,
    OPTS,
    SUSPENDED_BY_ADAPTER,
    T0,
    Case,
    admitted_copy,
    check,
    cluster,
    cond,
    copy_of,
    local,
    local_job,
    removed,
    run_case,
    spec,
    status_write,
    view,
    worker_job,
)

READY_CHECK = check(state="Ready", message='The workload was admitted on "worker1"')
RUNNING = local(ADMITTED, checks=[READY_CHECK], clusterName="worker1")
PENDING = local(nominatedClusterNames=["worker1", "worker2"])
COMPLETE: dict[str, Any] = {
    "conditions": [
        {"type": "SuccessCriteriaMet", "status": "True"},
        {"type": "Complete", "status": "True", "message": "Job finished successfully"},
    ],
    "succeeded": 1,
}
STOPPING_JOB = local_job(suspend=True, active=1)
RUNNING_JOB = local_job(suspend=False, active=1, startTime=format_time(T0))
FINISHED_COPY = admitted_copy(RUNNING)
FINISHED_COPY["status"]["conditions"].append(
    cond("Finished", "True", "Succeeded", "Job finished successfully", at=T0 + 10)
)
FAILED_COPY = admitted_copy(RUNNING)
FAILED_COPY["status"]["conditions"].append(
    cond("Finished", "True", "Failed", "BackoffLimitExceeded", at=T0 + 5)
)
OUT_OF_SYNC_COPY = admitted_copy(RUNNING)
OUT_OF_SYNC_COPY["status"]["conditions"].append(
    cond("Finished", "True", "OutOfSync", "The prebuilt workload is out of sync with its user job")
)
EVICTED_COPY = admitted_copy(RUNNING)
EVICTED_COPY["status"]["conditions"].append(cond("Evicted", "True", "Preempted", "Preempted"))
MANAGER_EVICTED = local(
    ADMITTED,
    cond("Evicted", "True", "Preempted", "Preempted to accommodate a workload"),
    checks=[check(message="Reset to Pending after eviction. Previously: Ready")],
)
DRAINED_COPY = copy_of(
    MANAGER_EVICTED,
    cond("Evicted", "True", "DeactivatedDueToEvictedOnManagerCluster", "deactivated"),
)
HIGH = spec(
    priorityClassRef={"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"},
    priority=100,
)
LOW = spec(
    priorityClassRef={"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "low"},
    priority=10,
)
RUNNING_HIGH = local(ADMITTED, checks=[READY_CHECK], clusterName="worker1", wl_spec=HIGH)
OTHER_PODSET = spec()
OTHER_PODSET["podSets"][0]["name"] = "other"


def finished_condition(reason: str, message: str) -> dict[str, object]:
    """``Finished=True`` as the manager writes it at NOW."""
    return {**cond("Finished", "True", reason, message, at=NOW), "observedGeneration": 1}


def retry(wl: dict[str, Any], message: str) -> UpdateLocalWorkloadStatus:
    """The status write that moves the check to Retry at NOW."""
    moved = {**READY_CHECK, "state": "Retry", "message": message}
    return status_write(wl, admissionChecks=[{**moved, "lastTransitionTime": format_time(NOW)}])


def with_spec(obj: dict[str, object], new_spec: dict[str, object]) -> dict[str, object]:
    """``obj`` with its spec replaced."""
    return {**copy.deepcopy(obj), "spec": new_spec}


OUT_OF_SYNC_MESSAGE = (
    'Remote workload on worker cluster "worker1" is out of sync with its user job, '
    'resetting for re-dispatch, Previously: "Ready"'
)
EVICTED_MESSAGE = (
    'Workload evicted on worker cluster: "worker1", resetting for re-admission. Previously: "Ready"'
)


CASES = (
    Case(
        name="F7 remote finished: final Job status copied, local workload Finished like it",
        view=view(
            RUNNING,
            cluster("worker1", FINISHED_COPY, worker_job(**COMPLETE)),
            cluster("worker2"),
            job=RUNNING_JOB,
        ),
        want=(
            UpdateLocalJobStatus({**RUNNING_JOB, "status": COMPLETE}),
            status_write(
                RUNNING,
                conditions=[
                    *RUNNING["status"]["conditions"],
                    finished_condition("Succeeded", "Job finished successfully"),
                ],
            ),
        ),
    ),
    Case(
        name="R3 the earliest finish wins (Failed before Succeeded)",
        view=view(
            RUNNING,
            cluster("worker1", FINISHED_COPY),
            cluster("worker2", FAILED_COPY),
            job=RUNNING_JOB,
        ),
        want=(
            status_write(
                RUNNING,
                conditions=[
                    *RUNNING["status"]["conditions"],
                    finished_condition("Failed", "BackoffLimitExceeded"),
                ],
            ),
        ),
    ),
    Case(
        name="R3 OutOfSync on the worker with the check Ready: Retry and a Warning event",
        view=view(RUNNING, cluster("worker1", OUT_OF_SYNC_COPY, worker_job()), job=RUNNING_JOB),
        want=(
            retry(RUNNING, OUT_OF_SYNC_MESSAGE),
            RecordEvent(RUNNING, "Warning", "MultiKueue", OUT_OF_SYNC_MESSAGE),
        ),
    ),
    Case(
        name="R3 OutOfSync while the check is not Ready: nothing, never finished",
        view=view(PENDING, cluster("worker1", OUT_OF_SYNC_COPY), cluster("worker2")),
    ),
    Case(
        name="R3 a foreign Job of that name on the worker: an error, nothing finished",
        view=view(RUNNING, cluster("worker1", FINISHED_COPY, worker_job(origin=None))),
        error=(
            "remote object is not owned by MultiKueue: expected "
            '"kueue.x-k8s.io/multikueue-origin"="multikueue" on Job "ns/job1"'
        ),
    ),
    Case(
        name="E13 evicted on the worker: Retry and a Normal event, Jobs untouched",
        view=view(
            RUNNING,
            cluster("worker1", EVICTED_COPY, worker_job(active=1)),
            cluster("worker2"),
            job=RUNNING_JOB,
        ),
        want=(
            retry(RUNNING, EVICTED_MESSAGE),
            RecordEvent(RUNNING, "Normal", "MultiKueue", EVICTED_MESSAGE),
        ),
    ),
    Case(
        name="R4 manager-side eviction: the worker's stopped Job status is mirrored",
        view=view(
            MANAGER_EVICTED,
            cluster("worker1", DRAINED_COPY, worker_job(suspend=True, active=0)),
            job=local_job(suspend=True, active=1),
        ),
        want=(
            UpdateLocalJobStatus({**local_job(suspend=True, active=1), "status": {"active": 0}}),
        ),
    ),
    Case(
        name="R4 manager-side eviction, worker Job still running: deferred, look again in 2s",
        view=view(
            MANAGER_EVICTED,
            cluster("worker1", DRAINED_COPY, worker_job(active=1)),
            job=local_job(suspend=True, active=1),
        ),
        want=(
            UpdateLocalJobStatus(
                {
                    **local_job(suspend=True, active=1),
                    "status": {"active": 1, "conditions": [SUSPENDED_BY_ADAPTER]},
                }
            ),
        ),
        requeue=2.0,
    ),
    Case(
        name="R4 a copy evicted while the check is Pending: no Retry, nomination goes on",
        view=view(
            PENDING,
            cluster("worker1", copy_of(PENDING, cond("Evicted", "True", "Preempted"))),
            cluster("worker2", copy_of(PENDING)),
        ),
    ),
    Case(
        name="R5 priority changed: the copy's priority updated in place, not recreated",
        view=view(
            RUNNING_HIGH,
            cluster("worker1", admitted_copy(RUNNING, wl_spec=LOW), worker_job()),
            job=local_job(suspend=False),
        ),
        want=(UpdateRemoteWorkload("worker1", with_spec(admitted_copy(RUNNING), HIGH)),),
        requeue=300.0,
    ),
    Case(
        name="R5 other spec change: the copy is removed, then created again while nominated",
        view=view(
            PENDING,
            cluster("worker1", copy_of(PENDING, wl_spec=OTHER_PODSET)),
            cluster("worker2", copy_of(PENDING)),
        ),
        want=(
            removed("worker1"),
            CreateRemoteWorkload(
                "worker1",
                {
                    "apiVersion": "kueue.x-k8s.io/v1beta2",
                    "kind": "Workload",
                    "metadata": {
                        "name": "job-job1-1a2b3",
                        "namespace": "ns",
                        "labels": {"team": "a", "kueue.x-k8s.io/multikueue-origin": "multikueue"},
                        "annotations": {"note": "x"},
                    },
                    "spec": spec(),
                },
            ),
            CountMetric(
                "multikueue_workloads_dispatched_total",
                (("cluster_queue", "q1"), ("cluster", "worker1")),
            ),
        ),
    ),
    Case(
        name="F13 a sibling out of sync is removed; the admitting copy stays Ready",
        view=view(
            RUNNING,
            cluster("worker1", admitted_copy(RUNNING), worker_job()),
            cluster("worker2", copy_of(RUNNING, wl_spec=OTHER_PODSET)),
            job=local_job(suspend=False),
        ),
        want=(removed("worker2"),),
        requeue=300.0,
    ),
    Case(
        name="R5 preemption gates alone do not make a copy out of sync",
        view=view(
            RUNNING,
            cluster(
                "worker1",
                admitted_copy(
                    RUNNING,
                    wl_spec=spec(preemptionGates=[{"name": "kueue.x-k8s.io/multikueue"}]),
                ),
                worker_job(),
            ),
            job=local_job(suspend=False),
        ),
        requeue=300.0,
    ),
)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_remote_state(case: Case) -> None:
    run_case(case)


def test_retry_keeps_the_checks_retry_count() -> None:
    # SetAdmissionCheckState keeps retryCount/requeueAfterSeconds: eviction counts on them.
    wl = local(ADMITTED, checks=[{**READY_CHECK, "retryCount": 2}], clusterName="worker1")
    result = reconcile(view(wl, cluster("worker1", EVICTED_COPY)), OPTS, NOW)
    written = result.actions[0].obj["status"]["admissionChecks"]  # type: ignore[union-attr]
    assert written == [
        {
            "name": CHECK,
            "state": "Retry",
            "message": EVICTED_MESSAGE,
            "lastTransitionTime": format_time(NOW),
            "retryCount": 2,
        }
    ]
