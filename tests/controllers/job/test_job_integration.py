"""The Job controller in-process against a real ``numaplane apiserver``; the test plays the
kubelet by writing pods/status."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.controllers.job.cluster import (
    cluster,
    condition,
    condition_types,
    controller_running,
    job_body,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

INDEX_KEY = "batch.kubernetes.io/job-completion-index"


def assert_made_by_the_controller(pod: dict[str, Any], job_uid: str) -> None:
    """The pod as upstream's controller makes it: name, labels, owner, tracking finalizer."""
    meta = pod["metadata"]
    name = meta["labels"]["job-name"]
    assert meta["generateName"] == f"{name}-"
    assert meta["name"].startswith(f"{name}-")
    assert {
        k: meta["labels"][k]
        for k in (
            "batch.kubernetes.io/controller-uid",
            "batch.kubernetes.io/job-name",
            "controller-uid",
            "job-name",
        )
    } == {
        "batch.kubernetes.io/controller-uid": job_uid,
        "batch.kubernetes.io/job-name": name,
        "controller-uid": job_uid,
        "job-name": name,
    }
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": name,
            "uid": job_uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert meta["finalizers"] == ["batch.kubernetes.io/job-tracking"]


def test_completions_5_parallelism_2(kubeconfig: Path) -> None:
    async def body() -> None:
        async with cluster(kubeconfig) as c, controller_running(kubeconfig):
            created = await c.create_job(job_body("five", completions=5, parallelism=2))
            job_uid = created["metadata"]["uid"]
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
                for pod in active:
                    assert_made_by_the_controller(pod, job_uid)
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
            completed = await c.wait_event("Completed")
            assert (completed["type"], completed["message"]) == ("Normal", "Job completed")
            assert completed["involvedObject"]["name"] == "five"
            creates = [e for e in await c.events() if e["reason"] == "SuccessfulCreate"]
            assert sorted(e["message"] for e in creates) == sorted(
                f"Created pod: {p['metadata']['name']}" for p in pods
            )

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
            event = await c.wait_event("BackoffLimitExceeded")
            assert (event["type"], event["message"]) == (
                "Warning",
                "Job has reached the specified backoff limit",
            )

    asyncio.run(body())


def test_active_deadline_fails_the_job_and_deletes_its_pods(kubeconfig: Path) -> None:
    async def body() -> None:
        async with cluster(kubeconfig) as c, controller_running(kubeconfig):
            await c.create_job(job_body("late", completions=2, parallelism=2))
            pods = await c.wait_for("active pods", c.active_pods)
            await c.set_pod_phase(pods[0], "Running")
            # The deadline is set once the pods are seen, as users cut a running Job short: set
            # at creation, it could pass (and the pods go) before a loaded machine polled them.
            await c.client.patch(
                "batch/v1", "jobs", "late", {"spec": {"activeDeadlineSeconds": 1}}, c.namespace
            )
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


def test_work_queue_job_completes_when_one_succeeded_and_none_runs(kubeconfig: Path) -> None:
    async def body() -> None:
        async with cluster(kubeconfig) as c, controller_running(kubeconfig):
            await c.create_job(job_body("queue", completions=None, parallelism=2))

            async def two() -> list[dict[str, Any]] | None:
                active = await c.active_pods()
                return active if len(active) == 2 else None

            first, second = await c.wait_for("2 pods", two)
            await c.set_pod_phase(first, "Succeeded")
            job = await c.wait_job(
                "queue", "one counted", lambda j: j["status"].get("succeeded") == 1
            )
            # The other worker is left to finish; no pod replaces the one that succeeded.
            assert job["status"]["active"] == 1
            assert condition(job, "Complete") is None
            assert len(await c.pods()) == 2
            await c.set_pod_phase(second, "Succeeded")
            job = await c.wait_job(
                "queue", "Complete", lambda j: condition(j, "Complete") is not None
            )
            assert job["status"]["succeeded"] == 2
            assert len(await c.pods()) == 2

    asyncio.run(body())


def test_on_failure_restarts_reach_the_backoff_limit(kubeconfig: Path) -> None:
    async def body() -> None:
        async with cluster(kubeconfig) as c, controller_running(kubeconfig):
            await c.create_job(
                job_body("flaky", completions=1, restart_policy="OnFailure", backoffLimit=2)
            )
            (pod,) = await c.wait_for("a pod", c.active_pods)
            # The kubelet restarted the container twice: the restarts reach backoffLimit 2
            # (the below-limit case is a unit of past_backoff_limit_on_failure).
            await c.set_pod_phase(pod, "Running", restarts=2)
            job = await c.wait_job("flaky", "Failed", lambda j: condition(j, "Failed") is not None)
            failed = condition(job, "Failed")
            assert failed is not None
            assert failed["reason"] == "BackoffLimitExceeded"
            # The running pod was deleted and counts as failed.
            assert job["status"]["failed"] == 1
            await c.wait_for("the pod deleted", c.no_pods)

    asyncio.run(body())
