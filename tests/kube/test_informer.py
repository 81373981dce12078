"""Informer against a real ``numaplane apiserver``: the first list, then adds, updates and
deletes from the watch in order; a server restart (the watch resumes), and a restart after the
history was compacted past the informer (410: it lists again and delivers the difference)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from numaplane.apiserver.rest import store_path
from numaplane.apiserver.storage import ClusterStore
from numaplane.apiserver.watchcache import ObjectKey
from numaplane.kube import load_kubeconfig
from numaplane.kube.informer import EventHandler, Informer, object_key, split_key
from numaplane.testing.apiserver import running_apiserver, start_apiserver
from tests.kube.client_support import kube_client

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def configmap(name: str, namespace: str = "default", **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": "inf"}},
        "data": dict(data),
    }


class Recorder:
    """Every event an informer delivered, as (kind, name, data value of "v")."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []
        self.changed = asyncio.Event()

    def _note(self, kind: str, obj: dict[str, Any]) -> None:
        self.events.append((kind, obj["metadata"]["name"], (obj.get("data") or {}).get("v", "")))
        self.changed.set()

    def handler(self) -> EventHandler:
        return EventHandler(
            on_add=lambda o: self._note("add", o),
            on_update=lambda old, new: self._note("update", new),
            on_delete=lambda o: self._note("delete", o),
        )

    async def until(self, done: Callable[[], bool], timeout: float = 60.0) -> None:
        async def wait() -> None:
            while not done():
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(wait(), timeout)


def test_object_key_and_split() -> None:
    assert object_key({"metadata": {"name": "n", "namespace": "ns"}}) == "ns/n"
    assert object_key({"metadata": {"name": "node-1"}}) == "node-1"
    assert split_key("ns/n") == ("ns", "n")
    assert split_key("node-1") == ("", "node-1")


def test_informer_lists_watches_and_survives_restart_and_compaction(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with running_apiserver(data) as server:
        config = load_kubeconfig(server.kubeconfig)
        port = server.port

        async def phase_one() -> str:
            async with kube_client(config) as client:
                await client.create("v1", "configmaps", configmap("a", v="1"), "default")
                informer = Informer(
                    client,
                    "v1",
                    "configmaps",
                    label_selector="app=inf",
                    page_size=1,
                    backoff_initial=0.1,
                    backoff_max=0.5,
                )
                seen = Recorder()
                informer.add_handler(seen.handler())
                runner = asyncio.ensure_future(informer.run())
                await informer.wait_synced()
                assert informer.synced
                assert seen.events == [("add", "a", "1")]
                await client.create("v1", "configmaps", configmap("b", v="1"), "default")
                await client.patch("v1", "configmaps", "a", {"data": {"v": "2"}}, "default")
                await client.delete("v1", "configmaps", "b", "default")
                await seen.until(lambda: len(seen.events) == 4)
                assert seen.events[1:] == [
                    ("add", "b", "1"),
                    ("update", "a", "2"),
                    ("delete", "b", "1"),
                ]
                got = informer.get("default", "a")
                assert got is not None
                assert got["data"] == {"v": "2"}
                assert informer.get("default", "b") is None
                # A handler added late is told about what is already there.
                late = Recorder()
                informer.add_handler(late.handler())
                assert late.events == [("add", "a", "2")]

                # 1. Restart: the watch resumes from its resourceVersion, nothing is replayed.
                server.stop()
                assert informer.synced
                restarted = start_apiserver(data, port=port)
                try:
                    # A fresh client: the informer's pooled connections died with the server.
                    async with kube_client(config) as writer:
                        await writer.create("v1", "configmaps", configmap("c", v="1"), "default")
                    await seen.until(lambda: len(seen.events) == 5)
                    assert seen.events[4] == ("add", "c", "1")
                    assert informer.list_count == 1  # resumed, not listed again
                finally:
                    restarted.stop()

                # 2. While the server is down, the history is changed and compacted past the
                # informer: the resumed watch gets 410, the informer lists again and delivers
                # the difference.
                store = await ClusterStore.open(store_path(data, "default"))
                try:
                    key_a = ObjectKey("configmaps", "default", "a")
                    current = store.get_latest(key_a)
                    assert current is not None
                    await store.update(key_a, {**current, "data": {"v": "3"}}, None)
                    await store.delete(ObjectKey("configmaps", "default", "c"), None)
                    new = configmap("d", v="1")
                    new["metadata"]["uid"] = "d-uid"
                    new["metadata"]["creationTimestamp"] = current["metadata"].get(
                        "creationTimestamp"
                    )
                    await store.create(ObjectKey("configmaps", "default", "d"), new)
                    await store.compact(store.current_rv())
                finally:
                    await store.close()
                again = start_apiserver(data, port=port)
                try:
                    await seen.until(lambda: len(seen.events) == 8)
                    assert sorted(seen.events[5:]) == [
                        ("add", "d", "1"),
                        ("delete", "c", "1"),
                        ("update", "a", "3"),
                    ]
                    assert sorted(informer.keys()) == ["default/a", "default/d"]
                    assert informer.list_count == 2
                    rv = informer.resource_version
                finally:
                    runner.cancel()
                    with pytest.raises(asyncio.CancelledError):
                        await runner
                    again.stop()
                return rv

        assert asyncio.run(phase_one())
