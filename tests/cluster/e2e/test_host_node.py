"""``numaplane up`` with this host as its node (root and a writable cgroup tree: CI runs as
root): the host is Ready, a Guaranteed pod of one CPU runs as a process confined to one
exclusive CPU, ``kubectl logs`` shows its output, and deleting it ends the process and frees
the CPU for the next pod."""

from __future__ import annotations

import json
import os
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from numaplane.testing.cluster import RunningCluster, running_cluster
from tests.agent.conftest import cgroup_unusable
from tests.apiserver.e2e.conftest import Kubectl

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow, pytest.mark.root, pytest.mark.cgroup]

NODE = "e2e-host"
KUBELET = """\
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0"
topologyManagerPolicy: best-effort
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningCluster]:
    """``numaplane up --node host`` for the module (skipped without root or cgroups)."""
    why = cgroup_unusable()
    if why is not None:
        pytest.skip(why)
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 CPUs: CPU 0 is reserved, the pod needs another")
    work = tmp_path_factory.mktemp("hostcluster")
    (work / "kubelet.yaml").write_text(KUBELET)
    with running_cluster(
        work / "data",
        node="host",
        kubelet_config=work / "kubelet.yaml",
        extra_args=("--node-name", NODE),
    ) as handle:
        handle.wait_nodes_ready(1)
        yield handle


def pinned(name: str) -> dict[str, Any]:
    """A Guaranteed pod of one CPU that prints a line, then sleeps."""
    resources = {"cpu": "1", "memory": "64Mi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "terminationGracePeriodSeconds": 5,
            "containers": [
                {
                    "name": "main",
                    "image": "busybox",
                    "command": ["sh", "-c", f"echo hello from {name}; exec sleep 3600"],
                    "resources": {"requests": resources, "limits": resources},
                }
            ],
        },
    }


def _agent_pods(cluster: RunningCluster, kubectl: Kubectl) -> list[dict[str, Any]]:
    """The agent's ``/pods`` view, from the port its Node publishes."""
    node = kubectl.json("get", "node", NODE)
    port = node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/pods", timeout=10) as resp:
        pods: list[dict[str, Any]] = json.load(resp)
    return pods


def _pid_of(cluster: RunningCluster, kubectl: Kubectl, pod: str) -> int:
    for entry in _agent_pods(cluster, kubectl):
        if entry.get("name") == pod:
            return int(entry["containers"][0]["pid"])
    raise AssertionError(f"pod {pod} not in the agent's /pods: {cluster.all_logs()}")


def _cpus_allowed(pid: int) -> str:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"no Cpus_allowed_list for {pid}")


def _wait_running(kubectl: Kubectl, name: str, cluster: RunningCluster) -> None:
    done = kubectl.run(
        "wait", "--for=condition=Ready", f"pod/{name}", "--timeout=120s", check=False, timeout=150
    )
    assert done.returncode == 0, f"{done.stderr}\n{cluster.all_logs()}"


def test_the_host_is_a_ready_node(cluster: RunningCluster) -> None:
    kubectl = Kubectl(cluster.kubeconfig)
    line = next(x for x in kubectl.out("get", "nodes").splitlines() if x.startswith(NODE))
    assert line.split()[1] == "Ready"


def test_a_guaranteed_pod_runs_on_an_exclusive_cpu_and_is_freed(cluster: RunningCluster) -> None:
    kubectl = Kubectl(cluster.kubeconfig)
    kubectl.out("apply", "-f", "-", stdin=yaml.safe_dump(pinned("first")))
    _wait_running(kubectl, "first", cluster)
    assert kubectl.json("get", "pod", "first")["status"]["phase"] == "Running"
    pid = _pid_of(cluster, kubectl, "first")
    exclusive = _cpus_allowed(pid)
    assert exclusive.isdigit(), exclusive  # one CPU
    assert exclusive != "0"  # the reserved CPU is not given away
    assert kubectl.out("logs", "first") == "hello from first\n"
    kubectl.out("delete", "pod", "first", "--timeout=60s")
    deadline = time.monotonic() + 60
    while not _zombie(pid):
        assert time.monotonic() < deadline, f"pid {pid} still alive after delete"
        time.sleep(0.1)
    # The CPU is free again: the next one-CPU pod gets the same exclusive CPU (on 2 CPUs it is
    # the only one outside the reserved set).
    kubectl.out("apply", "-f", "-", stdin=yaml.safe_dump(pinned("second")))
    _wait_running(kubectl, "second", cluster)
    again = _cpus_allowed(_pid_of(cluster, kubectl, "second"))
    if len(os.sched_getaffinity(0)) == 2:
        assert again == exclusive
    else:
        assert again.isdigit(), again
        assert again != "0"
    kubectl.out("delete", "pod", "second", "--timeout=60s")


def _zombie(pid: int) -> bool:
    """Whether ``pid`` is gone or only a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


def test_a_job_of_the_kueue_examples_shape_completes_on_the_host(cluster: RunningCluster) -> None:
    kubectl = Kubectl(cluster.kubeconfig)
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "sample"},
        "spec": {
            "parallelism": 2,
            "completions": 3,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "dummy-job",
                            "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
                            "command": ["/bin/sh"],
                            "args": ["-c", "sleep 1"],
                        }
                    ],
                }
            },
        },
    }
    kubectl.out("apply", "-f", "-", stdin=yaml.safe_dump(job))
    done = kubectl.run(
        "wait", "--for=condition=complete", "job/sample", "--timeout=120s", check=False, timeout=150
    )
    assert done.returncode == 0, f"{done.stderr}\n{cluster.all_logs()}"
    pods = kubectl.json("get", "pods", "-l", "job-name=sample")["items"]
    assert len(pods) == 3
    assert {p["spec"]["nodeName"] for p in pods} == {NODE}
    assert {p["status"]["phase"] for p in pods} == {"Succeeded"}
