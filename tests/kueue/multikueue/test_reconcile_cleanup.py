"""Which workloads the MultiKueue reconciler leaves alone or rejects, and the removal of remote
objects of deleted (R0), finished and unreserved (R2) workloads: scenarios D7, D8, D10, F5 and
F8 of the corpus (SPEC §3.2, §3.4 R0/R2, §3.11)."""

from __future__ import annotations

from typing import Any

import pytest

from numaplane.kueue.api.conditions import format_time
from numaplane.kueue.multikueue import (
    DispatchState,
    GroupView,
    RemoveRemoteObjects,
    UpdateLocalWorkloadStatus,
    reconcile,
)
from numaplane.kueue.multikueue.dispatch import Round

from .helpers import (
    CHECK,
    JOB,
    NOW,
    OPTS,
    T0,
    Case,
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

UNRESERVED = local(reserved=False, checks=[check(message="Requeued")])
RESERVED_WL = local()
FINISHED = local(cond("Finished", "True", "Succeeded", "Job finished successfully"))
DEPLOYMENT_OWNED = local()
DEPLOYMENT_OWNED["metadata"]["ownerReferences"] = [
    {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": "u", "controller": True}
]
NOT_OWNED = local()
NOT_OWNED["metadata"]["ownerReferences"] = []


def rejected(wl: dict[str, Any], message: str) -> UpdateLocalWorkloadStatus:
    """The status write that sets the check Rejected at NOW with ``message``."""
    return status_write(
        wl,
        admissionChecks=[
            {
                "name": CHECK,
                "state": "Rejected",
                "message": message,
                "lastTransitionTime": format_time(NOW),
            }
        ],
    )


CASES = (
    Case(
        name="no MultiKueue check: left alone",
        view=view(local(checks=[check("prov")]), cluster("worker1", copy_of(RESERVED_WL))),
    ),
    Case(
        name="check already Rejected: left alone",
        view=view(
            local(checks=[check(state="Rejected")]), cluster("worker1", copy_of(RESERVED_WL))
        ),
    ),
    Case(
        name="owner kind without adapter: check Rejected naming the kind",
        view=view(DEPLOYMENT_OWNED),
        want=(
            rejected(
                DEPLOYMENT_OWNED,
                'No multikueue adapter found for owner kind "apps/v1, Kind=Deployment", '
                'Previously: "Pending"',
            ),
        ),
    ),
    Case(
        name="no owner: check Rejected without a kind",
        view=view(NOT_OWNED),
        want=(rejected(NOT_OWNED, 'No multikueue adapter found, Previously: "Pending"'),),
    ),
    Case(
        name="Job not managed by MultiKueue: check Rejected with the managedBy it has",
        view=view(RESERVED_WL, job=local_job(managed_by="example.com/other")),
        want=(
            rejected(
                RESERVED_WL,
                "The owner is not managed by Kueue: Expecting spec.managedBy to be "
                '"kueue.x-k8s.io/multikueue" not "example.com/other", Previously: "Pending"',
            ),
        ),
    ),
    Case(
        name="local Job not found: an error to retry, nothing written",
        view=GroupView(RESERVED_WL, None, None, CHECK, (cluster("worker1"),)),
        error='jobs.batch "job1" not found',
    ),
    Case(
        name="R0 deleted workload: copies and Jobs removed where connected, not elsewhere",
        view=view(
            None,
            cluster("worker1", copy_of(RESERVED_WL), worker_job()),
            cluster("worker2", None, worker_job()),
            cluster("worker3"),
            cluster("worker4", copy_of(RESERVED_WL), connected=False, lost_since=T0),
            deleted=RESERVED_WL,
        ),
        want=(removed("worker1"), removed("worker2")),
    ),
    Case(
        name="R0 workload being deleted (deletionTimestamp): copies removed",
        view=view(local(deleting=True), cluster("worker1", copy_of(RESERVED_WL))),
        want=(removed("worker1"),),
    ),
    Case(
        name="F5 deleted workload without the MultiKueue check: nothing to do",
        view=view(
            None,
            cluster("worker1", copy_of(RESERVED_WL)),
            deleted=local(checks=[check("prov")]),
        ),
    ),
    Case(
        name="F5 deleted workload whose copies are on a reconnecting worker: left to GC",
        view=view(
            None,
            cluster("worker1"),
            cluster("worker2", copy_of(RESERVED_WL), connected=False, lost_since=T0),
            deleted=RESERVED_WL,
        ),
    ),
    Case(
        name="F8 local workload finished first: remote objects removed",
        view=view(
            FINISHED,
            cluster("worker1", copy_of(FINISHED), worker_job()),
            cluster("worker2", copy_of(FINISHED)),
        ),
        want=(removed("worker1"), removed("worker2")),
    ),
    Case(
        name="D7 unreserved workload, a worker reconnecting: nothing changes, retried later",
        view=view(UNRESERVED, cluster("worker1"), cluster("worker2", connected=False)),
        requeue=300.0,
    ),
    Case(
        name="D8 cleanup retried while the worker holding a copy is unavailable",
        view=view(
            UNRESERVED,
            cluster("worker1"),
            cluster("worker2", copy_of(UNRESERVED), connected=False, lost_since=T0),
        ),
        requeue=300.0,
    ),
    Case(
        name="D10 reconnected worker with an old reserved copy of a requeued workload: removed",
        view=view(
            UNRESERVED,
            cluster("worker1", copy_of(UNRESERVED, cond("QuotaReserved", "True", "QuotaReserved"))),
            cluster("worker2"),
        ),
        want=(removed("worker1"),),
    ),
)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_cleanup_and_skips(case: Case) -> None:
    run_case(case)


def test_removal_names_the_local_job_to_delete() -> None:
    # The executor deletes the remote Job named here first, then the copy.
    result = reconcile(
        view(None, cluster("worker1", copy_of(RESERVED_WL)), deleted=RESERVED_WL), OPTS, NOW
    )
    assert result.actions == [RemoveRemoteObjects("worker1", "ns", "job-job1-1a2b3", JOB)]


@pytest.mark.parametrize("wl", [FINISHED, UNRESERVED], ids=["finished", "no longer reserved"])
def test_finished_or_unreserved_workload_forgets_its_incremental_round(
    wl: dict[str, object],
) -> None:
    state = DispatchState(rounds={"ns/job-job1-1a2b3": Round(T0, ("worker1",))})
    reconcile(view(wl), OPTS, NOW, state)
    assert state.rounds == {}
