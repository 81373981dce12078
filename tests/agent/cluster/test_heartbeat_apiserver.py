"""``NodeHeartbeat`` against a real ``numaplane apiserver`` (subprocess, loopback): the Node
registered Ready, the lease renewed and owned by the Node, the NRT CRD installed and the NRT
accepted by its validation and readable with kubectl, republished after a change; a Node of the
same name taken over; renewals resumed after the server went away and came back.

Waits poll the server until what is expected appears (bounded by the test's timeout mark), with
short heartbeat periods so that it appears soon; nothing asserts how long anything took.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from numaplane.agent.cluster.heartbeat import LEASE_NAMESPACE, NodeHeartbeat
from numaplane.agent.cluster.nodeobject import NodeSystemInfo
from numaplane.agent.cluster.nrt import NRT_API_VERSION, NRT_RESOURCE, SNAPSHOT_ANNOTATION
from numaplane.agent.cluster.nrtcrd import NRT_CRD_NAME, ensure_nrt_crd
from numaplane.api.kubeletconfig import kubelet_config_from_dict
from numaplane.api.pod import Container, Pod
from numaplane.kube import KubeClient, load_kubeconfig
from numaplane.node.admission import Node
from numaplane.node.snapshot import NodeSnapshot
from numaplane.testing.apiserver import running_apiserver, start_apiserver
from numaplane.topology.presets import PRESETS
from tests.kube.client_support import until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]

SYSTEM = NodeSystemInfo(kernel_version="6.1.0")
KUBECTL = shutil.which("kubectl")


def _node() -> Node:
    machine = PRESETS["dual-socket-multi-numa"].build()
    config = kubelet_config_from_dict(
        {
            "cpuManagerPolicy": "static",
            "reservedSystemCPUs": "0",
            "topologyManagerPolicy": "single-numa-node",
        }
    )
    return Node(machine, config)


def _fast(client: KubeClient, name: str, node: Node, **kw: Any) -> NodeHeartbeat:
    return NodeHeartbeat(
        client,
        name,
        node,
        None,
        lease_duration_s=1,
        status_update_frequency_s=0.2,
        nrt_interval_s=0.05,
        nrt_quiet_s=0.05,
        nrt_max_delay_s=0.2,
        system=SYSTEM,
        **kw,
    )


def _kubectl(kubeconfig: Path, *args: str) -> str:
    assert KUBECTL is not None
    env = {**os.environ, "KUBECACHEDIR": str(kubeconfig.parent / "kubecache")}
    result = subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def _free_cpus(nrt: dict[str, Any]) -> int:
    return sum(
        int(r["available"]) for z in nrt["zones"] for r in z["resources"] if r["name"] == "cpu"
    )


@pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed")
def test_register_lease_status_and_nrt(tmp_path: Path) -> None:
    with running_apiserver(tmp_path / "data") as server:
        config = load_kubeconfig(server.kubeconfig)
        node = _node()

        async def body() -> None:
            async with KubeClient(config) as client:
                heartbeat = _fast(client, "n1", node, labels={"numaplane.io/simulated": "true"})
                task = asyncio.create_task(heartbeat.run())
                try:
                    registered = await until(lambda: client.get("v1", "nodes", "n1"))
                    uid = registered["metadata"]["uid"]
                    assert registered["metadata"]["labels"]["numaplane.io/simulated"] == "true"

                    async def ready() -> dict[str, Any] | None:
                        got = await client.get("v1", "nodes", "n1")
                        conditions = (got.get("status") or {}).get("conditions") or []
                        ok = any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
                        return got if ok else None

                    status = (await until(ready))["status"]
                    assert status["capacity"]["cpu"] == "80"
                    assert status["allocatable"]["cpu"] == "79"
                    assert status["nodeInfo"]["kernelVersion"] == "6.1.0"

                    lease = await until(
                        lambda: client.get(
                            "coordination.k8s.io/v1", "leases", "n1", LEASE_NAMESPACE
                        )
                    )
                    assert lease["spec"]["holderIdentity"] == "n1"
                    assert lease["spec"]["leaseDurationSeconds"] == 1
                    first = lease["spec"]["renewTime"]

                    async def renewed() -> dict[str, Any] | None:
                        got = await client.get(
                            "coordination.k8s.io/v1", "leases", "n1", LEASE_NAMESPACE
                        )
                        return got if got["spec"]["renewTime"] != first else None

                    lease = await until(renewed)
                    assert lease["metadata"]["ownerReferences"][0]["uid"] == uid

                    crd = await client.get(
                        "apiextensions.k8s.io/v1", "customresourcedefinitions", NRT_CRD_NAME
                    )
                    assert crd["spec"]["group"] == "topology.node.k8s.io"
                    nrt = await until(lambda: client.get(NRT_API_VERSION, NRT_RESOURCE, "n1"))
                    assert [z["name"] for z in nrt["zones"]] == [f"node-{i}" for i in range(4)]
                    assert nrt["metadata"]["ownerReferences"][0]["uid"] == uid
                    before = _free_cpus(nrt)
                    snapshot = NodeSnapshot.from_json(
                        nrt["metadata"]["annotations"][SNAPSHOT_ANNOTATION]
                    )
                    assert snapshot.pod_uids == ()

                    limits = {"cpu": "3", "memory": "1Gi"}
                    assert node.admit(Pod.of("p1", [Container.of("c", limits, limits)])).admitted
                    # The agent admits in its own threads: changed() comes from one of them.
                    await asyncio.to_thread(heartbeat.changed)

                    async def republished() -> dict[str, Any] | None:
                        got = await client.get(NRT_API_VERSION, NRT_RESOURCE, "n1")
                        return got if _free_cpus(got) == before - 3 else None

                    nrt = await until(republished)
                    snapshot = NodeSnapshot.from_json(
                        nrt["metadata"]["annotations"][SNAPSHOT_ANNOTATION]
                    )
                    assert snapshot.pod_uids == ("p1",)
                finally:
                    heartbeat.stop()
                    await task

        asyncio.run(body())

        listed = json.loads(
            _kubectl(server.kubeconfig, "get", "noderesourcetopologies", "-o", "json")
        )
        # The CRD's short name and a served older version read the same object.
        short = _kubectl(server.kubeconfig, "get", "node-res-topo", "--no-headers")
        assert short.split()[0] == "n1"
        older = json.loads(
            _kubectl(
                server.kubeconfig,
                "get",
                "noderesourcetopologies.v1alpha1.topology.node.k8s.io",
                "n1",
                "-o",
                "json",
            )
        )
        assert [z["name"] for z in older["zones"]] == [f"node-{i}" for i in range(4)]
        assert [item["metadata"]["name"] for item in listed["items"]] == ["n1"]
        nodes = _kubectl(server.kubeconfig, "get", "nodes", "--no-headers")
        assert nodes.split()[:2] == ["n1", "Ready"]


def test_takes_over_an_existing_node(tmp_path: Path) -> None:
    with running_apiserver(tmp_path / "data") as server:
        config = load_kubeconfig(server.kubeconfig)

        async def body() -> None:
            async with KubeClient(config) as client:
                existing = await client.create(
                    "v1",
                    "nodes",
                    {"metadata": {"name": "n2", "labels": {"kubernetes.io/os": "plan9", "x": "y"}}},
                )
                heartbeat = _fast(client, "n2", _node(), publish_nrt=False)
                await heartbeat.register()
                # Installing the CRD twice (two agents, say) is no error.
                await ensure_nrt_crd(client)
                await ensure_nrt_crd(client)
                assert heartbeat.node_uid == existing["metadata"]["uid"]
                got = await client.get("v1", "nodes", "n2")
                assert got["metadata"]["labels"]["kubernetes.io/os"] == "linux"
                assert got["metadata"]["labels"]["x"] == "y"  # labels of others are kept
                assert got["status"]["capacity"]["cpu"] == "80"

        asyncio.run(body())


def test_renewals_resume_after_the_server_comes_back(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = start_apiserver(data)
    port = server.port
    try:
        config = load_kubeconfig(server.kubeconfig)

        async def body() -> None:
            nonlocal server
            async with KubeClient(config) as client:
                heartbeat = _fast(client, "n3", _node(), publish_nrt=False)
                task = asyncio.create_task(heartbeat.run())
                try:
                    lease = await until(
                        lambda: client.get(
                            "coordination.k8s.io/v1", "leases", "n3", LEASE_NAMESPACE
                        )
                    )
                    server.kill()
                    # Requests fail while the server is away; the heartbeat keeps going.
                    await asyncio.sleep(1.0)
                    assert not task.done()
                    server = await asyncio.to_thread(start_apiserver, data, port=port)
                    seen = lease["spec"]["renewTime"]

                    async def renewed_again() -> bool:
                        got = await client.get(
                            "coordination.k8s.io/v1", "leases", "n3", LEASE_NAMESPACE
                        )
                        return bool(got["spec"]["renewTime"] > seen)

                    await until(renewed_again)
                    assert not task.done()
                finally:
                    heartbeat.stop()
                    await task

        asyncio.run(body())
    finally:
        server.stop()


class RecordingClient(KubeClient):
    """The real client, noting each request's method and path."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.log: list[tuple[str, str]] = []

    async def request(self, method: str, path: str, **kw: Any) -> Any:
        self.log.append((method, path))
        return await super().request(method, path, **kw)


