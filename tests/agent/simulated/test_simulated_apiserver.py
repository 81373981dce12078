"""Simulated nodes against a real ``numaplane apiserver`` (subprocess, loopback): three nodes of
different shapes register (label, capacity, NodeResourceTopology); pods bound to them run for
their simulated duration and succeed; a pod the single-numa-node policy cannot align is
``Failed`` with the kubelet's ``TopologyAffinityError``; a deletion frees the CPUs; pods are
admitted in the order they were bound; a restarted simulator takes its pods back.

Time is a ``FakeClock`` the tests advance; waits poll the server until what is expected
appears (bounded by the timeout mark), nothing asserts how long anything took.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from numaplane.agent.cluster.nrt import NRT_API_VERSION, NRT_RESOURCE
from numaplane.agent.simulated import (
    DURATION_ANNOTATION,
    SIMULATED_LABEL,
    SimulatedNodes,
    SimulatedOptions,
)
from numaplane.api.kubeletconfig import kubelet_config_from_dict
from numaplane.kube import ApiError, KubeClient, load_kubeconfig
from numaplane.testing.apiserver import RunningApiServer, running_apiserver
from numaplane.testing.fakeclock import FakeClock
from numaplane.topology.presets import PRESETS
from tests.kube.client_support import until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

CONFIG = kubelet_config_from_dict(
    {
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": "0",
        "topologyManagerPolicy": "single-numa-node",
    }
)
#: 2, 4 and 8 NUMA nodes: 12, 80 and 256 CPUs (6, 20 and 32 per NUMA node).
SHAPES = ("dual-socket-ht", "dual-socket-multi-numa", "dual-socket-multi-numa-large")
MACHINES = tuple(PRESETS[name].build() for name in SHAPES)
NRT = (NRT_API_VERSION, NRT_RESOURCE)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApiServer]:
    with running_apiserver(tmp_path_factory.mktemp("apiserver")) as running:
        yield running


def pod(
    name: str,
    node: str,
    cpus: int,
    *,
    duration: str | None = None,
    restart_policy: str = "Never",
) -> dict[str, Any]:
    """A Guaranteed pod bound to ``node`` (``spec.nodeName`` set at creation)."""
    resources = {"cpu": str(cpus), "memory": "1Gi"}
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "nodeName": node,
            "restartPolicy": restart_policy,
            "containers": [
                {
                    "name": "c",
                    "image": "sleep",
                    "resources": {"requests": resources, "limits": resources},
                }
            ],
        },
    }
    if duration is not None:
        obj["metadata"]["annotations"] = {DURATION_ANNOTATION: duration}
    return obj


@dataclass
class Harness:
    client: KubeClient
    namespace: str

    async def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        return await self.client.create("v1", "pods", obj, self.namespace)

    async def get(self, name: str) -> dict[str, Any]:
        return await self.client.get("v1", "pods", name, self.namespace)

    async def phase(self, name: str, phase: str) -> dict[str, Any]:
        async def probe() -> dict[str, Any] | None:
            obj = await self.get(name)
            return obj if (obj.get("status") or {}).get("phase") == phase else None

        found: dict[str, Any] = await until(probe)
        return found

    async def gone(self, name: str) -> None:
        async def probe() -> bool:
            try:
                await self.get(name)
            except ApiError as err:
                return err.is_not_found
            return False

        await until(probe)

    async def available_cpus(self, node: str) -> list[int]:
        nrt = await self.client.get(*NRT, node)
        return [
            int(r["available"])
            for zone in nrt["zones"]
            for r in zone["resources"]
            if r["name"] == "cpu"
        ]


@contextlib.asynccontextmanager
async def simulator(
    client: KubeClient,
    prefix: str,
    clock: FakeClock,
    *,
    machines: tuple[Any, ...] = MACHINES,
    state_dir: Path | None = None,
) -> AsyncIterator[SimulatedNodes]:
    options = SimulatedOptions(
        prefix,
        len(machines),
        machines,
        CONFIG,
        state_dir=state_dir,
        nrt_interval=0.05,
        nrt_quiet=0.05,
        nrt_max_delay=0.2,
    )
    sim = SimulatedNodes(client, options, clock=clock)
    task = asyncio.create_task(sim.run())
    try:
        await asyncio.wait_for(sim.wait_ready(), 60)
        yield sim
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def run(
    server: RunningApiServer, namespace: str, body: Callable[[Harness], Awaitable[None]]
) -> None:
    async def main() -> None:
        async with KubeClient(load_kubeconfig(server.kubeconfig)) as client:
            await client.create(
                "v1",
                "namespaces",
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
            )
            await body(Harness(client, namespace))
        # aiohttp closes TLS connections a few loop turns after its session (its documented
        # graceful-shutdown pause): without it asyncio.run may collect them open.
        await asyncio.sleep(0.25)

    asyncio.run(main())


def test_three_shapes_register_with_label_capacity_and_topology(server: RunningApiServer) -> None:
    async def body(h: Harness) -> None:
        async with simulator(h.client, "reg", FakeClock()):
            nodes = await h.client.list("v1", "nodes", label_selector=f"{SIMULATED_LABEL}=true")
            ours = {
                n["metadata"]["name"]: n
                for n in nodes["items"]
                if n["metadata"]["name"].startswith("reg-")
            }
            assert sorted(ours) == ["reg-0", "reg-1", "reg-2"]
            for name, machine in zip(sorted(ours), MACHINES, strict=True):
                status = ours[name]["status"]
                assert status["capacity"]["cpu"] == str(len(machine.all_cpu_ids))
                # The reserved CPU is not allocatable, as the kubelet computes it.
                assert status["allocatable"]["cpu"] == str(len(machine.all_cpu_ids) - 1)
                ready = {c["type"]: c["status"] for c in status["conditions"]}["Ready"]
                assert ready == "True"
                lease = await until(
                    functools.partial(
                        h.client.get, "coordination.k8s.io/v1", "leases", name, "kube-node-lease"
                    )
                )
                assert lease["spec"]["holderIdentity"] == name
            for name, machine in zip(sorted(ours), MACHINES, strict=True):
                nrt = await until(functools.partial(h.client.get, *NRT, name))
                assert len(nrt["zones"]) == len(machine.numa_nodes)
                attributes = {a["name"]: a["value"] for a in nrt["attributes"]}
                assert attributes["topologyManagerPolicy"] == "single-numa-node"

    run(server, "reg", body)


def test_pods_run_for_their_duration_then_succeed_and_free_cpus(server: RunningApiServer) -> None:
    clock = FakeClock()

    async def body(h: Harness) -> None:
        async with simulator(h.client, "dur", clock) as sim:
            before = await until(lambda: h.available_cpus("dur-1"))
            sizes = {"dur-0": 4, "dur-1": 16, "dur-2": 30}
            for node, cpus in sizes.items():
                await h.create(pod(f"p-{node}", node, cpus, duration="30s"))
            for node in sizes:
                running = await h.phase(f"p-{node}", "Running")
                (app,) = running["status"]["containerStatuses"]
                assert "running" in app["state"]
            await until(lambda: _changed(h, "dur-1", before))
            clock.advance(29)
            assert {p.phase for p in sim.pods.values()} == {"Running"}
            clock.advance(1)
            for node in sizes:
                done = await h.phase(f"p-{node}", "Succeeded")
                terminated = done["status"]["containerStatuses"][0]["state"]["terminated"]
                assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")
            # Released: the NRT shows every CPU available again.
            await until(lambda: _equal(h, "dur-1", before))

    run(server, "dur", body)


async def _changed(h: Harness, node: str, before: list[int]) -> bool:
    return await h.available_cpus(node) != before


async def _equal(h: Harness, node: str, before: list[int]) -> bool:
    return await h.available_cpus(node) == before


def test_unaligned_pod_fails_then_deletion_frees_the_cpus(server: RunningApiServer) -> None:
    # dual-socket-ht: two NUMA nodes of 6 CPUs, CPU 0 reserved: 5 free on NUMA 0, 6 on NUMA 1.
    async def body(h: Harness) -> None:
        async with simulator(h.client, "del", FakeClock(), machines=MACHINES[:1]):
            await h.create(pod("first", "del-0", 6))
            await h.phase("first", "Running")
            await h.create(pod("second", "del-0", 6))
            failed = await h.phase("second", "Failed")
            assert failed["status"]["reason"] == "TopologyAffinityError"
            assert failed["status"]["message"] == (
                "Pod was rejected: Resources cannot be allocated with Topology locality"
            )

            async def warning() -> list[dict[str, Any]]:
                events = await h.client.list("v1", "events", h.namespace)
                return [
                    e
                    for e in events["items"]
                    if e["involvedObject"]["name"] == "second"
                    and e["reason"] == "TopologyAffinityError"
                ]

            (event,) = await until(warning)
            assert event["type"] == "Warning"
            assert event["source"] == {"component": "kubelet", "host": "del-0"}
            # A graceful deletion (the API's default grace period): the simulator frees the
            # CPUs and deletes the pod for good.
            await h.client.delete("v1", "pods", "first", h.namespace)
            await h.gone("first")
            await h.create(pod("third", "del-0", 6))
            await h.phase("third", "Running")

    run(server, "del", body)


def test_pods_are_admitted_in_bind_order(server: RunningApiServer) -> None:
    # Both want the only NUMA node with 6 free CPUs: the first bound wins, whatever its name.
    async def body(h: Harness) -> None:
        async with simulator(h.client, "ord", FakeClock(), machines=MACHINES[:1]):
            await h.create(pod("zz-bound-first", "ord-0", 6))
            await h.create(pod("aa-bound-second", "ord-0", 6))
            await h.phase("zz-bound-first", "Running")
            await h.phase("aa-bound-second", "Failed")

    run(server, "ord", body)


def test_restart_policy_always_restarts_the_containers(server: RunningApiServer) -> None:
    clock = FakeClock()

    async def body(h: Harness) -> None:
        async with simulator(h.client, "rst", clock, machines=MACHINES[:1]):
            await h.create(pod("loop", "rst-0", 2, duration="10s", restart_policy="Always"))
            await h.phase("loop", "Running")
            clock.advance(10)

            async def restarted() -> dict[str, Any] | None:
                obj = await h.get("loop")
                (app,) = obj["status"]["containerStatuses"]
                return app if app["restartCount"] == 1 else None

            app = await until(restarted)
            assert "running" in app["state"]
            assert app["lastState"]["terminated"]["reason"] == "Completed"
            assert (await h.get("loop"))["status"]["phase"] == "Running"

    run(server, "rst", body)


@pytest.mark.parametrize("with_state_dir", [True, False], ids=["state-dir", "no-state-dir"])
def test_restart_takes_the_pods_back(
    server: RunningApiServer, tmp_path: Path, with_state_dir: bool
) -> None:
    prefix = "sd" if with_state_dir else "nsd"
    state_dir = tmp_path / "state" if with_state_dir else None
    clock = FakeClock()
    node = f"{prefix}-0"

    async def body(h: Harness) -> None:
        async with simulator(
            h.client, prefix, clock, machines=MACHINES[:1], state_dir=state_dir
        ) as first:
            for name, cpus in (("keep", 2), ("drop", 2), ("ends", 1)):
                await h.create(pod(name, node, cpus, duration="60s" if name == "ends" else None))
                await h.phase(name, "Running")
            held = {
                p.name: first.nodes[node].engine.cpu_manager.exclusive_cpus(p.uid, "c")
                for p in first.pods.values()
            }
            keep_rv = (await h.get("keep"))["metadata"]["resourceVersion"]
        # While it is down: one pod deleted, two bound (the later-named one first).
        await h.client.delete("v1", "pods", "drop", h.namespace, grace_period_seconds=0)
        await h.create(pod("zz-new-first", node, 5))
        await h.create(pod("aa-new-second", node, 5))
        clock.advance(60)  # "ends" ran its time while nobody watched
        async with simulator(
            h.client, prefix, clock, machines=MACHINES[:1], state_dir=state_dir
        ) as second:
            engine = second.nodes[node].engine
            keep = next(p for p in second.pods.values() if p.name == "keep")
            if with_state_dir:
                # The node came back from its file: the same CPUs, nothing admitted again.
                assert engine.cpu_manager.exclusive_cpus(keep.uid, "c") == held["keep"]
            assert keep.phase == "Running"
            assert (await h.get("keep"))["metadata"]["resourceVersion"] == keep_rv
            clock.advance(0)  # its end is past: due at once
            await h.phase("ends", "Succeeded")
            # 5 + 2 + 1 of 11 CPUs: the first bound of the two fits on NUMA 1, not the second.
            await h.phase("zz-new-first", "Running")
            await h.phase("aa-new-second", "Failed")
            assert {p.uid for p in engine.pods} == {p.uid for p in second.pods.values() if p.held}

    run(server, prefix, body)
