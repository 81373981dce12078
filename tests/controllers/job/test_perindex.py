"""``backoffLimitPerIndex`` decisions: failed indexes, the counts a replacement carries, the
failed pod kept per index, and each index's own backoff."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from numaplane.controllers.job.backoff import PodFailureBackoff
from numaplane.controllers.job.indexes import parse_intervals
from numaplane.controllers.job.perindex import (
    delayed_deletions,
    failed_indexes,
    is_index_failed,
    new_failure_counts,
    remaining_for_index,
)
from numaplane.controllers.job.podstate import format_time

INDEX = "batch.kubernetes.io/job-completion-index"
COUNT = "batch.kubernetes.io/job-index-failure-count"
IGNORED = "batch.kubernetes.io/job-index-ignored-failure-count"


def job(limit: int = 1, policy: dict[str, Any] | None = None, failed: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "completionMode": "Indexed",
        "completions": 4,
        "backoffLimitPerIndex": limit,
    }
    if policy is not None:
        spec["podFailurePolicy"] = policy
    return {"spec": spec, "status": {"failedIndexes": failed} if failed else {}}


def pod(
    name: str,
    index: int,
    phase: str = "Failed",
    *,
    count: int | str | None = 0,
    ignored: int = 0,
    exit_code: int = 1,
    finished: float = 100.0,
) -> dict[str, Any]:
    annotations = {INDEX: str(index)}
    if count is not None:
        annotations[COUNT] = str(count)
    if ignored:
        annotations[IGNORED] = str(ignored)
    return {
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "annotations": annotations,
            "finalizers": ["batch.kubernetes.io/job-tracking"],
        },
        "status": {
            "phase": phase,
            "containerStatuses": [
                {
                    "name": "main",
                    "state": {
                        "terminated": {"exitCode": exit_code, "finishedAt": format_time(finished)}
                    },
                }
            ],
        },
    }


FAIL_INDEX = {"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [9]}}]}
IGNORE_137 = {"rules": [{"action": "Ignore", "onExitCodes": {"operator": "In", "values": [137]}}]}


@dataclass(frozen=True)
class IndexFailedCase:
    name: str
    job: dict[str, Any]
    pod: dict[str, Any]
    failed: bool


INDEX_FAILED_CASES = (
    IndexFailedCase("first failure retried", job(1), pod("a", 0, count=0), False),
    IndexFailedCase("limit used up", job(1), pod("a", 0, count=1), True),
    IndexFailedCase("limit 0: first failure ends it", job(0), pod("a", 0, count=0), True),
    IndexFailedCase("running pod", job(0), pod("a", 0, "Running"), False),
    IndexFailedCase("FailIndex rule", job(5, FAIL_INDEX), pod("a", 0, exit_code=9), True),
    IndexFailedCase(
        "ignored failure never fails it", job(0, IGNORE_137), pod("a", 0, exit_code=137), False
    ),
    IndexFailedCase("unreadable count reads 0", job(1), pod("a", 0, count="x"), False),
)


@pytest.mark.parametrize("case", INDEX_FAILED_CASES, ids=lambda c: c.name)
def test_is_index_failed(case: IndexFailedCase) -> None:
    assert is_index_failed(case.job, case.pod) is case.failed


def test_failed_indexes_add_to_the_status() -> None:
    pods = [pod("a", 1, count=1), pod("b", 2, count=0), pod("c", 9, count=5)]
    assert str(failed_indexes(job(1, failed="3"), pods)) == "1,3"


@dataclass(frozen=True)
class CountsCase:
    name: str
    job: dict[str, Any]
    replaced: dict[str, Any] | None
    want: tuple[int, int]


COUNTS_CASES = (
    CountsCase("first pod of the index", job(), None, (0, 0)),
    CountsCase("counted failure", job(), pod("a", 0, count=2), (3, 0)),
    CountsCase(
        "ignored failure",
        job(policy=IGNORE_137),
        pod("a", 0, count=1, ignored=1, exit_code=137),
        (1, 2),
    ),
)


@pytest.mark.parametrize("case", COUNTS_CASES, ids=lambda c: c.name)
def test_new_failure_counts(case: CountsCase) -> None:
    assert new_failure_counts(case.job, case.replaced) == case.want


@dataclass(frozen=True)
class DelayedCase:
    name: str
    pods: list[dict[str, Any]]
    want: dict[int, str]
    active: list[dict[str, Any]] = field(default_factory=list)
    succeeded: str = ""
    failed: str = ""


DELAYED_CASES = (
    DelayedCase("the failed pod is kept", [pod("a", 0)], {0: "a"}),
    DelayedCase("the highest count wins", [pod("a", 0, count=1), pod("b", 0, count=0)], {0: "a"}),
    DelayedCase(
        "same count: the later one",
        [pod("a", 0, finished=50.0), pod("b", 0, finished=60.0)],
        {0: "b"},
    ),
    DelayedCase("index running again", [pod("a", 0)], {}, active=[pod("r", 0, "Running")]),
    DelayedCase("index succeeded", [pod("a", 0)], {}, succeeded="0"),
    DelayedCase("index failed for good", [pod("a", 0)], {}, failed="0"),
    DelayedCase("succeeded pods are no candidates", [pod("a", 1, "Succeeded")], {}),
)


@pytest.mark.parametrize("case", DELAYED_CASES, ids=lambda c: c.name)
def test_delayed_deletions(case: DelayedCase) -> None:
    got = delayed_deletions(
        job(),
        case.pods,
        case.active,
        parse_intervals(case.succeeded, 4),
        parse_intervals(case.failed, 4),
        frozenset(),
    )
    assert {ix: p["metadata"]["name"] for ix, p in got.items()} == case.want


def test_each_index_waits_its_own_backoff() -> None:
    backoff = PodFailureBackoff(base_s=10.0, cap_s=600.0)
    assert remaining_for_index(backoff, 100.0, None) == 0.0
    # The pod had 2 failures before it; with its own that makes 3: 40 s from its finish.
    assert remaining_for_index(backoff, 110.0, pod("a", 0, count=2, finished=100.0)) == 30.0
