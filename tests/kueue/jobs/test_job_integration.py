"""The Job integration against a real ``numaplane apiserver --kueue-job-defaulting`` and the Job
controller: a queued Job is created suspended and stays pod-less, the reconciler's start
(flavor injection, unsuspend) makes the Job controller create pods on the flavor, and its stop
(suspend, clear startTime, restore the template) is accepted by the API server's Job update
rules and removes the pods."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from numaplane.kube import KubeClient
from numaplane.kube.errors import ApiError
from numaplane.kueue.api.model import ResourceFlavor
from numaplane.kueue.jobs import JobContext, JobDecision, new_workload, reconcile_job
from numaplane.testing.apiserver import open_crd, running_apiserver
from tests.controllers.job.cluster import Cluster, cluster, condition, controller_running, job_body
from tests.kueue.jobs.helpers import T0, admitted, cond

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

FLAVOR = ResourceFlavor(
    "default-flavor",
    node_labels={"cloud.example.com/zone": "a"},
    tolerations=({"key": "spot", "operator": "Exists", "effect": "NoSchedule"},),
)
CTX = JobContext(now=T0, flavors={"default-flavor": FLAVOR})


@pytest.fixture(scope="module")
def kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A server with Kueue's Job webhook in its create path."""
    data = tmp_path_factory.mktemp("kueue-jobs") / "data"
    with running_apiserver(data, extra_args=["--kueue-job-defaulting"]) as server:
        yield server.kubeconfig


async def apply(client: KubeClient, namespace: str, decision: JobDecision) -> None:
    """Play the runtime: the decision's Job writes as merge patches, in order."""
    for write in decision.writes:
        assert write.kind == "Job", write
        assert write.patch is not None
        await client.patch(
            "batch/v1",
            "jobs",
            write.obj["metadata"]["name"],
            write.patch,
            namespace,
            subresource="status" if write.op == "status" else "",
        )


async def job_pods(c: Cluster, name: str) -> list[dict[str, Any]]:
    """The live pods of Job ``name``."""
    return [
        p
        for p in await c.active_pods()
        if p["metadata"].get("labels", {}).get("batch.kubernetes.io/job-name") == name
    ]


