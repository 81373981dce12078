"""What a restarted agent's pods keep, and the one shape of every pod in /pods.

An adopted pod keeps its NUMA affinity, its admission's explanation and its restart counts
(``numaplane_admissions.json`` and the counts in ``numaplane_processes.json``). Admitted,
rejected, adopted, unstartable pods and bad manifests all have the same keys, and so have all
their containers, in ``pods_view``, over HTTP and in ``numaplane pods -o json``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from numaplane.agent.admissions import ADMISSIONS_FILE
from numaplane.agent.agent import Agent
from numaplane.agent.http import AgentHTTPServer
from numaplane.agent.views import pods_view
from numaplane.cli.main import cli
from tests.agent.agent_fixtures import (
    AgentFactory,
    MemoryDriver,
    abandon,
    alive,
    get_json,
    kill_quietly,
    pod_manifest,
    pod_named,
    wait_for,
    write_pod,
)

#: Every pod's keys in /pods, in order (written out: the test must not read the code's list).
POD_KEYS = [
    "name",
    "namespace",
    "uid",
    "manifest",
    "qosClass",
    "phase",
    "reason",
    "message",
    "containers",
    "admission",
]

#: Every container's keys in /pods, in order.
CONTAINER_KEYS = [
    "name",
    "init",
    "restartable",
    "image",
    "state",
    "reason",
    "message",
    "exitCode",
    "restartCount",
    "pid",
    "cpus",
    "cpuKind",
    "memoryNumaNodes",
    "numaAffinity",
    "devices",
    "deviceEnv",
    "mounts",
    "deviceNodes",
]


def _pod(agent: Agent, name: str) -> dict[str, Any]:
    found = pod_named(pods_view(agent), name)
    assert found is not None, f"no pod {name} in {pods_view(agent)}"
    return dict(found)


def _running_pid(agent: Agent, name: str) -> int | None:
    container = _pod(agent, name)["containers"][0]
    return int(container["pid"]) if container["state"] == "running" else None


def _admitted_uids(state: Path) -> set[str]:
    doc = json.loads((state / ADMISSIONS_FILE).read_text())
    return {entry["podUID"] for entry in doc["admissions"]}


def test_an_adopted_pod_keeps_its_affinity_admission_and_restart_count(
    dirs: tuple[Path, Path],
    make_agent: AgentFactory,
    popens: list[subprocess.Popen[bytes]],
) -> None:
    manifests, state = dirs
    driver = MemoryDriver()
    first = make_agent(driver=driver)
    write_pod(manifests, pod_manifest("pinned", cpu="1"))
    first.sync()
    pid = wait_for("pinned running", lambda: _running_pid(first, "pinned"))
    before = _pod(first, "pinned")
    assert before["containers"][0]["numaAffinity"] is not None
    assert before["admission"]["explanation"]
    first.save_processes()
    abandon(first, popens)
    kill_quietly(pid)
    wait_for("the process gone", lambda: not alive(pid))

    # The process died while no agent ran: the next one restarts it, a restart it counts.
    second = make_agent(driver=driver)
    second.sync()
    new_pid = wait_for("pinned restarted", lambda: _running_pid(second, "pinned"))
    assert _pod(second, "pinned")["containers"][0]["restartCount"] == 1
    second.save_processes()
    abandon(second, popens)

    third = make_agent(driver=driver)
    third.sync()
    after = _pod(third, "pinned")
    (container,) = after["containers"]
    assert (container["pid"], container["restartCount"]) == (new_pid, 1)
    assert container["numaAffinity"] == before["containers"][0]["numaAffinity"]
    assert container["cpus"] == before["containers"][0]["cpus"]
    assert after["admission"] == before["admission"]
    # The affinity is back in the Topology Manager too, as a re-admission would leave it.
    stored = third.node.topology_manager.state.find_affinity(after["uid"], "main")
    assert stored is not None
    assert stored.to_json() == container["numaAffinity"]

    (manifests / "pinned.yaml").unlink()
    third.sync()
    assert after["uid"] not in _admitted_uids(state)


def _check_shapes(pods: list[dict[str, Any]], expected_names: set[str]) -> None:
    assert {p["name"] for p in pods} == expected_names
    for pod in pods:
        assert list(pod) == POD_KEYS, pod["name"]
        for container in pod["containers"]:
            assert list(container) == CONTAINER_KEYS, (pod["name"], container["name"])


def test_every_pod_and_container_has_the_same_keys(
    dirs: tuple[Path, Path],
    make_agent: AgentFactory,
    popens: list[subprocess.Popen[bytes]],
) -> None:
    manifests, _ = dirs
    driver = MemoryDriver()
    first = make_agent(driver=driver)
    write_pod(manifests, pod_manifest("adopted", cpu="1"))
    first.sync()
    wait_for("adopted running", lambda: _running_pid(first, "adopted"))
    first.save_processes()
    abandon(first, popens)

    second = make_agent(driver=driver)
    write_pod(manifests, pod_manifest("admitted"))
    write_pod(manifests, pod_manifest("rejected", cpu="64"))
    write_pod(manifests, pod_manifest("nocmd", ("/no/such/command",)))
    (manifests / "notapod.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n")
    second.sync()
    wait_for("the start error", lambda: _pod(second, "nocmd")["containers"][0]["message"])
    names = {"adopted", "admitted", "rejected", "nocmd", "notapod"}
    rejected = _pod(second, "rejected")
    assert rejected["phase"] == "Failed"
    assert rejected["containers"][0]["cpus"] is None  # unknown, not missing
    _check_shapes(pods_view(second), names)

    server = AgentHTTPServer(second, ("127.0.0.1", 0))
    server.start()
    try:
        port = server.address[1]
        _check_shapes(get_json(port, "/pods"), names)
        result = CliRunner().invoke(cli, ["pods", "--listen", f"127.0.0.1:{port}", "-o", "json"])
        assert result.exit_code == 0, result.output
        _check_shapes(json.loads(result.output), names)
    finally:
        server.stop()
