"""Reading a table's decisions back from Workload objects (in process or through the API), in
the shape the table states them, so a test compares one dict with one dict."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from numaplane.kueue.resources import resource_value
from tests.kueue.acceptance.cases import QuotaCase

Obj = Mapping[str, Any]
#: An assignment with quantities as integers, sorted: (podSet, resource, flavor, amount).
Normalized = tuple[tuple[str, str, str, int], ...]


def key_of(obj: Obj) -> str:
    """``namespace/name``."""
    meta = obj["metadata"]
    return f"{meta['namespace']}/{meta['name']}"


def condition(obj: Obj, kind: str) -> tuple[str, str, str] | None:
    """(status, reason, message) of condition ``kind``, or None."""
    for found in (obj.get("status") or {}).get("conditions") or []:
        if found.get("type") == kind:
            return (str(found.get("status")), str(found.get("reason")), str(found.get("message")))
    return None


def normalized(
    assignment: Iterable[tuple[str, str, str, str]],
) -> tuple[tuple[str, str, str, int], ...]:
    """An assignment with quantities as Kueue's integers, sorted (``"40"`` = ``"40000m"``)."""
    return tuple(sorted((ps, res, fl, resource_value(res, qty)) for ps, res, fl, qty in assignment))


def reservation(obj: Obj) -> Normalized | None:
    """What ``obj``'s ``status.admission`` holds, normalized; None without one."""
    admission = (obj.get("status") or {}).get("admission")
    if not admission:
        return None
    rows = []
    for psa in admission.get("podSetAssignments") or []:
        usage = psa.get("resourceUsage") or {}
        for res, flavor in (psa.get("flavors") or {}).items():
            rows.append((str(psa["name"]), str(res), str(flavor), str(usage.get(res, "0"))))
    return normalized(rows)


def observed(case: QuotaCase, workloads: Iterable[Obj]) -> dict[str, dict[str, Any]]:
    """The first cycle's decisions as the table states them: new reservations, preemptions
    (from the ``Preempted`` condition) and the pending workloads' ``QuotaReserved=False``."""
    running = {w.key for w in case.workloads if w.holds is not None}
    out: dict[str, dict[str, Any]] = {"reserved": {}, "preempted": {}, "pending": {}}
    for obj in workloads:
        key = key_of(obj)
        held = reservation(obj)
        reserved = condition(obj, "QuotaReserved")
        if key not in running:
            if held is not None and reserved is not None and reserved[0] == "True":
                out["reserved"][key] = held
            elif reserved is not None:
                out["pending"][key] = reserved[1:]
            else:
                out["pending"][key] = ("", "")
        preempted = condition(obj, "Preempted")
        if preempted is not None and preempted[0] == "True":
            out["preempted"][key] = preempted[1:]
    return out


def expected(case: QuotaCase, uids: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """The table's statement of the first cycle; ``uids`` by workload key fill ``{uid}``."""
    uid = ""
    for spec in case.workloads:
        if spec.uid and spec.uid == case.preemptor:
            uid = uids.get(spec.key, spec.uid)
    return {
        "reserved": {k: normalized(v) for k, v in case.reserved.items()},
        "preempted": {k: (r, m.format(uid=uid)) for k, (r, m) in case.preempted.items()},
        "pending": dict(case.pending),
    }


def evicted(workloads: Iterable[Obj]) -> dict[str, tuple[str, str]]:
    """Workloads with ``Evicted=True``: (reason, message)."""
    out = {}
    for obj in workloads:
        found = condition(obj, "Evicted")
        if found is not None and found[0] == "True":
            out[key_of(obj)] = found[1:]
    return out


def reserved_after_release(case: QuotaCase, workloads: Iterable[Obj]) -> dict[str, Normalized]:
    """Reservations held by workloads that were not running at the start."""
    running = {w.key for w in case.workloads if w.holds is not None}
    out: dict[str, Normalized] = {}
    for obj in workloads:
        key = key_of(obj)
        held = reservation(obj)
        if key not in running and held is not None:
            out[key] = held
    return out


def held_by_running(case: QuotaCase, workloads: Iterable[Obj]) -> set[str]:
    """Workloads that were running at the start and still hold their reservation."""
    running = {w.key for w in case.workloads if w.holds is not None}
    return {key_of(o) for o in workloads if key_of(o) in running and reservation(o) is not None}