def test_idle_nodes_only_renew_their_leases(tmp_path: Path) -> None:
    names = [f"sim-{i}" for i in range(12)]
    with running_apiserver(tmp_path / "data") as server:
        config = load_kubeconfig(server.kubeconfig)

        async def body() -> None:
            client = RecordingClient(config)
            try:
                beats = [_fast(client, name, _node()) for name in names]
                tasks = [asyncio.create_task(b.run()) for b in beats]
                try:

                    async def all_published() -> bool:
                        listed = await client.list(NRT_API_VERSION, NRT_RESOURCE)
                        return len(listed["items"]) == len(names)

                    await until(all_published)
                    # Let every first write land, then watch what an idle node sends.
                    await asyncio.sleep(0.3)
                    client.log.clear()

                    def renewals(name: str) -> int:
                        path = f"/leases/{name}"
                        return sum(1 for m, p in client.log if m == "PUT" and p.endswith(path))

                    async def every_node_renewed_twice() -> bool:
                        return all(renewals(name) >= 2 for name in names)

                    await until(every_node_renewed_twice)
                    kinds = {(m, p.rsplit("/", 2)[-2]) for m, p in client.log}
                    assert kinds == {("PUT", "leases")}, client.log
                    assert not any(t.done() for t in tasks)
                finally:
                    for beat in beats:
                        beat.stop()
                    await asyncio.gather(*tasks)
            finally:
                await client.close()

        asyncio.run(body())


