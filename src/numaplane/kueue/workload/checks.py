"""Admission check states of a RAW Workload (upstream ``pkg/workload/admissionchecks.go`` and the
workload controller's ``syncAdmissionCheckConditions`` / ``buildAdmissionChecksMessage``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from numaplane.kueue.api.conditions import format_time, parse_time
from numaplane.kueue.api.model import AdmissionCheck, ClusterQueue
from numaplane.kueue.constants import CHECK_PENDING, CHECK_REJECTED, CHECK_RETRY
from numaplane.kueue.workload.status import Status, checks_of, status_copy


def _all_flavors(cq: ClusterQueue) -> set[str]:
    return {fq.name for group in cq.resource_groups for fq in group.flavors}


def _assigned_flavors(status: Mapping[str, Any]) -> set[str]:
    admission = status.get("admission") or {}
    return {
        str(flavor)
        for psa in admission.get("podSetAssignments") or ()
        for flavor in (psa.get("flavors") or {}).values()
    }


def admission_checks_for_workload(status: Mapping[str, Any], cq: ClusterQueue) -> set[str]:
    """Upstream ``AdmissionChecksForWorkload``: with an admission, every check of the
    ClusterQueue's strategy whose ``onFlavors`` (empty: all of the queue's flavors) meets a
    flavor of the admission; before any admission, only the checks that apply to all of the
    queue's flavors (so MultiKueue's check is present from the start)."""
    every = _all_flavors(cq)
    has_admission = status.get("admission") is not None
    assigned = _assigned_flavors(status) if has_admission else set()
    out: set[str] = set()
    for rule in cq.admission_checks:
        flavors = set(rule.on_flavors) or every
        if not rule.on_flavors:
            out.add(rule.name)
        elif has_admission:
            if flavors & assigned:
                out.add(rule.name)
        elif flavors >= every:
            out.add(rule.name)
    return out


def has_all_checks(status: Mapping[str, Any], required: Iterable[str]) -> bool:
    """Upstream ``HasAllChecks``: every required check is present in ``status``."""
    present = {c.get("name") for c in checks_of(status)}
    return all(name in present for name in required)


def sync_admission_checks(
    raw: Mapping[str, Any],
    cq: ClusterQueue,
    admission_checks: Mapping[str, AdmissionCheck] | None = None,
    now: float = 0.0,
) -> Status:
    """Upstream ``syncAdmissionCheckConditions``: add each required check missing from
    ``status.admissionChecks`` as ``Pending``, drop the ones no longer required, sort by name
    (no checks left: the field is removed). ``admission_checks`` is accepted for symmetry with
    the callers: upstream derives the required set from the ClusterQueue alone."""
    del admission_checks
    status = status_copy(raw)
    required = admission_checks_for_workload(status, cq)
    current = checks_of(status)
    if not required:
        status.pop("admissionChecks", None)
        return status
    present = {c.get("name") for c in current}
    merged = [dict(c) for c in current if c.get("name") in required]
    for name in sorted(required - present):
        merged.append(
            {
                "name": name,
                "state": CHECK_PENDING,
                "message": "",
                "lastTransitionTime": format_time(now),
            }
        )
    merged.sort(key=lambda c: str(c.get("name")))
    status["admissionChecks"] = merged
    return status


def checks_in_state(status: Mapping[str, Any], state: str) -> list[dict[str, Any]]:
    """The checks in ``state``, sorted by name."""
    found = [c for c in checks_of(status) if c.get("state") == state]
    return sorted(found, key=lambda c: str(c.get("name")))


def has_retry_checks(status: Mapping[str, Any]) -> bool:
    """A check is in ``Retry``."""
    return any(c.get("state") == CHECK_RETRY for c in checks_of(status))


def has_rejected_checks(status: Mapping[str, Any]) -> bool:
    """A check is in ``Rejected``."""
    return any(c.get("state") == CHECK_REJECTED for c in checks_of(status))


def checks_message(checks: list[dict[str, Any]], state: str) -> str:
    """Upstream ``buildAdmissionChecksMessage``: ``AdmissionCheck in Retry state: "a" (m)``,
    plural with several, sorted by name, joined by "; "."""
    ordered = sorted(checks, key=lambda c: str(c.get("name")))
    parts = []
    for check in ordered:
        quoted = '"' + str(check.get("name", "")) + '"'
        message = check.get("message") or ""
        parts.append(f"{quoted} ({message})" if message else quoted)
    noun = "AdmissionChecks" if len(ordered) > 1 else "AdmissionCheck"
    return f"{noun} in {state} state: {'; '.join(parts)}"


def max_retry_time(status: Mapping[str, Any]) -> float | None:
    """Upstream ``GetMaxRetryTime``: the latest ``lastTransitionTime + requeueAfterSeconds``
    over the checks in ``Retry``; None when none sets a delay."""
    best: float | None = None
    for check in checks_of(status):
        after = check.get("requeueAfterSeconds")
        when = check.get("lastTransitionTime")
        if check.get("state") != CHECK_RETRY or after is None or not when:
            continue
        at = parse_time(when) + float(after)
        if best is None or at > best:
            best = at
    return best
