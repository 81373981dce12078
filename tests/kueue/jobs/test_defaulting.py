"""Kueue's Job webhook in the API server's create path (``--kueue-job-defaulting``): which new
Jobs are created suspended."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.apiserver.kinds.kueuejob import (
    admission_check_names,
    default_kueue_job,
    default_managed_by,
)


@dataclass(frozen=True)
class Case:
    name: str
    labels: dict[str, str]
    annotations: dict[str, str]
    suspend: bool | None
    want_suspend: bool | None
    want_changed: bool
    default_local_queue: bool = False
    owner_kind: str = ""
    want_queue: str | None = None


CASES = [
    Case("queue-name label", {"kueue.x-k8s.io/queue-name": "user-queue"}, {}, False, True, True),
    Case("suspend unset", {"kueue.x-k8s.io/queue-name": "user-queue"}, {}, None, True, True),
    Case("already suspended", {"kueue.x-k8s.io/queue-name": "q"}, {}, True, True, False),
    Case(
        "deprecated queue-name annotation",
        {},
        {"kueue.x-k8s.io/queue-name": "user-queue"},
        False,
        True,
        True,
    ),
    Case("no queue name: left alone", {"team": "a"}, {}, False, False, False),
    Case(
        "empty queue name: left alone", {"kueue.x-k8s.io/queue-name": ""}, {}, False, False, False
    ),
    Case(
        "namespace with a default LocalQueue: queue-name default, suspended",
        {},
        {},
        False,
        True,
        True,
        default_local_queue=True,
        want_queue="default",
    ),
    Case(
        "a default LocalQueue does not override the Job's queue",
        {"kueue.x-k8s.io/queue-name": "mine"},
        {},
        False,
        True,
        True,
        default_local_queue=True,
        want_queue="mine",
    ),
    Case(
        "controlled by a Job: no default queue",
        {},
        {},
        False,
        False,
        False,
        default_local_queue=True,
        owner_kind="Job",
    ),
    Case(
        "controlled by a CronJob: default queue",
        {},
        {},
        False,
        True,
        True,
        default_local_queue=True,
        owner_kind="CronJob",
        want_queue="default",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_default_kueue_job(case: Case) -> None:
    spec: dict[str, Any] = {"template": {}}
    if case.suspend is not None:
        spec["suspend"] = case.suspend
    job: dict[str, Any] = {
        "metadata": {"name": "j", "labels": dict(case.labels), "annotations": case.annotations},
        "spec": spec,
    }
    if case.owner_kind:
        job["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "batch/v1",
                "kind": case.owner_kind,
                "name": "o",
                "uid": "u",
                "controller": True,
            }
        ]
    changed = default_kueue_job(job, default_local_queue=case.default_local_queue)
    assert changed is case.want_changed
    assert job["spec"].get("suspend") is case.want_suspend
    assert job["metadata"]["labels"].get("kueue.x-k8s.io/queue-name") == (
        case.want_queue
        if case.want_queue is not None
        else case.labels.get("kueue.x-k8s.io/queue-name")
    )


@dataclass(frozen=True)
class ManagedByCase:
    name: str
    managed_by: str | None
    want: str
    want_changed: bool


MANAGED_BY_CASES = [
    ManagedByCase("unset", None, "kueue.x-k8s.io/multikueue", True),
    ManagedByCase(
        "the Job controller's", "kubernetes.io/job-controller", "kueue.x-k8s.io/multikueue", True
    ),
    ManagedByCase(
        "already MultiKueue: nothing to do",
        "kueue.x-k8s.io/multikueue",
        "kueue.x-k8s.io/multikueue",
        False,
    ),
    ManagedByCase("another controller is kept", "example.com/mine", "example.com/mine", False),
]


@pytest.mark.parametrize("case", MANAGED_BY_CASES, ids=lambda c: c.name)
def test_default_managed_by(case: ManagedByCase) -> None:
    spec: dict[str, Any] = {} if case.managed_by is None else {"managedBy": case.managed_by}
    job = {"metadata": {"name": "j"}, "spec": spec}
    assert default_managed_by(job) is case.want_changed
    assert job["spec"]["managedBy"] == case.want


@dataclass(frozen=True)
class ChecksCase:
    name: str
    spec: dict[str, Any]
    want: list[str]


CHECKS_CASES = [
    ChecksCase("none", {}, []),
    ChecksCase(
        "v1beta2 strategy",
        {
            "admissionChecksStrategy": {
                "admissionChecks": [{"name": "a"}, {"name": "b", "onFlavors": ["f"]}]
            }
        },
        ["a", "b"],
    ),
    ChecksCase("v1beta1 flat list", {"admissionChecks": ["mk"]}, ["mk"]),
]


@pytest.mark.parametrize("case", CHECKS_CASES, ids=lambda c: c.name)
def test_admission_check_names(case: ChecksCase) -> None:
    assert admission_check_names({"spec": case.spec}) == case.want
