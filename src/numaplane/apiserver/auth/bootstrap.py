"""The default RBAC policy kube-apiserver creates on first start (``rbac/bootstrappolicy``):
the user-facing roles ``cluster-admin``, ``admin``, ``edit``, ``view`` (the last three
aggregated from the ``system:aggregate-to-*`` roles by label), the discovery and self-review
roles every authenticated user holds, and their ClusterRoleBindings; each labelled
``kubernetes.io/bootstrapping: rbac-defaults`` and annotated
``rbac.authorization.kubernetes.io/autoupdate: "true"``, as upstream's objects are.

Only the roles a numaplane cluster has a use for are here: the controller and node roles of
kube-controller-manager, kube-scheduler and the kubelet's node authorizer are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from numaplane.apiserver.auth.escalation import covers
from numaplane.apiserver.auth.rbac import (
    CLUSTER_ROLE_BINDINGS,
    CLUSTER_ROLES,
    RBAC_GROUP,
    PolicyRule,
    aggregate_rules,
)

Object = dict[str, Any]

AUTOUPDATE: Final = "rbac.authorization.kubernetes.io/autoupdate"
BOOTSTRAPPING: Final = "kubernetes.io/bootstrapping"
AGGREGATE_TO: Final = "rbac.authorization.k8s.io/aggregate-to-"

_READ: Final = ("get", "list", "watch")
_WRITE: Final = ("create", "delete", "deletecollection", "patch", "update")
_ALL_RW: Final = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")

# (apiGroups, resources, verbs) — upstream's rules, in upstream's order (sorted as its sets are).
Rule = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]

_AGGREGATE_TO_ADMIN: Final[tuple[Rule, ...]] = (
    (("authorization.k8s.io",), ("localsubjectaccessreviews",), ("create",)),
    ((RBAC_GROUP,), ("rolebindings", "roles"), _ALL_RW),
)

_AGGREGATE_TO_EDIT: Final[tuple[Rule, ...]] = (
    (
        ("",),
        (
            "pods/attach",
            "pods/exec",
            "pods/portforward",
            "pods/proxy",
            "secrets",
            "services/proxy",
        ),
        _READ,
    ),
    (("",), ("serviceaccounts",), ("impersonate",)),
    (("",), ("pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"), _WRITE),
    (("",), ("pods/eviction",), ("create",)),
    (
        ("",),
        (
            "configmaps",
            "events",
            "persistentvolumeclaims",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "secrets",
            "serviceaccounts",
            "services",
            "services/proxy",
        ),
        _WRITE,
    ),
    (("",), ("serviceaccounts/token",), ("create",)),
    (
        ("apps",),
        (
            "daemonsets",
            "deployments",
            "deployments/rollback",
            "deployments/scale",
            "replicasets",
            "replicasets/scale",
            "statefulsets",
            "statefulsets/scale",
        ),
        _WRITE,
    ),
    (("autoscaling",), ("horizontalpodautoscalers",), _WRITE),
    (("batch",), ("cronjobs", "jobs"), _WRITE),
    (
        ("extensions",),
        (
            "daemonsets",
            "deployments",
            "deployments/rollback",
            "deployments/scale",
            "ingresses",
            "networkpolicies",
            "replicasets",
            "replicasets/scale",
            "replicationcontrollers/scale",
        ),
        _WRITE,
    ),
    (("policy",), ("poddisruptionbudgets",), _WRITE),
    (("networking.k8s.io",), ("ingresses", "networkpolicies"), _WRITE),
    (("coordination.k8s.io",), ("leases",), _ALL_RW),
)

_AGGREGATE_TO_VIEW: Final[tuple[Rule, ...]] = (
    (
        ("",),
        (
            "configmaps",
            "endpoints",
            "persistentvolumeclaims",
            "persistentvolumeclaims/status",
            "pods",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "serviceaccounts",
            "services",
            "services/status",
        ),
        _READ,
    ),
    (
        ("",),
        (
            "bindings",
            "events",
            "limitranges",
            "namespaces/status",
            "pods/log",
            "pods/status",
            "replicationcontrollers/status",
            "resourcequotas",
            "resourcequotas/status",
        ),
        _READ,
    ),
    (("",), ("namespaces",), _READ),
    (("discovery.k8s.io",), ("endpointslices",), _READ),
    (
        ("apps",),
        (
            "controllerrevisions",
            "daemonsets",
            "daemonsets/status",
            "deployments",
            "deployments/scale",
            "deployments/status",
            "replicasets",
            "replicasets/scale",
            "replicasets/status",
            "statefulsets",
            "statefulsets/scale",
            "statefulsets/status",
        ),
        _READ,
    ),
    (("autoscaling",), ("horizontalpodautoscalers", "horizontalpodautoscalers/status"), _READ),
    (("batch",), ("cronjobs", "cronjobs/status", "jobs", "jobs/status"), _READ),
    (
        ("extensions",),
        (
            "daemonsets",
            "daemonsets/status",
            "deployments",
            "deployments/scale",
            "deployments/status",
            "ingresses",
            "ingresses/status",
            "networkpolicies",
            "replicasets",
            "replicasets/scale",
            "replicasets/status",
            "replicationcontrollers/scale",
        ),
        _READ,
    ),
    (("policy",), ("poddisruptionbudgets", "poddisruptionbudgets/status"), _READ),
    (("networking.k8s.io",), ("ingresses", "ingresses/status", "networkpolicies"), _READ),
)

_BASIC_USER: Final[tuple[Rule, ...]] = (
    (
        ("authorization.k8s.io",),
        ("selfsubjectaccessreviews", "selfsubjectrulesreviews"),
        ("create",),
    ),
    (("authentication.k8s.io",), ("selfsubjectreviews",), ("create",)),
)

_DISCOVERY_URLS: Final = (
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/openapi",
    "/openapi/*",
    "/readyz",
    "/version",
    "/version/",
)
_PUBLIC_INFO_URLS: Final = ("/healthz", "/livez", "/readyz", "/version", "/version/")
_MONITORING_URLS: Final = (
    "/healthz",
    "/healthz/*",
    "/livez",
    "/livez/*",
    "/metrics",
    "/metrics/slis",
    "/readyz",
    "/readyz/*",
)
_ISSUER_DISCOVERY_URLS: Final = ("/.well-known/openid-configuration", "/openid/v1/jwks")


def _meta(name: str, labels: dict[str, str] | None = None) -> Object:
    return {
        "name": name,
        "labels": {BOOTSTRAPPING: "rbac-defaults", **(labels or {})},
        "annotations": {AUTOUPDATE: "true"},
    }


def _rules(rules: tuple[Rule, ...]) -> list[Object]:
    return [
        {"apiGroups": list(groups), "resources": list(resources), "verbs": list(verbs)}
        for groups, resources, verbs in rules
    ]


def _url_rule(urls: tuple[str, ...]) -> list[Object]:
    return [{"nonResourceURLs": list(urls), "verbs": ["get"]}]


def _cluster_role(
    name: str,
    rules: list[Object],
    labels: dict[str, str] | None = None,
    aggregate_from: str | None = None,
) -> Object:
    role: Object = {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "ClusterRole",
        "metadata": _meta(name, labels),
    }
    if aggregate_from is not None:
        role["aggregationRule"] = {
            "clusterRoleSelectors": [{"matchLabels": {AGGREGATE_TO + aggregate_from: "true"}}]
        }
    role["rules"] = rules
    return role


def bootstrap_cluster_roles() -> list[Object]:
    """The default ClusterRoles, ``admin``/``edit``/``view`` with the rules the aggregation
    controller gives them."""
    roles = [
        _cluster_role("admin", [], aggregate_from="admin"),
        _cluster_role(
            "cluster-admin",
            [
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ],
        ),
        _cluster_role("edit", [], {AGGREGATE_TO + "admin": "true"}, aggregate_from="edit"),
        _cluster_role(
            "system:aggregate-to-admin",
            _rules(_AGGREGATE_TO_ADMIN),
            {AGGREGATE_TO + "admin": "true"},
        ),
        _cluster_role(
            "system:aggregate-to-edit", _rules(_AGGREGATE_TO_EDIT), {AGGREGATE_TO + "edit": "true"}
        ),
        _cluster_role(
            "system:aggregate-to-view", _rules(_AGGREGATE_TO_VIEW), {AGGREGATE_TO + "view": "true"}
        ),
        _cluster_role("system:basic-user", _rules(_BASIC_USER)),
        _cluster_role("system:discovery", _url_rule(_DISCOVERY_URLS)),
        _cluster_role("system:monitoring", _url_rule(_MONITORING_URLS)),
        _cluster_role("system:public-info-viewer", _url_rule(_PUBLIC_INFO_URLS)),
        _cluster_role("system:service-account-issuer-discovery", _url_rule(_ISSUER_DISCOVERY_URLS)),
        _cluster_role("view", [], {AGGREGATE_TO + "edit": "true"}, aggregate_from="view"),
    ]
    for role in roles:
        if "aggregationRule" in role:
            role["rules"] = aggregate_rules(role, roles)
    return roles


def _binding(name: str, groups: tuple[str, ...]) -> Object:
    return {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": _meta(name),
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name},
        "subjects": [{"apiGroup": RBAC_GROUP, "kind": "Group", "name": g} for g in groups],
    }


def bootstrap_cluster_role_bindings() -> list[Object]:
    """The default ClusterRoleBindings, each named after its ClusterRole."""
    return [
        _binding("cluster-admin", ("system:masters",)),
        _binding("system:basic-user", ("system:authenticated",)),
        _binding("system:discovery", ("system:authenticated",)),
        _binding("system:monitoring", ("system:monitoring",)),
        _binding("system:public-info-viewer", ("system:authenticated", "system:unauthenticated")),
        _binding("system:service-account-issuer-discovery", ("system:serviceaccounts",)),
    ]


def bootstrap_policy() -> list[tuple[str, Object]]:
    """``(group_resource, object)`` for every default object, roles before their bindings:
    what to create, when absent, on a cluster's first start."""
    out = [(CLUSTER_ROLES, r) for r in bootstrap_cluster_roles()]
    out += [(CLUSTER_ROLE_BINDINGS, b) for b in bootstrap_cluster_role_bindings()]
    return out


