"""kubectl 1.32 reads our discovery and OpenAPI documents: ``api-resources``, ``explain`` of a
built-in field and of a custom resource's field, served by a minimal loopback HTTP front for
the documents only (the real server's routes are tested end to end elsewhere)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiohttp import web

from numaplane.apiserver import discovery, openapi
from tests.apiserver.kubectl_front import KUBECTL, run_kubectl, serve_loopback, write_kubeconfig
from tests.apiserver.test_openapi import ALL

pytestmark = [
    pytest.mark.skipif(
        KUBECTL is None, reason="kubectl not installed: kubectl reading tests skipped"
    ),
    pytest.mark.timeout(120),
]


async def _handle(request: web.Request) -> web.StreamResponse:
    path = request.path.strip("/")
    accept = request.headers.get("Accept", "")
    if path in ("api", "apis"):
        version = discovery.negotiate_discovery(accept)
        if version is None:
            return web.json_response(discovery.api_group_list(ALL))
        doc = discovery.aggregated_discovery(ALL, core=path == "api", version=version)
        response = web.json_response(doc)
        response.headers["Content-Type"] = discovery.aggregated_content_type(version)
        return response
    if path == "openapi/v3":
        return web.json_response(openapi.openapi_v3_index(ALL))
    if path.startswith("openapi/v3/"):
        found = openapi.openapi_v3_bytes(ALL, path.removeprefix("openapi/v3/"))
        if found is not None:
            return web.Response(body=found[0], content_type="application/json")
    raise web.HTTPNotFound()


@dataclass
class Front:
    kubeconfig: Path
    cache: Path


@pytest.fixture(scope="module")
def front(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Front]:
    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", _handle)
    with serve_loopback(app) as port:
        home = tmp_path_factory.mktemp("kubectl")
        write_kubeconfig(home / "config", port)
        yield Front(home / "config", home / "cache")


def kubectl(front: Front, *args: str) -> str:
    return run_kubectl(front.kubeconfig, front.cache, *args)


def test_api_resources(front: Front) -> None:
    lines = kubectl(front, "api-resources", "--no-headers").splitlines()
    rows = {line.split()[0]: line.split() for line in lines}
    assert rows["pods"] == ["pods", "v1", "true", "Pod"]
    assert rows["queues"] == ["queues", "queues.example.com/v1beta1", "false", "Queue"]
    assert rows["selfsubjectaccessreviews"][1:] == [
        "authorization.k8s.io/v1",
        "false",
        "SelfSubjectAccessReview",
    ]


@dataclass(frozen=True)
class ExplainCase:
    name: str
    target: str
    expected: tuple[str, ...]


@pytest.mark.parametrize(
    "case",
    [
        ExplainCase(
            "built-in field",
            "pod.spec.containers",
            ("KIND:       Pod", "FIELD: containers <[]Container>", "name\t<string> -required-"),
        ),
        ExplainCase(
            "quantities and int-or-string",
            "pod.spec.containers.resources",
            ("limits\t<map[string]Quantity>",),
        ),
        ExplainCase(
            "custom resource field",
            "queue.spec",
            (
                "GROUP:      queues.example.com",
                "KIND:       Queue",
                "spec of the queue",
                "size\t<integer>",
            ),
        ),
    ],
    ids=lambda c: c.name,
)
def test_explain(front: Front, case: ExplainCase) -> None:
    out = kubectl(front, "explain", case.target)
    for text in case.expected:
        assert text in out
