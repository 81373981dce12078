"""The simulated nodes' pure parts: the duration annotation, the status written for each stage
of a pod's life, the order a restarted simulator takes pods back in, the snapshot files, and
the fake clock the other tests drive them with."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from numaplane.agent.simulated.checkpoint import SnapshotFiles
from numaplane.agent.simulated.nodes import build_nodes
from numaplane.agent.simulated.pods import DURATION_ANNOTATION, Run, SimPod, pod_duration
from numaplane.agent.simulated.restart import initial_order, parse_time, running_times
from numaplane.agent.simulated.simulator import SimulatedNodes, SimulatedOptions
from numaplane.agent.simulated.status import pod_status, rfc3339
from numaplane.api.kubeletconfig import kubelet_config_from_dict
from numaplane.api.manifest import pod_from_dict
from numaplane.kube import KubeClient, KubeConfig
from numaplane.node.snapshot import SnapshotError
from numaplane.testing.fakeclock import FakeClock
from numaplane.topology.presets import PRESETS

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z
CONFIG = kubelet_config_from_dict(
    {
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": "0",
        "topologyManagerPolicy": "single-numa-node",
    }
)


def pod_obj(
    name: str = "p",
    *,
    annotations: dict[str, str] | None = None,
    init: tuple[dict[str, Any], ...] = (),
    restart_policy: str = "Never",
    status: dict[str, Any] | None = None,
    rv: str = "1",
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "resourceVersion": rv,
            "annotations": annotations or {},
        },
        "spec": {
            "nodeName": "sim-0",
            "restartPolicy": restart_policy,
            "initContainers": list(init),
            "containers": [{"name": "app", "image": "sleep"}],
        },
    }
    if status is not None:
        obj["status"] = status
    return obj


# -- duration ------------------------------------------------------------------------------


@dataclass(frozen=True)
class DurationCase:
    name: str
    annotation: str | None
    seconds: float | None
    problem: bool


DURATIONS = [
    DurationCase("absent", None, None, False),
    DurationCase("seconds", "30s", 30.0, False),
    DurationCase("compound", "1m30s", 90.0, False),
    DurationCase("fraction", "1.5h", 5400.0, False),
    DurationCase("zero", "0", 0.0, False),
    DurationCase("no unit", "30", None, True),
    DurationCase("negative", "-5s", None, True),
    DurationCase("garbage", "soon", None, True),
]


@pytest.mark.parametrize("case", DURATIONS, ids=[c.name for c in DURATIONS])
def test_duration_annotation(case: DurationCase) -> None:
    annotations = {} if case.annotation is None else {DURATION_ANNOTATION: case.annotation}
    seconds, problem = pod_duration(pod_obj(annotations=annotations))
    assert seconds == case.seconds
    assert (problem is not None) == case.problem
    if problem:
        assert DURATION_ANNOTATION in problem
        assert "until deleted" in problem


# -- status --------------------------------------------------------------------------------


def running(obj: dict[str, Any], *, at: float = T0) -> SimPod:
    sim = SimPod(obj["metadata"]["uid"], "sim-0", obj)
    sim.start(at)
    return sim


def conditions(status: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    return {c["type"]: (c["status"], c.get("reason")) for c in status["conditions"]}


def test_running_status_has_the_kubelets_conditions_and_times() -> None:
    scheduled = {
        "type": "PodScheduled",
        "status": "True",
        "lastTransitionTime": "2025-01-01T00:00:00Z",
    }
    obj = pod_obj(status={"phase": "Pending", "qosClass": "Guaranteed", "conditions": [scheduled]})
    status = pod_status(running(obj), host_ip="127.0.0.9", now=T0 + 5)
    assert status["phase"] == "Running"
    assert [c["type"] for c in status["conditions"]] == [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ]
    assert all(c["status"] == "True" for c in status["conditions"])
    # The scheduler's condition keeps its time; the kubelet's are new.
    times = {c["type"]: c["lastTransitionTime"] for c in status["conditions"]}
    assert times["PodScheduled"] == "2025-01-01T00:00:00Z"
    assert times["Ready"] == rfc3339(T0 + 5)
    assert status["hostIP"] == status["podIP"] == "127.0.0.9"
    assert status["startTime"] == rfc3339(T0)
    assert status["qosClass"] == "Guaranteed"
    (app,) = status["containerStatuses"]
    assert app["state"] == {"running": {"startedAt": rfc3339(T0)}}
    assert app["ready"]
    assert app["started"]
    assert app["restartCount"] == 0
    assert "initContainerStatuses" not in status


def test_init_containers_complete_at_once_and_sidecars_run() -> None:
    obj = pod_obj(
        init=(
            {"name": "setup", "image": "busybox"},
            {"name": "proxy", "image": "envoy", "restartPolicy": "Always"},
        )
    )
    status = pod_status(running(obj), host_ip="127.0.0.1", now=T0)
    setup, proxy = status["initContainerStatuses"]
    assert setup["state"]["terminated"]["reason"] == "Completed"
    assert setup["state"]["terminated"]["exitCode"] == 0
    assert setup["ready"]
    assert not setup["started"]
    assert "running" in proxy["state"]
    assert proxy["ready"]


def test_succeeded_status() -> None:
    sim = running(pod_obj())
    assert sim.exited(T0 + 30) is True
    status = pod_status(sim, host_ip="127.0.0.1", now=T0 + 30)
    assert status["phase"] == "Succeeded"
    assert conditions(status)["Ready"] == ("False", "PodCompleted")
    assert conditions(status)["ContainersReady"] == ("False", "PodCompleted")
    terminated = status["containerStatuses"][0]["state"]["terminated"]
    assert terminated["exitCode"] == 0
    assert terminated["reason"] == "Completed"
    assert terminated["startedAt"] == rfc3339(T0)
    assert terminated["finishedAt"] == rfc3339(T0 + 30)


def test_restart_policy_always_restarts_with_the_last_run() -> None:
    sim = running(pod_obj(restart_policy="Always"))
    assert sim.exited(T0 + 10) is False
    status = pod_status(sim, host_ip="127.0.0.1", now=T0 + 10)
    assert status["phase"] == "Running"
    (app,) = status["containerStatuses"]
    assert app["restartCount"] == 1
    assert app["state"] == {"running": {"startedAt": rfc3339(T0 + 10)}}
    assert app["lastState"]["terminated"]["finishedAt"] == rfc3339(T0 + 10)
    assert app["lastState"]["terminated"]["containerID"] != app["containerID"]
    assert sim.deadline is None  # no duration: it would run until deleted


def test_rejected_status_is_the_kubelets_reject_pod() -> None:
    sim = SimPod("u", "sim-0", pod_obj(status={"phase": "Pending", "qosClass": "Guaranteed"}))
    sim.reject("TopologyAffinityError", "Resources cannot be allocated with Topology locality")
    status = pod_status(sim, host_ip="127.0.0.1", now=T0)
    assert status == {
        "phase": "Failed",
        "reason": "TopologyAffinityError",
        "message": "Pod was rejected: Resources cannot be allocated with Topology locality",
        "qosClass": "Guaranteed",
        "startTime": rfc3339(T0),
    }


# -- restart order -------------------------------------------------------------------------


def test_initial_order_groups_and_sorts() -> None:
    def with_status(name: str, rv: str, phase: str, start: str | None = None) -> dict[str, Any]:
        status: dict[str, Any] = {"phase": phase}
        if start:
            status["startTime"] = start
        return pod_obj(name, rv=rv, status=status)

    listed = [
        with_status("a", "9", "Pending"),
        with_status("b", "3", "Running", "2026-01-01T00:00:05Z"),
        with_status("c", "4", "Pending"),
        with_status("d", "20", "Running", "2026-01-01T00:00:01Z"),
        with_status("e", "5", "Succeeded"),
        {**pod_obj("elsewhere"), "spec": {"nodeName": "other", "containers": []}},
    ]
    order = initial_order(listed, {"sim-0"})
    names = [[o["metadata"]["name"] for o in group] for group in order.__dict__.values()]
    assert names == [["d", "b"], ["c", "a"], ["e"]]


def test_running_times_from_status() -> None:
    obj = pod_obj(
        status={
            "phase": "Running",
            "startTime": "2026-01-01T00:00:00Z",
            "containerStatuses": [
                {
                    "name": "app",
                    "restartCount": 2,
                    "state": {"running": {"startedAt": "2026-01-01T00:01:00Z"}},
                    "lastState": {
                        "terminated": {
                            "startedAt": "2026-01-01T00:00:30Z",
                            "finishedAt": "2026-01-01T00:01:00Z",
                        }
                    },
                }
            ],
        }
    )
    times = running_times(obj)
    assert times.start_time == T0
    assert times.started_at == T0 + 60
    assert times.restart_count == 2
    assert times.last_run == Run(T0 + 30, T0 + 60)
    assert parse_time("not a time") is None


# -- snapshot files ------------------------------------------------------------------------


def test_snapshot_files_round_trip_and_refuse_another_configuration(tmp_path: Path) -> None:
    client = KubeClient(KubeConfig(server="https://127.0.0.1:1"))
    machines = [PRESETS["dual-socket-ht"].build()]
    files = SnapshotFiles(tmp_path)
    nodes = build_nodes(
        client,
        "sim",
        1,
        machines,
        CONFIG,
        files=files,
        clock=FakeClock().now,
        labels={},
        address="127.0.0.1",
        nrt_interval=0.5,
    )
    engine = nodes["sim-0"].engine
    manifest = pod_obj()
    manifest["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "2", "memory": "1Gi"}}
    pod = pod_from_dict(manifest, "test")
    assert engine.admit(pod).admitted
    files.save("sim-0", engine)
    files.close()

    files = SnapshotFiles(tmp_path)
    again = build_nodes(
        client,
        "sim",
        1,
        machines,
        CONFIG,
        files=files,
        clock=FakeClock().now,
        labels={},
        address="127.0.0.1",
        nrt_interval=0.5,
    )["sim-0"]
    assert again.restored == {pod.uid}
    assert again.engine.cpu_manager.exclusive_cpus(pod.uid, "app") == (
        engine.cpu_manager.exclusive_cpus(pod.uid, "app")
    )
    other = kubelet_config_from_dict({"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,1"})
    with pytest.raises(SnapshotError, match="another machine or kubelet configuration"):
        build_nodes(
            client,
            "sim",
            1,
            machines,
            other,
            files=files,
            clock=FakeClock().now,
            labels={},
            address="127.0.0.1",
            nrt_interval=0.5,
        )
    files.close()


# -- the fake clock ------------------------------------------------------------------------


def test_fake_clock_runs_due_timers_in_order() -> None:
    clock = FakeClock(T0)
    seen: list[tuple[str, float]] = []
    clock.call_at(T0 + 5, lambda: seen.append(("b", clock.now())))
    clock.call_at(T0 + 1, lambda: seen.append(("a", clock.now())))
    cancelled = clock.call_at(T0 + 2, lambda: seen.append(("x", clock.now())))
    cancelled.cancel()
    clock.advance(3)
    assert seen == [("a", T0 + 1)]
    assert clock.now() == T0 + 3
    assert clock.pending == 1
    clock.advance(2)
    assert seen == [("a", T0 + 1), ("b", T0 + 5)]


# -- when an ended pod's resources go back -------------------------------------------------------


def test_an_ended_pod_holds_its_cpus_until_the_watch_shows_it_ended() -> None:
    # The node frees an ended pod at its terminal status's place in the pod watch, the place
    # the scheduler sees it at: freed at the timer, a pod whose binding the watch shows before
    # that status would be admitted on CPUs the scheduler's replica still counts as held.
    clock = FakeClock(T0)
    client = KubeClient(KubeConfig(server="https://127.0.0.1:1"))
    machine = PRESETS["dual-socket-ht"].build()
    options = SimulatedOptions(name="sim", nodes=1, machines=(machine,), config=CONFIG)
    nodes = SimulatedNodes(client, options, clock=clock)
    nodes._take_back()  # nothing listed: events are handled as they come
    engine = nodes.nodes["sim-0"].engine
    free = engine.cpu_manager.state.get_default_cpu_set()
    obj = pod_obj(annotations={DURATION_ANNOTATION: "1s"})
    obj["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "2", "memory": "1Gi"}}
    nodes._event(obj, False)
    held = engine.cpu_manager.state.get_default_cpu_set()
    assert len(free) - len(held) == 2
    clock.advance(2)
    assert nodes.pods["uid-p"].phase == "Succeeded"
    assert engine.cpu_manager.state.get_default_cpu_set() == held
    nodes._event({**obj, "status": {"phase": "Succeeded"}}, False)
    assert engine.cpu_manager.state.get_default_cpu_set() == free
