"""The pure decisions of a sync: failed pods, new finished pods, the OnFailure restart limit,
the deadline, which active pods go first, and the uncounted bookkeeping."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from numaplane.controllers.job.manage import active_pods_for_removal
from numaplane.controllers.job.podstate import format_time
from numaplane.controllers.job.sync_rules import (
    deadline_left,
    is_pod_failed,
    new_finished_pods,
    past_backoff_limit_on_failure,
)
from numaplane.controllers.job.tracking import clean_uncounted, status_for_write

FINALIZER = "batch.kubernetes.io/job-tracking"
INDEX = "batch.kubernetes.io/job-completion-index"


def pod(
    name: str,
    phase: str = "Pending",
    *,
    deleting: bool = False,
    finalizer: bool = True,
    index: int | None = None,
    node: str = "",
    ready: bool = False,
    restarts: int = 0,
    created: float = 0.0,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "uid": f"uid-{name}",
        "creationTimestamp": format_time(created),
    }
    if deleting:
        meta["deletionTimestamp"] = format_time(created + 1)
    if finalizer:
        meta["finalizers"] = [FINALIZER]
    if index is not None:
        meta["annotations"] = {INDEX: str(index)}
    return {
        "metadata": meta,
        "spec": {"nodeName": node},
        "status": {
            "phase": phase,
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            "containerStatuses": [{"name": "main", "restartCount": restarts}],
        },
    }


@dataclass(frozen=True)
class FailedCase:
    name: str
    pod: dict[str, Any]
    spec: dict[str, Any]
    failed: bool


FAILED_CASES = (
    FailedCase("phase Failed", pod("a", "Failed"), {}, True),
    FailedCase("running", pod("a", "Running"), {}, False),
    FailedCase("deleted while running counts", pod("a", "Running", deleting=True), {}, True),
    FailedCase("deleted after success does not", pod("a", "Succeeded", deleting=True), {}, False),
    FailedCase(
        "podReplacementPolicy Failed waits for the phase",
        pod("a", "Running", deleting=True),
        {"podReplacementPolicy": "Failed"},
        False,
    ),
    FailedCase(
        "a pod failure policy waits for the phase",
        pod("a", "Running", deleting=True),
        {"podFailurePolicy": {"rules": []}},
        False,
    ),
)


@pytest.mark.parametrize("case", FAILED_CASES, ids=lambda c: c.name)
def test_is_pod_failed(case: FailedCase) -> None:
    assert is_pod_failed(case.pod, {"spec": case.spec}) is case.failed


def test_new_finished_pods_skips_counted_and_untracked() -> None:
    pods = [
        pod("s1", "Succeeded"),
        pod("s2", "Succeeded", finalizer=False),  # counted already
        pod("s3", "Succeeded"),  # already uncounted
        pod("f1", "Failed"),
        pod("f2", "Failed"),  # its finalizer removal is under way
        pod("r", "Running"),
    ]
    succeeded, failed = new_finished_pods(
        {"spec": {}}, pods, frozenset({"uid-s3"}), frozenset(), frozenset({"uid-f2"})
    )
    assert [p["metadata"]["name"] for p in succeeded] == ["s1"]
    assert [p["metadata"]["name"] for p in failed] == ["f1"]


def test_new_finished_pods_of_indexed_job_need_a_valid_index() -> None:
    job = {"spec": {"completionMode": "Indexed", "completions": 3}}
    pods = [pod("a", "Succeeded", index=1), pod("b", "Succeeded", index=3), pod("c", "Succeeded")]
    succeeded, _ = new_finished_pods(job, pods, frozenset(), frozenset(), frozenset())
    assert [p["metadata"]["name"] for p in succeeded] == ["a"]


@dataclass(frozen=True)
class OnFailureCase:
    name: str
    limit: int
    restarts: tuple[int, ...]
    phase: str
    policy: str
    past: bool


ON_FAILURE_CASES = (
    OnFailureCase("limit 0: any restart", 0, (1,), "Running", "OnFailure", True),
    OnFailureCase("limit 0: no restart", 0, (0,), "Running", "OnFailure", False),
    OnFailureCase("sum reaches the limit", 3, (1, 2), "Running", "OnFailure", True),
    OnFailureCase("below the limit", 3, (1, 1), "Pending", "OnFailure", False),
    OnFailureCase("finished pods do not count", 1, (5,), "Failed", "OnFailure", False),
    OnFailureCase("restartPolicy Never", 1, (5,), "Running", "Never", False),
)


@pytest.mark.parametrize("case", ON_FAILURE_CASES, ids=lambda c: c.name)
def test_past_backoff_limit_on_failure(case: OnFailureCase) -> None:
    job = {
        "spec": {
            "backoffLimit": case.limit,
            "template": {"spec": {"restartPolicy": case.policy}},
        }
    }
    pods = [pod(f"p{i}", case.phase, restarts=r) for i, r in enumerate(case.restarts)]
    assert past_backoff_limit_on_failure(job, pods) is case.past


@dataclass(frozen=True)
class DeadlineCase:
    name: str
    spec: dict[str, Any]
    started: float | None
    now: float
    left: float | None


DEADLINE_CASES = (
    DeadlineCase("no deadline", {}, 100.0, 200.0, None),
    DeadlineCase("not started", {"activeDeadlineSeconds": 10}, None, 200.0, None),
    DeadlineCase("suspended", {"activeDeadlineSeconds": 10, "suspend": True}, 100.0, 200.0, None),
    DeadlineCase("time left", {"activeDeadlineSeconds": 10}, 100.0, 104.0, 6.0),
    DeadlineCase("passed", {"activeDeadlineSeconds": 10}, 100.0, 110.0, 0.0),
)


@pytest.mark.parametrize("case", DEADLINE_CASES, ids=lambda c: c.name)
def test_deadline_left(case: DeadlineCase) -> None:
    status = {} if case.started is None else {"startTime": format_time(case.started)}
    assert deadline_left({"spec": case.spec, "status": status}, case.now) == case.left


@dataclass(frozen=True)
class RemovalCase:
    name: str
    pods: list[dict[str, Any]]
    at_least: int
    want: list[str]
    spec: dict[str, Any] = field(default_factory=dict)


REMOVAL_CASES = (
    RemovalCase("none asked", [pod("a")], 0, []),
    RemovalCase(
        "unscheduled before scheduled",
        [pod("bound", node="n1"), pod("free")],
        1,
        ["free"],
    ),
    RemovalCase(
        "pending before running",
        [pod("run", "Running", node="n"), pod("pend", "Pending", node="n")],
        1,
        ["pend"],
    ),
    RemovalCase(
        "not ready before ready",
        [pod("r", "Running", node="n", ready=True), pod("nr", "Running", node="n")],
        1,
        ["nr"],
    ),
    RemovalCase(
        "more restarts first",
        [
            pod("calm", "Running", node="n", restarts=0),
            pod("flaky", "Running", node="n", restarts=4),
        ],
        1,
        ["flaky"],
    ),
    RemovalCase(
        "newer first",
        [pod("old", created=10.0), pod("new", created=20.0)],
        1,
        ["new"],
    ),
    RemovalCase(
        "indexed: duplicates, missing and out-of-range indexes go even when not asked",
        [
            pod("i0", index=0, node="n"),
            pod("i0-dup", index=0),
            pod("none"),
            pod("i9", index=9),
            pod("i1", index=1),
        ],
        0,
        ["none", "i0-dup", "i9"],
        {"completionMode": "Indexed", "completions": 3},
    ),
)


@pytest.mark.parametrize("case", REMOVAL_CASES, ids=lambda c: c.name)
def test_active_pods_for_removal(case: RemovalCase) -> None:
    got = active_pods_for_removal({"spec": case.spec}, case.pods, case.at_least)
    assert [p["metadata"]["name"] for p in got] == case.want


def test_clean_uncounted_moves_pods_without_finalizer_into_counters() -> None:
    status: dict[str, Any] = {
        "succeeded": 2,
        "failed": 1,
        "uncountedTerminatedPods": {"succeeded": ["a", "b"], "failed": ["c"]},
    }
    assert clean_uncounted(status, {"b"}) is True
    assert status == {
        "succeeded": 3,
        "failed": 2,
        "uncountedTerminatedPods": {"succeeded": ["b"], "failed": []},
    }
    assert clean_uncounted(status, {"b"}) is False


def test_status_for_write_omits_what_go_omits() -> None:
    job: dict[str, Any] = {
        "metadata": {"name": "j"},
        "status": {
            "active": 0,
            "succeeded": 0,
            "failed": 2,
            "ready": 0,
            "terminating": 0,
            "completedIndexes": "",
            "uncountedTerminatedPods": {"succeeded": [], "failed": []},
        },
    }
    assert status_for_write(job)["status"] == {
        "failed": 2,
        "ready": 0,
        "terminating": 0,
        "uncountedTerminatedPods": {},
    }
    assert job["status"]["active"] == 0  # the caller's copy is left alone
