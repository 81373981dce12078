"""A controller's worker: take a key from a work queue, reconcile it, retry a failure with the
queue's per-key backoff (controller-runtime's reconcile loop); Kueue's and MultiKueue's
controllers all run it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from numaplane.kube.errors import KubeError
from numaplane.kube.workqueue import ShutDown, WorkQueue
from numaplane.kueue.errors import KueueError

log = logging.getLogger(__name__)


async def serve_queue(
    queue: WorkQueue, handler: Callable[[str], Awaitable[None]], what: str
) -> None:
    """Reconcile ``queue``'s keys with ``handler`` until the queue is shut down and drained."""
    while True:
        try:
            key = await queue.get()
        except ShutDown:
            return
        try:
            await handler(key)
            queue.forget(key)
        except asyncio.CancelledError:
            raise
        except (KubeError, KueueError) as err:
            log.info("%s %s: %s", what, key, err)
            queue.add_rate_limited(key)
        except Exception:
            # A bug must not stop the worker: log it and retry later (HandleError).
            log.exception("%s %s", what, key)
            queue.add_rate_limited(key)
        finally:
            queue.done(key)
