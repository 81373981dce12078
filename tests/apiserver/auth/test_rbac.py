"""RBAC decisions, table-driven: verbs, API groups, resources and subresources, resourceNames,
non-resource URLs, users, groups, ServiceAccounts, RoleBinding scope, aggregation, default
deny and its reason."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.apiserver.auth.rbac import (
    CLUSTER_ROLES,
    Attributes,
    PolicyRule,
    RBACAuthorizer,
    aggregate_rules,
    rule_allows,
    selector_matches,
)
from numaplane.apiserver.user import UserInfo
from tests.apiserver.auth.rbac_world import authorizer, cluster_role, rule, world

ROBOT = "system:serviceaccount:ns1:robot"
ROBOT_GROUPS = ("system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated")


@dataclass(frozen=True)
class Case:
    name: str
    user: str
    verb: str
    resource: str = ""
    namespace: str = ""
    group: str = ""
    subresource: str = ""
    object_name: str = ""
    path: str = ""
    groups: tuple[str, ...] = ("system:authenticated",)
    allowed: bool = False
    reason: str = ""


CASES = [
    Case(
        "user binding allows its verb",
        "alice",
        "get",
        "pods",
        "ns1",
        allowed=True,
        reason='RBAC: allowed by ClusterRoleBinding "crb-user" of ClusterRole "pod-reader" '
        'to User "alice"',
    ),
    Case("verb not granted", "alice", "delete", "pods", "ns1"),
    Case(
        "cluster role binding reaches cluster scope",
        "alice",
        "list",
        "pods",
        allowed=True,
        reason='RBAC: allowed by ClusterRoleBinding "crb-user" of ClusterRole "pod-reader" '
        'to User "alice"',
    ),
    Case(
        "a resource does not grant its subresources",
        "alice",
        "get",
        "pods",
        "ns1",
        subresource="log",
    ),
    Case("API group must match", "alice", "get", "pods", "ns1", group="apps"),
    Case("another user", "mallory", "get", "pods", "ns1"),
    Case(
        "group subject, star verb",
        "bob",
        "create",
        "jobs",
        "ns1",
        "batch",
        groups=("batchers",),
        allowed=True,
        reason='RBAC: allowed by ClusterRoleBinding "crb-group" of ClusterRole "job-admin" '
        'to Group "batchers"',
    ),
    Case(
        "listed subresource",
        "bob",
        "update",
        "jobs",
        "ns1",
        "batch",
        "status",
        groups=("batchers",),
        allowed=True,
        reason='RBAC: allowed by ClusterRoleBinding "crb-group" of ClusterRole "job-admin" '
        'to Group "batchers"',
    ),
    Case("resource not listed", "bob", "get", "cronjobs", "ns1", "batch", groups=("batchers",)),
    Case("not in the group", "bob", "create", "jobs", "ns1", "batch"),
    Case(
        "non-resource URL exact",
        ROBOT,
        "get",
        path="/healthz",
        groups=ROBOT_GROUPS,
        allowed=True,
        reason='RBAC: allowed by ClusterRoleBinding "crb-sa" of ClusterRole "urls" to '
        'ServiceAccount "robot/ns1"',
    ),
    Case(
        "non-resource URL prefix",
        ROBOT,
        "get",
        path="/logs/kube.log",
        groups=ROBOT_GROUPS,
        allowed=True,
        reason='RBAC: allowed by ClusterRoleBinding "crb-sa" of ClusterRole "urls" to '
        'ServiceAccount "robot/ns1"',
    ),
    Case("prefix needs its slash", ROBOT, "get", path="/logs", groups=ROBOT_GROUPS),
    Case("non-resource verb", ROBOT, "post", path="/healthz", groups=ROBOT_GROUPS),
    Case(
        "service account of a role binding defaults to its namespace",
        ROBOT,
        "get",
        "secrets",
        "ns1",
        groups=ROBOT_GROUPS,
        allowed=True,
        reason='RBAC: allowed by RoleBinding "rb-sa/ns1" of Role "secret-reader" to '
        'ServiceAccount "robot/ns1"',
    ),
    Case(
        "role binding is confined to its namespace",
        ROBOT,
        "get",
        "secrets",
        "ns2",
        groups=ROBOT_GROUPS,
    ),
    Case("role binding does not reach cluster scope", ROBOT, "get", "secrets", groups=ROBOT_GROUPS),
    Case(
        "same account name, other namespace",
        "system:serviceaccount:ns2:robot",
        "get",
        "secrets",
        "ns1",
    ),
    Case(
        "cluster role binding with a namespace-less account applies to none",
        ROBOT,
        "get",
        "configmaps",
        "ns9",
        object_name="app-config",
        groups=ROBOT_GROUPS,
    ),
    Case(
        "resource name listed",
        "erin",
        "get",
        "configmaps",
        "ns1",
        object_name="app-config",
        allowed=True,
        reason='RBAC: allowed by RoleBinding "rb-cluster/ns1" of ClusterRole "named-cm" to '
        'User "erin"',
    ),
    Case("resource name not listed", "erin", "get", "configmaps", "ns1", object_name="other"),
    Case("resourceNames never allow a nameless request", "erin", "get", "configmaps", "ns1"),
    Case(
        "cluster role through a role binding stays in its namespace",
        "erin",
        "get",
        "configmaps",
        "ns2",
        object_name="app-config",
    ),
    Case(
        "star subresource",
        "wanda",
        "update",
        "pods",
        "ns2",
        subresource="status",
        groups=("writers",),
        allowed=True,
        reason='RBAC: allowed by RoleBinding "rb-status/ns2" of ClusterRole "status-writer" '
        'to Group "writers"',
    ),
    Case("star subresource is no resource", "wanda", "update", "pods", "ns2", groups=("writers",)),
    Case(
        "star subresource keeps its verbs",
        "wanda",
        "patch",
        "pods",
        "ns2",
        subresource="status",
        groups=("writers",),
    ),
    Case(
        "aggregated cluster role",
        "carol",
        "create",
        "leases",
        "ns1",
        "coordination.k8s.io",
        allowed=True,
        reason='RBAC: allowed by ClusterRoleBinding "crb-agg" of ClusterRole "agg-parent" to '
        'User "carol"',
    ),
    Case(
        "missing role is the denial's reason",
        "dave",
        "get",
        "pods",
        "ns1",
        reason='RBAC: clusterrole.rbac.authorization.k8s.io "missing-role" not found',
    ),
    Case(
        "system:masters is allowed everything",
        "root",
        "delete",
        "nodes",
        groups=("system:masters", "system:authenticated"),
        allowed=True,
    ),
    Case("default deny", "nobody", "get", "pods", "ns1"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_authorize(case: Case) -> None:
    attrs = Attributes(
        UserInfo(case.user, case.groups),
        case.verb,
        namespace=case.namespace,
        api_group=case.group,
        resource=case.resource,
        subresource=case.subresource,
        name=case.object_name,
        resource_request=not case.path,
        path=case.path,
    )
    decision = authorizer().authorize(attrs)
    assert (decision.allowed, decision.reason, decision.denied) == (
        case.allowed,
        case.reason,
        False,
    )


@dataclass(frozen=True)
class SelectorCase:
    name: str
    selector: dict[str, object]
    labels: dict[str, str]
    matches: bool


SELECTORS = [
    SelectorCase("empty selects all", {}, {"a": "1"}, True),
    SelectorCase("matchLabels", {"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
    SelectorCase("matchLabels value differs", {"matchLabels": {"a": "1"}}, {"a": "2"}, False),
    SelectorCase(
        "In",
        {"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]},
        {"a": "2"},
        True,
    ),
    SelectorCase(
        "NotIn on an absent key",
        {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]},
        {},
        True,
    ),
    SelectorCase(
        "Exists", {"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"b": "1"}, False
    ),
    SelectorCase(
        "DoesNotExist",
        {"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]},
        {"b": "1"},
        True,
    ),
]


@pytest.mark.parametrize("case", SELECTORS, ids=[c.name for c in SELECTORS])
def test_selector_matches(case: SelectorCase) -> None:
    assert selector_matches(case.selector, case.labels) is case.matches


def test_aggregation_unions_matching_roles_in_name_order_once() -> None:
    parent = {
        "kind": "ClusterRole",
        "metadata": {"name": "parent"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]},
    }
    shared = rule([""], ["pods"], ["get"])
    roles = [
        parent,
        cluster_role("b", [shared, rule([""], ["secrets"], ["get"])], labels={"x": "y"}),
        cluster_role("a", [shared], labels={"x": "y"}),
        cluster_role("c", [rule([""], ["nodes"], ["get"])], labels={"x": "n"}),
    ]
    assert aggregate_rules(parent, roles) == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]},
    ]


def test_aggregation_cycles_end() -> None:
    a = {
        "kind": "ClusterRole",
        "metadata": {"name": "a", "labels": {"to-b": "1"}},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"to-a": "1"}}]},
        "rules": [],
    }
    b = {
        "kind": "ClusterRole",
        "metadata": {"name": "b", "labels": {"to-a": "1"}},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"to-b": "1"}}]},
        "rules": [],
    }
    assert aggregate_rules(a, [a, b]) == []


def test_policy_is_kept_until_the_revision_moves() -> None:
    data = world()
    revision = [1]
    az = RBACAuthorizer(lambda gr: data.get(gr, []), lambda: revision[0])
    attrs = Attributes(UserInfo("alice"), "delete", "ns1", resource="pods")
    assert not az.authorize(attrs).allowed
    # The store replaces objects on write; so does this test.
    data[CLUSTER_ROLES][0] = cluster_role("pod-reader", [rule([""], ["pods"], ["delete"])])
    assert not az.authorize(attrs).allowed  # same revision: the compiled policy stands
    revision[0] = 2
    assert az.authorize(attrs).allowed


def test_a_write_elsewhere_keeps_the_compiled_policy() -> None:
    data = world()
    revision = [1]
    calls: list[str] = []

    def listing(resource: str) -> list[dict[str, object]]:
        calls.append(resource)
        return data.get(resource, [])

    az = RBACAuthorizer(listing, lambda: revision[0])
    attrs = Attributes(UserInfo("alice"), "get", "ns1", resource="pods")
    assert az.authorize(attrs).allowed
    assert az.authorize(attrs).allowed
    assert len(calls) == 4  # listed once for the first revision
    revision[0] = 2
    assert az.authorize(attrs).allowed
    assert len(calls) == 8  # listed again, the policy itself found unchanged


def test_rule_allows_star_group_and_resource() -> None:
    star = PolicyRule(verbs=("get",), api_groups=("*",), resources=("*",))
    attrs = Attributes(UserInfo("u"), "get", "ns", "batch", resource="jobs", subresource="status")
    assert rule_allows(attrs, star)
    # A resource rule never allows a non-resource request, whatever its stars.
    assert not rule_allows(
        Attributes(UserInfo("u"), "get", resource_request=False, path="/x"), star
    )
