"""The 403 the authorization filter sends, worded as kube-apiserver's ``ForbiddenStatusError``
(the auth package's denials reach users through it)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.apiserver.errors import forbidden, forbidden_path


@dataclass(frozen=True)
class Case:
    name: str
    verb: str
    resource: str
    group: str
    namespace: str
    object_name: str
    subresource: str
    reason: str
    message: str


CASES = [
    Case(
        "namespaced list",
        "list",
        "pods",
        "",
        "ns",
        "",
        "",
        "",
        'pods is forbidden: User "u" cannot list resource "pods" in API group "" in the '
        'namespace "ns"',
    ),
    Case(
        "named object of a group at cluster scope",
        "get",
        "clusterqueues",
        "kueue.x-k8s.io",
        "",
        "cq",
        "",
        "",
        'clusterqueues.kueue.x-k8s.io "cq" is forbidden: User "u" cannot get resource '
        '"clusterqueues" in API group "kueue.x-k8s.io" at the cluster scope',
    ),
    Case(
        "subresource: the subject is the resource alone",
        "update",
        "jobs",
        "batch",
        "ns",
        "j",
        "status",
        "",
        'jobs.batch "j" is forbidden: User "u" cannot update resource "jobs/status" in API '
        'group "batch" in the namespace "ns"',
    ),
    Case(
        "core subresource",
        "get",
        "pods",
        "",
        "ns",
        "p",
        "log",
        "",
        'pods "p" is forbidden: User "u" cannot get resource "pods/log" in API group "" in '
        'the namespace "ns"',
    ),
    Case(
        "authorizer reason appended",
        "get",
        "pods",
        "",
        "ns",
        "",
        "",
        'RBAC: clusterrole.rbac.authorization.k8s.io "x" not found',
        'pods is forbidden: User "u" cannot get resource "pods" in API group "" in the '
        'namespace "ns": RBAC: clusterrole.rbac.authorization.k8s.io "x" not found',
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_forbidden_wording(case: Case) -> None:
    err = forbidden(
        "u",
        case.verb,
        case.resource,
        case.group,
        case.namespace,
        case.object_name,
        case.subresource,
        reason=case.reason,
    )
    assert (err.code, err.reason, err.message) == (403, "Forbidden", case.message)
    assert err.details == {"name": case.object_name, "group": case.group, "kind": case.resource}


def test_forbidden_path_wording() -> None:
    err = forbidden_path("system:anonymous", "get", "/metrics")
    assert (err.code, err.reason) == (403, "Forbidden")
    assert err.message == 'forbidden: User "system:anonymous" cannot get path "/metrics"'
