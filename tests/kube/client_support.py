"""A KubeClient for tests that talk to a real server over TLS."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from numaplane.kube import KubeClient, KubeConfig

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
