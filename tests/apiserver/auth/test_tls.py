"""The PKI over real TLS: kubectl trusts the serving certificate through the kubeconfig written
for it and presents the admin certificate, which authenticates; a kubeconfig of another CA is
refused in the handshake. A minimal aiohttp server on a free loopback port stands in for the
API server (only ``/version``), so this checks certificates, not the server."""

from __future__ import annotations

import asyncio
import json
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from numaplane.apiserver.auth.authn import Authenticator
from numaplane.apiserver.auth.pki import Pki, ensure_pki, server_ssl_context, write_kubeconfig
from numaplane.apiserver.auth.serviceaccount import TokenSigner
from numaplane.apiserver.auth.tokenrequest import issue_token
from numaplane.apiserver.user import UserInfo

Object = dict[str, Any]

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed"),
]


_SA: Object = {"metadata": {"name": "robot", "namespace": "team", "uid": "u-robot"}}


def _lookup(resource: str, namespace: str, name: str) -> Object | None:
    return _SA if (resource, namespace, name) == ("serviceaccounts", "team", "robot") else None


@dataclass
class Server:
    url: str
    pki: Pki


@dataclass
class _Control:
    """How the test thread reaches the server's loop: its port, and the event that stops it."""

    ready: threading.Event
    port: int = 0
    loop: asyncio.AbstractEventLoop | None = None
    stop: asyncio.Event | None = None


def _serve(pki: Pki, control: _Control) -> None:
    auth = Authenticator.create(
        pki.ca_cert_pem,
        tokens={"static-token": UserInfo("bob")},
        signer=TokenSigner(pki.sa_key_pem),
    )

    async def version(request: web.Request) -> web.Response:
        ssl_object = request.transport.get_extra_info("ssl_object") if request.transport else None
        der = ssl_object.getpeercert(binary_form=True) if ssl_object else None
        user = auth.authenticate(der, request.headers.get("Authorization"), "c", _lookup)
        if user is None:
            return web.json_response({"kind": "Status", "code": 401}, status=401)
        return web.json_response({"major": "1", "minor": "32", "gitVersion": user.name})

    async def main() -> None:
        app = web.Application()
        app.router.add_get("/version", version)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_ssl_context(pki))
        await site.start()
        server = site._server
        assert isinstance(server, asyncio.base_events.Server)
        control.port = server.sockets[0].getsockname()[1]
        stop = control.stop = asyncio.Event()
        control.loop = asyncio.get_running_loop()
        control.ready.set()
        await stop.wait()
        await runner.cleanup()

    asyncio.run(main())


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    pki = ensure_pki(tmp_path / "data", ["127.0.0.1"])
    control = _Control(threading.Event())
    thread = threading.Thread(target=_serve, args=(pki, control), daemon=True)
    thread.start()
    assert control.ready.wait(30)
    try:
        yield Server(f"https://127.0.0.1:{control.port}", pki)
    finally:
        assert control.loop is not None
        assert control.stop is not None
        control.loop.call_soon_threadsafe(control.stop.set)
        thread.join(30)


def _kubectl(kubeconfig: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), "get", "--raw", "/version"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_kubectl_uses_the_admin_kubeconfig(server: Server, tmp_path: Path) -> None:
    path = tmp_path / "admin.kubeconfig"
    write_kubeconfig(path, server.url, server.pki)
    done = _kubectl(path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["gitVersion"] == "kubernetes-admin"


@pytest.mark.parametrize("kind", ["service account token", "static token"])
def test_kubectl_authenticates_with_a_bearer_token(
    server: Server, tmp_path: Path, kind: str
) -> None:
    if kind == "static token":
        token, user = "static-token", "bob"
    else:
        signer = TokenSigner(server.pki.sa_key_pem)
        answer = issue_token(signer, "c", "team", "robot", {}, _lookup)
        token, user = answer["status"]["token"], "system:serviceaccount:team:robot"
    path = tmp_path / "token.kubeconfig"
    write_kubeconfig(path, server.url, server.pki, "c", "robot", token=token)
    done = _kubectl(path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["gitVersion"] == user


def test_localhost_is_in_the_serving_certificate(server: Server, tmp_path: Path) -> None:
    path = tmp_path / "admin.kubeconfig"
    write_kubeconfig(path, server.url.replace("127.0.0.1", "localhost"), server.pki)
    done = _kubectl(path)
    assert done.returncode == 0, done.stderr


def test_kubeconfig_of_another_ca_fails_the_handshake(server: Server, tmp_path: Path) -> None:
    stranger = ensure_pki(tmp_path / "other", ["127.0.0.1"])
    path = tmp_path / "other.kubeconfig"
    write_kubeconfig(path, server.url, stranger)
    done = _kubectl(path)
    assert done.returncode != 0
    assert "certificate signed by unknown authority" in done.stderr


def _raw_get(server: Server, cert_pem: bytes, key_pem: bytes, tmp_path: Path) -> bytes:
    """The raw response to ``GET /version`` over TLS with the given client certificate, or
    ``b""`` when the server ends the connection instead of answering."""
    ctx = ssl.create_default_context(cadata=server.pki.ca_cert_pem.decode())
    cert, key = tmp_path / "c.crt", tmp_path / "c.key"
    cert.write_bytes(cert_pem)
    key.write_bytes(key_pem)
    ctx.load_cert_chain(cert, key)
    host, port = server.url.removeprefix("https://").split(":")

    async def attempt() -> bytes:
        reader, writer = await asyncio.open_connection(host, int(port), ssl=ctx)
        writer.write(b"GET /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        await writer.drain()
        data = await reader.read()
        writer.close()
        return data

    try:
        return asyncio.run(attempt())
    except (ssl.SSLError, ConnectionResetError):
        # TLS 1.3 may report the refusal on the first read instead of ending quietly.
        return b""


def test_a_client_certificate_of_another_ca_is_refused_by_the_server(
    server: Server, tmp_path: Path
) -> None:
    own = _raw_get(server, server.pki.admin_cert_pem, server.pki.admin_key_pem, tmp_path)
    assert own.startswith(b"HTTP/1.1 200")
    stranger = ensure_pki(tmp_path / "other", [])
    assert _raw_get(server, stranger.admin_cert_pem, stranger.admin_key_pem, tmp_path) == b""
