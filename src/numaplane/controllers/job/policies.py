"""``spec.podFailurePolicy`` and ``spec.successPolicy`` matched as upstream's
``pod_failure_policy.go`` and ``success_policy.go`` match them. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from numaplane.controllers.job.indexes import Intervals, parse_intervals
from numaplane.controllers.job.podstate import meta, status

IGNORE: Final = "Ignore"
FAIL_JOB: Final = "FailJob"
FAIL_INDEX: Final = "FailIndex"
COUNT: Final = "Count"


@dataclass(frozen=True)
class FailureMatch:
    """What a failed pod means under the policy: ``fail_job_message`` when a FailJob rule
    matched, ``counts`` (False for Ignore), the matched ``action`` (``None``: no rule)."""

    fail_job_message: str | None = None
    counts: bool = True
    action: str | None = None


NO_MATCH: Final = FailureMatch()


def _exit_code_matches(code: int, requirement: Mapping[str, Any]) -> bool:
    values = requirement.get("values") or []
    operator = requirement.get("operator")
    if operator == "In":
        return code in values
    if operator == "NotIn":
        return code not in values
    return False


def _matching_container(
    statuses: list[dict[str, Any]], requirement: Mapping[str, Any]
) -> tuple[str, int] | None:
    wanted = requirement.get("containerName")
    for cs in statuses:
        terminated = ((cs or {}).get("state") or {}).get("terminated")
        if not isinstance(terminated, dict):
            continue  # still terminating: no exit code to match
        if wanted is not None and wanted != cs.get("name"):
            continue
        code = int(terminated.get("exitCode") or 0)
        # Exit code 0 never matches, whatever the operator.
        if code != 0 and _exit_code_matches(code, requirement):
            return str(cs.get("name") or ""), code
    return None


def _matching_condition(pod: Mapping[str, Any], patterns: list[dict[str, Any]]) -> str | None:
    for cond in status(pod).get("conditions") or []:
        for pattern in patterns:
            if cond.get("type") == pattern.get("type") and cond.get("status") == pattern.get(
                "status", "True"
            ):
                return str(cond.get("type"))
    return None


def match_pod_failure_policy(
    policy: Mapping[str, Any] | None, pod: Mapping[str, Any]
) -> FailureMatch:
    """``matchPodFailurePolicy`` for a failed ``pod``: the first rule whose exit codes (regular
    containers first, then init containers) or pod conditions match decides."""
    if policy is None:
        return NO_MATCH
    namespace, name = meta(pod).get("namespace"), meta(pod).get("name")
    pod_status = status(pod)
    for index, rule in enumerate(policy.get("rules") or []):
        action = rule.get("action")
        on_codes = rule.get("onExitCodes")
        patterns = rule.get("onPodConditions")
        if on_codes is not None:
            found = _matching_container(
                pod_status.get("containerStatuses") or [], on_codes
            ) or _matching_container(pod_status.get("initContainerStatuses") or [], on_codes)
            if found is None:
                continue
            detail = (
                f"Container {found[0]} for pod {namespace}/{name} failed with exit code {found[1]}"
            )
        elif patterns is not None:
            kind = _matching_condition(pod, patterns)
            if kind is None:
                continue
            detail = f"Pod {namespace}/{name} has condition {kind}"
        else:
            continue
        if action == IGNORE:
            return FailureMatch(None, False, IGNORE)
        if action in (FAIL_INDEX, COUNT):
            return FailureMatch(None, True, action)
        if action == FAIL_JOB:
            return FailureMatch(
                f"{detail} matching {FAIL_JOB} rule at index {index}", True, FAIL_JOB
            )
    return NO_MATCH


def _overlap_count(rule: Intervals, succeeded: Intervals) -> int:
    # matchSucceededIndexesRule: how many of the rule's indexes succeeded.
    total = 0
    a, b = rule.items, succeeded.items
    i = j = 0
    while i < len(a) and j < len(b):
        overlap = min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]) + 1
        if overlap > 0:
            total += overlap
        if b[j][1] < a[i][1]:
            j += 1
        elif b[j][1] > a[i][1]:
            i += 1
        else:
            i += 1
            j += 1
    return total


def match_success_policy(
    policy: Mapping[str, Any] | None, completions: int, succeeded: Intervals
) -> str | None:
    """``matchSuccessPolicy``: the message (``Matched rules at index N``) of the first rule the
    succeeded indexes satisfy, else ``None``."""
    if policy is None or not succeeded:
        return None
    for index, rule in enumerate(policy.get("rules") or []):
        wanted = rule.get("succeededCount")
        text = rule.get("succeededIndexes")
        if text is not None:
            required = parse_intervals(str(text), completions)
            if not required:
                continue
            hit = _overlap_count(required, succeeded)
            if hit == required.total() or (wanted is not None and hit >= int(wanted)):
                return f"Matched rules at index {index}"
        elif wanted is not None and succeeded.total() >= int(wanted):
            return f"Matched rules at index {index}"
    return None
