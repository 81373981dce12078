"""``pods/log`` through a real in-process API server to a fake node agent
(:class:`numaplane.testing.fakekubelet.FakeKubeletLogs`): options forwarded as upstream's
``LogLocation`` does, the container chosen or refused with upstream's messages, option
validation, the agent's errors translated as upstream's response checker does, ``follow``
streamed as it comes, and kubectl's ``logs`` / ``logs -f`` against it."""

from __future__ import annotations

import asyncio
import json
import shutil
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from numaplane.apiserver.auth.pki import ensure_pki
from numaplane.apiserver.server import ServerConfig, ServerHandle, start_server
from numaplane.testing.fakekubelet import FakeKubeletLogs

pytestmark = pytest.mark.timeout(120)

NS = "default"
PODS = f"/api/v1/namespaces/{NS}/pods"
KUBECTL = shutil.which("kubectl")


@dataclass
class Env:
    """A running server, an admin session and the fake agent its node points at."""

    handle: ServerHandle
    admin: aiohttp.ClientSession
    agent: FakeKubeletLogs

    async def create(self, path: str, obj: dict[str, Any]) -> None:
        async with self.admin.post(self.handle.url + path, json=obj) as resp:
            assert resp.status == 201, await resp.text()

    async def log(self, pod: str, query: str = "") -> tuple[int, str, dict[str, Any] | None]:
        """Status, body text and (for an error) the decoded Status of a log request."""
        url = f"{self.handle.url}{PODS}/{pod}/log" + (f"?{query}" if query else "")
        async with self.admin.get(url) as resp:
            text = await resp.text()
            status = json.loads(text) if resp.content_type == "application/json" else None
            return resp.status, text, status


