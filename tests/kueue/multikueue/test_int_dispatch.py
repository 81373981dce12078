"""Scenarios C1, C2, C4 and C5 of the MultiKueue corpus in the INT harness (intworld): the
incremental and an external dispatcher, the conditions after an AllAtOnce admission and a
clusterName cleared by hand, and a MultiKueueConfig that grows under a reserved workload."""

from __future__ import annotations

from typing import Any

import pytest

from numaplane.kueue.configvalues import DISPATCHER_INCREMENTAL
from numaplane.testing import multikueue_int as mk
from numaplane.testing.multikueue_int import Clusters
from tests.kueue.multikueue.intsteps import admitted_on, dispatched, set_check, state_of
from tests.kueue.multikueue.intworld import Knobs, World, run, world

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

Obj = dict[str, Any]
EXTERNAL = "example.com/external-dispatcher"


def placement_cleared(wl: Obj | None) -> bool:
    """Neither clusterName nor nominatedClusterNames set."""
    return mk.cluster_name(wl) is None and mk.nominated(wl) is None


async def rejected(w: World, name: str) -> None:
    """Force the MultiKueue check to Rejected ("check rejected"); wait for the placement
    fields cleared."""
    await set_check(w, name, mk.CHECK, "Rejected", "check rejected")
    await w.until_workload("manager", name, placement_cleared, "clusterName/nominated cleared")


async def set_nominated(w: World, name: str, clusters: list[str]) -> None:
    """Play the external dispatcher: ``status.nominatedClusterNames`` of the manager workload."""

    def edit(wl: Obj) -> None:
        wl["status"]["nominatedClusterNames"] = clusters

    await w.change("manager", mk.workload_ref(w.namespace, name), edit, status=True)


def test_c1_incremental_dispatcher_two_workers(int_clusters: Clusters) -> None:
    async def scenario() -> None:
        knobs = Knobs(dispatcher=DISPATCHER_INCREMENTAL, step_size=3)
        async with world(int_clusters, knobs) as w:
            _, name = await dispatched(w, "job")
            await admitted_on(w, name, "worker1")
            await w.until_workload(
                "manager",
                name,
                lambda x: mk.cluster_name(x) == "worker1" and mk.nominated(x) is None,
                "clusterName worker1, nominations cleared",
            )
            await rejected(w, name)

    run(scenario)


def test_c2_external_dispatcher_nominates(int_clusters: Clusters) -> None:
    async def scenario() -> None:
        async with world(int_clusters, Knobs(dispatcher=EXTERNAL)) as w:
            job = await w.create("manager", mk.batch_job(w.namespace, "job"))
            wl = await w.workload_of_job(job)
            name = wl["metadata"]["name"]
            await mk.reserve(w.manager.client, wl)
            await w.until_workload(
                "manager", name, lambda x: state_of(x) is not None, "with the check's state"
            )
            await w.keeps_copies(name, set())
            assert mk.cluster_name(await w.workload("manager", name)) is None
            await set_nominated(w, name, ["worker2"])
            await w.until_copies(name, {"worker2"})
            await w.keeps_copies(name, {"worker2"})
            await set_nominated(w, name, ["worker1", "worker2"])
            await w.until_copies(name, {"worker1", "worker2"})
            await admitted_on(w, name, "worker2")
            await w.until_workload(
                "manager",
                name,
                lambda x: mk.cluster_name(x) == "worker2" and mk.nominated(x) is None,
                "clusterName worker2, nominations cleared",
            )
            await rejected(w, name)

    run(scenario)


def test_c4_all_at_once_conditions_and_cluster_name_cleared_by_hand(
    int_clusters: Clusters,
) -> None:
    async def scenario() -> None:
        async with world(int_clusters) as w:
            _, name = await dispatched(w, "job")
            await admitted_on(w, name, "worker1")
            local = await w.until_workload(
                "manager",
                name,
                lambda x: (
                    mk.cluster_name(x) == "worker1"
                    and mk.nominated(x) is None
                    and (mk.condition(x, "Admitted") or ("",))[0] == "True"
                ),
                "Admitted, clusterName worker1, nominations cleared",
            )
            want = {
                "QuotaReserved": ("True", "QuotaReserved", "Quota reserved in ClusterQueue q1"),
                "Admitted": ("True", "Admitted", "The workload is admitted"),
            }

            def conditions(x: Obj | None) -> dict[str, tuple[str, str, str] | None]:
                return {kind: mk.condition(x, kind) for kind in want}

            assert conditions(local) == want
            assert state_of(local) == ("Ready", 'The workload was admitted on "worker1"')

            def clear(wl: Obj) -> None:
                wl["status"].pop("clusterName", None)

            await w.change("manager", mk.workload_ref(w.namespace, name), clear, status=True)

            async def unchanged() -> tuple[Any, ...]:
                found = await w.workload("manager", name)
                return (mk.nominated(found), conditions(found), state_of(found))

            ready = ("Ready", 'The workload was admitted on "worker1"')
            await mk.consistently(unchanged, (None, want, ready), what="manager workload")

    run(scenario)


def test_c5_config_re_evaluated_when_a_cluster_is_appended(int_clusters: Clusters) -> None:
    async def scenario() -> None:
        async with world(int_clusters, config_clusters=["worker1"]) as w:
            job = await w.create("manager", mk.batch_job(w.namespace, "job"))
            wl = await w.workload_of_job(job)
            name = wl["metadata"]["name"]
            await mk.reserve(w.manager.client, wl)
            await w.until_workload(
                "manager", name, lambda x: mk.nominated(x) == ["worker1"], "nominated [worker1]"
            )
            await w.until_copies(name, {"worker1"})

            def append(config: Obj) -> None:
                config["spec"]["clusters"].append("worker2")

            await w.change("manager", mk.multikueue_config(mk.CONFIG, []), append)
            await w.until_workload(
                "manager",
                name,
                lambda x: {"worker1", "worker2"} <= set(mk.nominated(x) or []),
                "nominated both",
            )
            await w.until_copies(name, {"worker1", "worker2"})

    run(scenario)
