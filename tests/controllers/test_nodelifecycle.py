"""NodeLifecycleController against a real ``numaplane apiserver``, with an injected clock: a
node whose Lease stops being renewed goes Unknown (upstream's reason and message), gets the
unreachable NoSchedule and NoExecute taints, its pods NotReady and a NodeNotReady event; when
the kubelet posts Ready again the taints go; when every node is silent no NoExecute taint stays
(upstream's disruption mode). Pure: which taints each condition set calls for."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from numaplane.controllers.nodelifecycle import (
    NEVER_MESSAGE,
    NEVER_REASON,
    STOPPED_MESSAGE,
    STOPPED_REASON,
    NodeLifecycleController,
    wanted_taints,
)
from numaplane.kube import KubeClient, load_kubeconfig
from numaplane.kube.events import EventRecorder, rfc3339
from numaplane.kube.informer import Informer
from numaplane.kube.leaderelection import micro_time
from numaplane.testing.apiserver import running_apiserver
from tests.kube.client_support import kube_client

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

T0 = 1_700_000_000.0
UNREACHABLE = "node.kubernetes.io/unreachable"


def conditions(ready: str, heartbeat: float) -> list[dict[str, Any]]:
    stamp = rfc3339(heartbeat)
    reasons = {"True": "KubeletReady", "False": "KubeletNotReady"}
    out = [
        {
            "type": kind,
            "status": "False",
            "reason": f"KubeletHasNo{kind}",
            "message": "ok",
            "lastHeartbeatTime": stamp,
            "lastTransitionTime": stamp,
        }
        for kind in ("MemoryPressure", "DiskPressure", "PIDPressure")
    ]
    out.append(
        {
            "type": "Ready",
            "status": ready,
            "reason": reasons.get(ready, "x"),
            "message": "kubelet is posting ready status",
            "lastHeartbeatTime": stamp,
            "lastTransitionTime": stamp,
        }
    )
    return out


async def until(check: Callable[[], bool], timeout: float = 30.0) -> None:
    async def wait() -> None:
        while not check():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(wait(), timeout)


async def seen(informer: Informer, namespace: str | None, name: str, rv: str) -> None:
    """Wait until ``informer`` holds ``name`` at resourceVersion ``rv`` (or later)."""

    def fresh() -> bool:
        obj = informer.get(namespace, name)
        return obj is not None and int(obj["metadata"]["resourceVersion"]) >= int(rv)

    await until(fresh)


@dataclass
class Cluster:
    client: KubeClient
    now: list[float] = field(default_factory=lambda: [T0])

    async def node(self, name: str, ready: str = "True") -> None:
        body = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name},
            "status": {"conditions": conditions(ready, self.now[0])},
        }
        created = await self.client.create("v1", "nodes", body)
        if not (created.get("status") or {}).get("conditions"):
            await self.client.update(
                "v1", "nodes", {**created, "status": body["status"]}, subresource="status"
            )
        await self.renew(name)

    async def renew(self, name: str) -> str:
        """The kubelet renews its Lease (renewTime = the clock now); the new resourceVersion."""
        spec = {
            "holderIdentity": name,
            "leaseDurationSeconds": 40,
            "renewTime": micro_time(self.now[0]),
        }
        try:
            lease = await self.client.get(
                "coordination.k8s.io/v1", "leases", name, "kube-node-lease"
            )
        except Exception:
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": name, "namespace": "kube-node-lease"},
                "spec": spec,
            }
            made = await self.client.create(
                "coordination.k8s.io/v1", "leases", body, "kube-node-lease"
            )
            return str(made["metadata"]["resourceVersion"])
        lease["spec"] = {**lease["spec"], **spec}
        done = await self.client.update(
            "coordination.k8s.io/v1", "leases", lease, "kube-node-lease"
        )
        return str(done["metadata"]["resourceVersion"])

    async def get_node(self, name: str) -> dict[str, Any]:
        return await self.client.get("v1", "nodes", name)


def taints(node: dict[str, Any]) -> list[tuple[str, str, str]]:
    return sorted(
        (t["key"], t["effect"], t.get("timeAdded", ""))
        for t in (node.get("spec") or {}).get("taints") or []
    )


def cond(node: dict[str, Any], kind: str) -> tuple[str, str, str]:
    for c in node["status"]["conditions"]:
        if c["type"] == kind:
            return (c["status"], c.get("reason", ""), c.get("message", ""))
    raise AssertionError(kind)


def test_silent_node_goes_unknown_tainted_and_comes_back(tmp_path: Path) -> None:
    with running_apiserver(tmp_path / "data") as server:
        config = load_kubeconfig(server.kubeconfig)

        async def body() -> None:
            async with kube_client(config) as client:
                cluster = Cluster(client)
                await cluster.node("n1")
                await cluster.node("n2")
                pod = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": "p1", "namespace": "default"},
                    "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "sleep"}]},
                }
                made = await client.create("v1", "pods", pod, "default")
                made["status"] = {
                    "phase": "Running",
                    "conditions": [{"type": "Ready", "status": "True"}],
                }
                await client.update("v1", "pods", made, "default", subresource="status")

                recorder = EventRecorder(client, "node-controller")
                controller = NodeLifecycleController(
                    client, recorder=recorder, clock=lambda: cluster.now[0]
                )
                tasks = [
                    asyncio.ensure_future(i.run()) for i in (controller.nodes, controller.leases)
                ]
                await controller.nodes.wait_synced()
                await controller.leases.wait_synced()
                await controller.monitor_once()
                # n2 keeps renewing; n1 is silent.
                cluster.now[0] = T0 + 30
                await seen(controller.leases, "kube-node-lease", "n2", await cluster.renew("n2"))
                await controller.monitor_once()
                cluster.now[0] = T0 + 40
                await controller.monitor_once()  # exactly the grace period: still fine
                assert cond(await cluster.get_node("n1"), "Ready")[0] == "True"

                cluster.now[0] = T0 + 45
                await controller.monitor_once()
                n1 = await cluster.get_node("n1")
                for kind in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure"):
                    assert cond(n1, kind) == ("Unknown", STOPPED_REASON, STOPPED_MESSAGE)
                ready = next(c for c in n1["status"]["conditions"] if c["type"] == "Ready")
                assert ready["lastTransitionTime"] == rfc3339(T0 + 45)
                assert ready["lastHeartbeatTime"] == rfc3339(T0)  # the kubelet's, kept
                stamp = rfc3339(T0 + 45)
                assert taints(n1) == [
                    (UNREACHABLE, "NoExecute", stamp),
                    (UNREACHABLE, "NoSchedule", stamp),
                ]
                assert taints(await cluster.get_node("n2")) == []
                got = await client.get("v1", "pods", "p1", "default")
                assert [(c["type"], c["status"]) for c in got["status"]["conditions"]] == [
                    ("Ready", "False")
                ]
                await recorder.flush()
                events = (await client.list("v1", "events", "default"))["items"]
                assert [(e["reason"], e["message"]) for e in events] == [
                    ("NodeNotReady", "Node n1 status is now: NodeNotReady")
                ]

                # The kubelet is back: Lease renewed and Ready posted; the taints go.
                cluster.now[0] = T0 + 50
                await cluster.renew("n1")
                back = await cluster.get_node("n1")
                back["status"]["conditions"] = conditions("True", T0 + 50)
                stored = await client.update("v1", "nodes", back, subresource="status")
                await seen(controller.nodes, None, "n1", stored["metadata"]["resourceVersion"])
                await controller.monitor_once()
                n1 = await cluster.get_node("n1")
                assert cond(n1, "Ready")[0] == "True"
                assert taints(n1) == []

                # Everyone silent: Unknown and unreachable:NoSchedule everywhere, and no
                # NoExecute taint (upstream's "all nodes not ready" disruption mode).
                cluster.now[0] = T0 + 200
                await controller.monitor_once()
                for name in ("n1", "n2"):
                    node = await cluster.get_node(name)
                    assert cond(node, "Ready")[0] == "Unknown"
                    assert [(k, e) for k, e, _ in taints(node)] == [(UNREACHABLE, "NoSchedule")]
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                await recorder.close()

        asyncio.run(body())


def test_a_node_that_never_posted_status_gets_never_updated(tmp_path: Path) -> None:
    with running_apiserver(tmp_path / "data") as server:
        config = load_kubeconfig(server.kubeconfig)

        async def body() -> None:
            async with kube_client(config) as client:
                made = await client.create(
                    "v1", "nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "x"}}
                )
                created = made["metadata"]["creationTimestamp"]
                from numaplane.controllers.nodelifecycle import parse_time

                start = parse_time(created)
                assert start is not None
                now = [start + 59]
                controller = NodeLifecycleController(client, clock=lambda: now[0])
                task = asyncio.ensure_future(controller.nodes.run())
                await controller.nodes.wait_synced()
                await controller.monitor_once()  # within the 60 s startup grace period
                assert (
                    not (await client.get("v1", "nodes", "x")).get("status", {}).get("conditions")
                )
                now[0] = start + 61
                await controller.monitor_once()
                node = await client.get("v1", "nodes", "x")
                assert cond(node, "Ready") == ("Unknown", NEVER_REASON, NEVER_MESSAGE)
                ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
                assert ready["lastHeartbeatTime"] == created
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

        asyncio.run(body())


@dataclass(frozen=True)
class TaintCase:
    name: str
    conditions: dict[str, str]
    unschedulable: bool
    no_schedule: set[str]
    no_execute: set[str]


TAINT_CASES = [
    TaintCase("ready", {"Ready": "True"}, False, set(), set()),
    TaintCase(
        "not ready",
        {"Ready": "False"},
        False,
        {"node.kubernetes.io/not-ready"},
        {"node.kubernetes.io/not-ready"},
    ),
    TaintCase("unknown", {"Ready": "Unknown"}, False, {UNREACHABLE}, {UNREACHABLE}),
    TaintCase("no ready condition is unreachable", {}, False, set(), {UNREACHABLE}),
    TaintCase(
        "pressures",
        {"Ready": "True", "MemoryPressure": "True", "DiskPressure": "True", "PIDPressure": "False"},
        False,
        {"node.kubernetes.io/memory-pressure", "node.kubernetes.io/disk-pressure"},
        set(),
    ),
    TaintCase("cordoned", {"Ready": "True"}, True, {"node.kubernetes.io/unschedulable"}, set()),
]


@pytest.mark.parametrize("case", TAINT_CASES, ids=lambda c: c.name)
def test_wanted_taints(case: TaintCase) -> None:
    node = {
        "metadata": {"name": "n"},
        "spec": {"unschedulable": case.unschedulable},
        "status": {"conditions": [{"type": k, "status": v} for k, v in case.conditions.items()]},
    }
    assert wanted_taints(node, "NoSchedule") == case.no_schedule
    assert wanted_taints(node, "NoExecute") == case.no_execute
