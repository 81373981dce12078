"""A fake of the node agent's log endpoint, for the API server's ``pods/log`` tests: an aiohttp
server on loopback answering the kubelet's ``GET /containerLogs/NS/POD/CONTAINER`` from canned
texts, recording every query it was sent.

It stands in for the real agent where a test is about the API server's side (option
forwarding, error translation, streaming); the agent's own endpoint is tested against the agent.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from aiohttp import web


@dataclass
class FakeKubeletLogs:
    """Canned container logs served as the kubelet serves them.

    ``logs[(namespace, pod, container)]`` is the log text; ``failures[...]`` an answer
    ``(status, text)`` instead (as the kubelet's ``WriteError``: plain text). With
    ``follow=true`` the text is sent, then :meth:`feed` appends more, and the stream stays open
    until :meth:`end_follows` (or the client leaves). ``requests`` holds each request's path and
    query as received.
    """

    logs: dict[tuple[str, str, str], bytes] = field(default_factory=dict)
    failures: dict[tuple[str, str, str], tuple[int, str]] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    port: int = 0
    _runner: web.AppRunner | None = None
    _followers: list[asyncio.Queue[bytes | None]] = field(default_factory=list)
    _followed: asyncio.Event = field(default_factory=asyncio.Event)

    async def start(self) -> int:
        """Listen on 127.0.0.1 on a free port; the port."""
        app = web.Application()
        app.router.add_get("/containerLogs/{namespace}/{pod}/{container}", self._serve)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        return self.port

    async def stop(self) -> None:
        """End the follows and stop listening."""
        self.end_follows()
        if self._runner is not None:
            await self._runner.cleanup()

    async def wait_following(self) -> None:
        """Until a ``follow`` request is being streamed."""
        await self._followed.wait()

    def feed(self, data: bytes) -> None:
        """Append ``data`` to every followed stream."""
        for queue in self._followers:
            queue.put_nowait(data)

    def end_follows(self) -> None:
        """End every followed stream (the container exited)."""
        for queue in self._followers:
            queue.put_nowait(None)

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        key = (
            request.match_info["namespace"],
            request.match_info["pod"],
            request.match_info["container"],
        )
        self.requests.append((request.path, dict(request.query)))
        if key in self.failures:
            code, text = self.failures[key]
            return web.Response(status=code, text=text)
        response = web.StreamResponse()
        response.content_type = "text/plain"
        await response.prepare(request)
        await response.write(self.logs.get(key, b""))
        if request.query.get("follow") == "true":
            queue: asyncio.Queue[bytes | None] = asyncio.Queue()
            self._followers.append(queue)
            self._followed.set()
            try:
                while (data := await queue.get()) is not None:
                    await response.write(data)
            finally:
                self._followers.remove(queue)
        await response.write_eof()
        return response
