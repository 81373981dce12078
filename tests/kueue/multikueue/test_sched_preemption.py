"""Scenarios E2, E4, E5 and E8 of the MultiKueue corpus in the SCHED harness (schedworld):
Kueue's schedulers on the manager and on both workers decide; the tests create Jobs, change
quotas, priorities and the worker's Job counts, and read where each workload runs.

E2, E5 and E8 are upstream E2E scenarios (``test/e2e/multikueue/baseline``) on its quotas with
extended resources; nothing runs pods here, so a preempted Job has no active pods to wait for.
E4 is upstream's SCHED scenario, whose test plays the worker's Job controller (active 1, then 0
once suspended)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from numaplane.testing import multikueue_int as mk
from numaplane.testing.multikueue_int import Clusters
from tests.kueue.multikueue.intworld import World, run
from tests.kueue.multikueue.schedworld import (
    E2E_SHAPE,
    GPU_HIGH,
    GPU_LOW,
    HIGH,
    LOW,
    PRIORITY_LABEL,
    SCHED_SHAPE,
    job,
    sched_world,
)

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

Obj = dict[str, Any]


def true(kind: str) -> Callable[[Obj | None], bool]:
    """A check that condition ``kind`` is True."""
    return lambda x: (mk.condition(x, kind) or ("",))[0] == "True"


def false(kind: str) -> Callable[[Obj | None], bool]:
    """A check that condition ``kind`` is False."""
    return lambda x: (mk.condition(x, kind) or ("",))[0] == "False"


admitted = true("Admitted")


async def submitted(w: World, name: str, priority: str, requests: Mapping[str, str]) -> str:
    """Create Job ``name`` on the manager; the name of its Workload."""
    created = await w.create("manager", job(w.namespace, name, priority, requests))
    return str((await w.workload_of_job(created))["metadata"]["name"])


async def runs_on(w: World, name: str, worker: str) -> Obj:
    """Wait until Workload ``name`` is admitted on the manager with ``clusterName`` ``worker``,
    its copy there admitted with the manager's spec and no copy on the other worker; the
    worker's copy."""
    local = await w.until_workload(
        "manager",
        name,
        lambda x: admitted(x) and mk.cluster_name(x) == worker,
        f"admitted on {worker}",
    )
    assert local is not None
    copy = await w.until_workload(worker, name, admitted, "admitted")
    assert copy is not None
    assert copy["spec"] == local["spec"]
    await w.until_copies(name, {worker})
    assert await w.job(worker, local["metadata"]["ownerReferences"][0]["name"]) is not None
    return copy


async def preempted(w: World, name: str) -> None:
    """Wait until Workload ``name`` is Evicted and Preempted on the manager and gone from both
    workers."""
    local = await w.until_workload(
        "manager",
        name,
        lambda x: true("Evicted")(x) and true("Preempted")(x),
        "Evicted and Preempted",
    )
    assert (mk.condition(local, "Evicted") or ("", ""))[1] == "Preempted"
    assert (mk.condition(local, "Preempted") or ("", ""))[1] == "InClusterQueue"
    await w.until_copies(name, set())


async def set_active(w: World, cluster: str, name: str, active: int) -> None:
    """Play the Job controller of ``cluster``: Job ``name`` has ``active`` (and ready) pods."""

    def edit(found: Obj) -> None:
        status = found.setdefault("status", {})
        status.setdefault("startTime", mk.now_rfc3339())
        status["active"] = active
        status["ready"] = active

    await w.change(cluster, mk.batch_job(w.namespace, name), edit, status=True)


async def job_where(w: World, cluster: str, name: str, check: Callable[[Obj], bool]) -> None:
    """Wait until Job ``name`` on ``cluster`` passes ``check``."""

    async def probe() -> bool:
        found = await w.job(cluster, name)
        return found is not None and check(found)

    await w.until(probe, f"{cluster}: job {name}")


def suspended(found: Obj) -> bool:
    """Whether a Job is suspended."""
    return bool(found["spec"].get("suspend"))


def test_e4_manager_preemption_moves_the_high_job_to_the_other_worker(
    int_clusters: Clusters,
) -> None:
    """E4 (upstream SCHED "… (other workers)"): low (cpu 2, mem 1G) runs on worker1; high
    (cpu 1, mem 2G) preempts it on the manager and runs on worker2; low's Job is suspended on
    both clusters and its copy removed once its pods are gone."""

    async def scenario() -> None:
        async with sched_world(int_clusters, SCHED_SHAPE) as w:
            low = await submitted(w, "low-job", LOW, {"cpu": "2", "memory": "1G"})
            await runs_on(w, low, "worker1")
            await set_active(w, "worker1", "low-job", 1)
            await job_where(w, "manager", "low-job", lambda j: j["status"].get("active") == 1)

            high = await submitted(w, "high-job", HIGH, {"cpu": "1", "memory": "2G"})
            await job_where(w, "manager", "low-job", suspended)
            await job_where(w, "worker1", "low-job", suspended)
            await set_active(w, "worker1", "low-job", 0)
            await job_where(w, "manager", "low-job", lambda j: j["status"].get("active") == 0)
            await w.until_workload("manager", low, false("QuotaReserved"), "quota released")

            await runs_on(w, high, "worker2")
            await preempted(w, low)

    run(scenario)


