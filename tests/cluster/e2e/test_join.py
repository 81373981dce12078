"""The node agent joins a second, separate ``numaplane apiserver`` by kubeconfig only (no
process shared with it): its Node registers and turns Ready there, and nowhere else."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from numaplane.testing.apiserver import ENTRY, running_apiserver
from numaplane.testing.cluster import running_cluster
from tests.apiserver.e2e.conftest import Kubectl

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]


def _ready(kubectl: Kubectl, name: str) -> bool:
    done = kubectl.run("get", "node", name, "-o", "json", check=False)
    if done.returncode != 0:
        return False
    conditions = json.loads(done.stdout)["status"].get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def test_an_agent_joins_a_second_apiserver_by_kubeconfig(tmp_path: Path) -> None:
    with (
        running_cluster(tmp_path / "first") as first,
        running_apiserver(tmp_path / "second") as second,
    ):
        log = (tmp_path / "agent.log").open("wb")
        agent = subprocess.Popen(
            [
                sys.executable, "-c", ENTRY, "agent", "--simulate", "--machine", "dual-socket-ht",
                "--nodes", "1", "--kubeconfig", str(second.kubeconfig), "--node-name", "joined",
                "--state-dir", str(tmp_path / "state"),
            ],
            stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ),
        )  # fmt: skip
        try:
            kubectl = Kubectl(second.kubeconfig)
            deadline = time.monotonic() + 120
            while not _ready(kubectl, "joined-0"):
                assert agent.poll() is None, (tmp_path / "agent.log").read_text()
                assert time.monotonic() < deadline, (tmp_path / "agent.log").read_text()
                time.sleep(0.2)
            assert Kubectl(first.kubeconfig).json("get", "nodes")["items"] == []
        finally:
            agent.send_signal(signal.SIGTERM)
            try:
                agent.wait(timeout=30)
            except subprocess.TimeoutExpired:
                agent.kill()
                agent.wait()
            log.close()
