"""``numaplane multikueue add-worker`` against a server with a manager and a worker (logical
clusters): the Secret on the manager holds a token kubeconfig of the worker that can do what
MultiKueue needs there (Workloads and their status, Jobs) and nothing more; running it again
keeps working; ``--create-cluster`` makes the MultiKueueCluster that uses the Secret."""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from numaplane.kube import KubeClient, load_kubeconfig
from numaplane.kueue.runtime.install import install_kueue_crds
from numaplane.testing.apiserver import RunningApiServer, running_apiserver
from tests.apiserver.e2e.conftest import KUBECTL, Kubectl

pytestmark = pytest.mark.timeout(240)

NS = "kueue-system"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApiServer]:
    """One API server: the manager (default cluster) and logical cluster ``worker1``."""
    if KUBECTL is None:
        pytest.skip("kubectl not installed")
    with running_apiserver(tmp_path_factory.mktemp("mk") / "data", clusters=("worker1",)) as s:
        for path in (s.kubeconfig, s.cluster_kubeconfig("worker1")):
            asyncio.run(_install(path))
        yield s


async def _install(kubeconfig: Path) -> None:
    async with KubeClient(load_kubeconfig(kubeconfig)) as client:
        await install_kueue_crds(client)


def _add_worker(server: RunningApiServer, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "numaplane.cli.main", "multikueue", "add-worker", "worker1"]
    argv += ["--worker-kubeconfig", str(server.cluster_kubeconfig("worker1"))]
    argv += ["--kubeconfig", str(server.kubeconfig), *extra]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


def _stored(server: RunningApiServer, tmp_path: Path) -> Path:
    secret = Kubectl(server.kubeconfig).json("get", "secret", "worker1-secret", "-n", NS)
    path = tmp_path / "worker1.kubeconfig"
    path.write_bytes(base64.b64decode(secret["data"]["kubeconfig"]))
    return path


def test_the_stored_kubeconfig_reaches_the_worker_as_its_service_account(
    server: RunningApiServer, tmp_path: Path
) -> None:
    done = _add_worker(server)
    assert done.returncode == 0, done.stderr
    assert "secret/worker1-secret in kueue-system" in done.stdout
    path = _stored(server, tmp_path)
    config = yaml.safe_load(path.read_text())
    (user,) = config["users"]
    assert set(user["user"]) == {"token"}
    assert config["clusters"][0]["cluster"]["server"].endswith("/clusters/worker1")
    worker = Kubectl(path)
    who = json.loads(worker.out("auth", "whoami", "-o", "json"))
    assert who["status"]["userInfo"]["username"] == f"system:serviceaccount:{NS}:multikueue-sa"
    can = {
        ("create", "workloads.kueue.x-k8s.io"): "yes",
        ("update", "workloads.kueue.x-k8s.io/status"): "yes",
        ("delete", "jobs.batch"): "yes",
        ("watch", "jobs.batch"): "yes",
        ("list", "secrets"): "no",
        ("delete", "pods"): "no",
    }
    for (verb, resource), answer in can.items():
        got = worker.run("auth", "can-i", verb, resource, check=False).stdout.strip()
        assert got == answer, (verb, resource)


def test_running_it_again_refreshes_the_secret_and_can_create_the_cluster(
    server: RunningApiServer, tmp_path: Path
) -> None:
    assert _add_worker(server).returncode == 0
    done = _add_worker(server, "--create-cluster")
    assert done.returncode == 0, done.stderr
    assert "multikueuecluster/worker1 created" in done.stdout
    manager = Kubectl(server.kubeconfig)
    cluster = manager.json("get", "multikueuecluster", "worker1")
    assert cluster["spec"]["clusterSource"]["kubeConfig"] == {
        "locationType": "Secret",
        "location": "worker1-secret",
    }
    worker = Kubectl(_stored(server, tmp_path))
    assert worker.run("auth", "can-i", "list", "jobs.batch", check=False).stdout.strip() == "yes"


def test_an_unreachable_worker_is_one_line_and_status_2(
    server: RunningApiServer, tmp_path: Path
) -> None:
    broken = yaml.safe_load(server.cluster_kubeconfig("worker1").read_text())
    broken["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:1/clusters/worker1"
    path = tmp_path / "broken.kubeconfig"
    path.write_text(yaml.safe_dump(broken))
    argv = [sys.executable, "-m", "numaplane.cli.main", "multikueue", "add-worker", "worker9"]
    argv += ["--worker-kubeconfig", str(path), "--kubeconfig", str(server.kubeconfig)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("error: worker9: "), done.stderr