def test_a_deleted_node_registers_again(tmp_path: Path) -> None:
    with running_apiserver(tmp_path / "data") as server:
        config = load_kubeconfig(server.kubeconfig)

        async def body() -> None:
            async with KubeClient(config) as client:
                heartbeat = _fast(client, "n4", _node())
                task = asyncio.create_task(heartbeat.run())
                try:
                    first = await until(lambda: client.get("v1", "nodes", "n4"))
                    await client.delete("v1", "nodes", "n4")
                    heartbeat.changed()  # a status check at once (the lease may notice first)

                    async def back() -> dict[str, Any] | None:
                        got = await client.get("v1", "nodes", "n4")
                        same = got["metadata"]["uid"] == first["metadata"]["uid"]
                        return None if same else got

                    again = await until(back)

                    async def lease_owned_by_new_node() -> bool:
                        lease = await client.get(
                            "coordination.k8s.io/v1", "leases", "n4", LEASE_NAMESPACE
                        )
                        owners = lease["metadata"].get("ownerReferences") or [{}]
                        return bool(owners[0].get("uid") == again["metadata"]["uid"])

                    await until(lease_owned_by_new_node)

                    async def nrt_owned_by_new_node() -> bool:
                        nrt = await client.get(NRT_API_VERSION, NRT_RESOURCE, "n4")
                        owners = nrt["metadata"].get("ownerReferences") or [{}]
                        return bool(owners[0].get("uid") == again["metadata"]["uid"])

                    await until(nrt_owned_by_new_node)
                finally:
                    heartbeat.stop()
                    await task

        asyncio.run(body())
