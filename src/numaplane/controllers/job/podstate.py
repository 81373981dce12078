"""What the Job controller reads from a pod dict, as upstream's controller utilities read it:
active, terminating, ready, finished time (``backoff_utils.go``), the tracking finalizer, the
controller reference and the deletion order of active pods (``controller.ActivePods``)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from numaplane.controllers.job.indexes import pod_index

Pod = dict[str, Any]

TRACKING_FINALIZER: Final = "batch.kubernetes.io/job-tracking"
SUCCEEDED: Final = "Succeeded"
FAILED: Final = "Failed"
_PHASE_ORDER: Final = {"Pending": 0, "Unknown": 1, "Running": 2}


def meta(obj: Mapping[str, Any]) -> dict[str, Any]:
    """``metadata`` (empty when absent)."""
    value = obj.get("metadata")
    return value if isinstance(value, dict) else {}


def status(obj: Mapping[str, Any]) -> dict[str, Any]:
    """``status`` (empty when absent)."""
    value = obj.get("status")
    return value if isinstance(value, dict) else {}


def phase(pod: Mapping[str, Any]) -> str:
    """``status.phase``."""
    return str(status(pod).get("phase") or "")


def uid(obj: Mapping[str, Any]) -> str:
    """``metadata.uid``."""
    return str(meta(obj).get("uid") or "")


def deleting(obj: Mapping[str, Any]) -> bool:
    """Whether ``metadata.deletionTimestamp`` is set."""
    return bool(meta(obj).get("deletionTimestamp"))


def is_active(pod: Mapping[str, Any]) -> bool:
    """``FilterActivePods``: neither finished nor being deleted."""
    return phase(pod) not in (SUCCEEDED, FAILED) and not deleting(pod)


def is_terminating(pod: Mapping[str, Any]) -> bool:
    """``CountTerminatingPods``: being deleted but not finished yet."""
    return deleting(pod) and phase(pod) not in (SUCCEEDED, FAILED)


def _condition(pod: Mapping[str, Any], kind: str) -> dict[str, Any] | None:
    for cond in status(pod).get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == kind:
            return cond
    return None


def is_ready(pod: Mapping[str, Any]) -> bool:
    """``IsPodReady``: the Ready condition is True."""
    cond = _condition(pod, "Ready")
    return cond is not None and cond.get("status") == "True"


def has_tracking_finalizer(pod: Mapping[str, Any]) -> bool:
    """Whether the pod still carries ``batch.kubernetes.io/job-tracking``."""
    return TRACKING_FINALIZER in (meta(pod).get("finalizers") or [])


def controller_ref(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """``metav1.GetControllerOf``: the owner reference with ``controller: true``."""
    for ref in meta(obj).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


def parse_time(value: object) -> float | None:
    """An RFC 3339 timestamp as epoch seconds (``None`` when absent or unreadable)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def format_time(epoch: float) -> str:
    """Epoch seconds as ``metav1.Time`` prints (RFC 3339, whole seconds, UTC)."""
    return datetime.fromtimestamp(int(epoch), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _containers_finished_at(pod: Mapping[str, Any]) -> float | None:
    latest: float | None = None
    for cs in status(pod).get("containerStatuses") or []:
        terminated = ((cs or {}).get("state") or {}).get("terminated")
        finished = parse_time((terminated or {}).get("finishedAt"))
        if finished is None:
            # One container still running (or without a time) means no finish time here.
            return None
        latest = finished if latest is None else max(latest, finished)
    return latest


def finished_time(pod: Mapping[str, Any]) -> float:
    """``getFinishedTime``: the last container's ``finishedAt``, else the time Ready turned
    False, else ``deletionTimestamp`` less the grace period, else the creation time."""
    found = _containers_finished_at(pod)
    if found is not None:
        return found
    ready = _condition(pod, "Ready")
    if ready is not None and ready.get("status") == "False":
        when = parse_time(ready.get("lastTransitionTime"))
        if when is not None:
            return when
    deleted = parse_time(meta(pod).get("deletionTimestamp"))
    if deleted is not None:
        return deleted - float(meta(pod).get("deletionGracePeriodSeconds") or 0)
    return parse_time(meta(pod).get("creationTimestamp")) or 0.0


def _restarts(pod: Mapping[str, Any]) -> int:
    # controller.ActivePods compares the highest restart count of the containers.
    counts = [
        int((cs or {}).get("restartCount") or 0)
        for cs in status(pod).get("containerStatuses") or []
    ]
    return max(counts, default=0)


def _ready_since(pod: Mapping[str, Any]) -> float:
    cond = _condition(pod, "Ready")
    return parse_time((cond or {}).get("lastTransitionTime")) or 0.0


def removal_order_key(pod: Mapping[str, Any]) -> tuple[Any, ...]:
    """``controller.ActivePods``' order: the pods to delete first sort first: unassigned before
    assigned, Pending before Unknown before Running, not ready before ready, ready for less time
    before longer, more restarts before fewer, newer before older."""
    spec = pod.get("spec") or {}
    ready = is_ready(pod)
    created = parse_time(meta(pod).get("creationTimestamp")) or 0.0
    return (
        1 if spec.get("nodeName") else 0,
        _PHASE_ORDER.get(phase(pod), 3),
        1 if ready else 0,
        -_ready_since(pod) if ready else 0.0,
        -_restarts(pod),
        -created,
    )


def by_index(pods: list[Pod]) -> list[Pod]:
    """The pods ordered by completion index (stable; pods without one first)."""
    return sorted(pods, key=pod_index)
