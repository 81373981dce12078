"""The admitting copy (R6): the check Ready while its copy is admitted, Retry when the copy is
lost past ``workerLostTimeout`` or gone (R6a), and convergence onto the copy admitted first
(R6b: losers removed, the Job created there alone, status mirrored, manager evictions passed
on). Scenarios B1 (dispatch part), F11, D4/D5 (the grace) of the corpus."""

from __future__ import annotations

from typing import Any

import pytest

from numaplane.kueue.api.conditions import format_time
from numaplane.kueue.multikueue import (
    CountMetric,
    CreateRemoteJob,
    PatchRemoteWorkloadStatus,
    RecordEvent,
    UpdateLocalJobStatus,
    reconcile,
)

from .helpers import (
    ADMITTED,
    CHECK,
    NOW,
    OPTS,
    REMOTE_JOB,
    SUSPENDED_BY_ADAPTER,
    T0,
    Case,
    admission,
    admitted_copy,
    check,
    cluster,
    cond,
    copy_of,
    local,
    local_job,
    removed,
    run_case,
    status_write,
    view,
    worker_job,
)

ADMITTED_MESSAGE = 'The workload was admitted on "worker1"'
ADMITTED_ON_2 = 'The workload was admitted on "worker2"'
UNSUSPENDED = local_job(suspend=False)
OLD_MESSAGE = local(
    ADMITTED,
    checks=[check(state="Ready", message='The workload got reservation on "worker1"')],
    clusterName="worker1",
)
READY_CHECK = check(state="Ready", message=ADMITTED_MESSAGE)
RUNNING = local(ADMITTED, checks=[READY_CHECK], clusterName="worker1")
DISPATCHED = local(nominatedClusterNames=["worker1", "worker2"])
LIVE: dict[str, Any] = {"active": 1, "ready": 1, "startTime": format_time(T0)}
LIVE_JOB = local_job(suspend=False, **LIVE)
EVICTED = cond("Evicted", "True", "Preempted", "Preempted to accommodate a workload")
MANAGER_EVICTED = local(ADMITTED, EVICTED, checks=[READY_CHECK], clusterName="worker1")
TAS = local(admission=admission(delayed="Pending"), nominatedClusterNames=["worker1"])


def checked(state: str, message: str, at: float = NOW) -> list[dict[str, object]]:
    """``status.admissionChecks`` with the MultiKueue check in ``state`` since ``at``."""
    return [
        {"name": CHECK, "state": state, "message": message, "lastTransitionTime": format_time(at)}
    ]


def admitted_metric(cluster_name: str) -> CountMetric:
    """``multikueue_workloads_admitted_total`` +1."""
    labels = (("cluster_queue", "q1"), ("cluster", cluster_name))
    return CountMetric("multikueue_workloads_admitted_total", labels)


def stopped(job: dict[str, object]) -> UpdateLocalJobStatus:
    """The local Job with its mirrored active and ready pods cleared."""
    return UpdateLocalJobStatus({**job, "status": {"active": 0, "startTime": format_time(T0)}})


