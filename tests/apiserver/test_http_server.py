"""The HTTP layer end to end, in-process: TLS and authentication (anonymous 401, wrong CA
refused), body limits and decode errors, negotiation (Table, YAML), the verbs over a real
cluster, watch streaming and its end on shutdown, logical clusters kept apart."""

from __future__ import annotations

import asyncio
import io
import json
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from numaplane.apiserver.auth.pki import Pki, ensure_pki, issue_client_certificate
from numaplane.apiserver.http_codec import MAX_REQUEST_BODY_BYTES
from numaplane.apiserver.server import ServerConfig, ServerHandle, start_server

pytestmark = pytest.mark.timeout(120)

KUBECTL_TABLE = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
    "g=meta.k8s.io,application/json"
)
CM = "/api/v1/namespaces/default/configmaps"
#: The CA bundle the root CA publisher keeps in every namespace (a real cluster has it too).
ROOT_CA = "kube-root-ca.crt"


def _client_context(pki: Pki, tmp: Path, cert: tuple[bytes, bytes] | None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cadata=pki.ca_cert_pem.decode())
    if cert is not None:
        (tmp / "c.crt").write_bytes(cert[0])
        (tmp / "c.key").write_bytes(cert[1])
        ctx.load_cert_chain(tmp / "c.crt", tmp / "c.key")
    return ctx


@dataclass
class Env:
    """A running in-process server and sessions as the admin and as nobody."""

    handle: ServerHandle
    pki: Pki
    admin: aiohttp.ClientSession
    anonymous: aiohttp.ClientSession
    tmp: Path

    @property
    def url(self) -> str:
        return self.handle.url

    def session_for(self, user: str, groups: tuple[str, ...] = ()) -> aiohttp.ClientSession:
        cert = issue_client_certificate(self.pki, user, groups)
        sub = self.tmp / f"user-{user}"
        sub.mkdir(exist_ok=True)
        ctx = _client_context(self.pki, sub, cert)
        return aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx))


def run(
    tmp_path: Path, scenario: Callable[[Env], Awaitable[None]], clusters: tuple[str, ...] = ()
) -> None:
    async def main() -> None:
        handle = await start_server(ServerConfig(tmp_path / "data", port=0, clusters=clusters))
        pki = ensure_pki(tmp_path / "data", ["127.0.0.1"])
        admin_ctx = _client_context(pki, tmp_path, (pki.admin_cert_pem, pki.admin_key_pem))
        anon_ctx = _client_context(pki, tmp_path, None)
        try:
            async with (
                aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=admin_ctx)) as admin,
                aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=anon_ctx)) as anon,
            ):
                await scenario(Env(handle, pki, admin, anon, tmp_path))
        finally:
            await handle.stop()

    asyncio.run(main())


def _cm(name: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **extra}


async def _json(resp: aiohttp.ClientResponse) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(await resp.read())
    return body


def test_anonymous_requests_are_unauthorized(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        for path in ("/version", "/readyz", CM, "/api"):
            async with env.anonymous.get(env.url + path) as resp:
                assert resp.status == 401
                body = await _json(resp)
                assert (body["kind"], body["reason"], body["message"]) == (
                    "Status",
                    "Unauthorized",
                    "Unauthorized",
                )
        async with env.anonymous.get(
            env.url + CM, headers={"Authorization": "Bearer nope"}
        ) as resp:
            assert resp.status == 401

    run(tmp_path, scenario)


def test_a_client_certificate_of_another_ca_is_refused(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        other = ensure_pki(tmp_path / "other", ["127.0.0.1"])
        ctx = _client_context(env.pki, tmp_path, (other.admin_cert_pem, other.admin_key_pem))
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx)) as session:
            with pytest.raises(aiohttp.ClientError):
                async with session.get(env.url + "/version") as resp:
                    await resp.read()

    run(tmp_path, scenario)


