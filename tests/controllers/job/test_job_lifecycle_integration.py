"""Suspend and resume, ``managedBy``, and a controller restarted mid-job, against a real
``numaplane apiserver`` (the test plays the kubelet)."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.controllers.job.cluster import Cluster, cluster, condition, controller_running, job_body

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def test_suspend_and_resume(kubeconfig: Path) -> None:
    async def body() -> None:
        async with cluster(kubeconfig) as c, controller_running(kubeconfig):
            await c.create_job(job_body("sus", completions=2, parallelism=2, suspend=True))
            job = await c.wait_job(
                "sus", "Suspended", lambda j: condition(j, "Suspended") is not None
            )
            suspended = condition(job, "Suspended")
            assert suspended is not None
            assert (suspended["status"], suspended["reason"], suspended["message"]) == (
                "True",
                "JobSuspended",
                "Job suspended",
            )
            assert "startTime" not in job["status"]
            assert await c.pods() == []

            await c.client.patch(
                "batch/v1", "jobs", "sus", {"spec": {"suspend": False}}, c.namespace
            )

            async def two() -> list[dict[str, Any]] | None:
                active = await c.active_pods()
                return active if len(active) == 2 else None

            first = await c.wait_for("2 pods after resuming", two)
            job = await c.wait_job(
                "sus",
                "resumed",
                lambda j: (condition(j, "Suspended") or {}).get("status") == "False",
            )
            resumed = condition(job, "Suspended")
            assert resumed is not None
            assert (resumed["reason"], resumed["message"]) == ("JobResumed", "Job resumed")
            assert job["status"]["startTime"]

            # Suspending again deletes the running pods without counting them as failures.
            await c.set_pod_phase(first[0], "Running")
            await c.client.patch(
                "batch/v1", "jobs", "sus", {"spec": {"suspend": True}}, c.namespace
            )
            job = await c.wait_job(
                "sus",
                "suspended again, pods gone",
                lambda j: (
                    (condition(j, "Suspended") or {}).get("status") == "True"
                    and not j["status"].get("active")
                ),
            )
            await c.wait_for("the pods deleted", c.no_pods)
            assert "failed" not in job["status"]

            await c.client.patch(
                "batch/v1", "jobs", "sus", {"spec": {"suspend": False}}, c.namespace
            )
            second = await c.wait_for("2 new pods", two)
            assert {p["metadata"]["uid"] for p in second}.isdisjoint(
                p["metadata"]["uid"] for p in first
            )
            for pod in second:
                await c.set_pod_phase(pod, "Succeeded")
            job = await c.wait_job(
                "sus", "Complete", lambda j: condition(j, "Complete") is not None
            )
            assert job["status"]["succeeded"] == 2
            assert "failed" not in job["status"]
            for reason, message in (
                ("Suspended", "Job suspended"),
                ("Resumed", "Job resumed"),
                ("SuccessfulDelete", f"Deleted pod: {first[0]['metadata']['name']}"),
            ):
                await c.wait_for(
                    f"event {reason}: {message}", partial(_has_event, c, reason, message)
                )

    asyncio.run(body())


async def _has_event(c: Cluster, reason: str, message: str) -> bool:
    return any((e["reason"], e["message"]) == (reason, message) for e in await c.events())


def test_job_managed_by_multikueue_gets_no_pods(kubeconfig: Path) -> None:
    async def body() -> None:
        async with cluster(kubeconfig) as c, controller_running(kubeconfig):
            managed = job_body("remote", completions=1, managedBy="kueue.x-k8s.io/multikueue")
            await c.create_job(managed)
            # A Job created after it is run to the end: the controller has seen both by then.
            await c.create_job(job_body("local", completions=1))
            (pod,) = await c.wait_for("the local job's pod", c.active_pods)
            await c.set_pod_phase(pod, "Succeeded")
            await c.wait_job("local", "Complete", lambda j: condition(j, "Complete") is not None)
            remote = await c.job("remote")
            assert remote["status"] == {}
            assert [p["metadata"]["labels"]["job-name"] for p in await c.pods()] == ["local"]
            job_events = [e for e in await c.events() if e["involvedObject"]["name"] == "remote"]
            assert job_events == []

    asyncio.run(body())


def test_controller_restart_never_counts_a_pod_twice(kubeconfig: Path) -> None:
    async def body() -> None:
        async with cluster(kubeconfig) as c:
            async with controller_running(kubeconfig):
                await c.create_job(job_body("restart", completions=4, parallelism=2))

                async def two() -> list[dict[str, Any]] | None:
                    active = await c.active_pods()
                    return active if len(active) == 2 else None

                first = await c.wait_for("2 pods", two)
            # The controller is down: one pod succeeds, one fails, and a crash is staged
            # between the two steps of counting a third pod: its uid already recorded as
            # uncounted, its finalizer still on.
            await c.set_pod_phase(first[0], "Succeeded")
            await c.set_pod_phase(first[1], "Failed", exit_code=3)
            job = await c.job("restart")
            job["status"]["uncountedTerminatedPods"] = {"succeeded": [first[0]["metadata"]["uid"]]}
            await c.client.update("batch/v1", "jobs", job, c.namespace, subresource="status")

            async with controller_running(kubeconfig):
                job = await c.wait_job(
                    "restart",
                    "both pods counted",
                    lambda j: j["status"].get("succeeded") == 1 and j["status"].get("failed") == 1,
                )
                assert job["status"].get("uncountedTerminatedPods") == {}
                await c.wait_for("the finalizers removed", lambda: _finalizers_gone(c, first))
            # A third controller sees nothing new to count.
            async with controller_running(kubeconfig):

                async def replacements() -> list[dict[str, Any]] | None:
                    active = await c.active_pods()
                    return active if len(active) == 2 else None

                for pod in await c.wait_for("2 replacement pods", replacements):
                    await c.set_pod_phase(pod, "Succeeded")
                (last,) = await c.wait_for("the last pod", c.active_pods)
                await c.set_pod_phase(last, "Succeeded")
                job = await c.wait_job(
                    "restart", "Complete", lambda j: condition(j, "Complete") is not None
                )
            assert job["status"]["succeeded"] == 4
            assert job["status"]["failed"] == 1
            assert len(await c.pods()) == 5

    asyncio.run(body())


async def _finalizers_gone(c: Cluster, pods: list[dict[str, Any]]) -> bool:
    uids = {p["metadata"]["uid"] for p in pods}
    return all(
        not p["metadata"].get("finalizers") for p in await c.pods() if p["metadata"]["uid"] in uids
    )


def test_orphan_pods_are_adopted_and_unmatched_pods_released(kubeconfig: Path) -> None:
    async def body() -> None:
        async with cluster(kubeconfig) as c, controller_running(kubeconfig):
            job = await c.create_job(job_body("adopt", completions=2, parallelism=2, suspend=True))
            labels = job["spec"]["template"]["metadata"]["labels"]
            orphan = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "stray", "labels": dict(labels)},
                "spec": job["spec"]["template"]["spec"],
            }
            await c.client.create("v1", "pods", orphan, c.namespace)
            await c.client.patch(
                "batch/v1", "jobs", "adopt", {"spec": {"suspend": False}}, c.namespace
            )

            async def two() -> list[dict[str, Any]] | None:
                active = await c.active_pods()
                owned = [p for p in active if p["metadata"].get("ownerReferences")]
                return active if len(active) == 2 and len(owned) == 2 else None

            pods = await c.wait_for("the stray pod adopted beside one new pod", two)
            stray = next(p for p in pods if p["metadata"]["name"] == "stray")
            (ref,) = stray["metadata"]["ownerReferences"]
            assert (ref["kind"], ref["uid"], ref["controller"]) == (
                "Job",
                job["metadata"]["uid"],
                True,
            )
            assert stray["metadata"]["finalizers"] == ["batch.kubernetes.io/job-tracking"]

            # A pod whose labels stop matching is released and replaced.
            other = next(p for p in pods if p["metadata"]["name"] != "stray")
            await c.client.patch(
                "v1",
                "pods",
                other["metadata"]["name"],
                {"metadata": {"labels": {"batch.kubernetes.io/controller-uid": "someone-else"}}},
                c.namespace,
            )

            async def released() -> dict[str, Any] | None:
                pod = await c.client.get("v1", "pods", other["metadata"]["name"], c.namespace)
                meta = pod["metadata"]
                gone = not meta.get("ownerReferences") and not meta.get("finalizers")
                return pod if gone else None

            await c.wait_for("the relabelled pod released, its finalizer removed", released)

            async def replaced() -> list[dict[str, Any]] | None:
                owned = [p for p in await c.active_pods() if p["metadata"].get("ownerReferences")]
                names = {p["metadata"]["name"] for p in owned}
                fresh = len(owned) == 2 and other["metadata"]["name"] not in names
                return owned if fresh else None

            await c.wait_for("a replacement", replaced)

    asyncio.run(body())
