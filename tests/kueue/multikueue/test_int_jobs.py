"""Scenarios B1, B2, B17 and F4 of the MultiKueue corpus in the INT harness (intworld): a
batch/v1 Job dispatched to both workers, admitted on the first whose copy gets a reservation,
run there alone, its status mirrored back and its finish propagated; extra non-MultiKueue
checks hold the dispatch back; a manager shared with a ClusterQueue without MultiKueue runs
that queue's Job locally."""

from __future__ import annotations

from typing import Any

import pytest

from numaplane.testing import kueue_objects as k
from numaplane.testing import multikueue_int as mk
from numaplane.testing.multikueue_int import Clusters
from tests.kueue.multikueue.intsteps import (
    ADMITTED_ON_1,
    admitted_on,
    dispatched,
    runs_alone_and_finishes,
    set_check,
)
from tests.kueue.multikueue.intworld import run, world

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

Obj = dict[str, Any]


def test_b1_batch_job_runs_on_the_admitting_worker_and_finishes(int_clusters: Clusters) -> None:
    async def scenario() -> None:
        async with world(int_clusters) as w:
            job, name = await dispatched(w, "job")
            assert job["spec"]["managedBy"] == mk.MULTIKUEUE_CONTROLLER  # defaulted
            before = w.admitted_total()
            await admitted_on(w, name, "worker1")
            await w.until_workload(
                "manager",
                name,
                lambda x: mk.cluster_name(x) == "worker1" and mk.nominated(x) is None,
                "clusterName worker1, nominations cleared",
            )
            assert w.admitted_total() == before + 1
            events, _ = await w.manager.client.list_all("v1", "events", w.namespace)
            notes = {
                (e["type"], e["reason"], e["message"])
                for e in events
                if e["involvedObject"].get("name") == name
            }
            assert ("Normal", "MultiKueue", ADMITTED_ON_1) in notes
            await runs_alone_and_finishes(w, name, "job", "worker1")

    run(scenario)


def test_b2_explicit_managed_by_and_live_status(int_clusters: Clusters) -> None:
    async def scenario() -> None:
        async with world(int_clusters) as w:
            _, name = await dispatched(w, "job", managed_by=mk.MULTIKUEUE_CONTROLLER)
            await admitted_on(w, name, "worker1")

            async def unsuspended() -> bool:
                found = await w.job("manager", "job")
                return found is not None and found["spec"].get("suspend") is False

            await w.until(unsuspended, "the manager Job unsuspended")
            await w.until(lambda: w.job("worker1", "job"), "job on worker1")
            start = "2026-01-02T03:04:05Z"

            def running(job: Obj) -> None:
                job["status"] = {"startTime": start, "active": 1, "ready": 1}

            await w.change("worker1", mk.batch_job(w.namespace, "job"), running, status=True)

            async def mirrored() -> Obj | None:
                found = await w.job("manager", "job")
                status = (found or {}).get("status") or {}
                return found if status.get("startTime") == start and status.get("ready") else None

            manager_job = await w.until(mirrored, "the worker's status on the manager Job")
            assert manager_job["status"]["ready"] == 1
            assert manager_job["status"]["active"] == 1

            await w.finish_job("worker1", "job")

            async def complete() -> Obj | None:
                found = await w.job("manager", "job")
                done = (mk.condition(found, "Complete") or ("",))[0] == "True"
                return found if done else None

            manager_job = await w.until(complete, "the manager Job Complete")
            assert manager_job["status"].get("active", 0) == 0
            assert manager_job["status"]["startTime"] == start
            finished = await w.until_workload(
                "manager", name, lambda x: mk.condition(x, "Finished") is not None, "Finished"
            )
            assert mk.condition(finished, "Finished") == (
                "True",
                "Succeeded",
                "Job finished successfully",
            )
            await w.until_copies(name, set())

    run(scenario)


def test_b17_extra_non_multikueue_checks_hold_the_dispatch(int_clusters: Clusters) -> None:
    async def scenario() -> None:
        async with world(int_clusters, extra_checks=("ac2", "ac3")) as w:
            job = await w.create("manager", mk.batch_job(w.namespace, "job"))
            wl = await w.workload_of_job(job)
            name = wl["metadata"]["name"]
            await mk.reserve(w.manager.client, wl)

            def states(x: Obj | None) -> dict[str, str]:
                entries = ((x or {}).get("status") or {}).get("admissionChecks") or []
                return {e["name"]: e["state"] for e in entries}

            pending = {"ac1": "Pending", "ac2": "Pending", "ac3": "Pending"}
            await w.until_workload("manager", name, lambda x: states(x) == pending, "3 Pending")
            await w.keeps_copies(name, set())
            await set_check(w, name, "ac2", "Ready")
            await w.keeps_copies(name, set())
            await set_check(w, name, "ac3", "Ready")
            await w.until_copies(name, {"worker1", "worker2"})
            await admitted_on(w, name, "worker1")

    run(scenario)


def test_f4_manager_shared_with_a_queue_without_multikueue(int_clusters: Clusters) -> None:
    async def scenario() -> None:
        async with world(int_clusters) as w:
            await w.create("manager", k.cluster_queue("q2", {mk.FLAVOR: {"cpu": "5"}}))
            await w.create("manager", k.local_queue(w.namespace, "q2", "q2"))
            local_job = await w.create("manager", mk.batch_job(w.namespace, "local", "q2"))
            assert "managedBy" not in local_job["spec"]
            local_wl = await w.workload_of_job(local_job)
            local_name = local_wl["metadata"]["name"]
            _, name = await dispatched(w, "job")
            await mk.reserve(w.manager.client, local_wl, "q2")
            await w.until_workload(
                "manager",
                local_name,
                lambda x: (mk.condition(x, "Admitted") or ("",))[0] == "True",
                "Admitted locally",
            )

            async def local_started() -> bool:
                found = await w.job("manager", "local")
                return found is not None and found["spec"].get("suspend") is False

            await w.until(local_started, "the local Job unsuspended")
            await admitted_on(w, name, "worker1")
            assert await w.copies(local_name) == set()
            await w.finish_job("manager", "local")
            await w.until(lambda: w.job("worker1", "job"), "job on worker1")
            await w.finish_job("worker1", "job")
            for wl_name in (local_name, name):
                done = await w.until_workload(
                    "manager",
                    wl_name,
                    lambda x: mk.condition(x, "Finished") is not None,
                    "Finished",
                )
                assert mk.condition(done, "Finished") == (
                    "True",
                    "Succeeded",
                    "Job finished successfully",
                )
            assert await w.job("worker1", "local") is None
            assert await w.job("worker2", "local") is None

    run(scenario)
