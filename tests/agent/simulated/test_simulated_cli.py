"""``numaplane agent --simulate`` as users run it: two nodes cycling over two machines join a
real ``numaplane apiserver``, run a bound pod, and stop on SIGTERM; a missing kubeconfig is one
line and exit 2."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from numaplane.testing.apiserver import ENTRY, running_apiserver

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

KUBELET = """\
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0"
topologyManagerPolicy: single-numa-node
"""


def numaplane(*args: str, **kw: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", ENTRY, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ},
        **kw,
    )


def kubectl(kubeconfig: Path, *args: str) -> Any:
    out = subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), *args, "-o", "json"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return json.loads(out.stdout)


def test_simulate_without_kubeconfig_is_one_line() -> None:
    process = numaplane("agent", "--simulate", "--machine", "dual-socket-ht")
    _, err = process.communicate(timeout=60)
    assert process.returncode == 2
    assert err.strip().splitlines() == [
        "error: --simulate: needs --kubeconfig (the cluster the nodes join)"
    ]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_simulated_nodes_join_run_a_pod_and_stop(tmp_path: Path) -> None:
    config = tmp_path / "kubelet.yaml"
    config.write_text(KUBELET)
    with running_apiserver(tmp_path / "data") as server:
        process = numaplane(
            "agent",
            "--simulate",
            "--kubeconfig",
            str(server.kubeconfig),
            "--node-name",
            "cli",
            "--nodes",
            "2",
            "--machine",
            "dual-socket-ht",
            "--machine",
            "dual-socket-multi-numa",
            "-c",
            str(config),
            "--state-dir",
            str(tmp_path / "sim"),
        )
        try:
            assert process.stderr is not None
            line = process.stderr.readline()
            assert "2 simulated nodes ready: cli-0, cli-1" in line, line
            nodes = kubectl(server.kubeconfig, "get", "nodes", "-l", "numaplane.io/simulated=true")
            capacity = {
                n["metadata"]["name"]: n["status"]["capacity"]["cpu"] for n in nodes["items"]
            }
            assert capacity == {"cli-0": "12", "cli-1": "80"}
            pod = tmp_path / "pod.json"
            pod.write_text(
                json.dumps(
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": {"name": "p", "namespace": "default"},
                        "spec": {
                            "nodeName": "cli-1",
                            "containers": [
                                {
                                    "name": "c",
                                    "image": "sleep",
                                    "resources": {"limits": {"cpu": "4", "memory": "1Gi"}},
                                }
                            ],
                        },
                    }
                )
            )
            kubectl(server.kubeconfig, "apply", "-f", str(pod))
            phase = ""
            while phase != "Running":
                phase = kubectl(server.kubeconfig, "get", "pod", "p")["status"].get("phase", "")
                time.sleep(0.1)
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=60) == 0
            # The state directory holds the snapshot of the node that admitted a pod.
            uid = kubectl(server.kubeconfig, "get", "pod", "p")["metadata"]["uid"]
            (saved,) = (tmp_path / "sim").glob("*.snapshot.json")
            assert saved.name == "cli-1.snapshot.json"
            assert uid in saved.read_text()
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            process.communicate()
