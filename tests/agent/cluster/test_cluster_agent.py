"""The agent joined to a real ``numaplane apiserver``: pods bound to its node run, report the
kubelet's status, end, get rejected, are deleted gracefully.

Each test starts the API server (a subprocess on a free loopback port, temporary data dir) and
an in-process agent on a synthetic machine with the in-memory cgroup driver: processes are real,
CPUs are the engine's decisions (the driver records them).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from numaplane.kube.config import load_kubeconfig
from numaplane.testing.apiserver import running_apiserver
from tests.agent.agent_fixtures import alive, wait_for
from tests.agent.cluster.cluster_fixtures import NODE, Api, Joined, bound_pod, join

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture
def joined(tmp_path: Path) -> Iterator[Joined]:
    with running_apiserver(tmp_path / "data") as server:
        node = join(server.kubeconfig, tmp_path / "state")
        try:
            yield node
        finally:
            node.close()


def _status(joined: Joined, name: str) -> dict[str, Any]:
    pod = joined.api.pod(name)
    assert pod is not None
    status: dict[str, Any] = pod.get("status") or {}
    return status


def _phase(joined: Joined, name: str, phase: str) -> dict[str, Any] | None:
    status = _status(joined, name)
    return status if status.get("phase") == phase else None


def _conditions(status: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    return {c["type"]: (c["status"], c.get("reason")) for c in status["conditions"]}


def test_a_bound_pod_runs_and_reports_the_kubelets_status(joined: Joined) -> None:
    joined.api.create_pod(bound_pod("web", cpu="1"))
    status = wait_for("Running", lambda: _phase(joined, "web", "Running"))
    assert _conditions(status) == {
        "PodReadyToStartContainers": ("True", None),
        "Initialized": ("True", None),
        "Ready": ("True", None),
        "ContainersReady": ("True", None),
        "PodScheduled": ("True", None),
    }
    (container,) = status["containerStatuses"]
    assert container["ready"] is True
    assert container["started"] is True
    assert "running" in container["state"]
    assert container["restartCount"] == 0
    assert status["hostIP"] == "127.0.0.1"
    assert status["qosClass"] == "Guaranteed"
    (entry,) = joined.agent.pods.values()
    assert entry.runtime is not None
    (proc,) = entry.runtime.records()
    assert alive(proc.pid)
    # The engine gave the pod an exclusive CPU (CPU 0 is reserved).
    placement = joined.agent.node.placement(entry.pod, "main")
    assert len(placement.exclusive_cpus) == 1
    assert 0 not in placement.exclusive_cpus


@pytest.mark.parametrize(
    ("command", "phase", "code", "reason"),
    [
        (("sh", "-c", "exit 0"), "Succeeded", 0, "Completed"),
        (("sh", "-c", "exit 3"), "Failed", 3, "Error"),
    ],
    ids=["exit-0", "exit-3"],
)
def test_a_pod_that_ends_reports_its_exit_and_frees_its_cpus(
    joined: Joined, command: tuple[str, ...], phase: str, code: int, reason: str
) -> None:
    joined.api.create_pod(bound_pod("job", command, cpu="1", restart_policy="Never"))
    status = wait_for(phase, lambda: _phase(joined, "job", phase))
    (container,) = status["containerStatuses"]
    terminated = container["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (code, reason)
    assert _conditions(status)["Ready"] == (
        "False",
        "PodCompleted" if phase == "Succeeded" else "PodFailed",
    )
    # A terminal pod is released: its CPU is back in the shared pool.
    wait_for("the pod released", lambda: not joined.agent.pods)
    assert joined.agent.node.cpu_manager.shared_pool() == joined.agent.all_cpus


def test_restart_policy_on_failure_restarts_the_container(joined: Joined) -> None:
    joined.api.create_pod(bound_pod("flaky", ("sh", "-c", "exit 1"), restart_policy="OnFailure"))

    def restarted() -> dict[str, Any] | None:
        (c,) = _status(joined, "flaky").get("containerStatuses") or [{}]
        waiting = c.get("state", {}).get("waiting", {})
        return c if waiting.get("reason") == "CrashLoopBackOff" else None

    container = wait_for("CrashLoopBackOff", restarted)
    assert container["lastState"]["terminated"]["exitCode"] == 1
    assert _status(joined, "flaky")["phase"] == "Running"


def test_a_pod_the_topology_manager_rejects_fails_with_the_kubelets_reason(
    joined: Joined,
) -> None:
    # 3 exclusive CPUs: more than one NUMA node of the machine holds (single-numa-node).
    joined.api.create_pod(bound_pod("big", cpu="3"))
    status = wait_for("Failed", lambda: _phase(joined, "big", "Failed"))
    assert status["reason"] == "TopologyAffinityError"
    assert status["message"] == (
        "Pod was rejected: Resources cannot be allocated with Topology locality"
    )
    assert not joined.agent.pods

    def event() -> dict[str, Any] | None:
        listed = joined.api.call(lambda c: c.list("v1", "events", "default"))
        found = [e for e in listed["items"] if e["involvedObject"].get("name") == "big"]
        return found[0] if found else None

    recorded = wait_for("the rejection event", event)
    assert (recorded["type"], recorded["reason"]) == ("Warning", "TopologyAffinityError")
    assert recorded["message"] == "Resources cannot be allocated with Topology locality"
    assert recorded["source"]["component"] == "kubelet"


def test_delete_stops_the_pod_frees_it_and_the_pod_goes(joined: Joined) -> None:
    joined.api.create_pod(bound_pod("web", cpu="1", grace=5))
    wait_for("Running", lambda: _phase(joined, "web", "Running"))
    (entry,) = joined.agent.pods.values()
    assert entry.runtime is not None
    (proc,) = entry.runtime.records()
    joined.api.delete_pod("web")
    wait_for("the pod gone", lambda: joined.api.pod("web") is None)
    assert not alive(proc.pid)
    assert not joined.agent.pods
    assert joined.agent.node.cpu_manager.shared_pool() == joined.agent.all_cpus


def test_an_unknown_image_waits_with_err_image_pull(joined: Joined) -> None:
    joined.api.create_pod(bound_pod("odd", None, image="example.com/nothing/here:1"))

    def waiting() -> dict[str, Any] | None:
        (c,) = _status(joined, "odd").get("containerStatuses") or [{}]
        found: dict[str, Any] | None = c.get("state", {}).get("waiting")
        return found if found and found.get("reason") == "ErrImagePull" else None

    state = wait_for("ErrImagePull", waiting)
    assert 'image "example.com/nothing/here:1"' in state["message"]
    assert "--image-table" in state["message"]
    assert _status(joined, "odd")["phase"] == "Pending"


def test_env_from_field_refs_is_resolved(joined: Joined, tmp_path: Path) -> None:
    out = tmp_path / "env.txt"
    env: list[dict[str, Any]] = [
        {"name": "OUT", "value": str(out)},
        {"name": "NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {
            "name": "JOB_COMPLETION_INDEX",
            "valueFrom": {
                "fieldRef": {
                    "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"
                }
            },
        },
    ]
    script = 'echo "$NAME $NODE $JOB_COMPLETION_INDEX" > "$OUT"'
    joined.api.create_pod(
        bound_pod(
            "indexed",
            ("sh", "-c", script),
            restart_policy="Never",
            env=env,
            annotations={"batch.kubernetes.io/job-completion-index": "3"},
        )
    )
    wait_for("Succeeded", lambda: _phase(joined, "indexed", "Succeeded"))
    assert out.read_text().split() == ["indexed", NODE, "3"]


def test_pods_bound_while_the_agent_was_away_are_admitted_in_bind_order(tmp_path: Path) -> None:
    names = ["zeta", "alpha", "mid"]  # the API lists pods by name; they were bound in this order
    with running_apiserver(tmp_path / "data") as server:
        api = Api(load_kubeconfig(server.kubeconfig))
        try:
            for name in names:
                api.create_pod(bound_pod(name, cpu="1"))
        finally:
            api.close()
        node = join(server.kubeconfig, tmp_path / "state")
        try:
            wait_for("three admissions", lambda: len(node.agent.pods) == 3 or None)
            assert [p.name for p in node.agent.node.pods] == names
        finally:
            node.close()
