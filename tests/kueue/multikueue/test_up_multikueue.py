"""MultiKueue end to end with real processes, driven with kubectl as Kueue's documentation
does: ``numaplane up --multikueue-workers 2`` (the manager and logical clusters ``worker1`` and
``worker2``, each with its controllers, Kueue and one simulated node), the worker queues
applied on both workers, the worker kubeconfig Secret made with ``numaplane multikueue
add-worker``, upstream's ``multikueue-setup.yaml`` applied unchanged on the manager; a Job
submitted to the manager runs exactly once, on the worker the config names, and the manager's
Job shows ``Complete`` (SCENARIO B23's shape). Then worker2 joins the config and a second Job
also runs exactly once."""

from __future__ import annotations

import functools
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from numaplane.testing.cluster import RunningCluster, running_cluster
from tests.apiserver.e2e.conftest import KUBECTL, Kubectl

pytestmark = [pytest.mark.timeout(420), pytest.mark.slow]

WAIT_S = 150.0
T = TypeVar("T")

WORKER_QUEUES = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: default-flavor
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cluster-queue
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "memory"]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: 9
      - name: memory
        nominalQuota: 36Gi
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  namespace: default
  name: user-queue
spec:
  clusterQueue: cluster-queue
"""

JOB = """
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: user-queue
spec:
  parallelism: 1
  completions: 1
  template:
    metadata:
      annotations:
        numaplane.io/simulated-duration: 2s
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: [sleep, "2"]
        resources:
          requests:
            cpu: "1"
            memory: 200Mi
"""

SECOND_CLUSTER = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata:
  name: multikueue-test-worker2
spec:
  clusterSource:
    kubeConfig:
      locationType: Secret
      location: worker2-secret
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningCluster]:
    """The manager and two workers, each worker with one simulated node."""
    if KUBECTL is None:
        pytest.skip("kubectl not installed")
    data = tmp_path_factory.mktemp("mk-up") / "data"
    extra = ("--multikueue-workers", "2", "--worker-simulated-nodes", "1")
    with running_cluster(data, extra_args=extra) as handle:
        yield handle


def _until(what: str, cluster: RunningCluster, probe: Callable[[], T | None]) -> T:
    deadline = time.monotonic() + WAIT_S
    while True:
        found = probe()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}\n{cluster.all_logs()}"
        time.sleep(0.5)


def _served(kubectl: Kubectl) -> bool:
    return kubectl.run("get", "clusterqueues", check=False).returncode == 0


def _condition(obj: dict[str, Any], kind: str) -> str | None:
    for cond in (obj.get("status") or {}).get("conditions") or ():
        if cond.get("type") == kind:
            return str(cond.get("status"))
    return None


def _add_worker(cluster: RunningCluster, name: str, worker: str) -> str:
    argv = [sys.executable, "-m", "numaplane.cli.main", "multikueue", "add-worker", name]
    argv += ["--worker-kubeconfig", str(cluster.data_dir / f"{worker}.kubeconfig")]
    argv += ["--kubeconfig", str(cluster.kubeconfig)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _jobs(kubectl: Kubectl) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = kubectl.json("get", "jobs", "-n", "default")["items"]
    return items


def _run_job(
    cluster: RunningCluster, manager: Kubectl, workers: dict[str, Kubectl], name: str
) -> str:
    """Submit Job ``name`` to the manager; the worker it ran on once it shows Complete."""
    manager.out("create", "-f", "-", stdin=JOB.format(name=name))

    def complete() -> dict[str, Any] | None:
        job = manager.json("get", "job", name, "-n", "default")
        return job if _condition(job, "Complete") == "True" else None

    job = _until(f"job {name} Complete on the manager", cluster, complete)
    assert job["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"
    assert job["status"]["succeeded"] == 1
    workloads = manager.json("get", "workloads", "-n", "default")["items"]
    (wl,) = [
        w
        for w in workloads
        if any(r["name"] == name for r in w["metadata"].get("ownerReferences") or ())
    ]
    assert _condition(wl, "Finished") == "True"
    ran_on = str(wl["status"]["clusterName"])
    # The manager never made pods of its own.
    pods = manager.json("get", "pods", "-n", "default")["items"]
    assert not [p for p in pods if p["metadata"]["name"].startswith(name)]
    return ran_on


def _runs_on(workers: dict[str, Kubectl], name: str) -> list[tuple[str, int]]:
    """(worker, its pods of Job ``name``) for every worker that had the Job."""
    found = []
    for worker, kubectl in workers.items():
        events = kubectl.json("get", "events", "-n", "default")["items"]
        created = [
            e
            for e in events
            if e.get("reason") == "SuccessfulCreate"
            and (e.get("involvedObject") or {}).get("name") == name
        ]
        if created:
            found.append((worker, sum(int(e.get("count") or 1) for e in created)))
    return found


def test_a_job_submitted_to_the_manager_runs_exactly_once_on_a_worker(
    cluster: RunningCluster, kueue_dir: Path
) -> None:
    manager = Kubectl(cluster.kubeconfig)
    workers = {w: Kubectl(cluster.data_dir / f"{w}.kubeconfig") for w in ("worker1", "worker2")}
    for kubectl in (manager, *workers.values()):
        _until("the Kueue CRDs", cluster, functools.partial(_served, kubectl))
    for kubectl in workers.values():
        kubectl.out("apply", "-f", "-", stdin=WORKER_QUEUES)
    assert "secret/worker1-secret" in _add_worker(cluster, "worker1", "worker1")
    setup = kueue_dir / "examples" / "multikueue" / "multikueue-setup.yaml"
    manager.out("apply", "-f", str(setup))

    def check_active() -> bool:
        check = manager.json("get", "admissionchecks", "sample-multikueue")
        return _condition(check, "Active") == "True"

    _until("the MultiKueue AdmissionCheck Active", cluster, check_active)

    assert _run_job(cluster, manager, workers, "first") == "multikueue-test-worker1"
    assert _runs_on(workers, "first") == [("worker1", 1)]
    # The copies are gone once the manager's Workload finished.
    _until(
        "worker1's objects removed",
        cluster,
        lambda: not workers["worker1"].json("get", "workloads", "-n", "default")["items"],
    )

    # worker2 joins the config: the next Job still runs exactly once, on one of them.
    assert "secret/worker2-secret" in _add_worker(cluster, "worker2", "worker2")
    manager.out("apply", "-f", "-", stdin=SECOND_CLUSTER)
    manager.out(
        "patch",
        "multikueueconfig",
        "multikueue-test",
        "--type=merge",
        "-p",
        '{"spec":{"clusters":["multikueue-test-worker1","multikueue-test-worker2"]}}',
    )
    _until(
        "worker2 Active",
        cluster,
        lambda: (
            _condition(
                manager.json("get", "multikueuecluster", "multikueue-test-worker2"), "Active"
            )
            == "True"
        ),
    )
    ran_on = _run_job(cluster, manager, workers, "second")
    runs = _runs_on(workers, "second")
    assert len(runs) == 1
    assert runs[0][1] == 1
    assert ran_on == f"multikueue-test-{runs[0][0]}"
