"""Pod failure policy, success policy and Job deletion against a real ``numaplane apiserver``."""

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


async def _count(c: Cluster, n: int) -> list[dict[str, Any]] | None:
    active = await c.active_pods()
    return active if len(active) == n else None


def test_fail_job_rule_fails_at_once(kubeconfig: Path) -> None:
    policy = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]}

    async def body() -> None:
        async with cluster(kubeconfig) as c, controller_running(kubeconfig):
            await c.create_job(
                job_body("pfp", completions=3, parallelism=3, podFailurePolicy=policy)
            )
            pods = await c.wait_for("3 pods", lambda: _count(c, 3))
            await c.set_pod_phase(pods[0], "Failed", exit_code=42)
            job = await c.wait_job("pfp", "Failed", lambda j: condition(j, "Failed") is not None)
            assert condition_types(job) == [("FailureTarget", "True"), ("Failed", "True")]
            failed = condition(job, "Failed")
            assert failed is not None
            assert failed["reason"] == "PodFailurePolicy"
            name = pods[0]["metadata"]["name"]
            assert failed["message"] == (
                f"Container main for pod {c.namespace}/{name} failed with exit code 42 "
                "matching FailJob rule at index 0"
            )
            # The other two were deleted; the failed one stays (finished), untracked.
            remaining = await c.pods()
            assert [p["metadata"]["name"] for p in remaining] == [name]
            assert not remaining[0]["metadata"].get("finalizers")

    asyncio.run(body())


def test_ignored_failure_is_not_counted(kubeconfig: Path) -> None:
    policy = {"rules": [{"action": "Ignore", "onExitCodes": {"operator": "In", "values": [137]}}]}

    async def body() -> None:
        async with cluster(kubeconfig) as c, controller_running(kubeconfig):
            await c.create_job(
                job_body("ign", completions=1, backoffLimit=0, podFailurePolicy=policy)
            )
            (first,) = await c.wait_for("a pod", lambda: _count(c, 1))
            await c.set_pod_phase(first, "Failed", exit_code=137)

            async def replacement() -> dict[str, Any] | None:
                for pod in await c.active_pods():
                    if pod["metadata"]["uid"] != first["metadata"]["uid"]:
                        return pod
                return None

            second = await c.wait_for("a replacement pod", replacement)
            await c.set_pod_phase(second, "Succeeded")
            job = await c.wait_job(
                "ign", "Complete", lambda j: condition(j, "Complete") is not None
            )
            assert job["status"]["succeeded"] == 1
            assert "failed" not in job["status"]

    asyncio.run(body())


def test_success_policy_completes_early(kubeconfig: Path) -> None:
    async def body() -> None:
        async with cluster(kubeconfig) as c, controller_running(kubeconfig):
            await c.create_job(
                job_body(
                    "leader",
                    completions=3,
                    parallelism=3,
                    completionMode="Indexed",
                    successPolicy={"rules": [{"succeededIndexes": "0"}]},
                )
            )
            pods = await c.wait_for("3 pods", lambda: _count(c, 3))
            leader = next(
                p
                for p in pods
                if p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == "0"
            )
            await c.set_pod_phase(leader, "Succeeded")
            job = await c.wait_job(
                "leader", "Complete", lambda j: condition(j, "Complete") is not None
            )
            assert condition_types(job) == [("SuccessCriteriaMet", "True"), ("Complete", "True")]
            complete = condition(job, "Complete")
            assert complete is not None
            assert (complete["reason"], complete["message"]) == (
                "SuccessPolicy",
                "Matched rules at index 0",
            )
            assert job["status"]["completedIndexes"] == "0"
            # The workers still running were deleted, and are no failures.
            assert "failed" not in job["status"]
            assert [p["metadata"]["uid"] for p in await c.pods()] == [leader["metadata"]["uid"]]

    asyncio.run(body())


def test_deleting_a_job_lets_its_pods_go(kubeconfig: Path) -> None:
    async def body() -> None:
        async with cluster(kubeconfig) as c, controller_running(kubeconfig):
            await c.create_job(job_body("gone", completions=2, parallelism=2))
            pods = await c.wait_for("2 pods", lambda: _count(c, 2))
            await c.set_pod_phase(pods[0], "Running")
            await c.client.delete(
                "batch/v1", "jobs", "gone", c.namespace, propagation_policy="Background"
            )

            async def no_pods() -> bool:
                return not await c.pods()

            # The garbage collector deletes the pods; their tracking finalizer must not hold
            # them.
            await c.wait_for("the pods gone", no_pods)

    asyncio.run(body())


def test_backoff_limit_per_index(kubeconfig: Path) -> None:
    index_key = "batch.kubernetes.io/job-completion-index"
    count_key = "batch.kubernetes.io/job-index-failure-count"

    async def body() -> None:
        async with cluster(kubeconfig) as c, controller_running(kubeconfig):
            await c.create_job(
                job_body(
                    "per-index",
                    completions=2,
                    parallelism=2,
                    completionMode="Indexed",
                    backoffLimitPerIndex=1,
                )
            )
            pods = await c.wait_for("2 pods", lambda: _count(c, 2))
            by_index = {p["metadata"]["annotations"][index_key]: p for p in pods}
            assert {p["metadata"]["annotations"][count_key] for p in pods} == {"0"}
            await c.set_pod_phase(by_index["1"], "Succeeded")
            await c.set_pod_phase(by_index["0"], "Failed", exit_code=1)

            async def retry() -> dict[str, Any] | None:
                for pod in await c.active_pods():
                    if pod["metadata"]["uid"] != by_index["0"]["metadata"]["uid"]:
                        return pod
                return None

            second = await c.wait_for("index 0 retried", retry)
            assert second["metadata"]["annotations"][index_key] == "0"
            assert second["metadata"]["annotations"][count_key] == "1"
            await c.set_pod_phase(second, "Failed", exit_code=1)
            job = await c.wait_job(
                "per-index", "Failed", lambda j: condition(j, "Failed") is not None
            )
            failed = condition(job, "Failed")
            assert failed is not None
            assert (failed["reason"], failed["message"]) == (
                "FailedIndexes",
                "Job has failed indexes",
            )
            status = job["status"]
            assert (status["failedIndexes"], status["completedIndexes"]) == ("0", "1")
            assert (status["failed"], status["succeeded"]) == (2, 1)
            assert len(await c.pods()) == 3

    asyncio.run(body())
