"""The INT harness with each cluster its own ``numaplane apiserver`` process (the corpus allows
either; a worker that is another cluster is reached this way): scenario B1 end to end across
the three servers, then a worker's connection broken and restored."""

from __future__ import annotations

import pytest
import yaml

from numaplane.testing import multikueue_int as mk
from numaplane.testing.multikueue_int import SeparateServers
from tests.kueue.multikueue.intsteps import admitted_on, dispatched, runs_alone_and_finishes
from tests.kueue.multikueue.intworld import run, world

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]


def test_b1_across_three_servers_then_a_worker_cut_off_and_back(
    separate_servers: SeparateServers,
) -> None:
    urls = {
        yaml.safe_load(separate_servers.kubeconfig(name).read_text())["clusters"][0]["cluster"][
            "server"
        ]
        for name in separate_servers.names()
    }
    assert len(urls) == 3  # three servers, not logical clusters of one

    async def scenario() -> None:
        async with world(separate_servers) as w:
            job, name = await dispatched(w, "job")
            assert job["spec"]["managedBy"] == mk.MULTIKUEUE_CONTROLLER
            await admitted_on(w, name, "worker2")
            await runs_alone_and_finishes(w, name, "job", "worker2")

            # Cut off (its Secret names a closed port) and back: Active again.
            await w.break_connection("worker1")
            await w.restore_connection("worker1")

    run(scenario)
