"""The agent's HTTP endpoints and ``numaplane pods`` against them."""

from __future__ import annotations

import json
import urllib.error
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from numaplane.agent.agent import Agent, AgentOptions
from numaplane.agent.http import AgentHTTPServer, parse_listen
from numaplane.cli.main import cli
from numaplane.errors import InputError
from numaplane.topology.discover import load_machine
from tests.agent.agent_fixtures import (
    MemoryDriver,
    get_json,
    get_text,
    kill_quietly,
    kubelet_config,
    pod_manifest,
    pod_named,
    running_pid,
    wait_for,
    write_pod,
)

MACHINE = "sockets=1,numa-per-socket=2,cores-per-numa=2,threads-per-core=1"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Agent, int]]:
    manifests = tmp_path / "pods"
    manifests.mkdir()
    options = AgentOptions(
        machine=load_machine(MACHINE),
        config=kubelet_config(),
        manifest_dir=manifests,
        state_dir=tmp_path / "state",
        device_plugins=False,
    )
    agent = Agent(options, driver=MemoryDriver())
    agent.start()
    server = AgentHTTPServer(agent, ("127.0.0.1", 0))
    server.start()
    try:
        yield agent, server.address[1]
    finally:
        server.stop()
        pids = [r.pid for r in agent.process_records()]
        agent.stop_all_pods()
        agent.close()
        for pid in pids:
            kill_quietly(pid)


def test_endpoints(served: tuple[Agent, int]) -> None:
    agent, port = served
    assert agent.options.manifest_dir is not None
    write_pod(agent.options.manifest_dir, pod_manifest("pinned", cpu="1"))
    write_pod(agent.options.manifest_dir, pod_manifest("huge", cpu="99"))
    agent.sync()
    assert get_text(port, "/healthz") == "ok"
    pods = wait_for(
        "pinned running",
        lambda: running_pid(get_json(port, "/pods"), "pinned") and get_json(port, "/pods"),
    )
    pinned = pod_named(pods, "pinned")
    assert pinned is not None
    assert pinned["phase"] == "Running"
    assert pinned["qosClass"] == "Guaranteed"
    assert pinned["containers"][0]["cpuKind"] == "exclusive"
    assert pinned["admission"]["admitted"] is True
    assert "explanation" in pinned["admission"]
    huge = pod_named(pods, "huge")
    assert huge is not None
    assert huge["phase"] == "Failed"
    assert huge["reason"]
    assert huge["message"]
    topology = get_json(port, "/topology")
    assert [z["type"] for z in topology["zones"]] == ["Node", "Node"]
    assert {r["name"] for r in topology["zones"][0]["resources"]} >= {"cpu", "memory"}
    metrics = get_text(port, "/metrics")
    assert "kubelet_topology_manager_admission_requests_total 2.0" in metrics
    with pytest.raises(urllib.error.HTTPError) as caught:
        get_text(port, "/nope")
    assert caught.value.code == 404
    caught.value.close()


def test_pods_command_prints_table_and_json(served: tuple[Agent, int]) -> None:
    agent, port = served
    assert agent.options.manifest_dir is not None
    write_pod(agent.options.manifest_dir, pod_manifest("pinned", cpu="1"))
    agent.sync()
    runner = CliRunner()
    table = runner.invoke(cli, ["pods", "--listen", f"127.0.0.1:{port}"])
    assert table.exit_code == 0, table.output
    assert "pinned" in table.output
    assert "exclusive" in table.output
    as_json = runner.invoke(cli, ["pods", "--listen", f"127.0.0.1:{port}", "-o", "json"])
    assert as_json.exit_code == 0
    assert [p["name"] for p in json.loads(as_json.output)] == ["pinned"]


def test_pods_command_without_an_agent_fails_clearly() -> None:
    result = CliRunner().invoke(cli, ["pods", "--listen", "127.0.0.1:1"])
    assert result.exit_code != 0
    assert isinstance(result.exception, InputError)
    assert "no agent answers" in str(result.exception)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:10255", ("127.0.0.1", 10255)),
        ("[::1]:80", ("::1", 80)),
        (":9", ("127.0.0.1", 9)),
    ],
    ids=["v4", "v6", "default host"],
)
def test_parse_listen(text: str, expected: tuple[str, int]) -> None:
    assert parse_listen(text) == expected


def test_parse_listen_refuses_garbage() -> None:
    with pytest.raises(InputError):
        parse_listen("localhost")
