"""The batch/v1 Job adapter of MultiKueue: the Job created on the admitting worker (SPEC §3.7),
what of the worker's Job status is mirrored back (§3.8, ``determineStatusUpdate``), whether a
Job is MultiKueue's and whether a remote object is ours."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.kueue.api.conditions import format_time
from numaplane.kueue.multikueue.batchjob import (
    StatusUpdate,
    determine_status_update,
    is_owned,
    owner_of,
    ownership_error,
    remote_job,
    unmanaged_reason,
)

from .helpers import NOW, REMOTE_JOB, SUSPENDED_BY_ADAPTER, T0, local_job, worker_job


@pytest.mark.parametrize("suspend", [True, False], ids=["local suspended", "local running"])
def test_remote_job(suspend: bool) -> None:
    local = local_job(suspend=suspend, active=1)
    before = copy.deepcopy(local)
    assert remote_job(local, "job-job1-1a2b3", "multikueue") == REMOTE_JOB
    assert local == before  # the local Job is not touched


def test_remote_job_with_a_workload_name_too_long_for_a_label() -> None:
    name = "job-" + "x" * 70
    job = remote_job(local_job(), name, "mgr")
    assert job["metadata"]["annotations"] == {
        "owner": "me",
        "kueue.x-k8s.io/prebuilt-workload-name": name,
    }
    assert job["metadata"]["labels"] == {
        "kueue.x-k8s.io/queue-name": "q1",
        "kueue.x-k8s.io/multikueue-origin": "mgr",
    }


RUNNING: dict[str, Any] = {"active": 1, "ready": 1, "startTime": format_time(T0)}
COMPLETE: dict[str, Any] = {
    "succeeded": 1,
    "conditions": [{"type": "Complete", "status": "True", "message": "Job finished successfully"}],
}
OLD_SUSPENDED = {**SUSPENDED_BY_ADAPTER, "lastTransitionTime": format_time(T0)}


@dataclass(frozen=True)
class MirrorCase:
    """The local and the worker's Job, and what mirroring must give."""

    name: str
    local: dict[str, Any]
    remote: dict[str, Any]
    want: StatusUpdate


MIRROR_CASES = (
    MirrorCase(
        "local running: the worker's status copied whole",
        local_job(suspend=False),
        worker_job(**RUNNING),
        StatusUpdate(RUNNING),
    ),
    MirrorCase(
        "both suspended (eviction on the worker): copied, active 0 comes back",
        local_job(suspend=True, active=1),
        worker_job(suspend=True, active=0),
        StatusUpdate({"active": 0}),
    ),
    MirrorCase(
        "worker's Job finished while the local one is suspended: copied",
        local_job(suspend=True),
        worker_job(**COMPLETE),
        StatusUpdate(COMPLETE),
    ),
    MirrorCase(
        "local suspended, worker running: only JobSuspended=True, deferred",
        local_job(suspend=True),
        worker_job(**RUNNING),
        StatusUpdate({"conditions": [SUSPENDED_BY_ADAPTER]}, deferred=True),
    ),
    MirrorCase(
        "local suspended with JobSuspended=True already: nothing to write, deferred",
        local_job(suspend=True, conditions=[OLD_SUSPENDED]),
        worker_job(**RUNNING),
        StatusUpdate(None, deferred=True),
    ),
    MirrorCase(
        "local suspended with JobSuspended=False: set True, deferred",
        local_job(suspend=True, conditions=[{"type": "Suspended", "status": "False"}]),
        worker_job(**RUNNING),
        StatusUpdate({"conditions": [SUSPENDED_BY_ADAPTER]}, deferred=True),
    ),
    MirrorCase(
        "statuses already equal: nothing to write",
        local_job(suspend=False, **RUNNING),
        worker_job(**RUNNING),
        StatusUpdate(None),
    ),
)


@pytest.mark.parametrize("case", MIRROR_CASES, ids=[c.name for c in MIRROR_CASES])
def test_determine_status_update(case: MirrorCase) -> None:
    before = copy.deepcopy(case.local)
    assert determine_status_update(case.local, case.remote, NOW) == case.want
    assert case.local == before


@pytest.mark.parametrize(
    ("managed_by", "want"),
    [
        ("kueue.x-k8s.io/multikueue", None),
        (
            "example.com/x",
            "The owner is not managed by Kueue: Expecting spec.managedBy to be "
            '"kueue.x-k8s.io/multikueue" not "example.com/x"',
        ),
        (
            None,
            "The owner is not managed by Kueue: Expecting spec.managedBy to be "
            '"kueue.x-k8s.io/multikueue" not ""',
        ),
    ],
    ids=["multikueue", "another controller", "unset"],
)
def test_unmanaged_reason(managed_by: str | None, want: str | None) -> None:
    assert unmanaged_reason(local_job(managed_by=managed_by)) == want


def test_owner_is_the_controller_else_the_first_reference() -> None:
    first = {"apiVersion": "v1", "kind": "Pod", "name": "p"}
    controller = {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "controller": True}
    assert owner_of({"metadata": {"ownerReferences": [first, controller]}}) == controller
    assert owner_of({"metadata": {"ownerReferences": [first]}}) == first
    assert owner_of({"metadata": {}}) is None


def test_ownership_by_origin_label() -> None:
    assert is_owned(worker_job(origin="multikueue"), "multikueue")
    assert not is_owned(worker_job(origin="other"), "multikueue")
    assert not is_owned(worker_job(origin=None), "multikueue")
    assert ownership_error(worker_job(origin=None), "m") == (
        "remote object is not owned by MultiKueue: expected "
        '"kueue.x-k8s.io/multikueue-origin"="m" on Job "ns/job1"'
    )
