"""The API status of a simulated pod, as the kubelet writes it (``generateAPIPodStatus``).

- Rejected (the kubelet's ``rejectPod``): phase ``Failed``, the admission's reason and
  ``Pod was rejected: <message>``; nothing else changes.
- Running: conditions ``PodReadyToStartContainers``, ``Initialized``, ``Ready``,
  ``ContainersReady`` all True, then the others the pod had (the scheduler's ``PodScheduled``);
  init containers terminated ``Completed`` (exit 0) at the start, sidecars and app containers
  running since the current run began, with the restart count and the last run as
  ``lastState``; host and pod IPs the node's address (containers share the host network);
  ``startTime``.
- Succeeded: every container terminated ``Completed`` (exit 0); ``Ready`` and
  ``ContainersReady`` False with reason ``PodCompleted``.

A condition whose status did not change keeps its ``lastTransitionTime``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

from numaplane.agent.simulated.pods import RUNNING, SUCCEEDED, SimPod

__all__ = ["CONTAINER_ID_SCHEME", "pod_status", "rfc3339"]

#: ``containerID`` scheme of simulated containers (``<runtime>://<id>`` as a runtime's).
CONTAINER_ID_SCHEME: Final = "numaplane-sim"

_KUBELET_CONDITIONS: Final = (
    "PodReadyToStartContainers",
    "Initialized",
    "Ready",
    "ContainersReady",
)


def rfc3339(moment: float) -> str:
    """Wall seconds as the API writes times (whole seconds, ``Z``)."""
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod_status(sim: SimPod, *, host_ip: str, now: float) -> dict[str, Any]:
    """The ``status`` to write for ``sim`` now (the whole status: a merge patch replaces the
    lists it names)."""
    if sim.rejected:
        return {
            "phase": "Failed",
            "reason": sim.reason,
            "message": f"Pod was rejected: {sim.message}",
        }
    spec = sim.obj.get("spec") or {}
    old: dict[str, Any] = sim.obj.get("status") or {}
    done = sim.phase == SUCCEEDED
    start = sim.start_time if sim.start_time is not None else now
    inits = [
        _init_completed(sim, c, start)
        if c.get("restartPolicy") != "Always"
        else _container(sim, c, done=done)
        for c in spec.get("initContainers") or []
    ]
    apps = [_container(sim, c, done=done) for c in spec.get("containers") or []]
    if done:
        ready: dict[str, Any] = {"status": "False", "reason": "PodCompleted"}
        started: dict[str, Any] = {"status": "False"}
        initialized: dict[str, Any] = {"status": "True", "reason": "PodCompleted"}
    else:
        ready = started = initialized = {"status": "True"}
    conditions = [
        {"type": "PodReadyToStartContainers", **started},
        {"type": "Initialized", **initialized},
        {"type": "Ready", **ready},
        {"type": "ContainersReady", **ready},
    ]
    status: dict[str, Any] = {
        "phase": sim.phase if sim.phase in (RUNNING, SUCCEEDED) else RUNNING,
        "conditions": _with_times(conditions, old.get("conditions") or [], now),
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "podIP": host_ip,
        "podIPs": [{"ip": host_ip}],
        "startTime": rfc3339(start),
        "containerStatuses": apps,
    }
    if inits:
        status["initContainerStatuses"] = inits
    if old.get("qosClass"):
        status["qosClass"] = old["qosClass"]
    return status


def _container_id(sim: SimPod, name: str, run: int) -> str:
    return f"{CONTAINER_ID_SCHEME}://{sim.uid}-{name}-{run}"


def _completed(sim: SimPod, name: str, started: float, finished: float, run: int) -> dict[str, Any]:
    return {
        "exitCode": 0,
        "reason": "Completed",
        "startedAt": rfc3339(started),
        "finishedAt": rfc3339(finished),
        "containerID": _container_id(sim, name, run),
    }


def _init_completed(sim: SimPod, spec: dict[str, Any], start: float) -> dict[str, Any]:
    # An init container completes the moment it starts (the simulation runs nothing).
    name = str(spec.get("name", ""))
    return {
        "name": name,
        "state": {"terminated": _completed(sim, name, start, start, 0)},
        "lastState": {},
        "ready": True,
        "restartCount": 0,
        "image": str(spec.get("image") or ""),
        "imageID": "",
        "containerID": _container_id(sim, name, 0),
        "started": False,
    }


def _container(sim: SimPod, spec: dict[str, Any], *, done: bool) -> dict[str, Any]:
    name = str(spec.get("name", ""))
    started_at = sim.started_at if sim.started_at is not None else 0.0
    runs = sim.restart_count
    if done:
        finished = sim.finished_at if sim.finished_at is not None else started_at
        state: dict[str, Any] = {"terminated": _completed(sim, name, started_at, finished, runs)}
    else:
        state = {"running": {"startedAt": rfc3339(started_at)}}
    last: dict[str, Any] = {}
    if sim.last_run is not None:
        last = {
            "terminated": _completed(
                sim, name, sim.last_run.started_at, sim.last_run.finished_at, runs - 1
            )
        }
    return {
        "name": name,
        "state": state,
        "lastState": last,
        "ready": not done,
        "restartCount": runs,
        "image": str(spec.get("image") or ""),
        "imageID": "",
        "containerID": _container_id(sim, name, runs),
        "started": not done,
    }


def _with_times(
    conditions: list[dict[str, Any]], old: list[dict[str, Any]], now: float
) -> list[dict[str, Any]]:
    # The kubelet's conditions, then the others the pod carries (PodScheduled first, True when
    # absent); each keeps its lastTransitionTime while its status holds.
    before = {c.get("type"): c for c in old if isinstance(c, dict)}
    others = [c for t, c in before.items() if t not in _KUBELET_CONDITIONS and t]
    if "PodScheduled" not in before:
        others.insert(0, {"type": "PodScheduled", "status": "True"})
    others.sort(key=lambda c: c.get("type") != "PodScheduled")
    stamp = rfc3339(now)
    out: list[dict[str, Any]] = []
    for condition in (*conditions, *others):
        previous = before.get(condition["type"])
        moment = previous.get("lastTransitionTime") if previous else None
        if previous is None or previous.get("status") != condition["status"] or not moment:
            moment = stamp
        out.append({**condition, "lastProbeTime": None, "lastTransitionTime": moment})
    return out
