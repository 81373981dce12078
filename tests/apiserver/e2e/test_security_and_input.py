"""Requests the server must refuse, with upstream's codes and reasons: no credentials, a client
that does not trust the server's CA, a token without RBAC rights, bad bodies; and logical
clusters that cannot see each other."""

from __future__ import annotations

import base64
import http.client
import json
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from numaplane.testing.apiserver import RunningApiServer, running_apiserver
from tests.apiserver.e2e.conftest import Kubectl

pytestmark = pytest.mark.timeout(240)


@dataclass(frozen=True)
class Endpoint:
    """Raw HTTPS access to the server, from its admin kubeconfig."""

    host: str
    port: int
    prefix: str
    ca: Path
    cert: Path
    key: Path

    @classmethod
    def from_kubeconfig(cls, path: Path, scratch: Path) -> Endpoint:
        config = yaml.safe_load(path.read_text())
        cluster = config["clusters"][0]["cluster"]
        user = config["users"][0]["user"]
        files = {}
        for name, field in (
            ("ca", cluster["certificate-authority-data"]),
            ("cert", user["client-certificate-data"]),
            ("key", user["client-key-data"]),
        ):
            files[name] = scratch / f"{name}.pem"
            files[name].write_bytes(base64.b64decode(field))
        url = urlsplit(cluster["server"])
        assert url.hostname is not None
        assert url.port is not None
        return cls(
            url.hostname, url.port, url.path.rstrip("/"), files["ca"], files["cert"], files["key"]
        )

    def context(self, *, client_cert: bool, trust: bool = True) -> ssl.SSLContext:
        ctx = (
            ssl.create_default_context(cafile=str(self.ca))
            if trust
            else ssl.create_default_context()
        )
        if client_cert:
            ctx.load_cert_chain(str(self.cert), str(self.key))
        return ctx

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        *,
        client_cert: bool = True,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        conn = http.client.HTTPSConnection(
            self.host, self.port, context=self.context(client_cert=client_cert), timeout=30
        )
        try:
            conn.request(method, self.prefix + path, body=body, headers=headers or {})
            response = conn.getresponse()
            raw = response.read()
        finally:
            conn.close()
        try:
            return response.status, json.loads(raw)
        except ValueError:
            return response.status, raw.decode(errors="replace")


@pytest.fixture(scope="module")
def endpoint(server: RunningApiServer, tmp_path_factory: pytest.TempPathFactory) -> Endpoint:
    return Endpoint.from_kubeconfig(server.kubeconfig, tmp_path_factory.mktemp("pki"))


def test_no_credentials_is_unauthorized(endpoint: Endpoint) -> None:
    code, body = endpoint.request("GET", "/api/v1/namespaces", client_cert=False)
    assert code == 401
    assert body["reason"] == "Unauthorized"
    assert body["kind"] == "Status"


def test_a_client_that_does_not_trust_the_ca_cannot_connect(endpoint: Endpoint) -> None:
    conn = http.client.HTTPSConnection(
        endpoint.host, endpoint.port, context=endpoint.context(client_cert=True, trust=False)
    )
    with pytest.raises(ssl.SSLCertVerificationError):
        conn.request("GET", endpoint.prefix + "/version")
    conn.close()


def test_a_token_without_rights_is_forbidden(endpoint: Endpoint, kubectl: Kubectl) -> None:
    kubectl.out("create", "serviceaccount", "nobody", "-n", "default")
    token = kubectl.out("create", "token", "nobody", "-n", "default").strip()
    code, body = endpoint.request(
        "GET",
        "/api/v1/namespaces/default/secrets",
        client_cert=False,
        headers={"Authorization": f"Bearer {token}"},
    )
    assert code == 403
    assert body["reason"] == "Forbidden"
    assert body["message"] == (
        'secrets is forbidden: User "system:serviceaccount:default:nobody" cannot list resource '
        '"secrets" in API group "" in the namespace "default"'
    )
    code, _ = endpoint.request(
        "GET",
        "/api/v1/namespaces",
        client_cert=False,
        headers={"Authorization": "Bearer not-a-token"},
    )
    assert code == 401


@dataclass(frozen=True)
class BadInput:
    name: str
    method: str
    path: str
    body: bytes
    content_type: str
    code: int
    reason: str
    message_part: str


BAD_INPUTS = [
    BadInput(
        "malformed json",
        "POST",
        "/api/v1/namespaces/default/configmaps",
        b'{"kind": ',
        "application/json",
        400,
        "BadRequest",
        "",
    ),
    BadInput(
        "malformed yaml",
        "POST",
        "/api/v1/namespaces/default/configmaps",
        b"kind: [",
        "application/yaml",
        400,
        "BadRequest",
        "",
    ),
    BadInput(
        "wrong kind for the endpoint",
        "POST",
        "/api/v1/namespaces/default/configmaps",
        b'{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}',
        "application/json",
        400,
        "BadRequest",
        "Secret",
    ),
    BadInput(
        "namespace mismatch",
        "POST",
        "/api/v1/namespaces/default/configmaps",
        b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"other"}}',
        "application/json",
        400,
        "BadRequest",
        "the namespace of the provided object does not match the namespace sent on the request",
    ),
    BadInput(
        "unknown field under strict validation",
        "POST",
        "/api/v1/namespaces/default/configmaps?fieldValidation=Strict",
        b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"bogus":1}',
        "application/json",
        400,
        "BadRequest",
        'strict decoding error: unknown field "bogus"',
    ),
    BadInput(
        "body over 3 MiB",
        "POST",
        "/api/v1/namespaces/default/configmaps",
        b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"a":"'
        + b"x" * (3 * 1024 * 1024)
        + b'"}}',
        "application/json",
        413,
        "RequestEntityTooLarge",
        "limit is 3145728",
    ),
    BadInput(
        "unknown resource",
        "GET",
        "/api/v1/namespaces/default/gizmos",
        b"",
        "application/json",
        404,
        "NotFound",
        "",
    ),
]


@pytest.mark.parametrize("case", BAD_INPUTS, ids=lambda c: c.name)
def test_bad_input_gets_upstreams_code_and_reason(endpoint: Endpoint, case: BadInput) -> None:
    code, body = endpoint.request(
        case.method, case.path, case.body or None, headers={"Content-Type": case.content_type}
    )
    assert code == case.code, body
    assert body["reason"] == case.reason
    assert case.message_part in body["message"]


@pytest.fixture(scope="module")
def two_clusters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApiServer]:
    with running_apiserver(tmp_path_factory.mktemp("multi"), clusters=["east", "west"]) as handle:
        yield handle


def test_logical_clusters_cannot_see_each_other(two_clusters: RunningApiServer) -> None:
    east = Kubectl(two_clusters.data_dir / "east.kubeconfig")
    west = Kubectl(two_clusters.data_dir / "west.kubeconfig")
    east.out("create", "configmap", "only-east", "-n", "default")
    assert "not found" in west.fails("get", "configmap", "only-east", "-n", "default")
    west.out("create", "namespace", "west-only")
    assert "not found" in east.fails("get", "namespace", "west-only")
    east_token = east.out("create", "token", "default", "-n", "default").strip()
    config = yaml.safe_load(west.out("config", "view", "--raw"))
    config["users"][0]["user"] = {"token": east_token}
    path = two_clusters.data_dir / "crossed.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    assert "Unauthorized" in Kubectl(path).fails("get", "namespaces")
