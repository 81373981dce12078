"""KubeClient against a tiny TLS API server of this file's own (loopback, free port): paths with a
cluster prefix, client-certificate and token authentication, verbs, Status errors, and watch
(streaming, resume after the server ends a stream, 410)."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from numaplane.kube import ApiError, KubeClient, KubeConfig, KubeConnectionError, resource_path

pytestmark = pytest.mark.timeout(60)

PREFIX = "/clusters/w1"
COMPACTED = 3


def _name(cn: str, org: str | None = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    if org:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    return x509.Name(attrs)


def _cert(
    subject: x509.Name,
    key: ec.EllipticCurvePrivateKey,
    issuer: x509.Name,
    issuer_key: ec.EllipticCurvePrivateKey,
    *,
    ca: bool = False,
    ip: str | None = None,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ip:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(ip))]), False
        )
    return builder.sign(issuer_key, hashes.SHA256())


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


@dataclass
class Pki:
    ca: bytes
    server_cert: bytes
    server_key: bytes
    client_cert: bytes
    client_key: bytes


@pytest.fixture(scope="module")
def pki() -> Pki:
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("test-ca")
    ca = _cert(ca_name, ca_key, ca_name, ca_key, ca=True)
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = _cert(_name("server"), server_key, ca_name, ca_key, ip="127.0.0.1")
    client_key = ec.generate_private_key(ec.SECP256R1())
    client = _cert(_name("alice", "team"), client_key, ca_name, ca_key)
    return Pki(_pem(ca), _pem(server), _key_pem(server_key), _pem(client), _key_pem(client_key))


@dataclass
class FakeApi:
    """A few ConfigMaps in memory, served the way kube-apiserver shapes its answers."""

    objects: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    rv: int = 0
    seen: list[dict[str, str]] = field(default_factory=list)
    watch_rvs: list[str] = field(default_factory=list)

    def status(self, code: int, reason: str, message: str) -> web.Response:
        body = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "code": code,
        }
        return web.json_response(body, status=code)

    def record(self, request: web.Request) -> None:
        peer = request.transport.get_extra_info("peercert") if request.transport else None
        subject = dict(x[0] for x in peer["subject"]) if peer else {}
        self.seen.append(
            {
                "cn": str(subject.get("commonName", "")),
                "auth": request.headers.get("Authorization", ""),
                "content_type": request.headers.get("Content-Type", ""),
                "query": request.query_string,
                "path": request.path,
            }
        )

    def write(self, kind: str, obj: dict[str, Any]) -> dict[str, Any]:
        self.rv += 1
        obj = {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(self.rv)}}
        self.events.append((kind, obj))
        return obj

    async def collection(self, request: web.Request) -> web.StreamResponse:
        self.record(request)
        ns = request.match_info["ns"]
        if request.method == "POST":
            body = await request.json()
            name = body["metadata"]["name"]
            if (ns, name) in self.objects:
                return self.status(409, "AlreadyExists", f'configmaps "{name}" already exists')
            self.objects[ns, name] = self.write("ADDED", body)
            return web.json_response(self.objects[ns, name], status=201)
        if request.query.get("watch") == "true":
            return await self.watch(request)
        items = [o for (n, _), o in sorted(self.objects.items()) if n == ns]
        return web.json_response(
            {
                "kind": "ConfigMapList",
                "apiVersion": "v1",
                "metadata": {"resourceVersion": str(self.rv)},
                "items": items,
            }
        )

    async def item(self, request: web.Request) -> web.StreamResponse:
        self.record(request)
        key = (request.match_info["ns"], request.match_info["name"])
        current = self.objects.get(key)
        if current is None:
            return self.status(404, "NotFound", f'configmaps "{key[1]}" not found')
        if request.method == "GET":
            return web.json_response(current)
        if request.method == "DELETE":
            options = await request.json()
            del self.objects[key]
            self.write("DELETED", current)
            return web.json_response(
                {"kind": "Status", "status": "Success", "details": {"options": options}}
            )
        body = await request.json()
        if request.method == "PATCH":
            body = {**current, "data": {**current.get("data", {}), **body.get("data", {})}}
        elif body["metadata"].get("resourceVersion") not in (
            None,
            current["metadata"]["resourceVersion"],
        ):
            return self.status(409, "Conflict", "the object has been modified")
        self.objects[key] = self.write("MODIFIED", body)
        return web.json_response(self.objects[key])

    async def watch(self, request: web.Request) -> web.StreamResponse:
        rv = request.query.get("resourceVersion", "")
        self.watch_rvs.append(rv)
        response = web.StreamResponse()
        await response.prepare(request)
        if rv and int(rv) < COMPACTED:
            gone = {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "code": 410,
                "reason": "Expired",
                "message": f"too old resource version: {rv} ({COMPACTED})",
            }
            await response.write(orjson.dumps({"type": "ERROR", "object": gone}) + b"\n")
            return response
        after = int(rv or 0)
        for kind, obj in self.events:
            if int(obj["metadata"]["resourceVersion"]) > after:
                # Split each frame in two writes: the client must reassemble lines.
                frame = orjson.dumps({"type": kind, "object": obj}) + b"\n"
                await response.write(frame[:7])
                await response.write(frame[7:])
        bookmark = {
            "kind": "ConfigMap",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": str(self.rv)},
        }
        await response.write(orjson.dumps({"type": "BOOKMARK", "object": bookmark}) + b"\n")
        return response  # the server ends the stream, as at its timeout


async def ready(_: web.Request) -> web.Response:
    return web.Response(text="ok")


Body = Callable[[KubeClient, FakeApi], Awaitable[None]]


def serve(
    pki: Pki, tmp_path: Path, body: Body, *, token: str | None = None, with_cert: bool = True
) -> FakeApi:
    api = FakeApi()

    async def main() -> None:
        app = web.Application()
        app.router.add_route("GET", PREFIX + "/readyz", ready)
        app.router.add_route("*", PREFIX + "/api/v1/namespaces/{ns}/configmaps", api.collection)
        app.router.add_route("*", PREFIX + "/api/v1/namespaces/{ns}/configmaps/{name}", api.item)
        for name, data in (("ca", pki.ca), ("crt", pki.server_cert), ("key", pki.server_key)):
            (tmp_path / name).write_bytes(data)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=tmp_path / "ca")
        context.load_cert_chain(tmp_path / "crt", tmp_path / "key")
        context.verify_mode = ssl.CERT_OPTIONAL
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
        await site.start()
        port = runner.addresses[0][1]
        config = KubeConfig(
            server=f"https://127.0.0.1:{port}{PREFIX}",
            ca_pem=pki.ca,
            client_cert_pem=pki.client_cert if with_cert else None,
            client_key_pem=pki.client_key if with_cert else None,
            token=token,
        )
        try:
            async with KubeClient(config) as client:
                await body(client, api)
        finally:
            await runner.cleanup()

    asyncio.run(main())
    return api


def cm(name: str, **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns"},
        "data": dict(data),
    }


def test_resource_paths() -> None:
    assert resource_path("v1", "pods", "ns", "p", "status") == "/api/v1/namespaces/ns/pods/p/status"
    assert resource_path("batch/v1", "jobs") == "/apis/batch/v1/jobs"
    assert resource_path("v1", "nodes", None, "a b") == "/api/v1/nodes/a%20b"


def test_verbs_with_client_certificate_under_a_cluster_prefix(pki: Pki, tmp_path: Path) -> None:
    async def body(client: KubeClient, api: FakeApi) -> None:
        created = await client.create("v1", "configmaps", cm("a", k="1"), "ns", field_manager="m")
        assert created["metadata"]["resourceVersion"] == "1"
        assert (await client.get("v1", "configmaps", "a", "ns"))["data"] == {"k": "1"}
        updated = await client.update("v1", "configmaps", {**created, "data": {"k": "2"}}, "ns")
        assert updated["metadata"]["resourceVersion"] == "2"
        patched = await client.patch("v1", "configmaps", "a", {"data": {"p": "x"}}, "ns")
        assert patched["data"] == {"k": "2", "p": "x"}
        listed = await client.list("v1", "configmaps", "ns", label_selector="a=b", limit=5)
        assert [o["metadata"]["name"] for o in listed["items"]] == ["a"]
        deleted = await client.delete(
            "v1", "configmaps", "a", "ns", propagation_policy="Foreground"
        )
        assert deleted["details"]["options"]["propagationPolicy"] == "Foreground"

    api = serve(pki, tmp_path, body)
    assert {s["cn"] for s in api.seen} == {"alice"}
    assert all(s["path"].startswith(PREFIX + "/api/v1/") for s in api.seen)
    assert api.seen[0]["query"] == "fieldManager=m"
    assert api.seen[3]["content_type"] == "application/merge-patch+json"
    assert api.seen[4]["query"] == "labelSelector=a%3Db&limit=5"


def test_writes_left_undecoded_answer_an_empty_dict(pki: Pki, tmp_path: Path) -> None:
    async def body(client: KubeClient, api: FakeApi) -> None:
        created = await client.create("v1", "configmaps", cm("a", k="1"), "ns", decode=False)
        assert created == {}
        patched = await client.patch(
            "v1", "configmaps", "a", {"data": {"p": "x"}}, "ns", decode=False
        )
        assert patched == {}
        # The writes happened all the same.
        assert (await client.get("v1", "configmaps", "a", "ns"))["data"] == {"k": "1", "p": "x"}
        with pytest.raises(ApiError) as err:  # a refusal is still read and raised
            await client.create("v1", "configmaps", cm("a", k="1"), "ns", decode=False)
        assert err.value.code == 409

    serve(pki, tmp_path, body)


def test_errors_are_the_servers_status(pki: Pki, tmp_path: Path) -> None:
    async def body(client: KubeClient, api: FakeApi) -> None:
        with pytest.raises(ApiError) as missing:
            await client.get("v1", "configmaps", "nope", "ns")
        assert missing.value.is_not_found
        assert str(missing.value) == 'configmaps "nope" not found'
        created = await client.create("v1", "configmaps", cm("a"), "ns")
        with pytest.raises(ApiError) as exists:
            await client.create("v1", "configmaps", cm("a"), "ns")
        assert (exists.value.code, exists.value.reason) == (409, "AlreadyExists")
        await client.update("v1", "configmaps", created, "ns")
        with pytest.raises(ApiError) as stale:
            await client.update("v1", "configmaps", created, "ns")  # rv 1 is stale now
        assert stale.value.is_conflict
        with pytest.raises(ApiError) as unrouted:
            await client.get("v1", "pods", "p", "ns")
        assert unrouted.value.code == 404
        assert unrouted.value.status["reason"] == "NotFound"

    serve(pki, tmp_path, body)


def test_bearer_token(pki: Pki, tmp_path: Path) -> None:
    async def body(client: KubeClient, api: FakeApi) -> None:
        await client.list("v1", "configmaps", "ns")
        assert await client.request("GET", "/readyz") == "ok"  # text, not JSON

    api = serve(pki, tmp_path, body, token="s3cret", with_cert=False)
    assert api.seen[0]["auth"] == "Bearer s3cret"
    assert api.seen[0]["cn"] == ""


def test_wrong_ca_is_a_connection_error(pki: Pki, tmp_path: Path) -> None:
    other = ec.generate_private_key(ec.SECP256R1())
    wrong_ca = _pem(_cert(_name("other"), other, _name("other"), other, ca=True))

    async def body(client: KubeClient, api: FakeApi) -> None:
        bad = KubeClient(KubeConfig(server=client.config.server, ca_pem=wrong_ca))
        async with bad:
            with pytest.raises(KubeConnectionError, match="certificate verify failed"):
                await bad.list("v1", "configmaps", "ns")

    serve(pki, tmp_path, body)


async def take(stream: AsyncIterator[Any], count: int) -> list[Any]:
    return [await anext(stream) for _ in range(count)]


def test_watch_streams_resumes_from_the_last_rv_and_raises_410(pki: Pki, tmp_path: Path) -> None:
    async def body(client: KubeClient, api: FakeApi) -> None:
        for i in range(4):
            await client.create("v1", "configmaps", cm(f"c{i}"), "ns")
        stream = client.watch("v1", "configmaps", "ns", resource_version="3")
        first = await take(stream, 2)
        assert [(e.type, e.object["metadata"].get("name", "")) for e in first] == [
            ("ADDED", "c3"),
            ("BOOKMARK", ""),
        ]
        # The server ended that stream; the watch reconnects from the bookmark's rv (4).
        await client.update("v1", "configmaps", cm("c0", v="2"), "ns")
        second = await take(stream, 1)
        assert (second[0].type, second[0].object["metadata"]["resourceVersion"]) == (
            "MODIFIED",
            "5",
        )
        await stream.aclose()
        with pytest.raises(ApiError) as gone:
            await take(client.watch("v1", "configmaps", "ns", resource_version="1"), 1)
        assert gone.value.is_gone
        assert gone.value.message == "too old resource version: 1 (3)"
        once = client.watch("v1", "configmaps", "ns", timeout_seconds=5)
        assert len([e async for e in once]) == 6  # 5 events and a bookmark, then it ends

    api = serve(pki, tmp_path, body)
    assert api.watch_rvs[:2] == ["3", "4"]
