"""The pod-failure backoff (``backoff_utils.go``): delays, what is left of them, and the record
advanced by newly finished pods."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.controllers.job.backoff import BackoffRecord, PodFailureBackoff, next_record
from numaplane.controllers.job.podstate import format_time

UPSTREAM = PodFailureBackoff()


@dataclass(frozen=True)
class DelayCase:
    name: str
    failures: int
    want: float


DELAY_CASES = (
    DelayCase("no failure", 0, 0.0),
    DelayCase("first failure: 10s", 1, 10.0),
    DelayCase("second: 20s", 2, 20.0),
    DelayCase("sixth: 320s", 6, 320.0),
    DelayCase("seventh: capped at 10 minutes", 7, 600.0),
    DelayCase("many: still capped", 50, 600.0),
)


@pytest.mark.parametrize("case", DELAY_CASES, ids=lambda c: c.name)
def test_delay_doubles_up_to_the_cap(case: DelayCase) -> None:
    assert UPSTREAM.delay(case.failures) == case.want


@dataclass(frozen=True)
class RemainingCase:
    name: str
    failures: int
    last_failure: float | None
    now: float
    want: float


REMAINING_CASES = (
    RemainingCase("no failures", 0, 100.0, 100.0, 0.0),
    RemainingCase("no failure time", 2, None, 100.0, 0.0),
    RemainingCase("just failed", 1, 100.0, 100.0, 10.0),
    RemainingCase("part waited", 2, 100.0, 105.0, 15.0),
    RemainingCase("waited out", 1, 100.0, 111.0, 0.0),
    RemainingCase("exactly at the end", 1, 100.0, 110.0, 0.0),
)


@pytest.mark.parametrize("case", REMAINING_CASES, ids=lambda c: c.name)
def test_remaining(case: RemainingCase) -> None:
    assert UPSTREAM.remaining(case.failures, case.last_failure, case.now) == case.want


def finished_pod(at: float) -> dict[str, Any]:
    stamp = format_time(at)
    return {
        "metadata": {"creationTimestamp": format_time(0)},
        "status": {"containerStatuses": [{"state": {"terminated": {"finishedAt": stamp}}}]},
    }


@dataclass(frozen=True)
class RecordCase:
    name: str
    previous: BackoffRecord
    succeeded: tuple[float, ...]
    failed: tuple[float, ...]
    want: BackoffRecord


RECORD_CASES = (
    RecordCase("nothing new", BackoffRecord("k", 2, 50.0), (), (), BackoffRecord("k", 2, 50.0)),
    RecordCase(
        "failures add up, latest time kept",
        BackoffRecord("k", 1, 50.0),
        (),
        (70.0, 60.0),
        BackoffRecord("k", 3, 70.0),
    ),
    RecordCase("a success resets", BackoffRecord("k", 4, 50.0), (80.0,), (), BackoffRecord("k")),
    RecordCase(
        "only failures after the last success count",
        BackoffRecord("k", 4, 50.0),
        (80.0, 60.0),
        (70.0, 90.0, 95.0),
        BackoffRecord("k", 2, 95.0),
    ),
    RecordCase(
        "failure at the success's second does not count",
        BackoffRecord("k"),
        (80.0,),
        (80.0,),
        BackoffRecord("k"),
    ),
)


@pytest.mark.parametrize("case", RECORD_CASES, ids=lambda c: c.name)
def test_next_record(case: RecordCase) -> None:
    got = next_record(
        case.previous,
        [finished_pod(t) for t in case.succeeded],
        [finished_pod(t) for t in case.failed],
    )
    assert got == case.want
