"""The Job controller in-process against a real ``numaplane apiserver``; the test plays the
kubelet by writing pods/status."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.controllers.job.cluster import (
    Cluster,
    cluster,
    condition,
    condition_types,
    controller_running,
    job_body,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

INDEX_KEY = "batch.kubernetes.io/job-completion-index"


def test_completions_5_parallelism_2(kubeconfig: Path) -> None:
    async def body() -> None:
        async with cluster(kubeconfig) as c, controller_running(kubeconfig):
            await c.create_job(job_body("five", completions=5, parallelism=2))
            most_active = 0
            finished = 0
            while finished < 5:
                want = min(2, 5 - finished)

                async def full(want: int = want) -> list[dict[str, object]] | None:
                    nonlocal most_active
                    active = await c.active_pods()
                    most_active = max(most_active, len(active))
                    return active if len(active) == want else None

                active = await c.wait_for(f"{want} active pods", full)
                await c.set_pod_phase(active[0], "Succeeded")
                finished += 1
            job = await c.wait_job(
                "five", "Complete", lambda j: condition(j, "Complete") is not None
            )
            assert most_active == 2
            status = job["status"]
            assert status["succeeded"] == 5
            assert "failed" not in status
            assert condition_types(job) == [("SuccessCriteriaMet", "True"), ("Complete", "True")]
            complete = condition(job, "Complete")
            assert complete is not None
            assert (complete["reason"], complete["message"]) == (
                "CompletionsReached",
                "Reached expected number of succeeded pods",
            )
            assert status["completionTime"]
            assert status["startTime"]
            assert status["ready"] == 0
            assert status["terminating"] == 0
            assert status.get("uncountedTerminatedPods") == {}
            pods = await c.pods()
            assert len(pods) == 5
            assert all(not p["metadata"].get("finalizers") for p in pods)
            reasons = [e["reason"] for e in await c.events()]
            assert reasons.count("SuccessfulCreate") == 5
            assert "Completed" in reasons

    asyncio.run(body())


def test_indexed_job_runs_each_index_once(kubeconfig: Path) -> None:
    async def body() -> None:
        async with cluster(kubeconfig) as c, controller_running(kubeconfig):
            await c.create_job(
                job_body("idx", completions=5, parallelism=5, completionMode="Indexed")
            )

            async def five() -> list[dict[str, Any]] | None:
                active = await c.active_pods()
                return active if len(active) == 5 else None

            pods = await c.wait_for("5 indexed pods", five)
            by_index = {p["metadata"]["annotations"][INDEX_KEY]: p for p in pods}
            assert sorted(by_index) == ["0", "1", "2", "3", "4"]
            for index, pod in by_index.items():
                assert pod["metadata"]["labels"][INDEX_KEY] == index
                assert pod["metadata"]["generateName"] == f"idx-{index}-"
                assert pod["spec"]["hostname"] == f"idx-{index}"
                (env,) = pod["spec"]["containers"][0]["env"]
                assert env == {
                    "name": "JOB_COMPLETION_INDEX",
                    "valueFrom": {
                        "fieldRef": {
                            "apiVersion": "v1",
                            "fieldPath": f"metadata.labels['{INDEX_KEY}']",
                        }
                    },
                }
            # Out of order: the status lists the finished indexes as intervals.
            for index in ("3", "0", "4"):
                await c.set_pod_phase(by_index[index], "Succeeded")
            job = await c.wait_job(
                "idx", "indexes 0,3,4", lambda j: j["status"].get("completedIndexes") == "0,3,4"
            )
            assert job["status"]["succeeded"] == 3
            # A failed index is run again by a new pod with the same index.
            await c.set_pod_phase(by_index["1"], "Failed", exit_code=1)

            async def replaced() -> dict[str, Any] | None:
                old_uid = by_index["1"]["metadata"]["uid"]
                for pod in await c.active_pods():
                    index = pod["metadata"]["annotations"][INDEX_KEY]
                    if index == "1" and pod["metadata"]["uid"] != old_uid:
                        return pod
                return None

            again = await c.wait_for("a new pod for index 1", replaced)
            await c.set_pod_phase(again, "Succeeded")
            await c.set_pod_phase(by_index["2"], "Succeeded")
            job = await c.wait_job(
                "idx", "Complete", lambda j: condition(j, "Complete") is not None
            )
            assert job["status"]["completedIndexes"] == "0-4"
            assert job["status"]["succeeded"] == 5
            assert job["status"]["failed"] == 1
            assert len(await c.pods()) == 6

    asyncio.run(body())


def test_failing_job_stops_at_backoff_limit(kubeconfig: Path) -> None:
    async def body() -> None:
        async with cluster(kubeconfig) as c, controller_running(kubeconfig):
            await c.create_job(job_body("fails", completions=1, backoffLimit=2))
            failed_uids: set[str] = set()
            for _ in range(3):

                async def fresh() -> list[dict[str, Any]] | None:
                    active = [
                        p for p in await c.active_pods() if p["metadata"]["uid"] not in failed_uids
                    ]
                    return active or None

                (pod,) = await c.wait_for("a new pod", fresh)
                failed_uids.add(pod["metadata"]["uid"])
                await c.set_pod_phase(pod, "Failed", exit_code=1)
            job = await c.wait_job("fails", "Failed", lambda j: condition(j, "Failed") is not None)
            assert condition_types(job) == [("FailureTarget", "True"), ("Failed", "True")]
            for kind in ("FailureTarget", "Failed"):
                cond = condition(job, kind)
                assert cond is not None
                assert (cond["reason"], cond["message"]) == (
                    "BackoffLimitExceeded",
                    "Job has reached the specified backoff limit",
                )
            assert job["status"]["failed"] == 3
            assert "succeeded" not in job["status"]
            assert "completionTime" not in job["status"]
            assert len(await c.pods()) == 3
            warnings = [(e["type"], e["reason"], e["message"]) for e in await c.events()]
            assert (
                "Warning",
                "BackoffLimitExceeded",
                "Job has reached the specified backoff limit",
            ) in warnings

    asyncio.run(body())


def test_active_deadline_fails_the_job_and_deletes_its_pods(kubeconfig: Path) -> None:
    async def body() -> None:
        async with cluster(kubeconfig) as c, controller_running(kubeconfig):
            await c.create_job(
                job_body("late", completions=2, parallelism=2, activeDeadlineSeconds=1)
            )
            pods = await c.wait_for("active pods", c.active_pods)
            await c.set_pod_phase(pods[0], "Running")
            job = await c.wait_job("late", "Failed", lambda j: condition(j, "Failed") is not None)
            assert condition_types(job) == [("FailureTarget", "True"), ("Failed", "True")]
            failed = condition(job, "Failed")
            assert failed is not None
            assert (failed["reason"], failed["message"]) == (
                "DeadlineExceeded",
                "Job was active longer than specified deadline",
            )
            # The running pods were deleted and count as failed.
            assert job["status"]["failed"] == 2
            assert job["status"].get("active", 0) == 0
            assert await c.pods() == []

    asyncio.run(body())


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
            await c.wait_for("the pods deleted", lambda: _no_pods(c))
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
            reasons = [e["reason"] for e in await c.events()]
            assert "Suspended" in reasons
            assert "Resumed" in reasons
            assert "SuccessfulDelete" in reasons

    asyncio.run(body())


async def _no_pods(c: Cluster) -> bool:
    return not await c.pods()


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
