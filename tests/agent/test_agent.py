"""The agent's reconcile loop, in process, on a synthetic machine with an in-memory cgroup driver
(no root needed): admission, release, rejection, restarts, state refusal and reset."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from numaplane.agent.agent import Agent
from numaplane.agent.startup import AgentStateError
from numaplane.agent.views import pods_view, topology_view
from numaplane.api.manifest import pod_from_dict
from numaplane.cpuset import CPUSet
from numaplane.node.admission import Node
from numaplane.node.memorymanager.accounting import reserve
from numaplane.node.statedir import open_node_states
from numaplane.topology.discover import load_machine
from tests.agent.agent_fixtures import (
    STATIC_MEMORY,
    AgentFactory,
    MemoryDriver,
    abandon,
    alive,
    kill_quietly,
    kubelet_config,
    pod_manifest,
    pod_named,
    wait_for,
    write_pod,
)

MACHINE = "sockets=1,numa-per-socket=2,cores-per-numa=2,threads-per-core=1"


def _pod(agent: Agent, name: str) -> dict[str, Any]:
    found = pod_named(pods_view(agent), name)
    assert found is not None, f"no pod {name} in {pods_view(agent)}"
    return dict(found)


def _running(agent: Agent, name: str) -> Callable[[], int | None]:
    def probe() -> int | None:
        container = _pod(agent, name)["containers"][0]
        return int(container["pid"]) if container["state"] == "running" else None

    return probe


def test_exclusive_cpu_leaves_the_shared_pool_and_comes_back(
    dirs: tuple[Path, Path], make_agent: AgentFactory
) -> None:
    manifests, _ = dirs
    driver = MemoryDriver()
    agent = make_agent(driver=driver)
    write_pod(manifests, pod_manifest("shared"))
    agent.sync()
    shared_uid = _pod(agent, "shared")["uid"]
    assert driver.cpus[(shared_uid, "main")] == CPUSet.parse("0-3")

    write_pod(manifests, pod_manifest("pinned", cpu="1", memory="100Mi"))
    agent.sync()
    pinned = _pod(agent, "pinned")
    (container,) = pinned["containers"]
    exclusive = CPUSet.parse(container["cpus"])
    assert container["cpuKind"] == "exclusive"
    assert len(exclusive) == 1
    assert 0 not in exclusive  # reserved
    assert driver.cpus[(pinned["uid"], "main")] == exclusive
    limits = driver.limits[(pinned["uid"], "main")]
    assert limits.cpu_quota_us is None
    assert limits.memory_max == 100 << 20
    # The shared container was moved off the exclusive CPU right after the admission.
    assert driver.cpus[(shared_uid, "main")] == CPUSet.parse("0-3") - exclusive
    wait_for(
        "both pods running", lambda: _running(agent, "pinned")() and _running(agent, "shared")()
    )

    (manifests / "pinned.yaml").unlink()
    agent.sync()
    assert pod_named(pods_view(agent), "pinned") is None
    assert driver.cpus[(shared_uid, "main")] == CPUSet.parse("0-3")
    assert pinned["uid"] not in driver.pods


def test_rejected_pod_keeps_its_reason_and_is_retried_only_when_changed(
    dirs: tuple[Path, Path], make_agent: AgentFactory
) -> None:
    manifests, _ = dirs
    agent = make_agent()
    write_pod(manifests, pod_manifest("huge", cpu="64"))
    write_pod(manifests, pod_manifest("ok"))
    agent.sync()
    huge = _pod(agent, "huge")
    assert huge["phase"] == "Failed"
    assert huge["reason"]
    assert huge["message"]
    requests = agent.node.registry.get_sample_value(
        "kubelet_topology_manager_admission_requests_total"
    )
    agent.sync()
    agent.sync()
    assert (
        agent.node.registry.get_sample_value("kubelet_topology_manager_admission_requests_total")
        == requests
    )
    write_pod(manifests, pod_manifest("huge", cpu="1"))
    agent.sync()
    assert _pod(agent, "huge")["containers"][0]["cpuKind"] == "exclusive"
    assert _pod(agent, "ok")["phase"] in ("Pending", "Running")


def test_bad_manifest_and_missing_command_are_reported(
    dirs: tuple[Path, Path], make_agent: AgentFactory
) -> None:
    manifests, _ = dirs
    agent = make_agent()
    (manifests / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    write_pod(manifests, pod_manifest("nocmd", ("/no/such/command",)))
    write_pod(manifests, pod_manifest("good"))
    agent.sync()
    bad = _pod(agent, "cm")
    assert bad["reason"] == "InvalidManifest"
    assert "ConfigMap" in bad["message"]

    def start_error() -> str | None:
        container = _pod(agent, "nocmd")["containers"][0]
        return container["reason"] if container["state"] != "running" else None

    reason = wait_for("the start error", lambda: _pod(agent, "nocmd")["containers"][0]["reason"])
    assert reason in ("StartError", "CrashLoopBackOff"), start_error()
    wait_for("the good pod", _running(agent, "good"))


def test_a_restarted_agent_adopts_processes_and_cpus(
    dirs: tuple[Path, Path],
    make_agent: AgentFactory,
    popens: list[subprocess.Popen[bytes]],
) -> None:
    manifests, _ = dirs
    driver = MemoryDriver()
    first = make_agent(driver=driver)
    write_pod(manifests, pod_manifest("pinned", cpu="1"))
    write_pod(manifests, pod_manifest("shared"))
    first.sync()
    pid = wait_for("pinned running", _running(first, "pinned"))
    shared_pid = wait_for("shared running", _running(first, "shared"))
    cpus = _pod(first, "pinned")["containers"][0]["cpus"]
    first.save_processes()
    abandon(first, popens)  # the pods keep running; only the next agent may stop them

    second = make_agent(driver=driver)
    second.sync()
    pinned = _pod(second, "pinned")["containers"][0]
    assert (pinned["pid"], pinned["cpus"], pinned["restartCount"]) == (pid, cpus, 0)
    assert _pod(second, "shared")["containers"][0]["pid"] == shared_pid
    # A new pod cannot get the CPU the adopted one holds.
    write_pod(manifests, pod_manifest("another", cpu="1"))
    second.sync()
    assert _pod(second, "another")["containers"][0]["cpus"] != cpus


def test_pod_whose_process_died_while_down_restarts_on_its_cpus(
    dirs: tuple[Path, Path],
    make_agent: AgentFactory,
    popens: list[subprocess.Popen[bytes]],
) -> None:
    manifests, _ = dirs
    driver = MemoryDriver()
    first = make_agent(driver=driver)
    write_pod(manifests, pod_manifest("pinned", cpu="1"))
    first.sync()
    pid = wait_for("pinned running", _running(first, "pinned"))
    cpus = _pod(first, "pinned")["containers"][0]["cpus"]
    first.save_processes()
    abandon(first, popens)
    kill_quietly(pid)
    wait_for("the process gone", lambda: not alive(pid))

    second = make_agent(driver=driver)
    second.sync()
    new_pid = wait_for("restarted", _running(second, "pinned"))
    assert new_pid != pid
    assert _pod(second, "pinned")["containers"][0]["cpus"] == cpus


def test_removed_manifest_while_down_is_released_at_start(
    dirs: tuple[Path, Path],
    make_agent: AgentFactory,
    popens: list[subprocess.Popen[bytes]],
) -> None:
    manifests, _ = dirs
    first = make_agent()
    path = write_pod(manifests, pod_manifest("pinned", cpu="1"))
    first.sync()
    pid = wait_for("pinned running", _running(first, "pinned"))
    first.save_processes()
    abandon(first, popens)
    path.unlink()
    second = make_agent()
    second.sync()
    assert second.pods == {}
    assert second.node.cpu_manager.exclusive_assignments() == {}
    wait_for("the process stopped", lambda: not alive(pid))


def test_stale_allocations_of_unrecorded_pods_are_dropped(
    dirs: tuple[Path, Path], make_agent: AgentFactory
) -> None:
    """A crash after the checkpoints but before the pod records leaks nothing."""
    manifests, state = dirs
    first = make_agent()
    write_pod(manifests, pod_manifest("pinned", cpu="1"))
    first.sync()
    first.stop_all_pods()
    first.close()
    # An admission that reached the checkpoints but not the pod records (a crash between).
    config = kubelet_config()
    node = Node(load_machine(MACHINE), config, states=open_node_states(state, "static", "None"))
    node.admit(pod_from_dict(pod_manifest("ghost", cpu="2"), "<test>"))
    (manifests / "pinned.yaml").unlink()
    second = make_agent()
    assert second.node.cpu_manager.exclusive_assignments() == {}
    assert second.node.cpu_manager.shared_pool() == CPUSet.parse("0-3")


def test_corrupt_checkpoint_and_changed_policy_refuse_to_start(
    dirs: tuple[Path, Path], make_agent: AgentFactory
) -> None:
    _, state = dirs
    make_agent().close()
    path = state / "cpu_manager_state"
    good = path.read_text()
    path.write_text(good.replace('"checksum":', '"checksum":1'))
    with pytest.raises(AgentStateError) as caught:
        make_agent()
    assert caught.value.source == str(path)
    assert "\n" not in str(caught.value)
    path.write_text(good)
    with pytest.raises(AgentStateError) as caught:
        make_agent(config=kubelet_config(cpuManagerPolicy="none", reservedSystemCPUs=None))
    assert caught.value.source == str(path)


def test_reset_state_stops_recorded_processes_and_clears_the_files(
    dirs: tuple[Path, Path],
    make_agent: AgentFactory,
    popens: list[subprocess.Popen[bytes]],
) -> None:
    manifests, state = dirs
    first = make_agent()
    write_pod(manifests, pod_manifest("pinned", cpu="1"))
    first.sync()
    pid = wait_for("pinned running", _running(first, "pinned"))
    first.save_processes()
    abandon(first, popens)
    (state / "cpu_manager_state").write_text("garbage")
    (state / "numaplane_rejections.json").write_text("{}")
    os.remove(manifests / "pinned.yaml")
    second = make_agent(
        config=kubelet_config(cpuManagerPolicy="none", reservedSystemCPUs=None), reset_state=True
    )
    assert not alive(pid)
    assert second.pods == {}
    assert second.node.pods == ()
    assert "garbage" not in (state / "cpu_manager_state").read_text()
    assert not (state / "numaplane_rejections.json").exists()


def test_topology_view_counts_exclusive_cpus(
    dirs: tuple[Path, Path], make_agent: AgentFactory
) -> None:
    manifests, _ = dirs
    agent = make_agent()
    write_pod(manifests, pod_manifest("pinned", cpu="1"))
    agent.sync()
    doc = topology_view(agent)
    assert [z["name"] for z in doc["zones"]] == ["node-0", "node-1"]
    cpu = {z["name"]: next(r for r in z["resources"] if r["name"] == "cpu") for z in doc["zones"]}
    assert cpu["node-0"]["capacity"] == "2"
    assert cpu["node-0"]["allocatable"] == "1"  # CPU 0 is reserved
    available = sum(int(c["available"]) for c in cpu.values())
    assert available == 2  # 3 allocatable, 1 exclusive


def test_a_torn_memory_checkpoint_is_mended_at_start(
    dirs: tuple[Path, Path],
    make_agent: AgentFactory,
    popens: list[subprocess.Popen[bytes]],
) -> None:
    manifests, state = dirs
    config = kubelet_config(**STATIC_MEMORY)
    first = make_agent(config=config)
    write_pod(manifests, pod_manifest("pinned", cpu="1", memory="1Gi"))
    first.sync()
    wait_for("pinned running", _running(first, "pinned"))
    expected = dict(first.node.memory_manager.state.get_machine_state())
    first.save_processes()
    abandon(first, popens)
    # An admission killed between its two memory writes: memory taken, no blocks recorded.
    states = open_node_states(state, "static", "Static")
    states.memory.set_machine_state(reserve(expected, (1,), "memory", 2 << 30))

    second = make_agent(config=config)
    assert dict(second.node.memory_manager.state.get_machine_state()) == expected
    assert _pod(second, "pinned")["containers"][0]["memoryNumaNodes"] is not None
