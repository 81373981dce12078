"""An informer tells its ``on_error`` hook of every failed list or watch (what MultiKueue uses
to see a worker's connection drop), and keeps retrying."""

from __future__ import annotations

import asyncio
import socket

import pytest

from numaplane.kube import KubeClient, KubeConfig
from numaplane.kube.errors import KubeConnectionError, KubeError
from numaplane.kube.informer import Informer

pytestmark = pytest.mark.timeout(30)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_failed_lists_reach_on_error_and_the_informer_keeps_trying() -> None:
    async def go() -> list[KubeError]:
        errors: list[KubeError] = []
        seen = asyncio.Event()

        def failed(err: KubeError) -> None:
            errors.append(err)
            if len(errors) == 2:
                seen.set()

        async with KubeClient(KubeConfig(server=f"http://127.0.0.1:{closed_port()}")) as client:
            informer = Informer(
                client, "v1", "configmaps", backoff_initial=0.01, backoff_max=0.02, on_error=failed
            )
            task = asyncio.ensure_future(informer.run())
            try:
                await asyncio.wait_for(seen.wait(), 20)
            finally:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
            assert not informer.synced
        return errors

    errors = asyncio.run(go())
    assert len(errors) >= 2
    assert all(isinstance(e, KubeConnectionError) for e in errors)


def test_a_failing_on_error_hook_does_not_stop_the_informer() -> None:
    async def go() -> int:
        calls = 0

        def failed(err: KubeError) -> None:
            nonlocal calls
            calls += 1
            raise RuntimeError("bug in the hook")

        async with KubeClient(KubeConfig(server=f"http://127.0.0.1:{closed_port()}")) as client:
            informer = Informer(
                client, "v1", "configmaps", backoff_initial=0.01, backoff_max=0.02, on_error=failed
            )
            task = asyncio.ensure_future(informer.run())
            try:
                for _ in range(2000):
                    if calls >= 3:
                        break
                    await asyncio.sleep(0.01)
            finally:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        return calls

    assert asyncio.run(go()) >= 3
