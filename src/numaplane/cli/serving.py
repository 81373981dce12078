"""How the long-running commands (``apiserver``, ``controllers``, ``kueue``, simulated agents)
stop: SIGINT or SIGTERM sets an event, the work is cancelled, and an error the work ended with
by itself is the command's error."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable


def stop_on_signals() -> asyncio.Event:
    """An event set by SIGINT or SIGTERM (call it inside the running event loop)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop


async def run_until_stopped(work: Awaitable[None], stop: asyncio.Event) -> None:
    """Run ``work`` until it ends or ``stop`` is set, then cancel it and wait for it. An
    exception ``work`` ended with by itself is raised here."""
    running = asyncio.ensure_future(work)
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait({running, stopping}, return_when=asyncio.FIRST_COMPLETED)
    stopping.cancel()
    if running.done():
        running.result()
        return
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running
