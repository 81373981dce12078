"""Raw Workload objects (the API's JSON) the workload-rule tests start from."""

from __future__ import annotations

from typing import Any

from numaplane.kueue.api.conditions import format_time

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def cond(kind: str, status: str, reason: str, message: str = "", at: float = T0) -> dict[str, Any]:
    """A metav1.Condition as the API serves it."""
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": format_time(at),
    }


def admission(cq: str = "cq", flavor: str = "default") -> dict[str, Any]:
    """``status.admission`` of one podSet on one flavor."""
    return {
        "clusterQueue": cq,
        "podSetAssignments": [
            {"name": "main", "flavors": {"cpu": flavor}, "resourceUsage": {"cpu": "1"}, "count": 1}
        ],
    }


def check(name: str, state: str, message: str = "", **extra: Any) -> dict[str, Any]:
    """An AdmissionCheckState."""
    return {
        "name": name,
        "state": state,
        "message": message,
        "lastTransitionTime": format_time(T0),
        **extra,
    }


def raw_wl(
    *conditions: dict[str, Any],
    active: bool = True,
    adm: dict[str, Any] | None = None,
    checks: list[dict[str, Any]] | None = None,
    requeue_state: dict[str, Any] | None = None,
    max_exec: int | None = None,
    **status_extra: Any,
) -> dict[str, Any]:
    """A Workload ``ns/wl`` in queue ``lq`` with the given status."""
    status: dict[str, Any] = {"conditions": list(conditions), **status_extra}
    if adm is not None:
        status["admission"] = adm
    if checks is not None:
        status["admissionChecks"] = checks
    if requeue_state is not None:
        status["requeueState"] = requeue_state
    spec: dict[str, Any] = {"queueName": "lq", "active": active, "podSets": []}
    if max_exec is not None:
        spec["maximumExecutionTimeSeconds"] = max_exec
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"namespace": "ns", "name": "wl", "uid": "uid-wl"},
        "spec": spec,
        "status": status,
    }


def reserved(*extra: dict[str, Any], **kw: Any) -> dict[str, Any]:
    """Quota reserved in ``cq`` at T0."""
    return raw_wl(
        cond("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue cq"),
        *extra,
        adm=kw.pop("adm", admission()),
        **kw,
    )


def admitted(*extra: dict[str, Any], **kw: Any) -> dict[str, Any]:
    """Reserved and admitted at T0."""
    return reserved(cond("Admitted", "True", "Admitted", "The workload is admitted"), *extra, **kw)


def conds(status: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    """type → (status, reason, message) of a status dict."""
    return {
        c["type"]: (c["status"], c["reason"], c["message"]) for c in status.get("conditions", [])
    }
