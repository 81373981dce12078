"""The node agent joins a second, separate ``numaplane apiserver`` by kubeconfig only (no
process shared with it): its Node registers and turns Ready there and nowhere else, a pod bound
to it runs, and ``kubectl logs`` reaches its output through that API server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from numaplane.testing.apiserver import ENTRY, running_apiserver
from numaplane.testing.cluster import running_cluster
from tests.apiserver.e2e.conftest import Kubectl

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]

NODE = "joined"


def _ready(kubectl: Kubectl, name: str) -> bool:
    done = kubectl.run("get", "node", name, "-o", "json", check=False)
    if done.returncode != 0:
        return False
    conditions = json.loads(done.stdout)["status"].get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def _pod() -> str:
    """A BestEffort pod bound to the joined node by hand (this API server has no scheduler)."""
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "hello"},
            "spec": {
                "nodeName": NODE,
                "terminationGracePeriodSeconds": 1,
                "containers": [
                    {
                        "name": "main",
                        "image": "busybox",
                        "command": ["sh", "-c", "echo joined by kubeconfig; exec sleep 600"],
                    }
                ],
            },
        }
    )


def test_an_agent_joins_a_second_apiserver_by_kubeconfig(tmp_path: Path) -> None:
    with (
        running_cluster(tmp_path / "first") as first,
        running_apiserver(tmp_path / "second") as second,
        (tmp_path / "agent.log").open("wb") as log,
    ):
        agent = subprocess.Popen(
            [
                sys.executable, "-c", ENTRY, "agent", "--kubeconfig", str(second.kubeconfig),
                "--node-name", NODE, "--state-dir", str(tmp_path / "state"),
                "--listen", "127.0.0.1:0", "--stop-pods-on-exit",
            ],
            stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ),
        )  # fmt: skip
        try:
            kubectl = Kubectl(second.kubeconfig)
            deadline = time.monotonic() + 120
            while not _ready(kubectl, NODE):
                assert agent.poll() is None, (tmp_path / "agent.log").read_text()
                assert time.monotonic() < deadline, (tmp_path / "agent.log").read_text()
                time.sleep(0.2)
            assert Kubectl(first.kubeconfig).json("get", "nodes")["items"] == []
            kubectl.out("apply", "-f", "-", stdin=_pod())
            done = kubectl.run(
                "wait", "--for=condition=Ready", "pod/hello", "--timeout=120s", check=False
            )
            assert done.returncode == 0, done.stderr + (tmp_path / "agent.log").read_text()
            assert kubectl.out("logs", "hello") == "joined by kubeconfig\n"
            kubectl.out("delete", "pod", "hello", "--timeout=60s")
        finally:
            agent.send_signal(signal.SIGTERM)
            try:
                agent.wait(timeout=30)
            except subprocess.TimeoutExpired:
                agent.kill()
                agent.wait()
