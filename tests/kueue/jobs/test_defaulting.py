"""Kueue's Job webhook in the API server's create path (``--kueue-job-defaulting``): which new
Jobs are created suspended."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.apiserver.kinds.kueuejob import default_kueue_job


@dataclass(frozen=True)
class Case:
    name: str
    labels: dict[str, str]
    annotations: dict[str, str]
    suspend: bool | None
    want_suspend: bool | None
    want_changed: bool


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
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_default_kueue_job(case: Case) -> None:
    spec: dict[str, Any] = {"template": {}}
    if case.suspend is not None:
        spec["suspend"] = case.suspend
    job: dict[str, Any] = {
        "metadata": {"name": "j", "labels": case.labels, "annotations": case.annotations},
        "spec": spec,
    }
    assert default_kueue_job(job) is case.want_changed
    assert job["spec"].get("suspend") is case.want_suspend
