"""Request info as k8s.io/apiserver's RequestInfoFactory reads it: verb, group, version,
namespace, resource, subresource and name from method, path and query; logical-cluster
prefixes taken off first."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs

import pytest

from numaplane.apiserver.requestinfo import (
    RequestInfoError,
    parse_request_info,
    split_cluster,
    wants_watch,
)


@dataclass(frozen=True)
class Case:
    name: str
    method: str
    path: str
    verb: str
    group: str = ""
    version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    object_name: str = ""
    query: str = ""
    resource_request: bool = True


CASES = (
    Case("list core", "GET", "/api/v1/pods", "list", version="v1", resource="pods"),
    Case("list namespaced", "GET", "/api/v1/namespaces/ns/pods", "list", "", "v1", "ns", "pods"),
    Case(
        "get namespaced",
        "GET",
        "/api/v1/namespaces/ns/pods/p",
        "get",
        "",
        "v1",
        "ns",
        "pods",
        object_name="p",
    ),
    Case(
        "head is get",
        "HEAD",
        "/api/v1/namespaces/ns/pods/p",
        "get",
        "",
        "v1",
        "ns",
        "pods",
        object_name="p",
    ),
    Case(
        "status subresource",
        "PUT",
        "/api/v1/namespaces/ns/pods/p/status",
        "update",
        "",
        "v1",
        "ns",
        "pods",
        "status",
        "p",
    ),
    Case(
        "group resource",
        "POST",
        "/apis/batch/v1/namespaces/ns/jobs",
        "create",
        "batch",
        "v1",
        "ns",
        "jobs",
    ),
    Case(
        "patch",
        "PATCH",
        "/apis/batch/v1/namespaces/ns/jobs/j",
        "patch",
        "batch",
        "v1",
        "ns",
        "jobs",
        object_name="j",
    ),
    Case(
        "delete",
        "DELETE",
        "/apis/batch/v1/namespaces/ns/jobs/j",
        "delete",
        "batch",
        "v1",
        "ns",
        "jobs",
        object_name="j",
    ),
    Case(
        "delete without name is deletecollection",
        "DELETE",
        "/apis/batch/v1/namespaces/ns/jobs",
        "deletecollection",
        "batch",
        "v1",
        "ns",
        "jobs",
    ),
    Case(
        "watch by query",
        "GET",
        "/api/v1/namespaces/ns/pods",
        "watch",
        "",
        "v1",
        "ns",
        "pods",
        query="watch=true",
    ),
    Case(
        "watch=1",
        "GET",
        "/api/v1/pods",
        "watch",
        version="v1",
        resource="pods",
        query="watch=1",
    ),
    Case(
        "watch=false is a list",
        "GET",
        "/api/v1/pods",
        "list",
        version="v1",
        resource="pods",
        query="watch=false",
    ),
    Case(
        "unparsable watch value is a watch",
        "GET",
        "/api/v1/pods",
        "watch",
        version="v1",
        resource="pods",
        query="watch=yes",
    ),
    Case(
        "FALSE in any case is no watch",
        "GET",
        "/api/v1/pods",
        "list",
        version="v1",
        resource="pods",
        query="watch=fAlSe",
    ),
    Case(
        "legacy watch path",
        "GET",
        "/api/v1/watch/namespaces/ns/pods",
        "watch",
        "",
        "v1",
        "ns",
        "pods",
    ),
    Case(
        "legacy watch path of one object",
        "GET",
        "/api/v1/watch/namespaces/ns/pods/p",
        "watch",
        "",
        "v1",
        "ns",
        "pods",
        object_name="p",
    ),
    Case(
        "namespace object",
        "GET",
        "/api/v1/namespaces/ns",
        "get",
        "",
        "v1",
        "ns",
        "namespaces",
        object_name="ns",
    ),
    Case(
        "namespace status",
        "PUT",
        "/api/v1/namespaces/ns/status",
        "update",
        "",
        "v1",
        "ns",
        "namespaces",
        "status",
        "ns",
    ),
    Case(
        "namespace finalize",
        "PUT",
        "/api/v1/namespaces/ns/finalize",
        "update",
        "",
        "v1",
        "ns",
        "namespaces",
        "finalize",
        "ns",
    ),
    Case("list namespaces", "GET", "/api/v1/namespaces", "list", "", "v1", "", "namespaces"),
    Case(
        "cluster scoped",
        "GET",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin",
        "get",
        "rbac.authorization.k8s.io",
        "v1",
        "",
        "clusterroles",
        object_name="admin",
    ),
    Case(
        "field selector on the name names the object",
        "GET",
        "/api/v1/namespaces/ns/secrets",
        "list",
        "",
        "v1",
        "ns",
        "secrets",
        object_name="s1",
        query="fieldSelector=metadata.name%3Ds1",
    ),
    Case(
        "double-equals name selector",
        "GET",
        "/api/v1/namespaces/ns/secrets",
        "watch",
        "",
        "v1",
        "ns",
        "secrets",
        object_name="s1",
        query="watch=1&fieldSelector=type%3Dx,metadata.name%3D%3Ds1",
    ),
    Case(
        "not-equal name selector names nothing",
        "GET",
        "/api/v1/namespaces/ns/secrets",
        "list",
        "",
        "v1",
        "ns",
        "secrets",
        query="fieldSelector=metadata.name!%3Ds1",
    ),
    Case(
        "unknown method has no verb",
        "OPTIONS",
        "/api/v1/namespaces/ns/pods/p",
        "",
        "",
        "v1",
        "ns",
        "pods",
        object_name="p",
    ),
    Case("api root", "GET", "/api", "get", resource_request=False),
    Case("api version", "GET", "/api/v1", "get", resource_request=False),
    Case("apis group", "GET", "/apis/batch", "get", resource_request=False),
    Case("apis group version", "GET", "/apis/batch/v1", "get", resource_request=False),
    Case("healthz", "GET", "/healthz", "get", resource_request=False),
    Case("version post", "POST", "/version", "post", resource_request=False),
    Case("other prefix", "GET", "/openapi/v3/apis/batch/v1", "get", resource_request=False),
)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_request_info(case: Case) -> None:
    info = parse_request_info(case.method, case.path, parse_qs(case.query))
    assert info.is_resource_request is case.resource_request
    assert info.verb == case.verb
    assert info.path == case.path
    if case.resource_request:
        got = (
            info.api_group,
            info.api_version,
            info.namespace,
            info.resource,
            info.subresource,
            info.name,
        )
        want = (
            case.group,
            case.version,
            case.namespace,
            case.resource,
            case.subresource,
            case.object_name,
        )
        assert got == want


def test_special_verb_without_resource_is_an_error() -> None:
    with pytest.raises(RequestInfoError, match="unable to determine kind and namespace"):
        parse_request_info("GET", "/api/v1/watch")


@dataclass(frozen=True)
class ClusterCase:
    name: str
    path: str
    cluster: str | None
    rest: str


CLUSTER_CASES = (
    ClusterCase("no prefix", "/api/v1/pods", None, "/api/v1/pods"),
    ClusterCase("prefix", "/clusters/w1/api/v1/pods", "w1", "/api/v1/pods"),
    ClusterCase("cluster root", "/clusters/w1", "w1", "/"),
    ClusterCase("cluster root slash", "/clusters/w1/", "w1", "/"),
    ClusterCase("trailing slash kept", "/clusters/w1/apis/", "w1", "/apis/"),
    ClusterCase("clusters alone is no prefix", "/clusters", None, "/clusters"),
)


@pytest.mark.parametrize("case", CLUSTER_CASES, ids=[c.name for c in CLUSTER_CASES])
def test_split_cluster(case: ClusterCase) -> None:
    assert split_cluster(case.path) == (case.cluster, case.rest)


def test_wants_watch_reads_the_first_value_only() -> None:
    assert wants_watch({"watch": ["0", "1"]}) is False
    assert wants_watch({}) is False