CASES = (
    Case(
        name="R6a admitting worker unreachable within workerLostTimeout: wait out the rest",
        view=view(RUNNING, cluster("worker1", connected=False, lost_since=NOW - 100), job=LIVE_JOB),
        requeue=200.0,
    ),
    Case(
        name="R6a unreachable past workerLostTimeout (from lost_since): Retry, local Job stopped",
        view=view(RUNNING, cluster("worker1", connected=False, lost_since=NOW - 300), job=LIVE_JOB),
        want=(
            status_write(
                RUNNING,
                admissionChecks=checked("Retry", 'Admitting remote lost, Previously: "Ready"'),
            ),
            stopped(LIVE_JOB),
        ),
    ),
    Case(
        name="R6a the grace counts from the loss, not from when the check became Ready",
        view=view(RUNNING, cluster("worker1", connected=False, lost_since=NOW - 10), job=LIVE_JOB),
        requeue=290.0,
    ),
    Case(
        name="R6a admitting cluster without any client: the grace never runs out (upstream)",
        view=view(RUNNING, cluster("worker1", connected=False), job=LIVE_JOB),
        requeue=300.0,
    ),
    Case(
        name="R6a Ready without a recorded cluster: Retry, unexpected",
        view=view(local(ADMITTED, checks=[READY_CHECK]), cluster("worker1"), job=LIVE_JOB),
        want=(
            status_write(
                local(ADMITTED, checks=[READY_CHECK]),
                admissionChecks=checked(
                    "Retry",
                    "Admission check is Ready but no admitting cluster is recorded; this is "
                    'unexpected, please report it, Previously: "Ready"',
                ),
            ),
        ),
    ),
    Case(
        name="R6a reachable worker whose copy is gone: Retry at once, local Job stopped",
        view=view(RUNNING, cluster("worker1"), cluster("worker2"), job=LIVE_JOB),
        want=(
            status_write(
                RUNNING,
                admissionChecks=checked(
                    "Retry", 'Admitting remote no longer exists, Previously: "Ready"'
                ),
            ),
            stopped(LIVE_JOB),
        ),
    ),
    Case(
        name="R6a reachable worker whose copy is only reserved, no longer admitted: Retry",
        view=view(
            RUNNING,
            cluster("worker1", copy_of(RUNNING, cond("QuotaReserved", "True", "QuotaReserved"))),
            job=local_job(suspend=False),
        ),
        want=(
            status_write(
                RUNNING,
                admissionChecks=checked(
                    "Retry", 'Admitting remote no longer exists, Previously: "Ready"'
                ),
            ),
        ),
    ),
    Case(
        name="B1 first admitted copy wins: loser removed, Job created there, check Ready",
        view=view(
            DISPATCHED,
            cluster("worker1", admitted_copy(DISPATCHED)),
            cluster("worker2", copy_of(DISPATCHED)),
        ),
        want=(
            removed("worker2"),
            status_write(
                DISPATCHED,
                admissionChecks=checked("Ready", ADMITTED_MESSAGE),
                nominatedClusterNames=None,
                clusterName="worker1",
            ),
            RecordEvent(DISPATCHED, "Normal", "MultiKueue", ADMITTED_MESSAGE),
            admitted_metric("worker1"),
            CreateRemoteJob("worker1", REMOTE_JOB),
        ),
        requeue=300.0,
    ),
    Case(
        name="R6b the copy admitted earliest wins, by its Admitted transition time",
        view=view(
            DISPATCHED,
            cluster("worker1", admitted_copy(DISPATCHED, at=T0 + 9)),
            cluster("worker2", admitted_copy(DISPATCHED, at=T0 + 3)),
        ),
        want=(
            removed("worker1"),
            status_write(
                DISPATCHED,
                admissionChecks=checked("Ready", ADMITTED_ON_2),
                nominatedClusterNames=None,
                clusterName="worker2",
            ),
            RecordEvent(
                DISPATCHED, "Normal", "MultiKueue", 'The workload was admitted on "worker2"'
            ),
            admitted_metric("worker2"),
            CreateRemoteJob("worker2", REMOTE_JOB),
        ),
        requeue=300.0,
    ),
    Case(
        name="R6b already Ready there: only the status mirrored, no event, no metric",
        view=view(
            RUNNING,
            cluster("worker1", admitted_copy(RUNNING), worker_job(active=1, ready=1)),
            job=local_job(suspend=False),
        ),
        want=(
            UpdateLocalJobStatus({**local_job(suspend=False), "status": {"active": 1, "ready": 1}}),
        ),
        requeue=300.0,
    ),
    Case(
        name="R6b a stale copy admitted earlier on a returning worker loses to the recorded one",
        view=view(
            local(
                ADMITTED,
                checks=[check(state="Ready", message=ADMITTED_ON_2)],
                clusterName="worker2",
            ),
            cluster("worker1", admitted_copy(DISPATCHED, at=T0 + 1), worker_job(active=1)),
            cluster("worker2", admitted_copy(RUNNING, at=T0 + 9), worker_job(active=1, ready=1)),
            job=local_job(suspend=False),
        ),
        want=(
            removed("worker1"),
            UpdateLocalJobStatus({**local_job(suspend=False), "status": {"active": 1, "ready": 1}}),
        ),
        requeue=300.0,
    ),
    Case(
        name="C4 clusterName cleared by hand while Ready: written back, check and event as is",
        view=view(
            local(ADMITTED, checks=[READY_CHECK]),
            cluster("worker1", admitted_copy(RUNNING), worker_job(active=1, ready=1)),
            cluster("worker2"),
            job=local_job(suspend=False, active=1, ready=1),
        ),
        want=(status_write(local(ADMITTED, checks=[READY_CHECK]), clusterName="worker1"),),
        requeue=300.0,
    ),
    Case(
        name="R6b Ready with an older message: message updated, transition time kept, no metric",
        view=view(
            OLD_MESSAGE,
            cluster("worker1", admitted_copy(RUNNING), worker_job()),
            job=local_job(suspend=False),
        ),
        want=(
            status_write(OLD_MESSAGE, admissionChecks=checked("Ready", ADMITTED_MESSAGE, at=T0)),
            RecordEvent(OLD_MESSAGE, "Normal", "MultiKueue", ADMITTED_MESSAGE),
        ),
        requeue=300.0,
    ),
    Case(
        name="R6b local Job still suspended while the worker's runs: deferred, again in 2s",
        view=view(
            RUNNING,
            cluster("worker1", admitted_copy(RUNNING), worker_job(active=1)),
            job=local_job(suspend=True),
        ),
        want=(
            UpdateLocalJobStatus(
                {
                    **local_job(suspend=True),
                    "status": {"conditions": [SUSPENDED_BY_ADAPTER]},
                }
            ),
        ),
        requeue=2.0,
    ),
    Case(
        name="R6b manager-side eviction: the admitting copy is marked for deactivation",
        view=view(
            MANAGER_EVICTED,
            cluster("worker1", admitted_copy(MANAGER_EVICTED), worker_job(active=1)),
            cluster("worker2", copy_of(MANAGER_EVICTED)),
            job=LIVE_JOB,
        ),
        want=(
            removed("worker2"),
            PatchRemoteWorkloadStatus(
                "worker1",
                {
                    **admitted_copy(MANAGER_EVICTED),
                    "status": {
                        "conditions": [
                            *admitted_copy(MANAGER_EVICTED)["status"]["conditions"],
                            cond(
                                "DeactivationTarget",
                                "True",
                                "EvictedOnManagerCluster",
                                "Evicted on manager: Preempted to accommodate a workload",
                                at=NOW,
                            ),
                        ]
                    },
                },
            ),
        ),
    ),
    Case(
        name="R6b a check in Retry stays Retry; the Job is still mirrored",
        view=view(
            local(ADMITTED, checks=[check(state="Retry", message="x")], clusterName="worker1"),
            cluster("worker1", admitted_copy(RUNNING), worker_job(active=1)),
            job=local_job(suspend=False),
        ),
        want=(UpdateLocalJobStatus({**local_job(suspend=False), "status": {"active": 1}}),),
        requeue=300.0,
    ),
    Case(
        name="R6b another cluster recorded: an error, no Job created anywhere",
        view=view(
            local(checks=[check()], clusterName="worker2"),
            cluster("worker1", admitted_copy(RUNNING)),
        ),
        error='attempting to change immutable ClusterName from "worker2" to "worker1"',
    ),
    Case(
        name="R6b a foreign Job of that name on the winner: an error, nothing deleted there",
        view=view(
            DISPATCHED,
            cluster("worker1", admitted_copy(DISPATCHED), worker_job(origin="other-manager")),
        ),
        error=(
            "remote object is not owned by MultiKueue: expected "
            '"kueue.x-k8s.io/multikueue-origin"="multikueue" on Job "ns/job1"'
        ),
    ),
    Case(
        name="R6b TAS: the local delayed topology request turns Ready with the remote's",
        view=view(
            TAS,
            cluster(
                "worker1",
                admitted_copy(TAS, admission=admission(topology=True)),
                worker_job(suspend=True),
            ),
        ),
        want=(
            status_write(
                TAS,
                admission=admission(delayed="Ready"),
                admissionChecks=checked("Ready", ADMITTED_MESSAGE),
                nominatedClusterNames=None,
                clusterName="worker1",
            ),
            RecordEvent(TAS, "Normal", "MultiKueue", ADMITTED_MESSAGE),
            admitted_metric("worker1"),
        ),
        requeue=300.0,
    ),
    Case(
        name="F11 a copy reserved but not admitted keeps the others; check stays Pending",
        view=view(
            DISPATCHED,
            cluster("worker1", copy_of(DISPATCHED, cond("QuotaReserved", "True", "QuotaReserved"))),
            cluster("worker2", copy_of(DISPATCHED)),
        ),
    ),
)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_admission(case: Case) -> None:
    run_case(case)


def test_remote_job_is_never_created_for_a_copy_that_is_not_admitted() -> None:
    # The invariant of SPEC §3.4: Jobs only under the admitted copy, so never two running.
    for wl in (DISPATCHED, MANAGER_EVICTED):
        reserved_only = copy_of(wl, cond("QuotaReserved", "True", "QuotaReserved"))
        result = reconcile(view(wl, cluster("worker1", reserved_only)), OPTS, NOW)
        assert not [a for a in result.actions if isinstance(a, CreateRemoteJob)]
