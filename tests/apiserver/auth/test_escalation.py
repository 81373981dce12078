"""RBAC escalation prevention: granting only what one holds, unless allowed to escalate or
bind; upstream's refusal wording with the missing rules compacted and sorted."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from numaplane.apiserver.auth.escalation import (
    check_escalation,
    compact,
    compact_string,
    covers,
)
from numaplane.apiserver.auth.rbac import PolicyRule
from numaplane.apiserver.user import UserInfo
from tests.apiserver.auth.rbac_world import authorizer, binding, role, rule, subject

Object = dict[str, Any]
HELD = "is attempting to grant RBAC permissions not currently held:\n"


@dataclass(frozen=True)
class Case:
    name: str
    user: str
    obj: Object
    groups: tuple[str, ...] = ("system:authenticated",)
    message: str | None = None
    old: Object | None = field(default=None)


def _cluster_role(name: str, rules: list[Object], **extra: Any) -> Object:
    return {"kind": "ClusterRole", "metadata": {"name": name}, "rules": rules, **extra}


ALICE = 'user "alice" (groups=["system:authenticated"]) '
CASES = [
    Case("role within held rules", "alice", role("ns1", "r", [rule([""], ["pods"], ["get"])])),
    Case(
        "role with a verb not held",
        "alice",
        role("ns1", "r", [rule([""], ["pods"], ["get", "delete"])]),
        message='roles.rbac.authorization.k8s.io "r" is forbidden: '
        + ALICE
        + HELD
        + '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
    ),
    Case(
        "missing rules compacted per resource and sorted",
        "alice",
        role(
            "ns1",
            "r",
            [
                rule(["batch"], ["jobs", "cronjobs"], ["create", "delete"]),
                {"nonResourceURLs": ["/metrics"], "verbs": ["get"]},
            ],
        ),
        message='roles.rbac.authorization.k8s.io "r" is forbidden: '
        + ALICE
        + HELD
        + '{APIGroups:["batch"], Resources:["cronjobs"], Verbs:["create" "delete"]}\n'
        + '{APIGroups:["batch"], Resources:["jobs"], Verbs:["create" "delete"]}\n'
        + '{NonResourceURLs:["/metrics"], Verbs:["get"]}',
    ),
    Case(
        "resource names narrow what is granted",
        "erin",
        role("ns1", "r", [rule([""], ["configmaps"], ["get"], resourceNames=["app-config"])]),
    ),
    Case(
        "held only in another namespace",
        "erin",
        role("ns2", "r", [rule([""], ["configmaps"], ["get"], resourceNames=["app-config"])]),
        message='roles.rbac.authorization.k8s.io "r" is forbidden: user "erin" '
        '(groups=["system:authenticated"]) '
        + HELD
        + '{APIGroups:[""], Resources:["configmaps"], ResourceNames:["app-config"], '
        'Verbs:["get"]}',
    ),
    Case(
        "escalate verb lets a user write any role",
        "esc",
        role("ns1", "r", [rule(["*"], ["*"], ["*"])]),
    ),
    Case(
        "cluster role checked against cluster-wide rules only",
        "erin",
        _cluster_role("cr", [rule([""], ["configmaps"], ["get"], resourceNames=["app-config"])]),
        message='clusterroles.rbac.authorization.k8s.io "cr" is forbidden: user "erin" '
        '(groups=["system:authenticated"]) '
        + HELD
        + '{APIGroups:[""], Resources:["configmaps"], ResourceNames:["app-config"], '
        'Verbs:["get"]}',
    ),
    Case(
        "aggregation rule needs cluster-admin",
        "alice",
        _cluster_role(
            "agg", [], aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]}
        ),
        message='clusterroles.rbac.authorization.k8s.io "agg" is forbidden: '
        "must have cluster-admin privileges to use the aggregationRule",
    ),
    Case(
        "system:masters may grant anything",
        "root",
        _cluster_role("cr", [rule(["*"], ["*"], ["*"])]),
        groups=("system:masters",),
    ),
    Case(
        "binding to a role whose rules are held",
        "alice",
        binding("rb", "ClusterRole", "pod-reader", [subject("User", "x")], "ns1"),
    ),
    Case(
        "binding to a role whose rules are not held",
        "alice",
        binding("crb", "ClusterRole", "cluster-admin", [subject("User", "alice")]),
        message='clusterrolebindings.rbac.authorization.k8s.io "crb" is forbidden: '
        + ALICE
        + HELD
        + '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}',
    ),
    Case(
        "bind verb on that role",
        "binder",
        binding("crb", "ClusterRole", "cluster-admin", [subject("User", "binder")]),
    ),
    Case(
        "bind verb is per role name",
        "binder",
        binding("crb", "ClusterRole", "job-admin", [subject("User", "binder")]),
        message='clusterrolebindings.rbac.authorization.k8s.io "crb" is forbidden: user '
        '"binder" (groups=["system:authenticated"]) '
        + HELD
        + '{APIGroups:["batch"], Resources:["jobs"], Verbs:["*"]}\n'
        + '{APIGroups:["batch"], Resources:["jobs/status"], Verbs:["*"]}',
    ),
    Case(
        "binding to a missing role",
        "alice",
        binding("rb", "ClusterRole", "nope", [subject("User", "x")], "ns1"),
        message='rolebindings.rbac.authorization.k8s.io "rb" is forbidden: '
        'clusterroles.rbac.authorization.k8s.io "nope" not found',
    ),
    Case(
        "an update touching only what the garbage collector writes",
        "alice",
        {
            **binding("crb", "ClusterRole", "cluster-admin", [subject("User", "a")]),
            "metadata": {"name": "crb", "finalizers": ["x"]},
        },
        old=binding("crb", "ClusterRole", "cluster-admin", [subject("User", "a")]),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_check_escalation(case: Case) -> None:
    err = check_escalation(UserInfo(case.user, case.groups), case.obj, authorizer(), case.old)
    if case.message is None:
        assert err is None
    else:
        assert err is not None
        assert (err.code, err.reason, err.message) == (403, "Forbidden", case.message)


def test_compact_string_leaves_out_empty_fields() -> None:
    assert compact_string(PolicyRule(verbs=("get",), non_resource_urls=("/x",))) == (
        '{NonResourceURLs:["/x"], Verbs:["get"]}'
    )


def test_covers_star_subresource_and_url_prefix() -> None:
    owner = [
        PolicyRule(verbs=("update",), api_groups=("",), resources=("*/status",)),
        PolicyRule(verbs=("get",), non_resource_urls=("/logs/*",)),
    ]
    wanted = [
        PolicyRule(verbs=("update",), api_groups=("",), resources=("pods/status", "pods")),
        PolicyRule(verbs=("get",), non_resource_urls=("/logs/a", "/metrics")),
    ]
    assert covers(owner, wanted) == [
        PolicyRule(verbs=("update",), api_groups=("",), resources=("pods",)),
        PolicyRule(verbs=("get",), non_resource_urls=("/metrics",)),
    ]


def test_compact_merges_verbs_of_one_resource_only() -> None:
    rules = [
        PolicyRule(verbs=("get",), api_groups=("",), resources=("pods",)),
        PolicyRule(verbs=("list",), api_groups=("",), resources=("pods",)),
        PolicyRule(verbs=("get",), api_groups=("",), resources=("pods",), resource_names=("a",)),
        PolicyRule(verbs=("get",), non_resource_urls=("/x",)),
    ]
    assert compact(rules) == [
        PolicyRule(verbs=("get",), non_resource_urls=("/x",)),
        PolicyRule(verbs=("get", "list"), api_groups=("",), resources=("pods",)),
        PolicyRule(verbs=("get",), api_groups=("",), resources=("pods",), resource_names=("a",)),
    ]
