"""Job conditions (``ensureJobConditionStatus``, the interim and final terminal conditions) and
``managedBy``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.controllers.job import status as st
from numaplane.controllers.job.podstate import format_time

T0, T1 = 1_000.0, 2_000.0


def cond(kind: str, state: str, reason: str, message: str, at: float = T0) -> dict[str, Any]:
    return st.new_condition(kind, state, reason, message, at)


@dataclass(frozen=True)
class EnsureCase:
    name: str
    before: list[dict[str, Any]]
    args: tuple[str, str, str, str]
    changed: bool
    after: list[dict[str, Any]]


SUSPENDED = ("Suspended", "True", "JobSuspended", "Job suspended")
RESUMED = ("Suspended", "False", "JobResumed", "Job resumed")
ENSURE_CASES = (
    EnsureCase("appended when absent", [], SUSPENDED, True, [cond(*SUSPENDED, at=T1)]),
    EnsureCase("nothing to False adds nothing", [], RESUMED, False, []),
    EnsureCase(
        "same condition untouched (times kept)",
        [cond(*SUSPENDED)],
        SUSPENDED,
        False,
        [cond(*SUSPENDED)],
    ),
    EnsureCase(
        "status change replaces it with new times",
        [cond(*SUSPENDED)],
        RESUMED,
        True,
        [cond(*RESUMED, at=T1)],
    ),
    EnsureCase(
        "other conditions kept in place",
        [cond("Complete", "True", "", ""), cond(*SUSPENDED)],
        RESUMED,
        True,
        [cond("Complete", "True", "", ""), cond(*RESUMED, at=T1)],
    ),
)


@pytest.mark.parametrize("case", ENSURE_CASES, ids=lambda c: c.name)
def test_ensure_condition(case: EnsureCase) -> None:
    conds = [dict(c) for c in case.before]
    assert st.ensure_condition(conds, *case.args, T1) is case.changed
    assert conds == case.after


def test_interim_conditions_lead_to_final_ones_with_their_reason() -> None:
    target = st.failure_target(st.REASON_BACKOFF_LIMIT, st.MESSAGE_BACKOFF_LIMIT, T0)
    failed = st.final_of(target, T1)
    assert (failed["type"], failed["status"], failed["reason"], failed["message"]) == (
        "Failed",
        "True",
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
    )
    assert failed["lastTransitionTime"] == format_time(T1)
    met = st.success_criteria_met(T0)
    assert (met["type"], met["reason"], met["message"]) == (
        "SuccessCriteriaMet",
        "CompletionsReached",
        "Reached expected number of succeeded pods",
    )
    complete = st.final_of(met, T1)
    assert (complete["type"], complete["reason"]) == ("Complete", "CompletionsReached")


@dataclass(frozen=True)
class FinishedCase:
    name: str
    conditions: list[dict[str, Any]]
    finished: bool


FINISHED_CASES = (
    FinishedCase("no conditions", [], False),
    FinishedCase("interim only", [cond("FailureTarget", "True", "x", "y")], False),
    FinishedCase("complete", [cond("Complete", "True", "", "")], True),
    FinishedCase("failed", [cond("Failed", "True", "x", "y")], True),
    FinishedCase("complete but False", [cond("Complete", "False", "", "")], False),
)


@pytest.mark.parametrize("case", FINISHED_CASES, ids=lambda c: c.name)
def test_is_finished(case: FinishedCase) -> None:
    assert st.is_finished({"status": {"conditions": case.conditions}}) is case.finished


@pytest.mark.parametrize(
    ("managed_by", "other"),
    [
        (None, None),
        ("kubernetes.io/job-controller", None),
        ("kueue.x-k8s.io/multikueue", "kueue.x-k8s.io/multikueue"),
    ],
    ids=["unset", "the job controller", "multikueue"],
)
def test_managed_by_other(managed_by: str | None, other: str | None) -> None:
    spec = {} if managed_by is None else {"managedBy": managed_by}
    assert st.managed_by_other({"spec": spec}) == other
