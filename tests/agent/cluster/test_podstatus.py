"""``pod_status_dict`` and ``rejected_status_dict``: the kubelet's phase, conditions (reasons,
messages, order, transition times) and container statuses for each runtime state."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from numaplane.agent.cluster.podstatus import pod_status_dict, rejected_status_dict
from numaplane.agent.runtime import ContainerStatus, PodStatus

NOW = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def _pod(*, init: list[dict[str, Any]] | None = None, apps: int = 1) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": f"app{i}", "image": "busybox"} for i in range(apps)]
    }
    if init:
        spec["initContainers"] = init
    return {
        "metadata": {"name": "p", "namespace": "default", "uid": "u1"},
        "spec": spec,
        "status": {"phase": "Pending", "qosClass": "BestEffort"},
    }


def _c(name: str, state: str, **kw: Any) -> ContainerStatus:
    return ContainerStatus(name=name, state=state, **kw)


T = time.monotonic()


@dataclass(frozen=True)
class Case:
    name: str
    runtime: PodStatus | None
    conditions: dict[str, tuple[str, str | None, str | None]]
    states: dict[str, str]
    phase: str
    pod: dict[str, Any] = field(default_factory=_pod)
    waiting: dict[str, tuple[str, str]] = field(default_factory=dict)


CASES = [
    Case(
        "running",
        PodStatus("Running", (_c("app0", "running", started_at=T),), ()),
        {
            "PodReadyToStartContainers": ("True", None, None),
            "Initialized": ("True", None, None),
            "Ready": ("True", None, None),
            "ContainersReady": ("True", None, None),
            "PodScheduled": ("True", None, None),
        },
        {"app0": "running"},
        "Running",
    ),
    Case(
        "not started yet",
        None,
        {
            "PodReadyToStartContainers": ("True", None, None),
            "Initialized": ("True", None, None),
            "Ready": ("False", "ContainersNotReady", "containers with unready status: [app0 app1]"),
            "ContainersReady": (
                "False",
                "ContainersNotReady",
                "containers with unready status: [app0 app1]",
            ),
            "PodScheduled": ("True", None, None),
        },
        {"app0": "waiting", "app1": "waiting"},
        "Pending",
        pod=_pod(apps=2),
    ),
    Case(
        "succeeded",
        PodStatus(
            "Succeeded",
            (_c("app0", "terminated", exit_code=0, reason="Completed", finished_at=T),),
            (),
        ),
        {
            "PodReadyToStartContainers": ("True", None, None),
            "Initialized": ("True", "PodCompleted", None),
            "Ready": ("False", "PodCompleted", None),
            "ContainersReady": ("False", "PodCompleted", None),
            "PodScheduled": ("True", None, None),
        },
        {"app0": "terminated"},
        "Succeeded",
    ),
    Case(
        "failed",
        PodStatus("Failed", (_c("app0", "terminated", exit_code=2, reason="Error"),), ()),
        {
            "PodReadyToStartContainers": ("True", None, None),
            "Initialized": ("True", None, None),
            "Ready": ("False", "PodFailed", None),
            "ContainersReady": ("False", "PodFailed", None),
            "PodScheduled": ("True", None, None),
        },
        {"app0": "terminated"},
        "Failed",
    ),
    Case(
        "init container running",
        PodStatus(
            "Pending",
            (_c("app0", "waiting", reason="PodInitializing"),),
            (_c("init", "running", started_at=T),),
        ),
        {
            "PodReadyToStartContainers": ("True", None, None),
            "Initialized": (
                "False",
                "ContainersNotInitialized",
                "containers with incomplete status: [init]",
            ),
            "Ready": ("False", "ContainersNotReady", "containers with unready status: [app0]"),
            "ContainersReady": (
                "False",
                "ContainersNotReady",
                "containers with unready status: [app0]",
            ),
            "PodScheduled": ("True", None, None),
        },
        {"init": "running", "app0": "waiting"},
        "Pending",
        pod=_pod(init=[{"name": "init", "image": "busybox"}]),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_conditions_and_states(case: Case) -> None:
    status = pod_status_dict(
        case.pod, case.runtime, host_ip="10.0.0.1", now=NOW, start_time=NOW, waiting=case.waiting
    )
    assert status["phase"] == case.phase
    got = {
        c["type"]: (c["status"], c.get("reason"), c.get("message")) for c in status["conditions"]
    }
    assert got == case.conditions
    # The kubelet's order.
    assert list(got) == list(case.conditions)
    states = {
        c["name"]: next(iter(c["state"]))
        for c in (*status.get("initContainerStatuses", []), *status["containerStatuses"])
    }
    assert states == case.states
    assert status["hostIP"] == status["podIP"] == "10.0.0.1"
    assert status["startTime"] == "2025-01-02T03:04:05Z"


def test_err_image_pull_waits_with_its_message() -> None:
    status = pod_status_dict(
        _pod(), None, host_ip="h", now=NOW, start_time=None, waiting={"app0": ("ErrImagePull", "m")}
    )
    (container,) = status["containerStatuses"]
    assert container["state"] == {"waiting": {"reason": "ErrImagePull", "message": "m"}}
    assert container["ready"] is False


def test_crash_loop_keeps_the_last_termination() -> None:
    waiting = _c(
        "app0",
        "waiting",
        reason="CrashLoopBackOff",
        message="back-off 10s",
        exit_code=1,
        finished_at=T,
        last_reason="Error",
        restart_count=2,
    )
    status = pod_status_dict(
        _pod(), PodStatus("Running", (waiting,), ()), host_ip="h", now=NOW, start_time=NOW
    )
    (container,) = status["containerStatuses"]
    assert container["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    last = container["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (1, "Error")
    assert container["restartCount"] == 2


def test_a_condition_keeps_its_transition_time_while_its_status_holds() -> None:
    running = PodStatus("Running", (_c("app0", "running", started_at=T),), ())
    first = pod_status_dict(_pod(), running, host_ip="h", now=NOW, start_time=NOW)
    later = NOW + timedelta(minutes=5)
    again = pod_status_dict(_pod(), running, host_ip="h", now=later, start_time=NOW, previous=first)
    assert again == first
    ended = PodStatus("Succeeded", (_c("app0", "terminated", exit_code=0),), ())
    after = pod_status_dict(_pod(), ended, host_ip="h", now=later, start_time=NOW, previous=first)
    times = {c["type"]: c["lastTransitionTime"] for c in after["conditions"]}
    assert times["Ready"] == "2025-01-02T03:09:05Z"
    assert times["PodScheduled"] == "2025-01-02T03:04:05Z"


def test_other_conditions_are_kept() -> None:
    pod = _pod()
    pod["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2020-01-01T00:00:00Z"},
        {"type": "DisruptionTarget", "status": "True", "reason": "x"},
    ]
    status = pod_status_dict(pod, None, host_ip="h", now=NOW, start_time=NOW)
    types = [c["type"] for c in status["conditions"]]
    assert types[-2:] == ["PodScheduled", "DisruptionTarget"]
    assert status["conditions"][-2]["lastTransitionTime"] == "2020-01-01T00:00:00Z"


def test_rejected_status_is_the_kubelets() -> None:
    status = rejected_status_dict(
        _pod(),
        "TopologyAffinityError",
        "Resources cannot be allocated with Topology locality",
        now=NOW,
    )
    assert status == {
        "phase": "Failed",
        "reason": "TopologyAffinityError",
        "message": "Pod was rejected: Resources cannot be allocated with Topology locality",
        "startTime": "2025-01-02T03:04:05Z",
        "qosClass": "BestEffort",
    }
