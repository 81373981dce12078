"""A KubeClient for tests that talk to a real server over TLS."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from numaplane.kube import KubeClient, KubeConfig
from numaplane.kube.errors import ApiError, KubeConnectionError

#: aiohttp's documented pause for SSL connections to finish their shutdown handshake after the
#: session closed: without it a connection closed mid-stream (a cancelled watch) can still be
#: open when the test's event loop ends, a ResourceWarning that pytest turns into an error.
SSL_SHUTDOWN_PAUSE_S = 0.25


@asynccontextmanager
async def kube_client(config: KubeConfig) -> AsyncIterator[KubeClient]:
    """``KubeClient(config)``, closed (and its TLS connections shut down) after the block."""
    try:
        async with KubeClient(config) as client:
            yield client
    finally:
        await asyncio.sleep(SSL_SHUTDOWN_PAUSE_S)


async def until(probe: Callable[[], Awaitable[Any]], pause_s: float = 0.05) -> Any:
    """Poll ``probe`` until it answers something truthy (a refused or failed request counts as
    not yet); the caller bounds the wait (pytest-timeout)."""
    while True:
        try:
            found = await probe()
        except (ApiError, KubeConnectionError):
            found = None
        if found:
            return found
        await asyncio.sleep(pause_s)
