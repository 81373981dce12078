"""What the MultiKueue workload controller reads and decides without the API: the workload's
MultiKueue check, its Job, the per-cluster view it hands the pure reconciler, and the
lost-worker divergence (SPEC §3.14) that clears the local Job's mirrored pod counters (which
test_controller.py sees work end to end)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.kueue import constants as c
from numaplane.kueue.multikueue import constants as mkc
from numaplane.kueue.runtime.multikueue.execute import (
    has_active_counters,
    holds_quota,
    lost_worker_retry,
)
from numaplane.kueue.runtime.multikueue.groupread import (
    check_state,
    config_clusters,
    group_view,
    multikueue_check,
    owner_job,
)
from numaplane.testing.multikueue import FakeRemoteCluster, FakeStore

Obj = dict[str, Any]
NO_JOBS: dict[str, Obj] = {}
NO_REMOTES: dict[str, FakeRemoteCluster] = {}
CHECKS: dict[str, Obj] = {
    "mk": {
        "metadata": {"name": "mk"},
        "spec": {
            "controllerName": c.MULTIKUEUE_CONTROLLER,
            "parameters": {"apiGroup": c.GROUP, "kind": "MultiKueueConfig", "name": "cfg"},
        },
    },
    "prov": {
        "metadata": {"name": "prov"},
        "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request"},
    },
}


def _workload(*checks: tuple[str, str, str], deleting: bool = False) -> Obj:
    meta: Obj = {
        "namespace": "ns",
        "name": "job-sample-1",
        "ownerReferences": [
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": "sample",
                "uid": "u1",
                "controller": True,
            }
        ],
    }
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    states = [{"name": n, "state": s, "message": m} for n, s, m in checks]
    return {"metadata": meta, "status": {"admissionChecks": states}}


@dataclass(frozen=True)
class CheckCase:
    name: str
    checks: tuple[tuple[str, str, str], ...]
    expected: tuple[str, str] | None


CHECK_CASES = (
    CheckCase("no checks: ignored", (), None),
    CheckCase("another controller's check only", (("prov", "Pending", ""),), None),
    CheckCase("an unknown check", (("gone", "Pending", ""),), None),
    CheckCase(
        "the multikueue one among others",
        (("prov", "Ready", ""), ("mk", "Pending", "")),
        ("mk", "cfg"),
    ),
)


@pytest.mark.parametrize("case", CHECK_CASES, ids=[c.name for c in CHECK_CASES])
def test_the_multikueue_check_of_a_workload(case: CheckCase) -> None:
    ref = multikueue_check(_workload(*case.checks), CHECKS.get)
    assert (None if ref is None else (ref.check, ref.config)) == case.expected


def test_the_state_of_a_named_check() -> None:
    wl = _workload(("prov", "Ready", ""), ("mk", "Rejected", "no"))
    assert check_state(wl, "mk") == "Rejected"
    assert check_state(wl, "other") == ""


def test_the_owner_job_must_still_have_the_owners_uid() -> None:
    job = {"metadata": {"namespace": "ns", "name": "sample", "uid": "u1"}}
    found = owner_job(_workload(), {"ns/sample": job}.get)
    assert found is not None
    assert (found["apiVersion"], found["kind"]) == ("batch/v1", "Job")
    recreated = {"metadata": {"namespace": "ns", "name": "sample", "uid": "u2"}}
    assert owner_job(_workload(), {"ns/sample": recreated}.get) is None


def test_the_view_has_one_entry_per_config_cluster_in_config_order() -> None:
    copy = {"metadata": {"namespace": "ns", "name": "job-sample-1"}}
    remote_job = {"metadata": {"namespace": "ns", "name": "sample"}}
    remotes = {
        "b": FakeRemoteCluster(
            workloads=FakeStore({"ns/job-sample-1": copy}),
            jobs=FakeStore({"ns/sample": remote_job}),
        ),
        "a": FakeRemoteCluster(connected=False, lost_since=12.0),
    }
    config = {"spec": {"clusters": ["b", "a", "missing"]}}
    local = _workload(("mk", "Ready", ""))
    view = group_view(
        "ns/job-sample-1", local, None, "mk", config_clusters(config), NO_JOBS.get, remotes.get
    )
    assert [(r.name, r.connected, r.lost_since) for r in view.clusters] == [
        ("b", True, None),
        ("a", False, 12.0),
        ("missing", False, None),
    ]
    assert view.clusters[0].workload == copy
    assert view.clusters[0].job == remote_job
    assert view.local is not None
    assert view.local["kind"] == "Workload"
    assert view.deleted is None
    assert view.check == "mk"


def test_a_deleted_workload_is_seen_through_its_last_copy() -> None:
    last = _workload(("mk", "Ready", ""))
    gone = group_view("ns/job-sample-1", None, last, "mk", (), NO_JOBS.get, NO_REMOTES.get)
    assert gone.local is None
    assert gone.deleted is last
    deleting = _workload(("mk", "Ready", ""), deleting=True)
    view = group_view("ns/job-sample-1", deleting, None, "mk", (), NO_JOBS.get, NO_REMOTES.get)
    assert view.deleted is view.local
    assert view.local is not None


@dataclass(frozen=True)
class LostCase:
    name: str
    before: str
    after: tuple[str, str]
    lost: bool


LOST_CASES = (
    LostCase(
        "Ready to Retry, admitting remote lost",
        "Ready",
        ("Retry", mkc.with_previous(mkc.MSG_ADMITTING_REMOTE_LOST, "Ready")),
        True,
    ),
    LostCase("Retry for another reason", "Ready", ("Retry", mkc.MSG_ADMITTING_REMOTE_GONE), False),
    LostCase("already Retry", "Retry", ("Retry", mkc.MSG_ADMITTING_REMOTE_LOST), False),
    LostCase("Ready written again", "Ready", ("Ready", mkc.admitted_on("w1")), False),
)


@pytest.mark.parametrize("case", LOST_CASES, ids=[c.name for c in LOST_CASES])
def test_only_a_lost_admitting_worker_counts_as_proof_nothing_runs(case: LostCase) -> None:
    before = _workload(("mk", case.before, ""))
    after = _workload(("mk", *case.after))
    assert lost_worker_retry(before, after, "mk") is case.lost


def test_the_clear_is_kept_up_while_the_workload_holds_quota() -> None:
    assert has_active_counters({"status": {"active": 1}})
    assert has_active_counters({"status": {"terminating": 2}})
    assert not has_active_counters({"status": {"active": 0, "succeeded": 1}})
    reserved = {"status": {"conditions": [{"type": "QuotaReserved", "status": "True"}]}}
    released = {"status": {"conditions": [{"type": "QuotaReserved", "status": "False"}]}}
    assert holds_quota(reserved)
    assert not holds_quota(released)
    assert not holds_quota(None)
