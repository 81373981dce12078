"""KubeClient against a real ``numaplane apiserver`` (subprocess, loopback): the admin kubeconfig
and a logical cluster's kubeconfig (a server URL with a ``/clusters/NAME`` prefix), every verb,
the server's Status errors, and a watch resumed from a resourceVersion."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from numaplane.kube import ApiError, KubeClient, WatchEvent, load_kubeconfig
from numaplane.testing.apiserver import running_apiserver

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def configmap(name: str, **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": "kube-test"}},
        "data": dict(data),
    }


async def take(stream: AsyncIterator[WatchEvent], count: int) -> list[WatchEvent]:
    return [await anext(stream) for _ in range(count)]


def test_client_against_the_server(tmp_path: Path) -> None:
    with running_apiserver(tmp_path / "data", clusters=["w1"]) as server:
        admin = load_kubeconfig(server.kubeconfig)
        worker = load_kubeconfig(server.cluster_kubeconfig("w1"))
        assert worker.server.endswith("/clusters/w1")

        async def body() -> None:
            async with KubeClient(worker) as client, KubeClient(admin) as other:
                assert await client.request("GET", "/readyz") == "ok"
                created = await client.create("v1", "configmaps", configmap("a", k="1"), "default")
                rv = created["metadata"]["resourceVersion"]
                got = await client.get("v1", "configmaps", "a", "default")
                assert got["data"] == {"k": "1"}
                with pytest.raises(ApiError) as exists:
                    await client.create("v1", "configmaps", configmap("a"), "default")
                assert (exists.value.code, exists.value.reason) == (409, "AlreadyExists")
                updated = await client.update(
                    "v1", "configmaps", {**created, "data": {"k": "2"}}, "default"
                )
                with pytest.raises(ApiError) as stale:
                    await client.update("v1", "configmaps", created, "default")
                assert stale.value.is_conflict
                assert "the object has been modified" in stale.value.message
                patched = await client.patch(
                    "v1", "configmaps", "a", {"data": {"p": "x"}}, "default"
                )
                assert patched["data"] == {"k": "2", "p": "x"}
                listed = await client.list(
                    "v1", "configmaps", "default", label_selector="app=kube-test"
                )
                assert [o["metadata"]["name"] for o in listed["items"]] == ["a"]
                # The other logical cluster does not see it.
                with pytest.raises(ApiError) as elsewhere:
                    await other.get("v1", "configmaps", "a", "default")
                assert elsewhere.value.is_not_found
                assert str(elsewhere.value) == 'configmaps "a" not found'

                stream = client.watch("v1", "configmaps", "default", resource_version=rv)
                events = await take(stream, 2)
                assert [(e.type, e.object["metadata"]["resourceVersion"]) for e in events] == [
                    ("MODIFIED", updated["metadata"]["resourceVersion"]),
                    ("MODIFIED", patched["metadata"]["resourceVersion"]),
                ]
                await client.delete("v1", "configmaps", "a", "default")
                (deleted,) = await take(stream, 1)
                assert (deleted.type, deleted.object["metadata"]["name"]) == ("DELETED", "a")
                await stream.aclose()
                with pytest.raises(ApiError) as gone:
                    await client.get("v1", "configmaps", "a", "default")
                assert gone.value.is_not_found

        asyncio.run(body())