def test_health_and_version(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        async with env.admin.get(env.url + "/readyz") as resp:
            assert (resp.status, await resp.text()) == (200, "ok")
            assert resp.headers["Content-Type"] == "text/plain; charset=utf-8"
        async with env.admin.get(env.url + "/livez?verbose") as resp:
            text = await resp.text()
            assert text.startswith("[+]ping ok\n")
            assert text.endswith("livez check passed\n")
        async with env.admin.get(env.url + "/readyz/ping") as resp:
            assert (resp.status, await resp.text()) == (200, "ok")
        async with env.admin.get(env.url + "/version") as resp:
            assert (await _json(resp))["major"] == "1"
        async with env.admin.get(env.url + "/nothing/here") as resp:
            assert resp.status == 404
            assert (await _json(resp))["message"] == (
                "the server could not find the requested resource"
            )

    run(tmp_path, scenario)


def test_create_get_list_update_delete(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        async with env.admin.post(env.url + CM, json=_cm("a", data={"k": "v"})) as resp:
            assert resp.status == 201
            created = await _json(resp)
            assert created["metadata"]["namespace"] == "default"
        async with env.admin.get(f"{env.url}{CM}/a") as resp:
            assert resp.status == 200
            assert (await _json(resp))["data"] == {"k": "v"}
        created["data"] = {"k": "w"}
        async with env.admin.put(f"{env.url}{CM}/a", json=created) as resp:
            assert resp.status == 200
        async with env.admin.put(f"{env.url}{CM}/a", json=created) as resp:
            assert resp.status == 409
            assert (await _json(resp))["reason"] == "Conflict"
        async with env.admin.get(env.url + CM) as resp:
            listed = await _json(resp)
            assert listed["kind"] == "ConfigMapList"
            assert [i["metadata"]["name"] for i in listed["items"]] == ["a", ROOT_CA]
        async with env.admin.patch(
            f"{env.url}{CM}/a",
            data=b'{"data": {"x": "y"}}',
            headers={"Content-Type": "application/merge-patch+json"},
        ) as resp:
            assert resp.status == 200
            assert (await _json(resp))["data"] == {"k": "w", "x": "y"}
        async with env.admin.delete(f"{env.url}{CM}/a") as resp:
            assert resp.status == 200
        async with env.admin.get(f"{env.url}{CM}/a") as resp:
            assert resp.status == 404
            assert (await _json(resp))["message"] == 'configmaps "a" not found'

    run(tmp_path, scenario)


@dataclass(frozen=True)
class BadCase:
    name: str
    method: str
    path: str
    body: bytes
    code: int
    reason: str
    message: str
    content_type: str = "application/json"


BAD_CASES = (
    BadCase(
        "malformed json",
        "POST",
        CM,
        b"{nope",
        400,
        "BadRequest",
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get "
        "version/kind; json parse error: invalid character 'n' looking for beginning of object "
        "key string ({nope)",
    ),
    BadCase(
        "wrong kind",
        "POST",
        CM,
        b'{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a"}}',
        400,
        "BadRequest",
        'Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to '
        "(core.ConfigMap): unknown conversion",
    ),
    BadCase(
        "namespace mismatch",
        "POST",
        CM,
        b'{"metadata": {"name": "a", "namespace": "other"}}',
        400,
        "BadRequest",
        "the namespace of the provided object does not match the namespace sent on the request",
    ),
    BadCase(
        "name mismatch",
        "PUT",
        CM + "/a",
        b'{"metadata": {"name": "b"}}',
        400,
        "BadRequest",
        "the name of the object (b) does not match the name on the URL (a)",
    ),
    BadCase(
        "unknown resource",
        "GET",
        "/api/v1/namespaces/default/widgets",
        b"",
        404,
        "NotFound",
        "the server could not find the requested resource",
    ),
    BadCase(
        "unknown patch type",
        "PATCH",
        CM + "/a",
        b"{}",
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, "
        "application/strategic-merge-patch+json, application/apply-patch+yaml",
        content_type="text/plain",
    ),
    BadCase(
        "apply without a field manager",
        "PATCH",
        CM + "/a",
        b"{}",
        422,
        "Invalid",
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for '
        "apply patch",
        content_type="application/apply-patch+yaml",
    ),
    BadCase(
        "bad field validation",
        "POST",
        CM + "?fieldValidation=Loud",
        b'{"metadata": {"name": "a"}}',
        422,
        "Invalid",
        'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": '
        'supported values: "Ignore", "Strict", "Warn"',
    ),
    BadCase(
        "body over 3 MiB",
        "POST",
        CM,
        b'{"data": {"x": "' + b"x" * MAX_REQUEST_BODY_BYTES + b'"}}',
        413,
        "RequestEntityTooLarge",
        "Request entity too large: limit is 3145728",
    ),
)


@pytest.mark.parametrize("case", BAD_CASES, ids=[c.name for c in BAD_CASES])
def test_bad_requests_get_upstream_statuses(tmp_path: Path, case: BadCase) -> None:
    async def scenario(env: Env) -> None:
        async with env.admin.request(
            case.method,
            env.url + case.path,
            data=io.BytesIO(case.body),
            headers={"Content-Type": case.content_type},
        ) as resp:
            body = await _json(resp)
            assert (resp.status, body["reason"], body["message"]) == (
                case.code,
                case.reason,
                case.message,
            )

    run(tmp_path, scenario)


def test_tables_and_yaml_as_asked(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        async with env.admin.post(env.url + CM, json=_cm("t", data={"a": "1"})):
            pass
        async with env.admin.get(env.url + CM, headers={"Accept": KUBECTL_TABLE}) as resp:
            table = await _json(resp)
            assert (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1")
            names = [c["name"] for c in table["columnDefinitions"]]
            assert names[0] == "Name"
            assert [row["cells"][0] for row in table["rows"]] == [ROOT_CA, "t"]
            assert table["rows"][1]["object"]["kind"] == "PartialObjectMetadata"
            assert table["metadata"]["resourceVersion"]
        async with env.admin.get(
            f"{env.url}{CM}/t?includeObject=Object", headers={"Accept": KUBECTL_TABLE}
        ) as resp:
            row = (await _json(resp))["rows"][0]
            assert row["object"]["data"] == {"a": "1"}
        async with env.admin.get(f"{env.url}{CM}/t", headers={"Accept": "application/yaml"}) as r:
            assert r.headers["Content-Type"].startswith("application/yaml")
            assert "name: t" in await r.text()
        async with env.admin.get(
            f"{env.url}{CM}/t", headers={"Accept": "application/vnd.kubernetes.protobuf"}
        ) as resp:
            assert resp.status == 406

    run(tmp_path, scenario)


async def _events(resp: aiohttp.ClientResponse, count: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while len(out) < count:
        line = await resp.content.readline()
        assert line, "watch ended early"
        out.append(json.loads(line))
    return out


def test_watch_streams_events_then_ends_on_shutdown(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        async with env.admin.post(env.url + CM, json=_cm("w1")) as resp:
            rv = (await _json(resp))["metadata"]["resourceVersion"]
        async with env.admin.get(f"{env.url}{CM}?watch=1&resourceVersion={rv}") as watch:
            assert watch.status == 200
            assert watch.headers["Content-Type"] == "application/json"
            async with env.admin.post(env.url + CM, json=_cm("w2")):
                pass
            async with env.admin.delete(f"{env.url}{CM}/w1"):
                pass
            events = await _events(watch, 2)
            assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
                ("ADDED", "w2"),
                ("DELETED", "w1"),
            ]
            await env.handle.stop()
            assert await watch.content.read() == b""

    run(tmp_path, scenario)


def test_watch_as_table_sends_columns_once(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        for name in ("x1", "x2"):
            async with env.admin.post(env.url + CM, json=_cm(name)):
                pass
        async with env.admin.get(
            f"{env.url}{CM}?watch=1", headers={"Accept": KUBECTL_TABLE}
        ) as watch:
            first, *rest = await _events(watch, 3)
            assert first["object"]["kind"] == "Table"
            assert first["object"]["columnDefinitions"]
            assert [e["object"]["columnDefinitions"] for e in rest] == [None, None]
            rows = [e["object"]["rows"][0]["cells"][0] for e in (first, *rest)]
            assert sorted(rows) == [ROOT_CA, "x1", "x2"]

    run(tmp_path, scenario)


def test_watch_from_a_compacted_version_is_an_error_event(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        for name in ("c1", "c2"):
            async with env.admin.post(env.url + CM, json=_cm(name)) as resp:
                rv = int((await _json(resp))["metadata"]["resourceVersion"])
        store = env.handle.cluster().store
        await store.compact(rv)
        async with env.admin.get(f"{env.url}{CM}?watch=1&resourceVersion={rv - 1}") as watch:
            assert watch.status == 200
            (event,) = await _events(watch, 1)
            assert event["type"] == "ERROR"
            assert event["object"]["code"] == 410

    run(tmp_path, scenario)


def test_rbac_refuses_a_user_without_rights(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        async with env.session_for("jane") as jane:
            async with jane.get(env.url + CM) as resp:
                assert resp.status == 403
                assert (await _json(resp))["message"] == (
                    'configmaps is forbidden: User "jane" cannot list resource "configmaps" in '
                    'API group "" in the namespace "default"'
                )
            async with jane.get(f"{env.url}{CM}/x") as resp:
                assert (await _json(resp))["message"].startswith(
                    'configmaps "x" is forbidden: User "jane" cannot get resource'
                )
            # system:discovery lets every authenticated user read /version and /api.
            async with jane.get(env.url + "/version") as resp:
                assert resp.status == 200

    run(tmp_path, scenario)


def test_logical_clusters_are_apart(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        base_a, base_b = f"{env.url}/clusters/a", f"{env.url}/clusters/b"
        async with env.admin.post(base_a + CM, json=_cm("only-in-a")) as resp:
            assert resp.status == 201
        async with env.admin.get(f"{base_b}{CM}/only-in-a") as resp:
            assert resp.status == 404
        async with env.admin.get(f"{env.url}{CM}/only-in-a") as resp:
            assert resp.status == 404
        async with env.admin.get(f"{base_a}{CM}/only-in-a") as resp:
            assert resp.status == 200
        async with env.admin.get(f"{env.url}/clusters/nope/api") as resp:
            assert resp.status == 404
        assert env.handle.cluster_kubeconfigs["a"].read_text().count("/clusters/a") == 1

    run(tmp_path, scenario, clusters=("a", "b"))


def test_admin_kubeconfig_names_the_server(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        text = env.handle.kubeconfig.read_text()
        assert f"server: {env.url}" in text
        assert env.handle.kubeconfig.stat().st_mode & 0o077 == 0

    run(tmp_path, scenario)


def test_unknown_fields_warn_or_fail_as_asked(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        body = _cm("u", data={"a": "b"}, spec={"x": 1})
        async with env.admin.post(env.url + CM + "?fieldValidation=Warn", json=body) as resp:
            assert resp.status == 201
            assert resp.headers.getall("Warning") == ['299 - "unknown field \\"spec\\""']
        body["metadata"]["name"] = "u2"
        async with env.admin.post(env.url + CM + "?fieldValidation=Strict", json=body) as resp:
            assert resp.status == 400
            assert (await _json(resp))["message"] == 'strict decoding error: unknown field "spec"'

    run(tmp_path, scenario)


def test_dry_run_stores_nothing(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        async with env.admin.post(env.url + CM + "?dryRun=All", json=_cm("dry")) as resp:
            assert resp.status == 201
        async with env.admin.get(f"{env.url}{CM}/dry") as resp:
            assert resp.status == 404
        async with env.admin.post(env.url + CM + "?dryRun=Some", json=_cm("dry")) as resp:
            assert resp.status == 422
            assert "dryRun: Unsupported value" in (await _json(resp))["message"]

    run(tmp_path, scenario)


def test_watch_ends_after_timeout_seconds(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        async with env.admin.get(f"{env.url}{CM}?watch=1&timeoutSeconds=1") as watch:
            assert watch.status == 200
            # The initial state (the root CA bundle only) and then the end of the stream.
            lines = (await watch.content.read()).splitlines()
            names = [json.loads(line)["object"]["metadata"]["name"] for line in lines]
            assert names == [ROOT_CA]

    run(tmp_path, scenario)


def test_watch_with_a_bad_selector_is_a_request_error(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        async with env.admin.get(f"{env.url}{CM}?watch=1&labelSelector=a%20in") as resp:
            assert resp.status == 400
            assert (await _json(resp))["reason"] == "BadRequest"

    run(tmp_path, scenario)


def test_partial_object_metadata_list(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        async with env.admin.post(env.url + CM, json=_cm("p", data={"secret": "x"})):
            pass
        accept = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
        async with env.admin.get(env.url + CM, headers={"Accept": accept}) as resp:
            body = await _json(resp)
            assert body["kind"] == "PartialObjectMetadataList"
            assert [i["metadata"]["name"] for i in body["items"]] == [ROOT_CA, "p"]
            assert "data" not in body["items"][1]

    run(tmp_path, scenario)


def test_service_account_token_authenticates_with_its_rbac_rights(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}}
        async with env.admin.post(env.url + "/api/v1/namespaces/default/serviceaccounts", json=sa):
            pass
        async with env.admin.post(
            env.url + "/api/v1/namespaces/default/serviceaccounts/robot/token",
            json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
        ) as resp:
            assert resp.status == 201, await resp.text()
            token = (await _json(resp))["status"]["token"]
        role = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "cm-reader"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}],
        }
        binding = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "robot-reads"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": "cm-reader",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "default"}],
        }
        rbac = env.url + "/apis/rbac.authorization.k8s.io/v1/namespaces/default"
        async with env.admin.post(rbac + "/roles", json=role) as resp:
            assert resp.status == 201
        async with env.admin.post(rbac + "/rolebindings", json=binding) as resp:
            assert resp.status == 201
        headers = {"Authorization": f"Bearer {token}"}
        async with env.anonymous.get(env.url + CM, headers=headers) as resp:
            assert resp.status == 200
        async with env.anonymous.post(env.url + CM, json=_cm("no"), headers=headers) as resp:
            assert resp.status == 403
            assert (await _json(resp))["message"] == (
                'configmaps is forbidden: User "system:serviceaccount:default:robot" cannot '
                'create resource "configmaps" in API group "" in the namespace "default"'
            )
        # The same token means nothing in another logical cluster.
        async with env.anonymous.get(f"{env.url}/clusters/other{CM}", headers=headers) as resp:
            assert resp.status == 401

    run(tmp_path, scenario, clusters=("other",))


def test_rbac_escalation_is_refused(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        rbac = env.url + "/apis/rbac.authorization.k8s.io/v1/namespaces/default"
        maker = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "role-maker"},
            "rules": [
                {
                    "apiGroups": ["rbac.authorization.k8s.io"],
                    "resources": ["roles"],
                    "verbs": ["create", "get", "patch"],
                },
                {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]},
            ],
        }
        binding = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "jane-makes-roles"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": "role-maker",
            },
            "subjects": [{"kind": "User", "name": "jane", "apiGroup": "rbac.authorization.k8s.io"}],
        }
        for path, obj in (("/roles", maker), ("/rolebindings", binding)):
            async with env.admin.post(rbac + path, json=obj) as resp:
                assert resp.status == 201
        greedy = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "greedy"},
            "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}],
        }
        async with env.session_for("jane") as jane, jane.post(rbac + "/roles", json=greedy) as resp:
            assert resp.status == 403
            message = (await _json(resp))["message"]
            assert message.startswith(
                'roles.rbac.authorization.k8s.io "greedy" is forbidden: user "jane"'
            )
        # A patch is checked on the object it produces: jane may make a role of what she holds,
        # and may not patch it into one granting more.
        modest = {**greedy, "metadata": {"name": "modest"}}
        modest["rules"] = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]
        grow = [{"op": "add", "path": "/rules/0/resources/-", "value": "secrets"}]
        headers = {"Content-Type": "application/json-patch+json"}
        async with env.session_for("jane") as jane:
            async with jane.post(rbac + "/roles", json=modest) as resp:
                assert resp.status == 201
            async with jane.patch(rbac + "/roles/modest", json=grow, headers=headers) as resp:
                assert resp.status == 403
                message = (await _json(resp))["message"]
                assert message.startswith(
                    'roles.rbac.authorization.k8s.io "modest" is forbidden: user "jane"'
                )
            async with env.admin.get(rbac + "/roles/modest") as resp:
                assert (await _json(resp))["rules"][0]["resources"] == ["configmaps"]

    run(tmp_path, scenario)


def test_impersonation_acts_as_the_named_user_once_allowed(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        headers = {"Impersonate-User": "jane"}
        async with env.admin.get(env.url + CM, headers=headers) as resp:
            # The admin may impersonate anyone; jane herself may not list configmaps.
            assert resp.status == 403
            assert 'User "jane" cannot list resource "configmaps"' in (await _json(resp))["message"]
        async with env.session_for("bob") as bob, bob.get(env.url + CM, headers=headers) as resp:
            assert resp.status == 403
            assert (
                'User "bob" cannot impersonate resource "users"' in (await _json(resp))["message"]
            )

    run(tmp_path, scenario)


def test_openapi_v3_documents_by_hash(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        base = f"{env.url}/clusters/w"
        async with env.admin.get(base + "/openapi/v3") as resp:
            url = (await _json(resp))["paths"]["api/v1"]["serverRelativeURL"]
        # Clients fetch the URL as an absolute path, so it carries the cluster's prefix.
        assert url.startswith("/clusters/w/openapi/v3/api/v1?hash=")
        async with env.admin.get(env.url + url) as resp:
            assert resp.status == 200
            assert resp.headers["Cache-Control"] == "public, immutable"
            assert "components" in await _json(resp)
        async with env.admin.get(
            base + "/openapi/v3/api/v1?hash=stale", allow_redirects=False
        ) as resp:
            assert resp.status == 301
            assert resp.headers["Location"] == url
        async with env.admin.get(
            env.url + "/openapi/v2",
            headers={"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"},
        ) as resp:
            assert resp.status == 406

    run(tmp_path, scenario, clusters=("w",))


def test_watch_list_sends_the_state_then_the_initial_events_end_bookmark(tmp_path: Path) -> None:
    async def scenario(env: Env) -> None:
        async with env.admin.post(env.url + CM, json=_cm("s1")):
            pass
        query = (
            "watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
            "&resourceVersionMatch=NotOlderThan"
        )
        async with env.admin.get(f"{env.url}{CM}?{query}") as watch:
            *added, bookmark = await _events(watch, 3)
            seen = sorted((e["type"], e["object"]["metadata"]["name"]) for e in added)
            assert seen == [("ADDED", ROOT_CA), ("ADDED", "s1")]
            assert bookmark["type"] == "BOOKMARK"
            annotations = bookmark["object"]["metadata"]["annotations"]
            assert annotations["k8s.io/initial-events-end"] == "true"

    run(tmp_path, scenario)
