"""The self-review APIs behind ``kubectl auth can-i`` and ``kubectl auth whoami``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.apiserver.auth.reviews import (
    self_subject_access_review,
    self_subject_review,
    self_subject_rules_review,
)
from numaplane.apiserver.errors import StatusError
from numaplane.apiserver.user import UserInfo
from tests.apiserver.auth.rbac_world import authorizer

ALICE = UserInfo("alice", ("system:authenticated",))


@dataclass(frozen=True)
class AccessCase:
    name: str
    spec: dict[str, Any]
    status: dict[str, Any]


ACCESS = [
    AccessCase(
        "allowed, with the binding as reason",
        {"resourceAttributes": {"namespace": "ns1", "verb": "list", "resource": "pods"}},
        {
            "allowed": True,
            "reason": 'RBAC: allowed by ClusterRoleBinding "crb-user" of ClusterRole '
            '"pod-reader" to User "alice"',
        },
    ),
    AccessCase(
        "denied without a reason",
        {"resourceAttributes": {"namespace": "ns1", "verb": "delete", "resource": "pods"}},
        {"allowed": False},
    ),
    AccessCase(
        "subresource asked separately",
        {
            "resourceAttributes": {
                "namespace": "ns1",
                "verb": "get",
                "resource": "pods",
                "subresource": "log",
            }
        },
        {"allowed": False},
    ),
    AccessCase(
        "non-resource path",
        {"nonResourceAttributes": {"path": "/healthz", "verb": "get"}},
        {"allowed": False},
    ),
]


@pytest.mark.parametrize("case", ACCESS, ids=[c.name for c in ACCESS])
def test_self_subject_access_review(case: AccessCase) -> None:
    body = {
        "kind": "SelfSubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": case.spec,
    }
    out = self_subject_access_review(ALICE, body, authorizer())
    assert out["kind"] == "SelfSubjectAccessReview"
    assert out["apiVersion"] == "authorization.k8s.io/v1"
    assert out["spec"] == case.spec
    assert out["status"] == case.status


@dataclass(frozen=True)
class InvalidCase:
    name: str
    body: dict[str, Any]
    message: str


INVALID = [
    InvalidCase(
        "neither attributes",
        {"spec": {}},
        'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: '
        'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes '
        "must be specified",
    ),
    InvalidCase(
        "both attributes",
        {
            "spec": {
                "resourceAttributes": {"verb": "get", "resource": "pods"},
                "nonResourceAttributes": {"path": "/x", "verb": "get"},
            }
        },
        'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: '
        'spec.nonResourceAttributes: Invalid value: {"path":"/x","verb":"get"}: cannot be '
        "specified in combination with resourceAttributes",
    ),
]


@pytest.mark.parametrize("case", INVALID, ids=[c.name for c in INVALID])
def test_self_subject_access_review_invalid(case: InvalidCase) -> None:
    with pytest.raises(StatusError) as info:
        self_subject_access_review(ALICE, case.body, authorizer())
    assert (info.value.code, info.value.reason) == (422, "Invalid")
    assert info.value.message == case.message


def test_rules_review_lists_cluster_and_namespace_rules() -> None:
    robot = UserInfo(
        "system:serviceaccount:ns1:robot",
        ("system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated"),
    )
    body = {"spec": {"namespace": "ns1"}}
    out = self_subject_rules_review(robot, body, authorizer())
    assert out["kind"] == "SelfSubjectRulesReview"
    assert out["spec"] == {}
    assert out["status"] == {
        "resourceRules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]}],
        "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/logs/*"]}],
        "incomplete": False,
    }


def test_rules_review_reports_resolution_errors() -> None:
    dave = UserInfo("dave", ("system:authenticated",))
    out = self_subject_rules_review(dave, {"spec": {"namespace": "ns1"}}, authorizer())
    assert out["status"]["evaluationError"] == (
        'clusterrole.rbac.authorization.k8s.io "missing-role" not found'
    )


def test_rules_review_needs_a_namespace() -> None:
    with pytest.raises(StatusError) as info:
        self_subject_rules_review(ALICE, {"spec": {}}, authorizer())
    assert (info.value.code, info.value.message) == (400, "no namespace on request")


def test_self_subject_review_names_the_user() -> None:
    user = UserInfo(
        "system:serviceaccount:ns1:robot",
        ("system:serviceaccounts", "system:authenticated"),
        "u-1",
        {"authentication.kubernetes.io/credential-id": ("JTI=abc",)},
    )
    out = self_subject_review(user, {}, now="2026-01-02T03:04:05Z")
    assert out == {
        "kind": "SelfSubjectReview",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"creationTimestamp": "2026-01-02T03:04:05Z"},
        "status": {
            "userInfo": {
                "username": "system:serviceaccount:ns1:robot",
                "uid": "u-1",
                "groups": ["system:serviceaccounts", "system:authenticated"],
                "extra": {"authentication.kubernetes.io/credential-id": ["JTI=abc"]},
            }
        },
    }


def test_self_subject_review_leaves_out_empty_fields() -> None:
    out = self_subject_review(UserInfo("bob"), {}, now="2026-01-02T03:04:05Z")
    assert out["status"] == {"userInfo": {"username": "bob"}}
