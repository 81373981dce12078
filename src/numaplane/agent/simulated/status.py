"""The API status of a simulated pod: the agent's status generation (``agent.cluster.podstatus``,
the kubelet's ``generateAPIPodStatus`` and ``rejectPod``) fed with what the simulation runs.

- Rejected: phase ``Failed``, the admission's reason and ``Pod was rejected: <message>``.
- Running: init containers terminated ``Completed`` (exit 0) the moment the pod started,
  sidecars and app containers running since the current run began, with the restart count; a
  restarted container (``restartPolicy: Always``) shows its last run as ``lastState``.
- Succeeded: every container terminated ``Completed`` (exit 0).

The simulation keeps wall times (its clock may be a test's); the status generation takes
``time.monotonic`` readings, so times are handed over through its ``wall_time`` mapping.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from numaplane.agent.cluster.podstatus import (
    container_id,
    pod_status_dict,
    rejected_status_dict,
    wall_time,
)
from numaplane.agent.runtime import ContainerStatus, PodStatus
from numaplane.agent.simulated.pods import RUNNING, SUCCEEDED, SimPod

__all__ = ["pod_status", "rfc3339"]


def rfc3339(moment: float) -> str:
    """Wall seconds as the API writes times (whole seconds, ``Z``)."""
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _monotonic(wall: float) -> float:
    # The reading ``wall_time`` maps back to ``wall``.
    return wall - wall_time(0.0).timestamp()


def _stamp(wall: float) -> datetime:
    return datetime.fromtimestamp(wall, UTC)


def pod_status(sim: SimPod, *, host_ip: str, now: float) -> dict[str, Any]:
    """The ``status`` to write for ``sim`` now (the whole status: a merge patch replaces the
    lists it names)."""
    if sim.rejected:
        return rejected_status_dict(sim.obj, sim.reason or "", sim.message or "", now=_stamp(now))
    spec = sim.obj.get("spec") or {}
    done = sim.phase == SUCCEEDED
    start = sim.start_time if sim.start_time is not None else now
    started = sim.started_at if sim.started_at is not None else start
    finished = sim.finished_at if sim.finished_at is not None else started

    def run(name: str) -> ContainerStatus:
        if done:
            return ContainerStatus(
                name,
                "terminated",
                reason="Completed",
                exit_code=0,
                restart_count=sim.restart_count,
                started_at=_monotonic(started),
                finished_at=_monotonic(finished),
            )
        return ContainerStatus(
            name, "running", restart_count=sim.restart_count, started_at=_monotonic(started)
        )

    inits = tuple(
        run(str(c.get("name", "")))
        if c.get("restartPolicy") == "Always"
        else ContainerStatus(
            str(c.get("name", "")),
            "terminated",
            reason="Completed",
            exit_code=0,
            started_at=_monotonic(start),
            finished_at=_monotonic(start),
        )
        for c in spec.get("initContainers") or []
    )
    apps = tuple(run(str(c.get("name", ""))) for c in spec.get("containers") or [])
    phase = SUCCEEDED if done else RUNNING
    status = pod_status_dict(
        sim.obj,
        PodStatus(phase, apps, inits),
        host_ip=host_ip,
        now=_stamp(now),
        start_time=_stamp(start),
    )
    if sim.last_run is not None:
        # The run before the restart (the generation shows a last state only while waiting).
        for item in status["containerStatuses"]:
            item["lastState"] = {
                "terminated": {
                    "exitCode": 0,
                    "reason": "Completed",
                    "startedAt": rfc3339(sim.last_run.started_at),
                    "finishedAt": rfc3339(sim.last_run.finished_at),
                    "containerID": container_id(sim.uid, item["name"], sim.restart_count - 1),
                }
            }
    return status
