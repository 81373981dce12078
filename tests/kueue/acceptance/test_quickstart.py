"""Kueue's quick start against ``numaplane up`` with this host as its node, driven with kubectl
exactly as the upstream guide does: ``kubectl apply -f quick-start-setup.yaml``, then
``kubectl create -f quick-start-job.yaml`` three times (its fixed name makes the second and third
fail with AlreadyExists, as on any cluster) and ``examples/jobs/sample-job.yaml`` (generateName)
three times. The jobs are suspended on creation, queue, are admitted while the ClusterQueue's
9 CPUs allow (three jobs of 3 CPUs; the fourth waits), run as processes, complete, and
``kubectl get workloads,clusterqueues,localqueues`` shows upstream's columns and counts.

The sample jobs' ``sleep 60`` is shortened to ``sleep 15`` (the file is piped through kubectl's
stdin) so that twelve one-CPU pods on a two-CPU host finish in about two minutes; everything
else is the upstream file. Needs root and a writable cgroup tree (the host node runs pods)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from numaplane.testing.cluster import RunningCluster, running_cluster
from tests.agent.conftest import cgroup_unusable
from tests.apiserver.e2e.conftest import KUBECTL, Kubectl
from tests.kueue.acceptance.decisions import condition

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow, pytest.mark.root, pytest.mark.cgroup]

NODE = "kueue-host"
WAIT_S = 240.0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningCluster]:
    """``numaplane up --node host`` (Kueue included) for the module."""
    if KUBECTL is None:
        pytest.skip("kubectl not installed")
    why = cgroup_unusable()
    if why is not None:
        pytest.skip(why)
    work = tmp_path_factory.mktemp("kueue-quickstart")
    with running_cluster(work / "data", node="host", extra_args=("--node-name", NODE)) as handle:
        handle.wait_nodes_ready(1)
        wait_kueue_served(Kubectl(handle.kubeconfig), handle)
        yield handle


def wait_kueue_served(kubectl: Kubectl, cluster: RunningCluster) -> None:
    """Until ``up`` has installed the Kueue CRDs (kubectl can list ClusterQueues)."""
    deadline = time.monotonic() + 60
    while kubectl.run("get", "clusterqueues", check=False).returncode != 0:
        assert time.monotonic() < deadline, cluster.all_logs()
        time.sleep(0.5)


def workloads(kubectl: Kubectl) -> list[dict[str, Any]]:
    """Every Workload in ``default``, oldest first."""
    items: list[dict[str, Any]] = kubectl.json("get", "workloads", "-n", "default")["items"]
    return sorted(items, key=lambda w: (w["metadata"]["creationTimestamp"], w["metadata"]["name"]))


def owner(workload: dict[str, Any]) -> str:
    """The name of the Job that owns ``workload``."""
    refs = workload["metadata"].get("ownerReferences") or []
    return str(next((r["name"] for r in refs if r.get("kind") == "Job"), ""))


def table(kubectl: Kubectl, *args: str) -> list[list[str]]:
    """``kubectl get ARGS`` as rows of cells, the header first. Cells start where the header's
    columns start (kubectl aligns them; a column name may hold single spaces)."""
    lines = kubectl.out("get", *args).splitlines()
    starts = [m.start() for m in re.finditer(r"(?:^|(?<=  ))\S", lines[0])]
    bounds = list(zip(starts, [*starts[1:], None], strict=True))
    return [[line[a:b].strip() for a, b in bounds] for line in lines]


def test_quick_start(cluster: RunningCluster, kueue_dir: Path) -> None:
    kubectl = Kubectl(cluster.kubeconfig)
    setup = kueue_dir / "examples" / "getting-started" / "quick-start-setup.yaml"
    job_file = kueue_dir / "examples" / "getting-started" / "quick-start-job.yaml"
    assert kubectl.out("apply", "-f", str(setup)).splitlines() == [
        "resourceflavor.kueue.x-k8s.io/default-flavor created",
        "clusterqueue.kueue.x-k8s.io/cluster-queue created",
        "localqueue.kueue.x-k8s.io/user-queue created",
    ]
    assert kubectl.out("create", "-f", str(job_file)) == "job.batch/sample-job created\n"
    for _ in range(2):
        assert kubectl.fails("create", "-f", str(job_file)) == (
            f'Error from server (AlreadyExists): error when creating "{job_file}": '
            'jobs.batch "sample-job" already exists\n'
        )
    sample = (kueue_dir / "examples" / "jobs" / "sample-job.yaml").read_text()
    assert '"sleep 60"' in sample
    sample = sample.replace('"sleep 60"', '"sleep 15"')
    jobs = ["sample-job"]
    for _ in range(3):
        out = kubectl.out("create", "-f", "-", stdin=sample)
        assert out.startswith("job.batch/sample-job-"), out
        assert out.endswith(" created\n"), out
        jobs.append(out.split()[0].split("/", 1)[1])

    # Three jobs of 3 CPUs fill the 9 CPUs; the fourth (the last created) waits for quota.
    def waiting(found: list[dict[str, Any]]) -> bool:
        reserved = [w for w in found if (w.get("status") or {}).get("admission")]
        return len(found) == 4 and len(reserved) == 3

    deadline = time.monotonic() + WAIT_S
    while not waiting(found := workloads(kubectl)):
        assert time.monotonic() < deadline, cluster.all_logs()
        time.sleep(0.3)
    by_job = {owner(w): w for w in found}
    assert set(by_job) == set(jobs)
    last = by_job[jobs[-1]]
    assert not (last.get("status") or {}).get("admission")
    # Suspended on creation and still suspended while it waits: none of its pods exist (read
    # before the workload again: a reservation seen unset then was unset at these reads too).
    suspended = kubectl.json("get", "job", jobs[-1])["spec"]["suspend"]
    its_pods = kubectl.json("get", "pods", "-l", f"job-name={jobs[-1]}")["items"]
    if not (workloads_of(kubectl, jobs[-1]).get("status") or {}).get("admission"):
        assert suspended is True
        assert its_pods == []
    for name in jobs[:-1]:
        held = by_job[name]
        assert condition(held, "QuotaReserved") == (
            "True",
            "QuotaReserved",
            "Quota reserved in ClusterQueue cluster-queue",
        )
        assert condition(held, "Admitted") == ("True", "Admitted", "The workload is admitted")
        assignment = held["status"]["admission"]["podSetAssignments"][0]
        assert assignment["flavors"] == {"cpu": "default-flavor", "memory": "default-flavor"}
        assert assignment["count"] == 3
    # Until the scheduler judged it (the workload controller writes PendingEvaluation first).
    while (
        pending := condition(last := workloads_of(kubectl, jobs[-1]), "QuotaReserved")
    ) is None or pending[1] == "PendingEvaluation":
        assert time.monotonic() < deadline, cluster.all_logs()
        time.sleep(0.3)
    if not (last.get("status") or {}).get("admission"):
        assert pending == (
            "False",
            "WaitingForQuota",
            "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
            "flavor default-flavor, 3 more needed",
        )

    # All four complete (the fourth once a first one finished and gave its quota back).
    done = kubectl.run(
        "wait",
        "--for=condition=complete",
        "job",
        *jobs,
        "--timeout=400s",
        check=False,
        timeout=420,
    )
    assert done.returncode == 0, f"{done.stderr}\n{cluster.all_logs()}"
    pods = kubectl.json("get", "pods", "-n", "default")["items"]
    assert len([p for p in pods if p["status"]["phase"] == "Succeeded"]) == 12
    assert {p["spec"]["nodeName"] for p in pods} == {NODE}

    def finished(found: list[dict[str, Any]]) -> bool:
        return all(condition(w, "Finished") is not None for w in found)

    while not finished(found := workloads(kubectl)):
        assert time.monotonic() < deadline + 400, cluster.all_logs()
        time.sleep(0.3)
    for wl in found:
        # Upstream copies the Job's own Complete condition message (``Job.Finished``).
        job = kubectl.json("get", "job", owner(wl))
        complete = next(c for c in job["status"]["conditions"] if c["type"] == "Complete")
        assert condition(wl, "Finished") == ("True", "Succeeded", complete["message"])

    # kubectl get: upstream's printer columns and the counts once everything finished.
    rows = table(kubectl, "workloads")
    assert rows[0] == ["NAME", "QUEUE", "RESERVED IN", "ADMITTED", "FINISHED", "AGE"]
    assert sorted(r[0] for r in rows[1:]) == sorted(w["metadata"]["name"] for w in found)
    assert {tuple(r[1:5]) for r in rows[1:]} == {("user-queue", "cluster-queue", "True", "True")}
    # The queues' statuses follow the last Finished condition shortly (their own writes).
    settled = [
        ["NAME", "COHORT", "STRATEGY", "PENDING WORKLOADS", "ADMITTED WORKLOADS"],
        ["cluster-queue", "", "BestEffortFIFO", "0", "0"],
    ]
    while table(kubectl, "clusterqueues", "-o", "wide") != settled:
        assert time.monotonic() < deadline + 460, cluster.all_logs()
        time.sleep(0.3)
    assert table(kubectl, "clusterqueues") == [
        ["NAME", "COHORT", "PENDING WORKLOADS"],
        ["cluster-queue", "", "0"],
    ]
    assert table(kubectl, "clusterqueues", "-o", "wide") == [
        ["NAME", "COHORT", "STRATEGY", "PENDING WORKLOADS", "ADMITTED WORKLOADS"],
        ["cluster-queue", "", "BestEffortFIFO", "0", "0"],
    ]
    assert table(kubectl, "localqueues") == [
        ["NAME", "CLUSTERQUEUE", "PENDING WORKLOADS", "ADMITTED WORKLOADS"],
        ["user-queue", "cluster-queue", "0", "0"],
    ]
    # All three kinds in one call, as the guide shows them.
    combined = kubectl.out("get", "workloads,clusterqueues,localqueues")
    assert "clusterqueue.kueue.x-k8s.io/cluster-queue" in combined
    assert "localqueue.kueue.x-k8s.io/user-queue" in combined
    assert combined.count("workload.kueue.x-k8s.io/") == 4


def workloads_of(kubectl: Kubectl, job: str) -> dict[str, Any]:
    """The Workload owned by Job ``job``."""
    return next(w for w in workloads(kubectl) if owner(w) == job)
