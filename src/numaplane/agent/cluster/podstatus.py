"""A pod's API status, as the kubelet generates it (``generateAPIPodStatus`` and the condition
generators of ``pkg/kubelet/status``).

``pod_status_dict`` turns the runtime's view of an admitted pod into ``status``: the phase;
the conditions ``PodReadyToStartContainers``, ``Initialized``, ``Ready``, ``ContainersReady``
and ``PodScheduled`` in the kubelet's order, with its reasons (``ContainersNotInitialized``,
``ContainersNotReady``, ``PodCompleted``, ``PodFailed``) and messages (``containers with
unready status: [a b]``); each container's state, last state, readiness, restart count and IDs;
the host and pod IPs (containers share the host's network); the QoS class and start time.
Conditions other agents own (a ``DisruptionTarget``, the scheduler's ``PodScheduled``) are kept
from the previous status, and a condition whose status did not change keeps its
``lastTransitionTime``, as the status manager does.

``rejected_status_dict`` is the kubelet's ``rejectPod``: phase ``Failed``, the admission's
reason (``TopologyAffinityError``, ``UnexpectedAdmissionError``...) and ``Pod was rejected: ``
before its message.

Times of the runtime are ``time.monotonic`` readings: ``wall_time`` maps them to UTC.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from numaplane.agent.runtime import ContainerStatus, PodStatus

#: The conditions the kubelet owns (others in a previous status are kept as they were).
KUBELET_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")

#: The container ID scheme numaplane's processes carry (``<type>://<id>``, as a runtime's).
CONTAINER_ID_SCHEME = "numaplane"

_OFFSET = time.time() - time.monotonic()


def wall_time(monotonic: float) -> datetime:
    """The UTC time of a ``time.monotonic`` reading of this process."""
    return datetime.fromtimestamp(monotonic + _OFFSET, UTC)


def rfc3339(moment: datetime) -> str:
    """``moment`` as the API writes times (seconds, ``Z``)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: object) -> datetime | None:
    """An API time (``2024-01-01T00:00:00Z``), ``None`` when absent or malformed."""
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def pod_status_dict(
    pod: Mapping[str, Any],
    runtime_status: PodStatus | None,
    *,
    host_ip: str,
    now: datetime,
    start_time: datetime | None,
    waiting: Mapping[str, tuple[str, str]] | None = None,
    previous: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The status of admitted pod ``pod`` (its API object); ``runtime_status`` ``None``: its
    containers have not started (``waiting`` names those that cannot, with reason and
    message). ``previous`` is the status last written, for the conditions' times."""
    spec = pod.get("spec") or {}
    init_specs: list[Mapping[str, Any]] = list(spec.get("initContainers") or [])
    app_specs: list[Mapping[str, Any]] = list(spec.get("containers") or [])
    phase = runtime_status.phase if runtime_status is not None else "Pending"
    by_name: dict[str, ContainerStatus] = {}
    if runtime_status is not None:
        by_name = {c.name: c for c in (*runtime_status.init_containers, *runtime_status.containers)}
    pending = runtime_status is None or phase == "Pending"
    init_statuses = [
        _container_status(
            pod, c, by_name.get(c.get("name", "")), waiting or {}, init=True, pending=pending
        )
        for c in init_specs
    ]
    app_statuses = [
        _container_status(
            pod, c, by_name.get(c.get("name", "")), waiting or {}, init=False, pending=pending
        )
        for c in app_specs
    ]
    conditions = [
        {"type": "PodReadyToStartContainers", "status": "True"},
        _initialized(init_specs, init_statuses, app_statuses, phase),
        *_readiness(init_specs, app_specs, init_statuses, app_statuses, phase),
    ]
    status: dict[str, Any] = {"phase": phase}
    status["conditions"] = _with_times(conditions, pod, previous, now)
    status["hostIP"] = host_ip
    status["hostIPs"] = [{"ip": host_ip}]
    status["podIP"] = host_ip
    status["podIPs"] = [{"ip": host_ip}]
    status["startTime"] = rfc3339(start_time or now)
    if init_statuses:
        status["initContainerStatuses"] = init_statuses
    status["containerStatuses"] = app_statuses
    qos = (pod.get("status") or {}).get("qosClass")
    if qos:
        status["qosClass"] = qos
    return status


def rejected_status_dict(
    pod: Mapping[str, Any], reason: str, message: str, *, now: datetime
) -> dict[str, Any]:
    """The status of a pod the node refused (the kubelet's ``rejectPod``)."""
    old = pod.get("status") or {}
    status: dict[str, Any] = {
        "phase": "Failed",
        "reason": reason,
        "message": f"Pod was rejected: {message}",
        "startTime": old.get("startTime") or rfc3339(now),
    }
    if old.get("qosClass"):
        status["qosClass"] = old["qosClass"]
    return status


# -- containers -------------------------------------------------------------------------------


def container_id(pod_uid: str, name: str, restart_count: int) -> str:
    """The ID of one run of a container (``numaplane://<pod uid>-<name>-<run>``)."""
    return f"{CONTAINER_ID_SCHEME}://{pod_uid}-{name}-{restart_count}"


def _container_status(
    pod: Mapping[str, Any],
    spec: Mapping[str, Any],
    found: ContainerStatus | None,
    waiting: Mapping[str, tuple[str, str]],
    *,
    init: bool,
    pending: bool,
) -> dict[str, Any]:
    name = str(spec.get("name", ""))
    uid = str((pod.get("metadata") or {}).get("uid", ""))
    sidecar = init and spec.get("restartPolicy") == "Always"
    out: dict[str, Any] = {"name": name}
    restarts = found.restart_count if found is not None else 0
    last: dict[str, Any] = {}
    if found is None:
        reason, message = waiting.get(
            name, ("PodInitializing" if init or pending else "ContainerCreating", "")
        )
        state: dict[str, Any] = {"waiting": _omit({"reason": reason, "message": message})}
    elif found.state == "running":
        state = {"running": _omit({"startedAt": _time(found.started_at)})}
    elif found.state == "terminated":
        state = {"terminated": _terminated(found, uid, name, found.reason)}
    else:
        state = {"waiting": _omit({"reason": found.reason, "message": found.message})}
        if found.finished_at is not None:
            # Waiting to restart: the last run's end is the last state.
            last = {"terminated": _terminated(found, uid, name, found.last_reason, restarts - 1)}
    running = found is not None and found.state == "running"
    if init and not sidecar:
        ready = found is not None and found.state == "terminated" and found.exit_code == 0
    else:
        ready = running
    out["state"] = state
    out["lastState"] = last
    out["ready"] = ready
    out["restartCount"] = restarts
    out["image"] = str(spec.get("image") or "")
    out["imageID"] = ""
    if found is not None and (found.started_at is not None or found.finished_at is not None):
        out["containerID"] = container_id(uid, name, restarts)
    out["started"] = running
    return out


def _terminated(
    found: ContainerStatus, uid: str, name: str, reason: str | None, run: int | None = None
) -> dict[str, Any]:
    code = found.exit_code
    return _omit(
        {
            # An exit status lost across an agent restart reads as the kubelet's unknown (137).
            "exitCode": 137 if code is None else code,
            "reason": reason,
            "message": found.message if run is None else None,
            "startedAt": _time(found.started_at) if run is None else None,
            "finishedAt": _time(found.finished_at),
            "containerID": container_id(uid, name, found.restart_count if run is None else run),
        }
    )


def _time(monotonic: float | None) -> str | None:
    return None if monotonic is None else rfc3339(wall_time(monotonic))


def _omit(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None and v != ""}


# -- conditions -------------------------------------------------------------------------------


def _names(names: Sequence[str]) -> str:
    return "[" + " ".join(names) + "]"


def _initialized(
    init_specs: Sequence[Mapping[str, Any]],
    init_statuses: Sequence[Mapping[str, Any]],
    app_statuses: Sequence[Mapping[str, Any]],
    phase: str,
) -> dict[str, Any]:
    condition: dict[str, Any] = {"type": "Initialized", "status": "True"}
    if phase == "Succeeded":
        return {**condition, "reason": "PodCompleted"}
    if any(s["started"] or "terminated" in s["state"] for s in app_statuses):
        return condition  # a regular container ran: initialized before
    incomplete = [
        str(spec.get("name"))
        for spec, status in zip(init_specs, init_statuses, strict=True)
        if not (status["started"] if spec.get("restartPolicy") == "Always" else status["ready"])
    ]
    if incomplete:
        return {
            "type": "Initialized",
            "status": "False",
            "reason": "ContainersNotInitialized",
            "message": f"containers with incomplete status: {_names(incomplete)}",
        }
    return condition


def _readiness(
    init_specs: Sequence[Mapping[str, Any]],
    app_specs: Sequence[Mapping[str, Any]],
    init_statuses: Sequence[Mapping[str, Any]],
    app_statuses: Sequence[Mapping[str, Any]],
    phase: str,
) -> list[dict[str, Any]]:
    """``Ready`` then ``ContainersReady`` (the kubelet's order)."""
    if phase in ("Succeeded", "Failed"):
        reason = "PodCompleted" if phase == "Succeeded" else "PodFailed"
        ready: dict[str, Any] = {"status": "False", "reason": reason}
    else:
        sidecars = [
            status
            for spec, status in zip(init_specs, init_statuses, strict=True)
            if spec.get("restartPolicy") == "Always"
        ]
        unready = [str(s["name"]) for s in (*sidecars, *app_statuses) if not s["ready"]]
        if unready:
            ready = {
                "status": "False",
                "reason": "ContainersNotReady",
                "message": f"containers with unready status: {_names(unready)}",
            }
        else:
            ready = {"status": "True"}
    return [{"type": "Ready", **ready}, {"type": "ContainersReady", **ready}]


def _with_times(
    conditions: list[dict[str, Any]],
    pod: Mapping[str, Any],
    previous: Mapping[str, Any] | None,
    now: datetime,
) -> list[dict[str, Any]]:
    """The kubelet's conditions, then the others of the pod's status (``PodScheduled`` True
    when none says otherwise); each keeps its previous ``lastTransitionTime`` while its status
    holds."""
    before = {
        c.get("type"): c
        for c in [
            *((pod.get("status") or {}).get("conditions") or []),
            *((previous or {}).get("conditions") or []),
        ]
        if isinstance(c, dict)
    }
    others = [
        dict(c)
        for t, c in before.items()
        if t not in KUBELET_CONDITIONS and isinstance(t, str) and t
    ]
    if not any(c.get("type") == "PodScheduled" for c in others):
        others.insert(0, {"type": "PodScheduled", "status": "True"})
    scheduled = [c for c in others if c.get("type") == "PodScheduled"]
    rest = [c for c in others if c.get("type") != "PodScheduled"]
    out: list[dict[str, Any]] = []
    for condition in (*conditions, *scheduled, *rest):
        old = before.get(condition["type"])
        moment = old.get("lastTransitionTime") if old else None
        if not old or old.get("status") != condition["status"] or not moment:
            moment = rfc3339(now)
        out.append({**condition, "lastProbeTime": None, "lastTransitionTime": moment})
    return out


__all__ = [
    "KUBELET_CONDITIONS",
    "pod_status_dict",
    "rejected_status_dict",
    "wall_time",
]
