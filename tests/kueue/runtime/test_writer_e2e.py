"""The runtime's writer against a real ``numaplane apiserver``: a reservation decided on a version
of the Workload that someone else changes before the write lands meets a conflict, is redone
on the object read again, and both changes survive; a status write without a redo is refused
and the engine is handed the fresh object."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from numaplane.kube import KubeClient, load_kubeconfig
from numaplane.kube.events import EventRecorder
from numaplane.kueue.engine import KINDS, STATUS, WORKLOAD, Engine, Touched, Write
from numaplane.kueue.runtime.install import install_kueue_crds
from numaplane.kueue.runtime.writer import Writer
from numaplane.testing import kueue as k
from numaplane.testing.apiserver import running_apiserver

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

NS = "team"


async def _scenario(client: KubeClient) -> dict[str, Any]:
    await install_kueue_crds(client)
    objects = [
        k.namespace(NS),
        k.resource_flavor("default"),
        k.cluster_queue("cq", {"default": {"cpu": "2"}}),
        k.local_queue(NS, "lq", "cq"),
        k.workload(NS, "w1", "lq", {"cpu": "1"}),
    ]
    engine = Engine(clock=time.time)
    for obj in objects:
        info = KINDS[obj["kind"]]
        namespace = obj["metadata"].get("namespace")
        created = await client.create(info.api_version, info.resource, obj, namespace)
        engine.observe(obj["kind"], created)
    outcome = engine.cycle(time.time())
    [reservation] = [w for w in outcome.writes if w.assumed]
    # Someone else changes the Workload after the decision, before its write.
    info = KINDS[WORKLOAD]
    current = await client.get(info.api_version, info.resource, "w1", NS)
    current["metadata"]["labels"] = {"changed": "by-someone-else"}
    await client.update(info.api_version, info.resource, current, NS)
    seen: list[Touched] = []
    recorder = EventRecorder(client, "kueue-admission")
    writer = Writer(
        client,
        {"kueue-admission": recorder},
        refreshed=engine.observe,
        gone=engine.forget,
        failed=engine.write_failed,
        touched=seen.append,
    )
    landed = await writer.write(reservation, "kueue-admission")
    # A plain status write on the old version has no redo: refused, the fresh object observed.
    stale = Write(STATUS, WORKLOAD, {**reservation.obj, "status": {}})
    refused = await writer.write(stale, "kueue-admission")
    await recorder.close()
    final = await client.get(info.api_version, info.resource, "w1", NS)
    return {
        "landed": landed,
        "refused": refused,
        "conflicts": writer.conflicts,
        "final": final,
        # The refusal's fresh read is the reserved version: the assumption made way for it.
        "assumed": engine.cache.is_assumed(f"{NS}/w1"),
        "counted": engine.cache.workload(f"{NS}/w1") is not None,
        "touched": [t.workloads for t in seen],
    }


def test_a_reservation_meeting_a_conflict_is_redone_on_the_fresh_workload(tmp_path: Path) -> None:
    with running_apiserver(tmp_path / "api") as server:

        async def go() -> dict[str, Any]:
            async with KubeClient(load_kubeconfig(server.kubeconfig)) as client:
                return await _scenario(client)

        result = asyncio.run(go())
    assert result["landed"] is not None
    assert result["refused"] is None
    final = result["final"]
    assert final["metadata"]["labels"] == {"changed": "by-someone-else"}
    conditions = {c["type"]: c["status"] for c in final["status"]["conditions"]}
    assert conditions["QuotaReserved"] == "True"
    assert final["status"]["admission"]["clusterQueue"] == "cq"
    # One conflict redone, one refused; the engine was handed the fresh version both times.
    assert result["conflicts"] == 2
    assert {f"{NS}/w1"} in result["touched"]
    assert (result["assumed"], result["counted"]) == (False, True)
