"""A small RBAC world shared by the authorizer, escalation and review tests: roles, bindings of
every subject kind, an aggregated ClusterRole and a binding to a missing role."""

from __future__ import annotations

from typing import Any

from numaplane.apiserver.auth.rbac import (
    CLUSTER_ROLE_BINDINGS,
    CLUSTER_ROLES,
    ROLE_BINDINGS,
    ROLES,
    RBACAuthorizer,
)

Object = dict[str, Any]
RBAC = "rbac.authorization.k8s.io"


def rule(groups: list[str], resources: list[str], verbs: list[str], **extra: Any) -> Object:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs, **extra}


def cluster_role(name: str, rules: list[Object], **extra: Any) -> Object:
    return {"kind": "ClusterRole", "metadata": {"name": name, **extra}, "rules": rules}


def role(namespace: str, name: str, rules: list[Object]) -> Object:
    return {"kind": "Role", "metadata": {"name": name, "namespace": namespace}, "rules": rules}


def subject(kind: str, name: str, namespace: str = "") -> Object:
    out: Object = {"kind": kind, "name": name}
    if kind != "ServiceAccount":
        out["apiGroup"] = RBAC
    if namespace:
        out["namespace"] = namespace
    return out


def binding(
    name: str, role_kind: str, role_name: str, subjects: list[Object], namespace: str = ""
) -> Object:
    meta: Object = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {
        "kind": "RoleBinding" if namespace else "ClusterRoleBinding",
        "metadata": meta,
        "roleRef": {"apiGroup": RBAC, "kind": role_kind, "name": role_name},
        "subjects": subjects,
    }


def world() -> dict[str, list[Object]]:
    return {
        CLUSTER_ROLES: [
            cluster_role("pod-reader", [rule([""], ["pods"], ["get", "list", "watch"])]),
            cluster_role("job-admin", [rule(["batch"], ["jobs", "jobs/status"], ["*"])]),
            cluster_role("status-writer", [rule([""], ["*/status"], ["update"])]),
            cluster_role(
                "named-cm", [rule([""], ["configmaps"], ["get"], resourceNames=["app-config"])]
            ),
            cluster_role("urls", [{"nonResourceURLs": ["/healthz", "/logs/*"], "verbs": ["get"]}]),
            cluster_role("any-group-secrets", [rule(["*"], ["secrets"], ["list"])]),
            {
                "kind": "ClusterRole",
                "metadata": {"name": "agg-parent"},
                "aggregationRule": {
                    "clusterRoleSelectors": [
                        {"matchExpressions": [{"key": "team", "operator": "In", "values": ["a"]}]}
                    ]
                },
            },
            cluster_role(
                "agg-child",
                [rule(["coordination.k8s.io"], ["leases"], ["create"])],
                labels={"team": "a"},
            ),
            cluster_role("role-escalator", [rule([RBAC], ["roles"], ["escalate"])]),
            cluster_role(
                "admin-binder",
                [rule([RBAC], ["clusterroles"], ["bind"], resourceNames=["cluster-admin"])],
            ),
            cluster_role("cluster-admin", [rule(["*"], ["*"], ["*"])]),
        ],
        CLUSTER_ROLE_BINDINGS: [
            binding("crb-user", "ClusterRole", "pod-reader", [subject("User", "alice")]),
            binding("crb-group", "ClusterRole", "job-admin", [subject("Group", "batchers")]),
            binding("crb-sa", "ClusterRole", "urls", [subject("ServiceAccount", "robot", "ns1")]),
            # A ServiceAccount subject of a ClusterRoleBinding needs its namespace: none here.
            binding(
                "crb-sa-no-ns", "ClusterRole", "named-cm", [subject("ServiceAccount", "robot")]
            ),
            binding("crb-agg", "ClusterRole", "agg-parent", [subject("User", "carol")]),
            binding("crb-missing", "ClusterRole", "missing-role", [subject("User", "dave")]),
            binding("crb-escalator", "ClusterRole", "role-escalator", [subject("User", "esc")]),
            binding("crb-binder", "ClusterRole", "admin-binder", [subject("User", "binder")]),
            binding("crb-binder-pods", "ClusterRole", "pod-reader", [subject("User", "binder")]),
        ],
        ROLES: [role("ns1", "secret-reader", [rule([""], ["secrets"], ["get"])])],
        ROLE_BINDINGS: [
            binding("rb-sa", "Role", "secret-reader", [subject("ServiceAccount", "robot")], "ns1"),
            binding("rb-cluster", "ClusterRole", "named-cm", [subject("User", "erin")], "ns1"),
            binding(
                "rb-status", "ClusterRole", "status-writer", [subject("Group", "writers")], "ns2"
            ),
        ],
    }


def authorizer(objects: dict[str, list[Object]] | None = None) -> RBACAuthorizer:
    data = world() if objects is None else objects
    return RBACAuthorizer(lambda gr: data.get(gr, []))
