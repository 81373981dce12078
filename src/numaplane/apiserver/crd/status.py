"""A CustomResourceDefinition's status as the naming and establishing controllers keep it
(``NamesAccepted``, ``Established``, ``acceptedNames``, ``storedVersions``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any


def _condition(
    kind: str, status: bool, reason: str, message: str, now: str, old: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    shown = "True" if status else "False"
    previous = next((c for c in old if c.get("type") == kind), None)
    when = now
    if (
        previous is not None
        and previous.get("status") == shown
        and previous.get("lastTransitionTime")
    ):
        when = str(previous["lastTransitionTime"])
    return {
        "type": kind,
        "status": shown,
        "lastTransitionTime": when,
        "reason": reason,
        "message": message,
    }


def crd_status(
    crd: Mapping[str, Any],
    *,
    now: str = "",
    others: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The status the naming and establishing controllers give ``crd``: ``acceptedNames``,
    conditions ``NamesAccepted`` and ``Established`` (False with ``NameConflict`` /
    ``NotAccepted`` when another CRD of the group holds the plural or kind), and
    ``storedVersions`` (the old ones plus the storage version). ``now`` is an RFC 3339 time
    (the current time when empty); a condition whose status does not change keeps its
    ``lastTransitionTime``."""
    now = now or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    spec = crd.get("spec") or {}
    names = dict(spec.get("names") or {})
    kind = str(names.get("kind", ""))
    if kind:
        names.setdefault("singular", kind.lower())
        names.setdefault("listKind", f"{kind}List")
    old_status = crd.get("status") or {}
    old_conditions = list(old_status.get("conditions") or ())
    group = spec.get("group", "")
    me = (crd.get("metadata") or {}).get("name", "")
    conflict = ""
    for other in others:
        if (other.get("metadata") or {}).get("name", "") == me:
            continue
        other_spec = other.get("spec") or {}
        if other_spec.get("group") != group:
            continue
        taken = (other.get("status") or {}).get("acceptedNames") or other_spec.get("names") or {}
        if names.get("plural") and names.get("plural") == taken.get("plural"):
            conflict = f'"{names["plural"]}" is already in use'
        elif names.get("kind") and names.get("kind") == taken.get("kind"):
            conflict = f'"{names["kind"]}" is already in use'
        if conflict:
            break
    accepted = dict(old_status.get("acceptedNames") or {}) if conflict else names
    if conflict:
        named = _condition("NamesAccepted", False, "NameConflict", conflict, now, old_conditions)
        established = _condition(
            "Established", False, "NotAccepted", "not all names are accepted", now, old_conditions
        )
    else:
        named = _condition(
            "NamesAccepted", True, "NoConflicts", "no conflicts found", now, old_conditions
        )
        established = _condition(
            "Established",
            True,
            "InitialNamesAccepted",
            "the initial names have been accepted",
            now,
            old_conditions,
        )
    stored = list(old_status.get("storedVersions") or ())
    for version in spec.get("versions") or ():
        if version.get("storage") and version.get("name") not in stored:
            stored.append(str(version["name"]))
    others_conditions = [
        c for c in old_conditions if c.get("type") not in ("NamesAccepted", "Established")
    ]
    return {
        "acceptedNames": accepted,
        "conditions": [named, established, *others_conditions],
        "storedVersions": stored,
    }
