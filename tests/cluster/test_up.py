"""``numaplane up --node none`` for real: it prints the kubeconfig and the export hint, its
children log under DIR/logs, a second ``up`` on the same directory is refused in one line, a
SIGKILL of ``up`` takes its children with it, and running it again on the directory resumes
the cluster's objects."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from numaplane.testing.apiserver import ENTRY, ClientCredentials
from numaplane.testing.cluster import running_cluster, start_cluster

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.extend(int(p) for p in text)
    return found


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return True
    return state == "Z"


def _controllers_pid(up_pid: int) -> int | None:
    for pid in _children(up_pid):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"controllers" in cmdline:
            return pid
    return None


def test_a_killed_child_is_reported_and_restarted(tmp_path: Path) -> None:
    with running_cluster(tmp_path / "data") as cluster:
        first = _controllers_pid(cluster.process.pid)
        assert first is not None
        os.kill(first, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while (again := _controllers_pid(cluster.process.pid)) in (None, first):
            assert time.monotonic() < deadline, cluster.all_logs()
            time.sleep(0.1)
        log_path = tmp_path / "data" / "logs" / "controllers.log"
        # One line: what happened, the child's last words (if any), the backoff, its log.
        reported = [line for line in cluster.log().splitlines() if "controllers killed" in line]
        assert len(reported) == 1
        assert reported[0].startswith("numaplane up: controllers killed by signal 9")
        assert reported[0].endswith(f"; restarting in 1s (log: {log_path})")
        assert again is not None


def test_up_prints_the_kubeconfig_and_refuses_a_second_up(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with running_cluster(data) as cluster:
        output = cluster.log()
        assert f"kubeconfig: {data / 'admin.kubeconfig'}" in output
        assert f"export KUBECONFIG={data / 'admin.kubeconfig'}" in output
        assert "numaplane apiserver: serving https://" in cluster.component_log("apiserver")
        assert (data / "logs" / "controllers.log").exists()
        second = subprocess.run(
            [sys.executable, "-c", ENTRY, "up", "--data-dir", str(data), "--port", "0"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert (second.returncode, second.stdout) == (2, "")
        assert second.stderr == (
            f"error: --data-dir: {data}: another numaplane up is running on it\n"
        )


def test_children_die_with_a_killed_up_and_a_restart_resumes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    cluster = start_cluster(data)
    try:
        code, _ = cluster.get("/api/v1/namespaces", timeout_s=10)
        assert code == 200
        body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kept"},"data":{"k":"v"}}'
        assert _create_configmap(cluster.url, cluster.credentials, body) == 201
        children = _children(cluster.process.pid)
        assert len(children) == 3  # the API server, the controllers and Kueue
    finally:
        cluster.kill()
    deadline = time.monotonic() + 60
    while not all(_gone(pid) for pid in children):
        assert time.monotonic() < deadline, f"children {children} outlived up"
        time.sleep(0.1)
    with running_cluster(data) as again:
        code, body = again.get("/api/v1/namespaces/default/configmaps/kept")
        assert code == 200, body


def _create_configmap(url: str, credentials: ClientCredentials, body: bytes) -> int:
    request = urllib.request.Request(
        url + "/api/v1/namespaces/default/configmaps",
        data=body,
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, context=credentials.ssl_context(), timeout=10) as resp:
        return int(resp.status)
