"""``metav1.Condition`` lists as apimachinery's ``meta.SetStatusCondition`` edits them, and the
RFC 3339 times they carry. Pure: the clock is the caller's ``now`` (seconds since the epoch)."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any


def format_time(now: float) -> str:
    """``now`` as a Kubernetes ``metav1.Time`` (RFC 3339, UTC, whole seconds)."""
    moment = datetime.datetime.fromtimestamp(int(now), tz=datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str | None) -> float:
    """A ``metav1.Time`` back to seconds since the epoch (0.0 for a missing time)."""
    if not text:
        return 0.0
    stamp = text[:-1] + "+00:00" if text.endswith("Z") else text
    return datetime.datetime.fromisoformat(stamp).timestamp()


def find_condition(
    conditions: Sequence[Mapping[str, Any]] | None, kind: str
) -> Mapping[str, Any] | None:
    """The condition of type ``kind``, or None."""
    for condition in conditions or ():
        if condition.get("type") == kind:
            return condition
    return None


def is_condition_true(conditions: Sequence[Mapping[str, Any]] | None, kind: str) -> bool:
    """Whether ``kind`` is present with status ``True``."""
    found = find_condition(conditions, kind)
    return found is not None and found.get("status") == "True"


def set_condition(
    conditions: list[dict[str, Any]],
    kind: str,
    status: str,
    reason: str,
    message: str,
    now: float,
    generation: int | None = None,
) -> bool:
    """Set condition ``kind`` in place as ``meta.SetStatusCondition`` does: a new condition is
    appended; an existing one keeps its ``lastTransitionTime`` unless its status changes.
    Returns whether anything changed."""
    existing = next((c for c in conditions if c.get("type") == kind), None)
    if existing is None:
        fresh: dict[str, Any] = {
            "type": kind,
            "status": status,
            "reason": reason,
            "message": message,
            "lastTransitionTime": format_time(now),
        }
        if generation is not None:
            fresh["observedGeneration"] = generation
        conditions.append(fresh)
        return True
    changed = False
    if existing.get("status") != status:
        existing["status"] = status
        existing["lastTransitionTime"] = format_time(now)
        changed = True
    for key, value in (("reason", reason), ("message", message)):
        if existing.get(key) != value:
            existing[key] = value
            changed = True
    if generation is not None and existing.get("observedGeneration") != generation:
        existing["observedGeneration"] = generation
        changed = True
    return changed


def remove_condition(conditions: list[dict[str, Any]], kind: str) -> bool:
    """Drop condition ``kind`` in place; whether it was there."""
    before = len(conditions)
    conditions[:] = [c for c in conditions if c.get("type") != kind]
    return len(conditions) != before
