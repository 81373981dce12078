"""Scenarios D1, D2, D4 and D5 of the MultiKueue corpus in the INT harness (intworld): objects
left on a disconnected worker are removed once it reconnects, a brief loss does not evict, and
a manager restarted during an outage waits for workerLostTimeout from its restart before it
retries the workloads admitted on the lost worker."""

from __future__ import annotations

import asyncio
import calendar
import time
from typing import Any

import pytest

from numaplane.testing import multikueue_int as mk
from numaplane.testing.multikueue_int import Clusters
from tests.kueue.multikueue.intsteps import admitted_on, dispatched
from tests.kueue.multikueue.intworld import Knobs, World, run, world

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

Obj = dict[str, Any]
KNOBS = Knobs()


async def delete_job_and_workload(w: World, job: str, name: str) -> None:
    """Delete the manager's Job and its Workload; wait until the Workload is gone."""
    await w.delete("manager", mk.batch_job(w.namespace, job))
    await w.delete("manager", mk.workload_ref(w.namespace, name))
    await w.until_workload("manager", name, lambda x: x is None, "gone")


def test_d1_deleted_while_disconnected_cleaned_after_reconnect(int_clusters: Clusters) -> None:
    async def scenario() -> None:
        async with world(int_clusters) as w:
            _, name = await dispatched(w, "job")
            await w.break_connection("worker2")
            copy = await w.workload("worker1", name)
            assert copy is not None
            await mk.reserve(w.client("worker1"), copy)
            await w.until(lambda: w.job("worker1", "job"), "job on worker1")
            await w.break_connection("worker1")
            await delete_job_and_workload(w, "job", name)
            # Nothing reaches the workers while they are cut off.
            assert await w.copies(name) == {"worker1", "worker2"}
            assert await w.job("worker1", "job") is not None
            await w.restore_connection("worker2")
            await w.until_copies(name, {"worker1"})
            await w.restore_connection("worker1")
            await w.until_copies(name, set())

            async def job_gone() -> bool:
                return await w.job("worker1", "job") is None

            await w.until(job_gone, "the job on worker1 removed")

    run(scenario)


def test_d2_non_admitting_worker_cleaned_after_reconnect(int_clusters: Clusters) -> None:
    async def scenario() -> None:
        async with world(int_clusters) as w:
            _, name = await dispatched(w, "job")
            await w.break_connection("worker1")
            copy = await w.workload("worker2", name)
            assert copy is not None
            await mk.reserve(w.client("worker2"), copy)
            await w.until_workload(
                "manager",
                name,
                lambda x: (mk.condition(x, "Admitted") or ("",))[0] == "True",
                "Admitted",
            )
            await w.until(lambda: w.job("worker2", "job"), "job on worker2")
            await w.finish_job("worker2", "job")
            await w.until_workload(
                "manager",
                name,
                lambda x: (mk.condition(x, "Finished") or ("",))[0] == "True",
                "Finished",
            )

            async def worker2_clean() -> bool:
                return await w.workload("worker2", name) is None

            await w.until(worker2_clean, "the worker2 copy deleted")
            assert await w.workload("worker1", name) is not None
            await w.restore_connection("worker1")
            await w.until_copies(name, set())

    run(scenario)


async def three_admitted_on_worker2(w: World) -> list[str]:
    """Three jobs admitted on worker2, their check states older than workerLostTimeout."""
    names = []
    for index in range(3):
        _, name = await dispatched(w, f"job{index}")
        await admitted_on(w, name, "worker2")
        names.append(name)
    newest = 0.0
    for name in names:
        state = mk.check_state(await w.workload("manager", name))
        assert state is not None
        stamp = time.strptime(state["lastTransitionTime"], "%Y-%m-%dT%H:%M:%SZ")
        newest = max(newest, calendar.timegm(stamp))
    # The scenario's precondition (the ages), not a measurement: whole-second stamps, +1.
    await asyncio.sleep(max(0.0, newest + 1 + KNOBS.worker_lost_timeout - time.time()))
    return names


async def kept(w: World, names: list[str]) -> list[tuple[Any, ...]]:
    """QuotaReserved, the check's state and its retryCount, per workload."""
    found = []
    for name in names:
        wl = await w.workload("manager", name)
        state = mk.check_state(wl) or {}
        found.append(
            (
                (mk.condition(wl, "QuotaReserved") or ("",))[0],
                state.get("state"),
                state.get("retryCount", 0),
            )
        )
    return found


def test_d4_brief_loss_does_not_evict(int_clusters: Clusters) -> None:
    async def scenario() -> None:
        async with world(int_clusters, KNOBS) as w:
            names = await three_admitted_on_worker2(w)
            await w.break_connection("worker2")
            await w.restore_connection("worker2")
            want = [("True", "Ready", 0)] * 3
            window = 2 * KNOBS.worker_lost_timeout
            await mk.consistently(lambda: kept(w, names), want, window, "admitted workloads")

    run(scenario)


def test_d5_manager_restart_during_an_outage(int_clusters: Clusters) -> None:
    async def scenario() -> None:
        async with world(int_clusters, KNOBS) as w:
            names = await three_admitted_on_worker2(w)
            await w.break_connection("worker2")
            await w.restart_manager()
            want = [("True", "Ready", 0)] * 3
            grace = 2 * KNOBS.worker_lost_timeout / 3
            await mk.consistently(lambda: kept(w, names), want, grace, "within the grace")

            async def all_retried() -> bool:
                for name in names:
                    state = mk.check_state(await w.workload("manager", name)) or {}
                    if state.get("retryCount", 0) < 1:
                        return False
                return True

            await w.until(all_retried, "every check retried", 4 * KNOBS.worker_lost_timeout)

    run(scenario)
