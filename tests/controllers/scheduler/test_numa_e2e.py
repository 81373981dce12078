"""The issue's acceptance test: three simulated nodes of different shapes (``single-numa-node``),
a stream of 200 Guaranteed pods of mixed sizes, each running a short simulated while. With the
NUMA filter the scheduler causes zero TopologyAffinityError rejections; with it off, the same
stream causes some (the count is printed and recorded as the test's ``rejections`` property).

The nodes are helper simulated's ``SimulatedNodes``, in process, against a real
``numaplane apiserver``; the scheduler runs beside them in the same event loop.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from numaplane.agent.cluster.nrtcrd import ensure_nrt_crd
from numaplane.controllers.scheduler import Scheduler, SchedulerOptions
from numaplane.kube import KubeClient, load_kubeconfig
from numaplane.testing.apiserver import running_apiserver
from numaplane.topology.synthetic import parse_synthetic

from .helpers import single_numa_config

simulated = pytest.importorskip(
    "numaplane.agent.simulated", reason="needs helper simulated's nodes (wip/simulated)"
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

SHAPES = (
    "sockets=2,numa-per-socket=1,cores-per-numa=6,threads-per-core=1,memory-per-numa=16Gi",
    "sockets=2,numa-per-socket=2,cores-per-numa=4,threads-per-core=1,memory-per-numa=8Gi",
    "sockets=2,numa-per-socket=4,cores-per-numa=2,threads-per-core=1,memory-per-numa=4Gi",
)
PODS = 200
SIZES = (1, 1, 2, 2, 3, 4)


def stream(seed: int) -> list[dict[str, Any]]:
    """200 Guaranteed pods of mixed sizes, each running 1 s (simulated), never restarted."""
    rng = random.Random(seed)
    pods = []
    for i in range(PODS):
        cpus = rng.choice(SIZES)
        amounts = {"cpu": str(cpus), "memory": "256Mi"}
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"p{i:03d}",
                    "namespace": "default",
                    "annotations": {"numaplane.io/simulated-duration": "1s"},
                },
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "main",
                            "image": "sleep",
                            "resources": {"requests": amounts, "limits": amounts},
                        }
                    ],
                },
            }
        )
    return pods


async def run_stream(kubeconfig: Path, numa_filter: bool) -> Counter[str]:
    """Run the stream to its end; how many pods ended how (``Succeeded`` or a Failed reason)."""
    machines = tuple(parse_synthetic(s) for s in SHAPES)
    config = single_numa_config(machines[0])
    async with KubeClient(load_kubeconfig(kubeconfig)) as client:
        nodes = simulated.SimulatedNodes(
            client,
            simulated.SimulatedOptions(name="sim", nodes=3, machines=machines, config=config),
        )
        scheduler = Scheduler(client, SchedulerOptions(numa_filter=numa_filter, seed=1))
        tasks = [asyncio.ensure_future(nodes.run())]
        try:
            # The scheduler starts once the nodes have registered (the CRD made sure of):
            # started before the CRD exists, it would place the first pods without the NRTs.
            await asyncio.wait_for(nodes.wait_ready(), 60)
            await ensure_nrt_crd(client)
            tasks.append(asyncio.ensure_future(scheduler.run()))
            for pod in stream(seed=7):
                await client.create("v1", "pods", pod, "default")

            async def ended() -> Counter[str] | None:
                listed = await client.list("v1", "pods", "default")
                outcome: Counter[str] = Counter()
                for obj in listed["items"]:
                    status = obj.get("status") or {}
                    phase = status.get("phase")
                    if phase == "Succeeded":
                        outcome["Succeeded"] += 1
                    elif phase == "Failed":
                        outcome[str(status.get("reason") or "Failed")] += 1
                    else:
                        return None
                return outcome

            outcome: Counter[str] = await asyncio.wait_for(poll(ended), 480)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    # TLS transports finish closing a few loop turns after the session closed.
    await asyncio.sleep(0.25)
    return outcome


async def poll(check: Callable[[], Any]) -> Any:
    while (result := await check()) is None:
        await asyncio.sleep(0.5)
    return result


def test_numa_filter_prevents_topology_affinity_errors(
    tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    with running_apiserver(tmp_path / "with") as server:
        with_filter = asyncio.run(run_stream(server.kubeconfig, numa_filter=True))
    with running_apiserver(tmp_path / "without") as server:
        without = asyncio.run(run_stream(server.kubeconfig, numa_filter=False))
    rejections = without["TopologyAffinityError"]
    record_property("rejections", rejections)
    print(f"TopologyAffinityError: with the NUMA filter 0, without it {rejections}")
    assert with_filter == Counter({"Succeeded": PODS})
    assert rejections > 0
    assert sum(without.values()) == PODS