SMALL = {"cpu": "100m", "memory": "0.1G"}


def test_e5_manager_preemption_same_worker(int_clusters: Clusters) -> None:
    """E5, same worker (upstream E2E "… (same worker)"): low and high each need gpu-h100 2,
    which only worker1 has; high preempts low on the manager and runs on worker1."""

    async def scenario() -> None:
        async with sched_world(int_clusters, E2E_SHAPE) as w:
            low = await submitted(w, "low-job", LOW, {GPU_HIGH: "2"})
            await runs_on(w, low, "worker1")
            high = await submitted(w, "high-job", HIGH, {GPU_HIGH: "2"})
            await runs_on(w, high, "worker1")
            await preempted(w, low)

    run(scenario)


def test_e5_manager_preemption_other_worker(int_clusters: Clusters) -> None:
    """E5, other worker (upstream E2E "… (other workers)"): low (gpu-h100 2, gpu-v100s 1) fits
    worker1 only, high (gpu-h100 1, gpu-v100s 2) worker2 only; both do not fit the manager's
    queue together."""

    async def scenario() -> None:
        async with sched_world(int_clusters, E2E_SHAPE) as w:
            low = await submitted(w, "low-job", LOW, {**SMALL, GPU_HIGH: "2", GPU_LOW: "1"})
            await runs_on(w, low, "worker1")
            high = await submitted(w, "high-job", HIGH, {**SMALL, GPU_HIGH: "1", GPU_LOW: "2"})
            await runs_on(w, high, "worker2")
            await preempted(w, low)

    run(scenario)


def test_e2_worker_side_eviction_moves_the_job(int_clusters: Clusters) -> None:
    """E2 (upstream E2E "Should re-do admission process when workload gets evicted in the
    worker"): the job (gpu-h100 2) runs on worker1; the workers' gpu-h100 quotas are swapped and
    the worker1 copy evicted; the manager readmits it and it moves to worker2."""

    async def scenario() -> None:
        async with sched_world(int_clusters, E2E_SHAPE) as w:
            name = await submitted(w, "job", LOW, {**SMALL, GPU_HIGH: "2"})
            first = await runs_on(w, name, "worker1")
            for worker, quota in (("worker1", "1"), ("worker2", "2")):
                await w.change(worker, queue_ref(), set_quota(GPU_HIGH, quota))

            def evict(wl: Obj) -> None:
                wl["status"].setdefault("conditions", []).append(
                    {
                        "type": "Evicted",
                        "status": "True",
                        "reason": "Preempted",
                        "message": "By test",
                        "lastTransitionTime": mk.now_rfc3339(),
                    }
                )

            await w.change("worker1", mk.workload_ref(w.namespace, name), evict, status=True)
            moved = await runs_on(w, name, "worker2")
            assert moved["metadata"]["uid"] != first["metadata"]["uid"]
            assert await w.job("worker1", "job") is None

    run(scenario)


def test_e8_priority_mutation_drives_preemption(int_clusters: Clusters) -> None:
    """E8 (upstream E2E "Should allow to mutate kueue.x-k8s.io/priority-class (other
    workers)"): job1 (high; gpu-h100 2, gpu-v100s 1) runs on worker1; job2 (high; gpu-h100 1,
    gpu-v100s 2) waits on the manager without copies; job1 relabelled low is preempted and
    job2 runs on worker2."""

    async def scenario() -> None:
        async with sched_world(int_clusters, E2E_SHAPE) as w:
            wl1 = await submitted(w, "job1", HIGH, {GPU_HIGH: "2", GPU_LOW: "1"})
            await runs_on(w, wl1, "worker1")
            wl2 = await submitted(w, "job2", HIGH, {GPU_HIGH: "1", GPU_LOW: "2"})
            await w.until_workload(
                "manager",
                wl2,
                lambda x: false("QuotaReserved")(x) and not true("Evicted")(x),
                "pending",
            )
            await w.keeps_copies(wl2, set())

            def relabel(found: Obj) -> None:
                found["metadata"]["labels"][PRIORITY_LABEL] = LOW

            await w.change("manager", mk.batch_job(w.namespace, "job1"), relabel)
            await runs_on(w, wl2, "worker2")
            await preempted(w, wl1)

    run(scenario)


def queue_ref() -> Obj:
    """ClusterQueue ``q1`` (enough to read or write it)."""
    return {"apiVersion": mk.API, "kind": "ClusterQueue", "metadata": {"name": mk.QUEUE}}


def set_quota(resource: str, quota: str) -> Callable[[Obj], None]:
    """An edit of a ClusterQueue giving ``resource`` the nominal ``quota``."""

    def edit(cq: Obj) -> None:
        for row in cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"]:
            if row["name"] == resource:
                row["nominalQuota"] = quota

    return edit
