"""The Job controller in-process against a real ``numaplane apiserver``; the test plays the
kubelet by writing pods/status."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.controllers.job.cluster import (
    cluster,
    condition,
    condition_types,
    controller_running,
    job_body,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


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
