"""The scheduler against a real ``numaplane apiserver``: Nodes and NodeResourceTopologies made
by the test (snapshots of in-memory nodes standing for their agents, which admit what is bound
to them and republish): pods bind where they fit and the nodes admit every one; a pod that fits
nowhere stays Pending with the FailedScheduling event and the PodScheduled=False condition and
is bound once a node that fits it is added; a NUMA-misaligned pod is refused with the NUMA
filter's reason; a pod of another scheduler is left alone."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from numaplane.agent.cluster.nodeobject import node_object
from numaplane.agent.cluster.nrt import nrt_object
from numaplane.agent.cluster.nrtcrd import ensure_nrt_crd
from numaplane.api.manifest import pod_from_dict
from numaplane.controllers.manager import (
    SCHEDULER_LEASE,
    ControllerManagerOptions,
    run_controller_manager,
)
from numaplane.controllers.scheduler import Scheduler, SchedulerOptions
from numaplane.controllers.scheduler.numa import NRT_API_VERSION, NRT_RESOURCE
from numaplane.kube import KubeClient, load_kubeconfig
from numaplane.kube.events import EventRecorder
from numaplane.node.admission import Node
from numaplane.testing.apiserver import running_apiserver
from numaplane.topology.synthetic import parse_synthetic

from .helpers import pod_obj, single_numa_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

NOW = datetime(2026, 1, 1, tzinfo=UTC)
# 2 zones x 4 CPUs, CPU 0 reserved: 7 allocatable CPUs, zones of 3 and 4.
SMALL = "sockets=2,numa-per-socket=1,cores-per-numa=4,threads-per-core=1,memory-per-numa=8Gi"
LARGE = "sockets=2,numa-per-socket=1,cores-per-numa=8,threads-per-core=1,memory-per-numa=16Gi"


async def until(check: Callable[[], Awaitable[bool]], timeout: float = 60.0) -> None:
    async def wait() -> None:
        while not await check():
            await asyncio.sleep(0.05)

    await asyncio.wait_for(wait(), timeout)


class FakeAgents:
    """In-memory nodes standing for the agents: publish Node and NRT, admit what is bound."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client
        self.nodes: dict[str, Node] = {}
        self.admitted: dict[str, str] = {}
        self.refused: list[str] = []

    async def add(self, name: str, shape: str) -> None:
        machine = parse_synthetic(shape)
        self.nodes[name] = Node(machine, single_numa_config(machine))
        obj = node_object(name, self.nodes[name], now=NOW)
        made = await self.client.create("v1", "nodes", obj)
        made["status"] = obj["status"]
        await self.client.update("v1", "nodes", made, subresource="status")
        await self.client.create(NRT_API_VERSION, NRT_RESOURCE, nrt_object(name, self.nodes[name]))

    async def sync(self) -> None:
        """Admit every newly bound pod on its node in bind order, as an agent admits in watch
        order (nothing but the binding writes a bound pod here, so its resourceVersion is its
        binding's), and republish that node's NRT."""
        listed = await self.client.list("v1", "pods", "default")
        changed = set()
        items = sorted(listed["items"], key=lambda o: int(o["metadata"]["resourceVersion"]))
        for obj in items:
            node = obj["spec"].get("nodeName")
            uid = obj["metadata"]["uid"]
            if not node or uid in self.admitted:
                continue
            admission = self.nodes[node].admit(pod_from_dict(obj, "test"))
            self.admitted[uid] = node
            if not admission.admitted:
                self.refused.append(obj["metadata"]["name"])
            changed.add(node)
        for node in changed:
            current = await self.client.get(NRT_API_VERSION, NRT_RESOURCE, node)
            fresh = nrt_object(node, self.nodes[node])
            fresh["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
            await self.client.update(NRT_API_VERSION, NRT_RESOURCE, fresh)


async def pod(client: KubeClient, name: str) -> dict[str, Any]:
    return await client.get("v1", "pods", name, "default")


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return dict(c)
    return None


def test_scheduler_binds_reports_and_retries(tmp_path: Path) -> None:
    with running_apiserver(tmp_path / "data") as server:
        config = load_kubeconfig(server.kubeconfig)

        async def body() -> None:
            async with KubeClient(config) as client:
                await ensure_nrt_crd(client)
                agents = FakeAgents(client)
                await agents.add("small-a", SMALL)
                await agents.add("small-b", SMALL)
                recorder = EventRecorder(client, "default-scheduler")
                scheduler = Scheduler(client, SchedulerOptions(), recorder=recorder)
                task = asyncio.ensure_future(scheduler.run())
                try:
                    await scenario(client, agents, scheduler)
                finally:
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
                    await recorder.close()
            # TLS transports finish closing a few loop turns after the session closed (aiohttp's
            # advice): without this wait asyncio.run may drop them open (a ResourceWarning).
            await asyncio.sleep(0.25)

        asyncio.run(body())


async def scenario(client: KubeClient, agents: FakeAgents, scheduler: Scheduler) -> None:
    # Two 2-CPU pods, then two 3-CPU pods: LeastAllocated spreads them, one of each per small
    # node, the 2-CPU one in zone 0 (3 -> 1 free), the 3-CPU one in zone 1 (4 -> 1 free).
    names = ["two-0", "two-1", "three-0", "three-1"]
    for name in names:
        cpu = "2" if name.startswith("two") else "3"
        await client.create("v1", "pods", pod_obj(name, cpu=cpu, memory="256Mi"), "default")

    async def all_bound() -> bool:
        await agents.sync()
        return all(p["spec"].get("nodeName") for p in [await pod(client, n) for n in names])

    await until(all_bound)
    placed = {n: (await pod(client, n))["spec"]["nodeName"] for n in names}
    assert {placed["two-0"], placed["two-1"]} == {"small-a", "small-b"}
    assert {placed["three-0"], placed["three-1"]} == {"small-a", "small-b"}
    assert agents.refused == []

    # Each small node has 1 free CPU in each zone now: a 2-CPU pod fits the node's cpu (2 of 7
    # free) but no zone: the NUMA filter refuses it. A 5-CPU pod fits no node's cpu at all.
    await client.create("v1", "pods", pod_obj("misaligned", cpu="2", memory="256Mi"), "default")
    await client.create("v1", "pods", pod_obj("big", cpu="5", memory="256Mi"), "default")
    other = pod_obj("other", cpu="1", memory="64Mi", scheduler_name="my-scheduler")
    await client.create("v1", "pods", other, "default")

    async def reported(name: str) -> bool:
        return condition(await pod(client, name), "PodScheduled") is not None

    await until(lambda: reported("misaligned"))
    await until(lambda: reported("big"))
    numa_message = (
        "0/2 nodes are available: 2 cannot align container: TopologyAffinityError. preemption: "
        "0/2 nodes are available: 2 No preemption victims found for incoming pod.."
    )
    big_message = (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod.."
    )
    for name, message in (("misaligned", numa_message), ("big", big_message)):
        got = condition(await pod(client, name), "PodScheduled")
        assert got is not None, name
        assert (got["status"], got["reason"], got["message"]) == ("False", "Unschedulable", message)
        assert not (await pod(client, name))["spec"].get("nodeName")

    async def event_for(name: str) -> dict[str, Any] | None:
        events = await client.list("v1", "events", "default")
        for event in events["items"]:
            if event["involvedObject"].get("name") == name:
                return dict(event)
        return None

    async def has_event() -> bool:
        return await event_for("big") is not None

    await until(has_event)
    event = await event_for("big")
    assert event is not None
    assert (event["type"], event["reason"], event["message"]) == (
        "Warning",
        "FailedScheduling",
        big_message,
    )

    # A node with room arrives: both waiting pods get bound there, and it admits them.
    await agents.add("large", LARGE)

    async def bound_to_large() -> bool:
        await agents.sync()
        got = [(await pod(client, n))["spec"].get("nodeName") for n in ("misaligned", "big")]
        return got == ["large", "large"]

    await until(bound_to_large)
    assert agents.refused == []
    assert not (await pod(client, "other"))["spec"].get("nodeName")
    assert scheduler.bind_errors == 0


def test_controller_manager_runs_the_scheduler_under_its_lease(tmp_path: Path) -> None:
    # The controller manager builds the scheduler from its options (``--no-numa-filter`` and
    # ``--scoring-strategy`` become SchedulerOptions) and runs it once it holds the scheduler's
    # Lease: a pod gets bound.
    with running_apiserver(tmp_path / "data") as server:
        config = load_kubeconfig(server.kubeconfig)

        async def body() -> None:
            async with KubeClient(config) as client:
                await ensure_nrt_crd(client)
                agents = FakeAgents(client)
                await agents.add("only", SMALL)
                options = ControllerManagerOptions(
                    controllers=("scheduler",),
                    scheduler_options={"numa_filter": True, "scoring_strategy": "MostAllocated"},
                )
                task = asyncio.ensure_future(run_controller_manager(client, options))
                try:
                    await client.create("v1", "pods", pod_obj("p", cpu="1"), "default")

                    async def bound() -> bool:
                        return bool((await pod(client, "p"))["spec"].get("nodeName") == "only")

                    await until(bound)
                    lease = await client.get(
                        "coordination.k8s.io/v1", "leases", SCHEDULER_LEASE, "kube-system"
                    )
                    assert lease["spec"]["holderIdentity"] == options.identity
                finally:
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
            await asyncio.sleep(0.25)

        asyncio.run(body())