@dataclass(frozen=True)
class Reconciled:
    """What a restart does to a default object that exists: ``update`` it to ``object``, or
    ``recreate`` it (a binding whose roleRef changed, which is immutable)."""

    action: str
    object: Object


def _merged_meta(expected: Object, existing: Object) -> Object:
    meta = dict(existing.get("metadata") or {})
    for key in ("labels", "annotations"):
        # Upstream's merge(expected, existing): the existing values win.
        merged = {**(expected["metadata"].get(key) or {}), **(meta.get(key) or {})}
        if merged:
            meta[key] = merged
    return meta


def reconcile(expected: Object, existing: Object) -> Reconciled | None:
    """kube-apiserver's reconciliation of a default ClusterRole or ClusterRoleBinding found on
    start (``reconcile_role.go``, ``reconcile_rolebindings.go``): missing labels, annotations,
    rules, aggregation selectors and subjects are added, nothing is removed; an object
    annotated ``rbac.authorization.kubernetes.io/autoupdate: "false"`` is left alone. None
    when there is nothing to do."""
    annotations = (existing.get("metadata") or {}).get("annotations") or {}
    if annotations.get(AUTOUPDATE) == "false":
        return None
    out = dict(existing)
    out["metadata"] = _merged_meta(expected, existing)
    if expected["kind"] == "ClusterRoleBinding":
        if existing.get("roleRef") != expected["roleRef"]:
            return Reconciled("recreate", expected)
        subjects = list(existing.get("subjects") or [])
        subjects += [s for s in expected["subjects"] if s not in subjects]
        out["subjects"] = subjects
    else:
        # Upstream adds missing rules to every role, aggregated or not (``computeReconciledRole``);
        # here the aggregated defaults carry the rules the aggregation controller gives them.
        held = [PolicyRule.from_dict(r) for r in existing.get("rules") or []]
        wanted = [PolicyRule.from_dict(r) for r in expected.get("rules") or []]
        missing = covers(held, wanted)
        if missing:
            out["rules"] = list(existing.get("rules") or []) + [r.to_dict() for r in missing]
        wanted_selectors = (expected.get("aggregationRule") or {}).get("clusterRoleSelectors")
        if wanted_selectors is None:
            out.pop("aggregationRule", None)
        else:
            selectors = list(
                (existing.get("aggregationRule") or {}).get("clusterRoleSelectors") or []
            )
            selectors += [s for s in wanted_selectors if s not in selectors]
            out["aggregationRule"] = {"clusterRoleSelectors": selectors}
    return None if out == existing else Reconciled("update", out)
