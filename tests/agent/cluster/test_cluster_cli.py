"""``numaplane agent --kubeconfig`` on this host against a real ``numaplane apiserver``: the
Node registers with the agent's port as its kubelet endpoint, a bound pod runs on its
exclusive CPU, its log is served at the kubelet's path, the agent survives SIGKILL without
running any pod twice (the node lifecycle controller shows the node NotReady meanwhile, Ready
again once the agent is back), and a deleted pod is stopped and freed.

Real cgroups and processes (root, a writable cpuset hierarchy): the set-up and clean-up of
``tests.agent.test_e2e`` (marked processes, the test's own cgroup parent).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from numaplane.kube.client import KubeClient
from numaplane.kube.config import load_kubeconfig
from numaplane.kube.errors import ApiError
from numaplane.testing.apiserver import ENTRY, running_apiserver
from tests.agent.agent_fixtures import alive, cpus_allowed, wait_for
from tests.agent.cluster.cluster_fixtures import Api, bound_pod
from tests.agent.test_e2e import Host, host, new_host
from tests.agent.test_e2e import pytestmark as e2e_marks

pytestmark = [*e2e_marks, pytest.mark.slow, pytest.mark.timeout(360)]

__all__ = ["host", "new_host"]  # fixtures, used by name

NODE = "cli-node"
#: Above the agent's lease renewal period (10 s of the kubelet's 40 s lease), so a live agent
#: never looks silent, and short enough for a test.
GRACE = "15s"


def _logs(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_the_agent_joins_runs_survives_sigkill_and_deletes(host: Host, tmp_path: Path) -> None:
    log = tmp_path / "controllers.log"
    with running_apiserver(tmp_path / "data") as server, log.open("wb") as log_file:
        api = Api(load_kubeconfig(server.kubeconfig))
        # The node lifecycle controller marks the node NotReady while its agent is away.
        command = [sys.executable, "-c", ENTRY, "controllers", "--kubeconfig"]
        command += [str(server.kubeconfig), "--controllers", "nodelifecycle", "--no-leader-elect"]
        command += ["--node-monitor-grace-period", GRACE]
        lifecycle = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log_file)
        try:
            join = ("--kubeconfig", str(server.kubeconfig), "--node-name", NODE)
            agent = host.start(*join)
            node = wait_for("the Node", lambda: _node(api))
            assert node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"] == host.port
            env = [{"name": "NPTEST_MARKER", "value": host.marker}]
            script = "echo hello; exec sleep 600"
            pod = bound_pod("web", ("sh", "-c", script), cpu="1", env=env, node=NODE)
            api.create_pod(pod)

            def running() -> dict[str, Any] | None:
                found = api.pod("web")
                status = (found or {}).get("status") or {}
                return status if status.get("phase") == "Running" else None

            wait_for("Running", running)
            (pid,) = wait_for("the process", lambda: host.marked() or None)
            cpus = cpus_allowed(pid)
            assert len(cpus) == 1
            assert 0 not in cpus  # reserved

            status, text = wait_for(
                "the log",
                lambda: (r := _logs(host.port, "/containerLogs/default/web/main"))[1] and r,
            )
            assert (status, text) == (200, "hello\n")
            missing = _logs(host.port, "/containerLogs/default/web/other")
            assert missing[0] == 400
            previous = _logs(host.port, "/containerLogs/default/web/main?previous=true")
            assert previous[0] == 400

            wait_for("the node Ready", lambda: _ready(api) == "True", timeout=60)

            # SIGKILL: the node goes NotReady, the pod keeps its process and CPU; the next
            # agent adopts it and the node is Ready again.
            agent.send_signal(signal.SIGKILL)
            agent.wait(10)
            wait_for("the node NotReady", lambda: _ready(api) == "Unknown", timeout=90)
            assert host.marked() == {pid}
            assert cpus_allowed(pid) == cpus
            host.start(*join)
            wait_for("the node Ready again", lambda: _ready(api) == "True", timeout=60)
            wait_for("Running again", running)
            assert host.marked() == {pid}
            assert cpus_allowed(pid) == cpus
            (container,) = (api.pod("web") or {})["status"]["containerStatuses"]
            assert container["restartCount"] == 0

            api.delete_pod("web")
            wait_for("the pod gone", lambda: api.pod("web") is None)
            assert not alive(pid)
        finally:
            lifecycle.terminate()
            lifecycle.wait(30)
            api.close()


def _ready(api: Api) -> str | None:
    """The status of the Node's Ready condition (``True``, ``False``, ``Unknown``)."""
    node = _node(api) or {}
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return str(condition.get("status"))
    return None


def _node(api: Api) -> dict[str, Any] | None:
    async def get(client: KubeClient) -> dict[str, Any] | None:
        try:
            found: dict[str, Any] = await client.get("v1", "nodes", NODE)
        except ApiError as err:
            if err.is_not_found:
                return None
            raise
        return found

    return api.call(get)
