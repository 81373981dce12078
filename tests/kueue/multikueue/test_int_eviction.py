"""Scenarios E1 and E7 of the MultiKueue corpus in the INT harness (intworld): an eviction on
the admitting worker sends the workload back through admission on the manager, and a priority
change on the manager reaches the worker's copy in place (E7 without schedulers: the change is
made through the Job's priority-class label and its effect read on the copy)."""

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
    spec_equal,
    state_of,
)
from tests.kueue.multikueue.intworld import World, run, world

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

Obj = dict[str, Any]
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"


def true(kind: str) -> Any:
    """A check that condition ``kind`` is True."""
    return lambda x: (mk.condition(x, kind) or ("",))[0] == "True"


def test_e1_worker_side_eviction_redoes_admission(int_clusters: Clusters) -> None:
    async def scenario() -> None:
        async with world(int_clusters) as w:
            _, name = await dispatched(w, "job")
            before = w.admitted_total()
            await admitted_on(w, name, "worker1")
            assert w.admitted_total() == before + 1

            def preempted(wl: Obj) -> None:
                conditions = wl["status"].setdefault("conditions", [])
                conditions.append(
                    {
                        "type": "Evicted",
                        "status": "True",
                        "reason": "Preempted",
                        "message": "Preempted by the test",
                        "lastTransitionTime": mk.now_rfc3339(),
                    }
                )

            ref = mk.workload_ref(w.namespace, name)
            await w.change("worker1", ref, preempted, status=True)
            pending = ("Pending", "Reset to Pending after eviction. Previously: Retry")
            local = await w.until_workload(
                "manager",
                name,
                lambda x: (
                    mk.cluster_name(x) is None and state_of(x) == pending and true("Requeued")(x)
                ),
                "back to Pending and requeued",
            )
            assert local is not None
            await w.until_workload(
                "manager", name, lambda x: not true("QuotaReserved")(x), "quota released"
            )
            await mk.reserve(w.manager.client, local)
            await w.until_copies(name, {"worker1", "worker2"})
            local = await w.workload("manager", name)
            for worker in mk.WORKERS:
                assert spec_equal(await w.workload(worker, name), local)
            local = await admitted_on(w, name, "worker1")
            assert state_of(local) == ("Ready", ADMITTED_ON_1)
            assert w.admitted_total() == before + 2

    run(scenario)


async def priority_classes(w: World) -> None:
    """WorkloadPriorityClasses ``high`` (100) and ``low`` (10) on every cluster."""
    for cluster in ("manager", *mk.WORKERS):
        for name, value in (("high", 100), ("low", 10)):
            body = k.workload_priority_class(name, value)
            await w.client(cluster).create(mk.API, "workloadpriorityclasses", body)


def test_e7_priority_change_reaches_the_copy_in_place(int_clusters: Clusters) -> None:
    async def scenario() -> None:
        async with world(int_clusters) as w:
            await priority_classes(w)
            _, name = await dispatched(w, "job", labels={PRIORITY_LABEL: "high"})
            await admitted_on(w, name, "worker1")
            copy = await w.workload("worker1", name)
            assert copy is not None
            assert copy["spec"]["priority"] == 100
            uid = copy["metadata"]["uid"]

            def relabel(job: Obj) -> None:
                job["metadata"]["labels"][PRIORITY_LABEL] = "low"

            await w.change("manager", mk.batch_job(w.namespace, "job"), relabel)
            updated = await w.until_workload(
                "worker1",
                name,
                lambda x: x is not None and x["spec"].get("priority") == 10,
                "priority 10",
            )
            assert updated is not None
            assert updated["metadata"]["uid"] == uid
            assert updated["spec"]["priorityClassRef"]["name"] == "low"

    run(scenario)
