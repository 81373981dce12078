"""The default RBAC policy: its objects as upstream labels and annotates them, and what the
user-facing roles allow once bound."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.apiserver.auth.bootstrap import Reconciled, bootstrap_policy, reconcile
from numaplane.apiserver.auth.rbac import (
    CLUSTER_ROLE_BINDINGS,
    CLUSTER_ROLES,
    ROLE_BINDINGS,
    Attributes,
    RBACAuthorizer,
)
from numaplane.apiserver.user import UserInfo

Object = dict[str, Any]
RBAC = "rbac.authorization.k8s.io"


def _policy() -> dict[str, list[Object]]:
    out: dict[str, list[Object]] = {}
    for resource, obj in bootstrap_policy():
        out.setdefault(resource, []).append(obj)
    return out


def test_every_object_is_labelled_and_annotated_as_upstream() -> None:
    for _, obj in bootstrap_policy():
        meta = obj["metadata"]
        assert meta["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults", meta["name"]
        assert meta["annotations"] == {"rbac.authorization.kubernetes.io/autoupdate": "true"}


def test_roles_come_before_their_bindings_and_every_binding_resolves() -> None:
    policy = bootstrap_policy()
    kinds = [resource for resource, _ in policy]
    assert kinds == sorted(kinds, key=lambda r: r != CLUSTER_ROLES)
    roles = {o["metadata"]["name"] for r, o in policy if r == CLUSTER_ROLES}
    for resource, obj in policy:
        if resource == CLUSTER_ROLE_BINDINGS:
            assert obj["roleRef"]["name"] in roles


def test_bindings_of_the_well_known_groups() -> None:
    bindings = {o["metadata"]["name"]: o for o in _policy()[CLUSTER_ROLE_BINDINGS]}
    groups = {name: [s["name"] for s in b["subjects"]] for name, b in bindings.items()}
    assert groups["cluster-admin"] == ["system:masters"]
    assert groups["system:discovery"] == ["system:authenticated"]
    assert groups["system:basic-user"] == ["system:authenticated"]
    assert groups["system:public-info-viewer"] == [
        "system:authenticated",
        "system:unauthenticated",
    ]


def test_aggregated_roles_carry_their_selectors_and_rules() -> None:
    roles = {o["metadata"]["name"]: o for o in _policy()[CLUSTER_ROLES]}
    selectors = roles["admin"]["aggregationRule"]["clusterRoleSelectors"]
    assert selectors == [{"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}}]
    assert roles["edit"]["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-admin"]
    assert roles["view"]["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-edit"]
    # admin = edit (= aggregate-to-edit + view) + aggregate-to-admin, each rule once.
    edit, admin = roles["edit"]["rules"], roles["admin"]["rules"]
    assert admin[: len(edit)] == edit
    assert admin[len(edit) :] == roles["system:aggregate-to-admin"]["rules"]
    assert len(roles["view"]["rules"]) == len(roles["system:aggregate-to-view"]["rules"])


@dataclass(frozen=True)
class Case:
    name: str
    role: str
    verb: str
    resource: str = ""
    group: str = ""
    subresource: str = ""
    path: str = ""
    allowed: bool = True


CASES = [
    Case("view lists pods", "view", "list", "pods"),
    Case("view reads job status", "view", "get", "jobs", "batch", "status"),
    Case("view cannot read secrets", "view", "get", "secrets", allowed=False),
    Case("view cannot write", "view", "create", "configmaps", allowed=False),
    Case("edit writes secrets", "edit", "create", "secrets"),
    Case("edit creates jobs", "edit", "create", "jobs", "batch"),
    Case("edit creates service account tokens", "edit", "create", "serviceaccounts", "", "token"),
    Case(
        "edit cannot grant roles",
        "edit",
        "create",
        "roles",
        "rbac.authorization.k8s.io",
        allowed=False,
    ),
    Case("admin grants roles", "admin", "create", "rolebindings", "rbac.authorization.k8s.io"),
    Case("admin reads what view reads", "admin", "watch", "namespaces"),
    Case("cluster-admin anything", "cluster-admin", "deletecollection", "nodes"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_user_facing_roles(case: Case) -> None:
    policy = _policy()
    policy[ROLE_BINDINGS] = [
        {
            "kind": "RoleBinding",
            "metadata": {"name": "b", "namespace": "team"},
            "roleRef": {"kind": "ClusterRole", "name": case.role},
            "subjects": [{"kind": "User", "name": "u"}],
        }
    ]
    az = RBACAuthorizer(lambda gr: policy.get(gr, []))
    attrs = Attributes(
        UserInfo("u", ("system:authenticated",)),
        case.verb,
        "team",
        case.group,
        resource=case.resource,
        subresource=case.subresource,
    )
    assert az.authorize(attrs).allowed is case.allowed


@dataclass(frozen=True)
class EveryoneCase:
    name: str
    verb: str
    path: str = ""
    resource: str = ""
    group: str = ""
    allowed: bool = True


EVERYONE = [
    EveryoneCase("discovery", "get", path="/apis/batch/v1"),
    EveryoneCase("openapi", "get", path="/openapi/v3"),
    EveryoneCase("version", "get", path="/version"),
    EveryoneCase("health", "get", path="/readyz"),
    EveryoneCase("no metrics", "get", path="/metrics", allowed=False),
    EveryoneCase(
        "can-i", "create", resource="selfsubjectaccessreviews", group="authorization.k8s.io"
    ),
    EveryoneCase("whoami", "create", resource="selfsubjectreviews", group="authentication.k8s.io"),
    EveryoneCase("no pods", "list", resource="pods", allowed=False),
]


@pytest.mark.parametrize("case", EVERYONE, ids=[c.name for c in EVERYONE])
def test_what_every_authenticated_user_may_do(case: EveryoneCase) -> None:
    policy = _policy()
    az = RBACAuthorizer(lambda gr: policy.get(gr, []))
    attrs = Attributes(
        UserInfo("anyone", ("system:authenticated",)),
        case.verb,
        "default" if case.resource else "",
        case.group,
        resource=case.resource,
        resource_request=not case.path,
        path=case.path,
    )
    assert az.authorize(attrs).allowed is case.allowed


def _default(name: str, resource: str = CLUSTER_ROLES) -> Object:
    return next(o for r, o in bootstrap_policy() if r == resource and o["metadata"]["name"] == name)


def test_unchanged_defaults_need_no_reconciliation() -> None:
    for _, obj in bootstrap_policy():
        assert reconcile(obj, copy.deepcopy(obj)) is None


def test_a_trimmed_role_gets_its_missing_rules_back_and_keeps_extras() -> None:
    expected = _default("system:basic-user")
    existing = copy.deepcopy(expected)
    existing["rules"] = [
        {
            "apiGroups": ["authorization.k8s.io"],
            "resources": ["selfsubjectaccessreviews"],
            "verbs": ["create"],
        },
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
    ]
    existing["metadata"]["labels"] = {"mine": "yes"}
    result = reconcile(expected, existing)
    assert result is not None
    assert result.action == "update"
    assert result.object["rules"] == [
        *existing["rules"],
        {
            "apiGroups": ["authorization.k8s.io"],
            "resources": ["selfsubjectrulesreviews"],
            "verbs": ["create"],
        },
        {
            "apiGroups": ["authentication.k8s.io"],
            "resources": ["selfsubjectreviews"],
            "verbs": ["create"],
        },
    ]
    assert result.object["metadata"]["labels"] == {
        "kubernetes.io/bootstrapping": "rbac-defaults",
        "mine": "yes",
    }


def test_autoupdate_false_protects_an_object() -> None:
    expected = _default("system:basic-user")
    existing = copy.deepcopy(expected)
    existing["rules"] = []
    existing["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] = "false"
    assert reconcile(expected, existing) is None


def test_binding_subjects_are_restored_and_a_changed_role_ref_recreates() -> None:
    expected = _default("system:discovery", CLUSTER_ROLE_BINDINGS)
    existing = copy.deepcopy(expected)
    existing["subjects"] = [{"apiGroup": RBAC, "kind": "User", "name": "x"}]
    result = reconcile(expected, existing)
    assert result is not None
    assert result.object["subjects"] == [
        {"apiGroup": RBAC, "kind": "User", "name": "x"},
        {"apiGroup": RBAC, "kind": "Group", "name": "system:authenticated"},
    ]
    existing["roleRef"] = {"apiGroup": RBAC, "kind": "ClusterRole", "name": "view"}
    assert reconcile(expected, existing) == Reconciled("recreate", expected)


def test_aggregated_role_gets_its_selector_and_rules_back() -> None:
    # Upstream's computeReconciledRole adds missing rules to aggregated roles too; the defaults
    # here carry the rules the aggregation controller gives them.
    expected = _default("view")
    existing = copy.deepcopy(expected)
    existing["aggregationRule"] = {"clusterRoleSelectors": []}
    existing["rules"] = expected["rules"][1:]
    result = reconcile(expected, existing)
    assert result is not None
    assert result.object["aggregationRule"] == expected["aggregationRule"]
    restored = result.object["rules"][len(existing["rules"]) :]
    first = expected["rules"][0]
    assert restored == [
        {"apiGroups": first["apiGroups"], "resources": [r], "verbs": [v]}
        for r in first["resources"]
        for v in first["verbs"]
    ]
