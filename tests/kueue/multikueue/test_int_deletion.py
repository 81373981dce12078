"""Scenarios F1 and F2 of the MultiKueue corpus in the INT harness (intworld): deleting the
manager's Job removes the worker's objects without the garbage collector, and a worker's own
Job that merely shares the name is never touched."""

from __future__ import annotations

import pytest

from numaplane.testing import multikueue_int as mk
from numaplane.testing.multikueue_int import Clusters
from tests.kueue.multikueue.intsteps import admitted_on, dispatched
from tests.kueue.multikueue.intworld import Knobs, run, world

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]


def test_f1_synchronous_deletion_without_gc(int_clusters: Clusters) -> None:
    async def scenario() -> None:
        async with world(int_clusters, Knobs(gc_interval=0.0)) as w:
            _, name = await dispatched(w, "job")
            await admitted_on(w, name, "worker1")
            await w.until(lambda: w.job("worker1", "job"), "job on worker1")
            await w.delete("manager", mk.batch_job(w.namespace, "job"))
            await w.delete("manager", mk.workload_ref(w.namespace, name))
            await w.until_copies(name, set())

            async def job_gone() -> bool:
                return await w.job("worker1", "job") is None

            await w.until(job_gone, "the job on worker1 removed")

    run(scenario)


def test_f2_foreign_job_with_the_same_name_is_kept(int_clusters: Clusters) -> None:
    async def scenario() -> None:
        async with world(int_clusters) as w:
            foreign = mk.batch_job(w.namespace, "sample-job")
            del foreign["metadata"]["labels"]
            foreign["spec"]["suspend"] = True
            created = await w.create("worker1", foreign)
            uid = created["metadata"]["uid"]
            _, name = await dispatched(w, "sample-job")
            assert name  # copies on worker1 and worker2

            async def foreign_uid() -> str | None:
                found = await w.job("worker1", "sample-job")
                return None if found is None else str(found["metadata"]["uid"])

            await mk.consistently(foreign_uid, uid, what="the foreign Job's uid")

    run(scenario)
