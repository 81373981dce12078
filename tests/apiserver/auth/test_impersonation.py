"""Impersonation (``kubectl --as``): who may act as whom, and who the request then is."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.apiserver.auth.impersonation import impersonate, impersonation_requested
from numaplane.apiserver.auth.rbac import CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES, RBACAuthorizer
from numaplane.apiserver.errors import StatusError
from numaplane.apiserver.user import UserInfo
from tests.apiserver.auth.rbac_world import binding, cluster_role, rule, subject

ROOT = UserInfo("root", ("system:masters", "system:authenticated"))
SUPPORT = UserInfo("support", ("system:authenticated",))


def _authorizer() -> RBACAuthorizer:
    data = {
        CLUSTER_ROLES: [
            cluster_role(
                "impersonate-alice",
                [rule([""], ["users"], ["impersonate"], resourceNames=["alice"])],
            ),
        ],
        CLUSTER_ROLE_BINDINGS: [
            binding("b", "ClusterRole", "impersonate-alice", [subject("User", "support")])
        ],
    }
    return RBACAuthorizer(lambda gr: data.get(gr, []))


@dataclass(frozen=True)
class Case:
    name: str
    headers: tuple[tuple[str, str], ...]
    user: UserInfo


CASES = [
    Case("no headers: the requester", (), ROOT),
    Case(
        "a user",
        (("Impersonate-User", "jane"),),
        UserInfo("jane", ("system:authenticated",)),
    ),
    Case(
        "a user in groups",
        (("Impersonate-User", "jane"), ("Impersonate-Group", "dev"), ("Impersonate-Group", "ops")),
        UserInfo("jane", ("dev", "ops", "system:authenticated")),
    ),
    Case(
        "a service account gets its groups",
        (("Impersonate-User", "system:serviceaccount:ns1:robot"),),
        UserInfo(
            "system:serviceaccount:ns1:robot",
            ("system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated"),
        ),
    ),
    Case(
        "explicit groups replace a service account's",
        (("Impersonate-User", "system:serviceaccount:ns1:robot"), ("Impersonate-Group", "x")),
        UserInfo("system:serviceaccount:ns1:robot", ("x", "system:authenticated")),
    ),
    Case(
        "extra and uid",
        (
            ("Impersonate-User", "jane"),
            ("Impersonate-Extra-Scopes", "view"),
            ("Impersonate-Extra-Acme.com%2Fproject", "p1"),
            ("Impersonate-Uid", "u-1"),
        ),
        UserInfo(
            "jane",
            ("system:authenticated",),
            "u-1",
            {"scopes": ("view",), "acme.com/project": ("p1",)},
        ),
    ),
    Case(
        "anonymous is unauthenticated",
        (("Impersonate-User", "system:anonymous"),),
        UserInfo("system:anonymous", ("system:unauthenticated",)),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_masters_may_impersonate_anyone(case: Case) -> None:
    assert impersonation_requested(case.headers) is bool(case.headers)
    assert impersonate(ROOT, case.headers, _authorizer()) == case.user


def test_impersonation_allowed_by_name() -> None:
    user = impersonate(SUPPORT, [("impersonate-user", "alice")], _authorizer())
    assert user == UserInfo("alice", ("system:authenticated",))


@dataclass(frozen=True)
class Refusal:
    name: str
    headers: tuple[tuple[str, str], ...]
    code: int
    message: str


REFUSALS = [
    Refusal(
        "another user",
        (("Impersonate-User", "bob"),),
        403,
        'users "bob" is forbidden: User "support" cannot impersonate resource "users" in API '
        'group "" at the cluster scope',
    ),
    Refusal(
        "a group on top",
        (("Impersonate-User", "alice"), ("Impersonate-Group", "system:masters")),
        403,
        'groups "system:masters" is forbidden: User "support" cannot impersonate resource '
        '"groups" in API group "" at the cluster scope',
    ),
    Refusal(
        "a service account",
        (("Impersonate-User", "system:serviceaccount:kube-system:admin"),),
        403,
        'serviceaccounts "admin" is forbidden: User "support" cannot impersonate resource '
        '"serviceaccounts" in API group "" in the namespace "kube-system"',
    ),
    Refusal(
        "an extra value",
        (("Impersonate-User", "alice"), ("Impersonate-Extra-Scopes", "all")),
        403,
        'userextras.authentication.k8s.io "all" is forbidden: User "support" cannot '
        'impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the '
        "cluster scope",
    ),
    Refusal(
        "a group without a user",
        (("Impersonate-Group", "dev"),),
        500,
        "Internal error occurred: requested [{Group  dev    }] without impersonating a user",
    ),
]


@pytest.mark.parametrize("case", REFUSALS, ids=[c.name for c in REFUSALS])
def test_refusals(case: Refusal) -> None:
    with pytest.raises(StatusError) as info:
        impersonate(SUPPORT, case.headers, _authorizer())
    assert (info.value.code, info.value.message) == (case.code, case.message)
