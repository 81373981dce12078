"""What the kubectl-reading tests share: a minimal aiohttp front on loopback (its own event
loop in a thread, for module-scoped fixtures), a kubeconfig pointing kubectl at it, and a
kubectl run that fails the test with kubectl's stderr."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from aiohttp import web

KUBECTL = shutil.which("kubectl")


@contextmanager
def serve_loopback(app: web.Application) -> Iterator[int]:
    """Serve ``app`` on a free 127.0.0.1 port until the block ends; yields the port."""
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port: int = runner.addresses[0][1]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.run_until_complete(runner.cleanup())
        loop.close()


def write_kubeconfig(path: Path, port: int, namespace: str = "") -> None:
    """A kubeconfig for the front on ``port`` (plain HTTP, a dummy token), with ``namespace``
    as the context's default namespace when given."""
    context = "cluster: c, user: u" + (f", namespace: {namespace}" if namespace else "")
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        f"contexts: [{{name: x, context: {{{context}}}}}]\n"
        "current-context: x\n"
    )


def run_kubectl(kubeconfig: Path, cache: Path, *args: str) -> str:
    """Run kubectl with ``kubeconfig`` and its discovery ``cache``; its stdout (a failure fails
    the test with kubectl's stderr)."""
    assert KUBECTL is not None
    done = subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), "--cache-dir", str(cache), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout
