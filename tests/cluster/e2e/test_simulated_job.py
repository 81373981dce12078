"""A cluster of three simulated nodes (``--node none --simulated-nodes 3``): the nodes join and
turn Ready, and a Job of 5 completions, 2 at a time, runs to ``Complete`` on them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from numaplane.testing.cluster import RunningCluster, running_cluster
from tests.apiserver.e2e.conftest import Kubectl

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]

KUBELET = """\
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0"
topologyManagerPolicy: single-numa-node
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningCluster]:
    """Three simulated nodes of two shapes, one ``numaplane up`` for the module."""
    work = tmp_path_factory.mktemp("simcluster")
    (work / "kubelet.yaml").write_text(KUBELET)
    with running_cluster(
        work / "data",
        simulated_nodes=3,
        machine=("dual-socket-ht", "dual-socket-multi-numa"),
        kubelet_config=work / "kubelet.yaml",
    ) as handle:
        handle.wait_nodes_ready(3)
        yield handle


def job(name: str) -> dict[str, object]:
    """A Job of 5 one-CPU Guaranteed pods, 2 at a time, each "running" for one second."""
    resources = {"cpu": "1", "memory": "64Mi"}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "completions": 5,
            "parallelism": 2,
            "template": {
                "metadata": {"annotations": {"numaplane.io/simulated-duration": "1s"}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "main",
                            "image": "sleep",
                            "command": ["sleep", "1"],
                            "resources": {"requests": resources, "limits": resources},
                        }
                    ],
                },
            },
        },
    }


def test_the_simulated_nodes_are_ready_and_labelled(cluster: RunningCluster) -> None:
    kubectl = Kubectl(cluster.kubeconfig)
    nodes = kubectl.json("get", "nodes", "-l", "numaplane.io/simulated=true")["items"]
    assert sorted(n["metadata"]["name"] for n in nodes) == ["sim0-0", "sim0-1", "sim1-0"]
    assert "Ready" in kubectl.out("get", "nodes")


def test_a_job_completes_on_simulated_nodes(cluster: RunningCluster, tmp_path: Path) -> None:
    kubectl = Kubectl(cluster.kubeconfig)
    kubectl.out("apply", "-f", "-", stdin=yaml.safe_dump(job("five")))
    done = kubectl.run(
        "wait", "--for=condition=complete", "job/five", "--timeout=180s", check=False, timeout=200
    )
    assert done.returncode == 0, f"{done.stderr}\n{cluster.all_logs()}"
    status = kubectl.json("get", "job", "five")["status"]
    assert status["succeeded"] == 5
    pods = kubectl.json("get", "pods", "-l", "job-name=five")["items"]
    assert {p["status"]["phase"] for p in pods} == {"Succeeded"}
    assert {p["spec"]["nodeName"] for p in pods} <= {"sim0-0", "sim0-1", "sim1-0"}
