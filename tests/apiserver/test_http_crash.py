"""SIGKILL the real server process at random moments while clients write over HTTPS: after each
restart every acknowledged write is there, and resourceVersions only ever go up."""

from __future__ import annotations

import asyncio
import random
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from numaplane.testing.apiserver import RunningApiServer, start_apiserver

KILLS = 20
WRITERS = 8
NAMESPACE = "default"
CONFIGMAPS = f"/api/v1/namespaces/{NAMESPACE}/configmaps"


@dataclass
class Acked:
    """What the server acknowledged: created names, each writer's last acked counter value,
    and every resourceVersion it answered with."""

    created: set[str] = field(default_factory=set)
    counters: dict[str, int] = field(default_factory=dict)
    rvs: list[int] = field(default_factory=list)


def _configmap(name: str, value: int, round_no: int = 0) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"value": str(value), "round": str(round_no)},
    }


async def _writer(
    session: aiohttp.ClientSession, url: str, round_no: int, worker: int, acked: Acked
) -> None:
    counter = f"counter-{worker}"
    value = acked.counters.get(counter, 0)
    for i in range(10_000):
        name = f"cm-{round_no}-{worker}-{i}"
        async with session.post(url + CONFIGMAPS, json=_configmap(name, 0)) as resp:
            body = await resp.json()
            assert resp.status == 201, body
            acked.created.add(name)
            acked.rvs.append(int(body["metadata"]["resourceVersion"]))
        value += 1
        async with session.get(f"{url}{CONFIGMAPS}/{counter}") as resp:
            if resp.status == 404:
                method, target = session.post, url + CONFIGMAPS
                obj = _configmap(counter, value, round_no)
            else:
                current = await resp.json()
                method, target = session.put, f"{url}{CONFIGMAPS}/{counter}"
                # The round in the object: the last write of the previous round may have
                # committed unacknowledged with this very value, and an update that changes
                # nothing answers the stored object with its old resourceVersion (as upstream).
                obj = _configmap(counter, value, round_no)
                obj["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        async with method(target, json=obj) as resp:
            body = await resp.json()
            assert resp.status in (200, 201), body
            acked.counters[counter] = value
            acked.rvs.append(int(body["metadata"]["resourceVersion"]))


async def _write_until_killed(
    server: RunningApiServer, round_no: int, acked: Acked, delay_s: float
) -> None:
    context: ssl.SSLContext = server.credentials.ssl_context()
    connector = aiohttp.TCPConnector(ssl=context, limit=WRITERS)
    async with aiohttp.ClientSession(connector=connector) as session:
        tasks = [
            asyncio.ensure_future(_writer(session, server.url, round_no, w, acked))
            for w in range(WRITERS)
        ]
        await asyncio.sleep(delay_s)
        server.kill()
        results = await asyncio.gather(*tasks, return_exceptions=True)
    for result in results:
        # A write in flight when the server died fails on the client side; anything else
        # (a refused write, a wrong status) is a failure of the test.
        if isinstance(result, AssertionError):
            raise result
        # (OSError covers a reset socket and TLS errors such as data after close_notify;
        # EOFError an incomplete read.)
        assert isinstance(
            result, aiohttp.ClientError | OSError | EOFError | asyncio.TimeoutError
        ), repr(result)


async def _check(server: RunningApiServer, acked: Acked) -> int:
    """Every acked write is there; the list's resourceVersion is at least the last acked one.
    Returns that resourceVersion."""
    connector = aiohttp.TCPConnector(ssl=server.credentials.ssl_context())
    async with (
        aiohttp.ClientSession(connector=connector) as session,
        session.get(server.url + CONFIGMAPS) as resp,
    ):
        assert resp.status == 200
        body = await resp.json()
    items = {item["metadata"]["name"]: item for item in body["items"]}
    missing = acked.created - set(items)
    assert not missing, f"acknowledged creates lost: {sorted(missing)[:5]}"
    for counter, value in acked.counters.items():
        # The write after the last acked one may have committed unacknowledged; none before it
        # may be lost.
        assert int(items[counter]["data"]["value"]) >= value
    list_rv = int(body["metadata"]["resourceVersion"])
    assert list_rv >= max(acked.rvs, default=0)
    return list_rv


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_sigkill_during_concurrent_writes_loses_no_acknowledged_write(tmp_path: Path) -> None:
    rng = random.Random(13)
    data_dir = tmp_path / "data"
    acked = Acked()
    last_rv = 0
    for round_no in range(KILLS):
        server = start_apiserver(data_dir)
        try:
            if round_no:
                list_rv = asyncio.run(_check(server, acked))
                assert list_rv >= last_rv
            before = len(acked.rvs)
            asyncio.run(_write_until_killed(server, round_no, acked, rng.uniform(0.05, 1.5)))
            new = acked.rvs[before:]
            # Resource versions handed out after a restart continue above every earlier one.
            assert all(rv > last_rv for rv in new)
            last_rv = max([last_rv, *new])
        finally:
            server.kill()
    server = start_apiserver(data_dir)
    try:
        assert asyncio.run(_check(server, acked)) >= last_rv
        assert len(acked.created) > KILLS
    finally:
        assert server.stop() == 0