def queued(name: str) -> dict[str, Any]:
    """A Job with the queue-name label, not asking to be suspended."""
    body = job_body(name, completions=2, parallelism=2)
    body["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "user-queue"}
    return body


def test_a_queued_job_is_created_suspended_and_has_no_pods(kubeconfig: Path) -> None:
    async def body() -> None:
        async with cluster(kubeconfig) as c, controller_running(kubeconfig):
            created = await c.create_job(queued("queued"))
            assert created["spec"]["suspend"] is True
            plain = await c.create_job(job_body("plain", completions=1))
            assert plain["spec"]["suspend"] is False

            async def plain_pod() -> list[dict[str, Any]]:
                return await job_pods(c, "plain")

            await c.wait_for("a pod of the Job without a queue", plain_pod)
            job = await c.wait_job(
                "queued", "Suspended", lambda j: condition(j, "Suspended") is not None
            )
            suspended = condition(job, "Suspended")
            assert suspended is not None
            assert (suspended["status"], suspended["reason"]) == ("True", "JobSuspended")
            assert await job_pods(c, "queued") == []

    asyncio.run(body())


def test_start_on_the_flavor_then_stop_on_eviction(kubeconfig: Path) -> None:
    async def body() -> None:
        async with cluster(kubeconfig) as c, controller_running(kubeconfig):
            stored = await c.create_job(queued("run"))
            wl = admitted(new_workload(stored, 0, None), count=2)

            start = reconcile_job(stored, [wl], CTX)
            assert [(e.reason, e.message) for e in start.events] == [
                ("Started", "Admitted by clusterQueue cluster-queue")
            ]
            await apply(c.client, c.namespace, start)

            async def two() -> list[dict[str, Any]] | None:
                pods = await job_pods(c, "run")
                return pods if len(pods) == 2 else None

            pods = await c.wait_for("2 pods after the start", two)
            for pod in pods:
                assert pod["spec"]["nodeSelector"] == {"cloud.example.com/zone": "a"}
                assert {"key": "spot", "operator": "Exists", "effect": "NoSchedule"} in pod["spec"][
                    "tolerations"
                ]
                assert pod["metadata"]["labels"]["kueue.x-k8s.io/podset"] == "main"
            running = await c.wait_job(
                "run", "started", lambda j: bool(j["status"].get("startTime"))
            )

            evicted = admitted(new_workload(stored, 0, None), count=2)
            evicted["status"]["conditions"].append(
                cond("Evicted", "True", "Preempted", "Preempted to accommodate a workload")
            )
            stop = reconcile_job(running, [evicted], CTX)
            assert [(w.kind, w.op) for w in stop.writes] == [
                ("Job", "update"),
                ("Job", "status"),
                ("Job", "update"),
            ]
            await apply(c.client, c.namespace, stop)

            async def none_left() -> bool:
                return not await job_pods(c, "run")

            await c.wait_for("the pods gone after the stop", none_left)
            job = await c.job("run")
            assert job["spec"]["suspend"] is True
            assert "nodeSelector" not in job["spec"]["template"]["spec"]
            assert "tolerations" not in job["spec"]["template"]["spec"]
            assert "kueue.x-k8s.io/stopping" not in job["metadata"].get("annotations", {})

    asyncio.run(body())


def crd(plural: str, kind: str, scope: str) -> dict[str, Any]:
    """A Kueue CRD reduced to what the webhook reads (any v1beta2 object is accepted)."""
    return open_crd("kueue.x-k8s.io", "v1beta2", plural, kind, scope)


CRDS = (
    crd("localqueues", "LocalQueue", "Namespaced"),
    crd("clusterqueues", "ClusterQueue", "Cluster"),
    crd("admissionchecks", "AdmissionCheck", "Cluster"),
)


async def create_kueue_object(
    c: Cluster, plural: str, kind: str, name: str, spec: dict[str, Any], namespaced: bool
) -> None:
    """Create a Kueue object once its CRD is served (the CRDs are created first, if missing)."""
    for definition in CRDS:
        try:
            await c.client.create(
                "apiextensions.k8s.io/v1", "customresourcedefinitions", definition
            )
        except ApiError as err:
            if err.code != 409:  # created by an earlier test
                raise
    body = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": kind, "metadata": {"name": name}}
    body["spec"] = spec

    async def created() -> bool:
        try:
            await c.client.create(
                "kueue.x-k8s.io/v1beta2", plural, body, c.namespace if namespaced else None
            )
        except ApiError as err:
            if err.code == 409:
                return True
            if err.code != 404:  # 404: the CRD is not served yet
                raise
            return False
        return True

    await c.wait_for(f"{kind} {name} created", created)


def test_a_namespace_default_local_queue_queues_unlabelled_jobs(kubeconfig: Path) -> None:
    async def body() -> None:
        async with cluster(kubeconfig) as c:
            before = await c.create_job(job_body("before", completions=1))
            assert before["spec"]["suspend"] is False
            spec = {"clusterQueue": "cluster-queue"}
            await create_kueue_object(c, "localqueues", "LocalQueue", "default", spec, True)
            after = await c.create_job(job_body("after", completions=1))
            assert after["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "default"
            assert after["spec"]["suspend"] is True

    asyncio.run(body())


def test_a_multikueue_queue_defaults_managed_by(kubeconfig: Path) -> None:
    async def body() -> None:
        async with cluster(kubeconfig) as c:
            check = {"controllerName": "kueue.x-k8s.io/multikueue"}
            await create_kueue_object(c, "admissionchecks", "AdmissionCheck", "mk", check, False)
            cq = {"admissionChecksStrategy": {"admissionChecks": [{"name": "mk"}]}}
            await create_kueue_object(c, "clusterqueues", "ClusterQueue", "mk-cq", cq, False)
            lq = {"clusterQueue": "mk-cq"}
            await create_kueue_object(c, "localqueues", "LocalQueue", "mk-queue", lq, True)
            await create_kueue_object(
                c, "localqueues", "LocalQueue", "plain", {"clusterQueue": "cluster-queue"}, True
            )

            dispatched = job_body("dispatched", completions=1)
            dispatched["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "mk-queue"}
            stored = await c.create_job(dispatched)
            assert stored["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"
            assert stored["spec"]["suspend"] is True

            other = job_body("other-controller", completions=1, managedBy="example.com/mine")
            other["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "mk-queue"}
            assert (await c.create_job(other))["spec"]["managedBy"] == "example.com/mine"

            local = job_body("local", completions=1)
            local["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "plain"}
            assert "managedBy" not in (await c.create_job(local))["spec"]

    asyncio.run(body())