def node(name: str, port: int, addresses: list[dict[str, str]] | None = None) -> dict[str, Any]:
    """A Node whose agent listens on 127.0.0.1:``port``."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {
            "addresses": addresses
            if addresses is not None
            else [
                {"type": "Hostname", "address": "no-such-host.invalid"},
                {"type": "InternalIP", "address": "127.0.0.1"},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
        },
    }


def pod(
    name: str, containers: tuple[str, ...], node_name: str = "n1", **spec: Any
) -> dict[str, Any]:
    """A pod with ``containers`` bound to ``node_name`` ("" unbound)."""
    body: dict[str, Any] = {
        "containers": [{"name": c, "image": "sleep"} for c in containers],
        **spec,
    }
    if node_name:
        body["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": body}


def run(tmp_path: Path, scenario: Callable[[Env], Awaitable[None]]) -> None:
    async def main() -> None:
        agent = FakeKubeletLogs()
        port = await agent.start()
        handle = await start_server(ServerConfig(tmp_path / "data", port=0))
        pki = ensure_pki(tmp_path / "data", ["127.0.0.1"])
        (tmp_path / "a.crt").write_bytes(pki.admin_cert_pem)
        (tmp_path / "a.key").write_bytes(pki.admin_key_pem)
        ctx = ssl.create_default_context(cadata=pki.ca_cert_pem.decode())
        ctx.load_cert_chain(tmp_path / "a.crt", tmp_path / "a.key")
        try:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx)) as admin:
                env = Env(handle, admin, agent)
                await env.create("/api/v1/nodes", node("n1", port))
                await scenario(env)
        finally:
            await handle.stop()
            await agent.stop()

    asyncio.run(main())


@dataclass(frozen=True)
class LogCase:
    """A log request and what the server answers."""

    name: str
    pod: dict[str, Any]
    query: str = ""
    logs: dict[str, bytes] = field(default_factory=dict)
    failure: tuple[str, int, str] | None = None  # container, agent status, agent text
    status: int = 200
    body: str = ""
    reason: str = ""
    agent_query: dict[str, str] | None = None  # what the agent got (None: not asked)


CASES = (
    LogCase(
        "the only container, no options",
        pod("one", ("main",)),
        logs={"main": b"hello\nworld\n"},
        body="hello\nworld\n",
        agent_query={},
    ),
    LogCase(
        "options forwarded as the kubelet reads them",
        pod("opts", ("a", "b")),
        query="container=b&tailLines=2&timestamps=true&limitBytes=10&sinceSeconds=5&previous=1",
        logs={"b": b"from b\n"},
        body="from b\n",
        agent_query={
            "previous": "true",
            "timestamps": "true",
            "sinceSeconds": "5",
            "tailLines": "2",
            "limitBytes": "10",
        },
    ),
    LogCase(
        "an init container may be named",
        pod("init", ("main",), initContainers=[{"name": "setup", "image": "sleep"}]),
        query="container=setup",
        logs={"setup": b"set up\n"},
        body="set up\n",
        agent_query={},
    ),
    LogCase(
        "several containers and none named",
        pod("many", ("a", "b"), initContainers=[{"name": "i", "image": "sleep"}]),
        status=400,
        reason="BadRequest",
        body="a container name must be specified for pod many, choose one of: [i a b]",
    ),
    LogCase(
        "a container the pod does not have",
        pod("wrong", ("a",)),
        query="container=zzz",
        status=400,
        reason="BadRequest",
        body="container zzz is not valid for pod wrong",
    ),
    LogCase(
        "negative tailLines and zero limitBytes",
        pod("bad", ("a",)),
        query="tailLines=-1&limitBytes=0",
        status=422,
        reason="Invalid",
        body='PodLogOptions "bad" is invalid: [tailLines: Invalid value: -1: must be greater '
        "than or equal to 0, limitBytes: Invalid value: 0: must be greater than 0]",
    ),
    LogCase(
        "sinceSeconds below one",
        pod("since", ("a",)),
        query="sinceSeconds=0",
        status=422,
        reason="Invalid",
        body='PodLogOptions "since" is invalid: sinceSeconds: Invalid value: 0: must be '
        "greater than 0",
    ),
    LogCase(
        "a value that does not parse",
        pod("parse", ("a",)),
        query="tailLines=many",
        status=400,
        reason="BadRequest",
        body='strconv.ParseInt: parsing "many": invalid syntax',
    ),
    LogCase(
        "a pod not yet bound to a node: upstream's null stream",
        pod("pending", ("a",), node_name=""),
        status=204,
    ),
    LogCase(
        "the agent's 400 (container waiting) is passed on",
        pod("waiting", ("c",)),
        failure=("c", 400, 'container "c" in pod "waiting" is waiting to start: ContainerCreating'),
        status=400,
        reason="BadRequest",
        body='container "c" in pod "waiting" is waiting to start: ContainerCreating',
        agent_query={},
    ),
    LogCase(
        "the agent's 404 as upstream's response checker words it",
        pod("gone", ("c",)),
        failure=("c", 404, "pod not found"),
        status=404,
        reason="NotFound",
        body="the server could not find the requested resource ( pods/log gone)",
        agent_query={},
    ),
    LogCase(
        "the agent's 500",
        pod("broken", ("c",)),
        failure=("c", 500, "disk on fire"),
        status=500,
        reason="InternalError",
        body="Internal error occurred: disk on fire",
        agent_query={},
    ),
    LogCase(
        "a node that does not exist",
        pod("orphan", ("c",), node_name="ghost"),
        status=404,
        reason="NotFound",
        body='nodes "ghost" not found',
    ),
)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_pod_log(tmp_path: Path, case: LogCase) -> None:
    async def scenario(env: Env) -> None:
        name = case.pod["metadata"]["name"]
        for container, log in case.logs.items():
            env.agent.logs[(NS, name, container)] = log
        if case.failure is not None:
            failing, code, answer = case.failure
            env.agent.failures[(NS, name, failing)] = (code, answer)
        await env.create(PODS, case.pod)
        status, text, error = await env.log(name, case.query)
        assert status == case.status, text
        if case.reason:
            assert error is not None
            assert (error["reason"], error["message"]) == (case.reason, case.body)
        else:
            assert text == case.body
        if case.agent_query is None:
            assert env.agent.requests == []
        else:
            container = case.pod["spec"]["containers"][0]["name"]
            if "container=" in case.query:
                container = case.query.split("container=")[1].split("&")[0]
            assert env.agent.requests == [
                (f"/containerLogs/{NS}/{name}/{container}", case.agent_query)
            ]

    run(tmp_path, scenario)


def test_an_unreachable_agent_is_a_500_naming_the_url(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        free = FakeKubeletLogs()
        port = await free.start()
        await free.stop()  # nothing listens there any more
        await env.create("/api/v1/nodes", node("n2", port))
        await env.create(PODS, pod("far", ("c",), node_name="n2"))
        status, _, error = await env.log("far")
        assert status == 500
        assert error is not None
        assert error["message"].startswith(
            f'Get "http://127.0.0.1:{port}/containerLogs/default/far/c": '
        )

    run(tmp_path, scenario)


def test_follow_streams_what_the_agent_sends_as_it_comes(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        env.agent.logs[(NS, "f", "c")] = b"first\n"
        await env.create(PODS, pod("f", ("c",)))
        url = f"{env.handle.url}{PODS}/f/log?follow=true"
        async with env.admin.get(url) as resp:
            assert resp.status == 200
            assert resp.content_type == "text/plain"
            assert await resp.content.readline() == b"first\n"
            await env.agent.wait_following()
            env.agent.feed(b"second\n")
            assert await resp.content.readline() == b"second\n"
            env.agent.end_follows()
            assert await resp.content.read() == b""
        assert env.agent.requests == [("/containerLogs/default/f/c", {"follow": "true"})]

    run(tmp_path, scenario)


@pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed")
def test_kubectl_logs_and_logs_follow(tmp_path: Path) -> None:
    async def kubectl(*args: str) -> tuple[int, str, str]:
        assert KUBECTL is not None
        proc = await asyncio.create_subprocess_exec(
            KUBECTL,
            "--kubeconfig",
            str(tmp_path / "data" / "admin.kubeconfig"),
            *args,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        return proc.returncode or 0, out.decode(), err.decode()

    async def scenario(env: Env) -> None:
        env.agent.logs[(NS, "k", "c")] = b"one\ntwo\nthree\n"
        env.agent.failures[(NS, "w", "c")] = (
            400,
            'container "c" in pod "w" is waiting to start: ContainerCreating',
        )
        await env.create(PODS, pod("k", ("c",)))
        await env.create(PODS, pod("w", ("c",)))
        assert await kubectl("logs", "k") == (0, "one\ntwo\nthree\n", "")
        code, _, err = await kubectl("logs", "w")
        assert code == 1
        assert err.strip() == (
            'Error from server (BadRequest): container "c" in pod "w" is waiting to start: '
            "ContainerCreating"
        )
        follow = asyncio.ensure_future(kubectl("logs", "-f", "--tail=2", "k"))
        await env.agent.wait_following()
        env.agent.feed(b"four\n")
        env.agent.end_follows()
        assert await follow == (0, "one\ntwo\nthree\nfour\n", "")
        assert env.agent.requests[-1] == (
            "/containerLogs/default/k/c",
            {"follow": "true", "tailLines": "2"},
        )

    run(tmp_path, scenario)
