"""The order of the admitting cluster's writes, found by the fault tests (a Job run on both
workers without a retry): the manager records the admitting cluster (check ``Ready``,
``clusterName``) before it creates the remote Job there.

Upstream creates the remote Job first and writes the manager's status after. When that write
fails (a conflict, a killed manager) and the worker is lost before the next pass, the manager
shows no admitting cluster: its check is still ``Pending``, so nothing waits for
``workerLostTimeout``, the Workload is nominated again to the clusters still reachable and the
Job starts a second time while the first still runs on the lost worker, and no retry is ever
recorded. Written first, the record survives such a failure (the executor stops at the first
failed write, so no Job is created without it): a lost worker then gets its grace, and a
re-dispatch is a counted retry (SPEC §3.14).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.kueue.multikueue import (
    CreateRemoteJob,
    UpdateLocalWorkloadStatus,
    reconcile,
)

from .helpers import (
    NOW,
    OPTS,
    T0,
    admitted_copy,
    cluster,
    copy_of,
    local,
    view,
)

DISPATCHED = local(nominatedClusterNames=["worker1", "worker2"])


@dataclass(frozen=True)
class Case:
    name: str
    admitted_on: str
    worker1_admitted_at: float
    worker2_admitted_at: float | None


CASES = [
    Case("a single admitted copy", "worker1", T0, None),
    Case("the earliest of two admitted copies", "worker2", T0 + 9, T0 + 3),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_admitting_cluster_is_recorded_before_its_job_is_created(case: Case) -> None:
    worker2 = (
        admitted_copy(DISPATCHED, at=case.worker2_admitted_at)
        if case.worker2_admitted_at is not None
        else copy_of(DISPATCHED)
    )
    got = reconcile(
        view(
            DISPATCHED,
            cluster("worker1", admitted_copy(DISPATCHED, at=case.worker1_admitted_at)),
            cluster("worker2", worker2),
        ),
        OPTS,
        NOW,
    ).actions
    creates = [(i, a.cluster) for i, a in enumerate(got) if isinstance(a, CreateRemoteJob)]
    assert [where for _, where in creates] == [case.admitted_on]
    create = creates[0][0]
    records = [
        i
        for i, a in enumerate(got)
        if isinstance(a, UpdateLocalWorkloadStatus)
        and a.obj["status"].get("clusterName") == case.admitted_on
    ]
    assert records, got
    assert records[0] < create
