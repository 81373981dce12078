"""``podFailurePolicy`` and ``successPolicy`` matching (``pod_failure_policy_test.go``,
``success_policy_test.go``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.controllers.job.indexes import parse_intervals
from numaplane.controllers.job.policies import (
    FailureMatch,
    match_pod_failure_policy,
    match_success_policy,
)


def failed_pod(
    codes: dict[str, int] | None = None,
    init_codes: dict[str, int] | None = None,
    conditions: tuple[tuple[str, str], ...] = (),
) -> dict[str, Any]:
    def statuses(codes: dict[str, int] | None) -> list[dict[str, Any]]:
        return [
            {"name": n, "state": {"terminated": {"exitCode": c}}} for n, c in (codes or {}).items()
        ]

    return {
        "metadata": {"name": "p", "namespace": "ns"},
        "status": {
            "phase": "Failed",
            "containerStatuses": statuses(codes),
            "initContainerStatuses": statuses(init_codes),
            "conditions": [{"type": t, "status": s} for t, s in conditions],
        },
    }


def on_codes(action: str, operator: str, values: list[int], container: str | None = None) -> Any:
    rule: dict[str, Any] = {
        "action": action,
        "onExitCodes": {"operator": operator, "values": values},
    }
    if container is not None:
        rule["onExitCodes"]["containerName"] = container
    return rule


@dataclass(frozen=True)
class FailureCase:
    name: str
    rules: list[Any]
    pod: dict[str, Any]
    want: FailureMatch
    policy: bool = True


FAILURE_CASES = (
    FailureCase("no policy", [], failed_pod({"main": 1}), FailureMatch(), policy=False),
    FailureCase(
        "no rule matches",
        [on_codes("FailJob", "In", [42])],
        failed_pod({"main": 1}),
        FailureMatch(),
    ),
    FailureCase(
        "FailJob on exit code",
        [on_codes("FailJob", "In", [42])],
        failed_pod({"main": 42}),
        FailureMatch(
            "Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 0",
            True,
            "FailJob",
        ),
    ),
    FailureCase(
        "Ignore does not count",
        [on_codes("Ignore", "In", [137])],
        failed_pod({"main": 137}),
        FailureMatch(None, False, "Ignore"),
    ),
    FailureCase(
        "NotIn never matches exit code 0",
        [on_codes("FailJob", "NotIn", [1])],
        failed_pod({"main": 0}),
        FailureMatch(),
    ),
    FailureCase(
        "NotIn matches another code",
        [on_codes("Count", "NotIn", [1])],
        failed_pod({"main": 2}),
        FailureMatch(None, True, "Count"),
    ),
    FailureCase(
        "container name must match",
        [on_codes("FailJob", "In", [5], container="side")],
        failed_pod({"main": 5}),
        FailureMatch(),
    ),
    FailureCase(
        "init containers are looked at too",
        [on_codes("FailJob", "In", [5])],
        failed_pod({"main": 0}, init_codes={"setup": 5}),
        FailureMatch(
            "Container setup for pod ns/p failed with exit code 5 matching FailJob rule at index 0",
            True,
            "FailJob",
        ),
    ),
    FailureCase(
        "first matching rule wins",
        [on_codes("Ignore", "In", [3]), on_codes("FailJob", "In", [3])],
        failed_pod({"main": 3}),
        FailureMatch(None, False, "Ignore"),
    ),
    FailureCase(
        "pod condition rule",
        [
            {
                "action": "FailJob",
                "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
            }
        ],
        failed_pod({"main": 137}, conditions=(("DisruptionTarget", "True"),)),
        FailureMatch(
            "Pod ns/p has condition DisruptionTarget matching FailJob rule at index 0",
            True,
            "FailJob",
        ),
    ),
    FailureCase(
        "pod condition with another status does not match",
        [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}],
        failed_pod({"main": 137}, conditions=(("DisruptionTarget", "False"),)),
        FailureMatch(),
    ),
)


@pytest.mark.parametrize("case", FAILURE_CASES, ids=lambda c: c.name)
def test_match_pod_failure_policy(case: FailureCase) -> None:
    policy = {"rules": case.rules} if case.policy else None
    assert match_pod_failure_policy(policy, case.pod) == case.want


@dataclass(frozen=True)
class SuccessCase:
    name: str
    rules: list[dict[str, Any]]
    succeeded: str
    want: str | None
    completions: int = 10


SUCCESS_CASES = (
    SuccessCase("nothing succeeded", [{"succeededCount": 1}], "", None),
    SuccessCase("count reached", [{"succeededCount": 2}], "3,7", "Matched rules at index 0"),
    SuccessCase("count not reached", [{"succeededCount": 3}], "3,7", None),
    SuccessCase(
        "all listed indexes", [{"succeededIndexes": "0-2"}], "0-2,5", "Matched rules at index 0"
    ),
    SuccessCase("a listed index missing", [{"succeededIndexes": "0-2"}], "0,2,5", None),
    SuccessCase(
        "count within listed indexes",
        [{"succeededIndexes": "0-4", "succeededCount": 2}],
        "1,4,8",
        "Matched rules at index 0",
    ),
    SuccessCase(
        "second rule matches",
        [{"succeededIndexes": "8-9"}, {"succeededCount": 1}],
        "2",
        "Matched rules at index 1",
    ),
    SuccessCase("rule beyond completions ignored", [{"succeededIndexes": "12"}], "1", None),
)


@pytest.mark.parametrize("case", SUCCESS_CASES, ids=lambda c: c.name)
def test_match_success_policy(case: SuccessCase) -> None:
    succeeded = parse_intervals(case.succeeded, case.completions)
    assert match_success_policy({"rules": case.rules}, case.completions, succeeded) == case.want
