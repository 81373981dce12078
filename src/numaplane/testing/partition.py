"""A loopback TCP proxy whose link can be cut and healed, for tests of what a client does when
the network between it and a server fails without telling anyone.

While :meth:`PartitionProxy.partition` is in force the proxy swallows every byte in both
directions and accepts new connections without ever answering them: nothing is refused, reset or
closed, as when a switch drops packets (a killed server, by contrast, resets connections at once).
:meth:`PartitionProxy.heal` closes every connection made so far (a long partition ends with the
peers' TCP giving up) and forwards again. Runs in the caller's event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any


class PartitionProxy:
    """Forward ``127.0.0.1:port`` to ``target_host:target_port``; see the module doc."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target_host = target_host
        self.target_port = target_port
        self.partitioned = False
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> int:
        """Listen on a free loopback port; the port."""
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self.port

    def partition(self) -> None:
        """Cut the link: bytes are dropped, new connections hang."""
        self.partitioned = True

    def heal(self) -> None:
        """Restore the link; the connections of before are closed."""
        self.partitioned = False
        for writer in list(self._writers):
            writer.close()
        self._writers.clear()

    async def close(self) -> None:
        """Stop listening and close every connection."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        self.heal()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        if self.partitioned:
            # Never answered: the client's handshake waits until it gives up.
            self._spawn(self._pump(reader, None))
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(self.target_host, self.target_port)
        except OSError:
            writer.close()
            return
        self._writers.add(up_writer)
        self._spawn(self._pump(reader, up_writer))
        self._spawn(self._pump(up_reader, writer))

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter | None
    ) -> None:
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                if self.partitioned or writer is None:
                    continue  # dropped on the floor
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            if writer is not None:
                writer.close()
