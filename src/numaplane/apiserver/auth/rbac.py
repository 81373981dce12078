"""RBAC authorization as kube-apiserver's ``plugin/pkg/auth/authorizer/rbac`` and the rule
resolver of ``pkg/registry/rbac/validation`` decide it: a request is allowed when a rule of a
role bound to the user allows it, and has no opinion (denied) otherwise.

ClusterRoleBindings are visited first, then the RoleBindings of the request's namespace. A
binding applies to a user by name, to a group the user is in, or to a ServiceAccount (its
namespace defaults to the RoleBinding's). A role that cannot be found contributes nothing and
its error becomes the denial's reason (``RBAC: clusterrole.rbac.authorization.k8s.io "x" not
found``). ``system:masters`` is allowed everything before RBAC is asked, as kube-apiserver's
privileged-group authorizer does. ClusterRoles with an ``aggregationRule`` get the rules the
aggregation controller would write into them: the union, in name order, of the rules of every
other ClusterRole a selector matches.

The objects come from ``list_objects(group_resource)``; with a ``revision`` callable (the
store's resourceVersion) the compiled policy is kept until the revision moves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from numaplane.apiserver.auth.serviceaccount import service_account_username
from numaplane.apiserver.user import MASTERS_GROUP, UserInfo

Object = dict[str, Any]
ListObjects = Callable[[str], list[Object]]

RBAC_GROUP: Final = "rbac.authorization.k8s.io"
ROLES: Final = "roles.rbac.authorization.k8s.io"
CLUSTER_ROLES: Final = "clusterroles.rbac.authorization.k8s.io"
ROLE_BINDINGS: Final = "rolebindings.rbac.authorization.k8s.io"
CLUSTER_ROLE_BINDINGS: Final = "clusterrolebindings.rbac.authorization.k8s.io"


@dataclass(frozen=True)
class Attributes:
    """What a request asks (upstream's ``authorizer.Attributes``): a resource request names
    verb, API group, resource, subresource, namespace and name; a non-resource request a
    ``path``."""

    user: UserInfo
    verb: str
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    resource_request: bool = True
    path: str = ""


@dataclass(frozen=True)
class Decision:
    """An authorization answer: ``allowed``, the ``reason`` (which binding allowed it, or the
    resolution errors behind a denial), and ``denied`` (an explicit deny, which RBAC never
    gives: it has no opinion instead)."""

    allowed: bool
    reason: str = ""
    denied: bool = False


@dataclass(frozen=True)
class PolicyRule:
    """One ``rules[]`` entry, with the fields as tuples."""

    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, rule: Mapping[str, Any]) -> PolicyRule:
        """A rule from its JSON form."""

        def strings(key: str) -> tuple[str, ...]:
            value = rule.get(key) or ()
            return tuple(str(v) for v in value) if isinstance(value, list | tuple) else ()

        return cls(
            strings("verbs"),
            strings("apiGroups"),
            strings("resources"),
            strings("resourceNames"),
            strings("nonResourceURLs"),
        )

    def to_dict(self) -> Object:
        """The JSON form, with empty fields left out as the API serializes them."""
        out: Object = {}
        if self.api_groups:
            out["apiGroups"] = list(self.api_groups)
        if self.non_resource_urls:
            out["nonResourceURLs"] = list(self.non_resource_urls)
        if self.resource_names:
            out["resourceNames"] = list(self.resource_names)
        if self.resources:
            out["resources"] = list(self.resources)
        out["verbs"] = list(self.verbs)
        return out


def rule_allows(attrs: Attributes, rule: PolicyRule) -> bool:
    """Whether ``rule`` allows the request (upstream's ``RuleAllows``)."""
    if not ("*" in rule.verbs or attrs.verb in rule.verbs):
        return False
    if not attrs.resource_request:
        return _url_matches(rule.non_resource_urls, attrs.path)
    if not ("*" in rule.api_groups or attrs.api_group in rule.api_groups):
        return False
    combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    if not _resource_matches(rule.resources, combined, attrs.subresource):
        return False
    return not rule.resource_names or attrs.name in rule.resource_names


def _resource_matches(resources: Sequence[str], combined: str, subresource: str) -> bool:
    for resource in resources:
        if resource in ("*", combined):
            return True
        # "*/status" grants a subresource of every resource; "pods/*" is no pattern upstream.
        if subresource and resource == f"*/{subresource}":
            return True
    return False


def _url_matches(urls: Sequence[str], path: str) -> bool:
    for url in urls:
        if url in ("*", path):
            return True
        if url.endswith("*") and path.startswith(url.rstrip("*")):
            return True
    return False


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether a ``metav1.LabelSelector`` matches ``labels``: every ``matchLabels`` pair and
    every ``matchExpressions`` requirement (In, NotIn, Exists, DoesNotExist); an empty selector
    matches everything, an unknown operator nothing."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op = expr.get("key", ""), expr.get("operator", "")
        values = expr.get("values") or []
        present = key in labels
        if op == "In":
            ok = present and labels[key] in values
        elif op == "NotIn":
            ok = not present or labels[key] not in values
        elif op == "Exists":
            ok = present
        elif op == "DoesNotExist":
            ok = not present
        else:
            return False
        if not ok:
            return False
    return True


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _own_rules(role: Mapping[str, Any]) -> list[PolicyRule]:
    return [PolicyRule.from_dict(r) for r in role.get("rules") or [] if isinstance(r, Mapping)]


def aggregate_rules(
    cluster_role: Mapping[str, Any], cluster_roles: Sequence[Object]
) -> list[Object]:
    """The ``rules`` the aggregation controller writes into ``cluster_role`` (which has an
    ``aggregationRule``): for each selector in turn, the rules of every other matching
    ClusterRole in name order, each rule once."""
    return [r.to_dict() for r in _aggregate(cluster_role, _by_name(cluster_roles), ())]


def _by_name(cluster_roles: Sequence[Object]) -> dict[str, Object]:
    return {str(_meta(r).get("name", "")): r for r in cluster_roles}


def _aggregate(
    role: Mapping[str, Any], by_name: Mapping[str, Object], seen: tuple[str, ...]
) -> list[PolicyRule]:
    name = str(_meta(role).get("name", ""))
    rule = role.get("aggregationRule")
    if not isinstance(rule, Mapping):
        return _own_rules(role)
    out: list[PolicyRule] = []
    for selector in rule.get("clusterRoleSelectors") or []:
        for other_name in sorted(by_name):
            other = by_name[other_name]
            if other_name == name or other_name in seen:
                continue
            if not selector_matches(selector, _meta(other).get("labels") or {}):
                continue
            # An aggregated role's own rules are what the controller wrote into it, which is
            # what it would have aggregated: resolve it the same way (cycles stop at `seen`).
            for r in _aggregate(other, by_name, (*seen, name)):
                if r not in out:
                    out.append(r)
    return out


@dataclass(frozen=True)
class _Binding:
    kind: str  # "ClusterRoleBinding" | "RoleBinding"
    name: str
    namespace: str
    role_kind: str
    role_name: str
    subjects: tuple[Mapping[str, Any], ...]


@dataclass
class _Policy:
    roles: dict[tuple[str, str], list[PolicyRule]] = field(default_factory=dict)
    cluster_roles: dict[str, list[PolicyRule]] = field(default_factory=dict)
    cluster_bindings: list[_Binding] = field(default_factory=list)
    bindings: dict[str, list[_Binding]] = field(default_factory=dict)


def _binding(obj: Mapping[str, Any], kind: str) -> _Binding:
    meta, ref = _meta(obj), obj.get("roleRef") or {}
    subjects = tuple(s for s in obj.get("subjects") or [] if isinstance(s, Mapping))
    return _Binding(
        kind,
        str(meta.get("name", "")),
        str(meta.get("namespace", "")),
        str(ref.get("kind", "")),
        str(ref.get("name", "")),
        subjects,
    )


def _compile(list_objects: ListObjects) -> _Policy:
    policy = _Policy()
    cluster_roles = list_objects(CLUSTER_ROLES)
    by_name = _by_name(cluster_roles)
    for name, role in by_name.items():
        policy.cluster_roles[name] = _aggregate(role, by_name, ())
    for role in list_objects(ROLES):
        meta = _meta(role)
        policy.roles[(str(meta.get("namespace", "")), str(meta.get("name", "")))] = _own_rules(role)
    bindings = sorted(
        (_binding(b, "ClusterRoleBinding") for b in list_objects(CLUSTER_ROLE_BINDINGS)),
        key=lambda b: b.name,
    )
    policy.cluster_bindings = bindings
    for obj in list_objects(ROLE_BINDINGS):
        binding = _binding(obj, "RoleBinding")
        policy.bindings.setdefault(binding.namespace, []).append(binding)
    for listed in policy.bindings.values():
        listed.sort(key=lambda b: b.name)
    return policy


def _applies(user: UserInfo, subject: Mapping[str, Any], namespace: str) -> bool:
    kind, name = subject.get("kind"), str(subject.get("name", ""))
    if kind == "User":
        return user.name == name
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        sa_namespace = str(subject.get("namespace") or namespace)
        return bool(sa_namespace) and user.name == service_account_username(sa_namespace, name)
    return False


def _describe_subject(subject: Mapping[str, Any], namespace: str) -> str:
    kind, name = str(subject.get("kind", "")), str(subject.get("name", ""))
    if kind == "ServiceAccount":
        return f'{kind} "{name}/{subject.get("namespace") or namespace}"'
    return f'{kind} "{name}"'


def _describe(binding: _Binding, subject: Mapping[str, Any]) -> str:
    if binding.kind == "ClusterRoleBinding":
        shown = binding.name
        who = _describe_subject(subject, "")
    else:
        shown = f"{binding.name}/{binding.namespace}"
        who = _describe_subject(subject, binding.namespace)
    return f'{binding.kind} "{shown}" of {binding.role_kind} "{binding.role_name}" to {who}'


@dataclass(frozen=True)
class RuleSource:
    """Where a rule came from: the binding's description (``ClusterRoleBinding "x" of
    ClusterRole "y" to User "z"``)."""

    description: str


class RBACAuthorizer:
    """Upstream's RBAC authorizer over the RBAC objects of one logical cluster."""

    def __init__(
        self,
        list_objects: ListObjects,
        revision: Callable[[], int] | None = None,
    ) -> None:
        self._list_objects = list_objects
        self._revision = revision
        self._cached: tuple[int, _Policy] | None = None

    def _policy(self) -> _Policy:
        if self._revision is None:
            return _compile(self._list_objects)
        rv = self._revision()
        if self._cached is None or self._cached[0] != rv:
            self._cached = (rv, _compile(self._list_objects))
        return self._cached[1]

    def role_reference_rules(
        self, role_kind: str, role_name: str, namespace: str, *, registry: bool = False
    ) -> tuple[list[PolicyRule], str | None]:
        """The rules a roleRef names, or the resolution error (upstream's
        ``GetRoleReferenceRules``)."""
        return self._ref_rules(self._policy(), role_kind, role_name, namespace, registry)

    def _ref_rules(
        self, policy: _Policy, role_kind: str, role_name: str, namespace: str, registry: bool
    ) -> tuple[list[PolicyRule], str | None]:
        if role_kind == "Role":
            rules = policy.roles.get((namespace, role_name))
            noun = "roles" if registry else "role"
        elif role_kind == "ClusterRole":
            rules = policy.cluster_roles.get(role_name)
            noun = "clusterroles" if registry else "clusterrole"
        else:
            return [], f'unsupported role reference kind: "{role_kind}"'
        if rules is None:
            return [], f'{noun}.{RBAC_GROUP} "{role_name}" not found'
        return rules, None

    def visit_rules(
        self, user: UserInfo, namespace: str, *, registry: bool = False
    ) -> tuple[list[tuple[RuleSource, PolicyRule]], list[str]]:
        """Every rule that applies to ``user`` in ``namespace`` with its source, and the
        resolution errors (upstream's ``VisitRulesFor``, in its order)."""
        policy = self._policy()
        found: list[tuple[RuleSource, PolicyRule]] = []
        errs: list[str] = []
        scoped = [(b, "") for b in policy.cluster_bindings]
        if namespace:
            scoped += [(b, namespace) for b in policy.bindings.get(namespace, [])]
        for binding, ns in scoped:
            subject = next((s for s in binding.subjects if _applies(user, s, ns)), None)
            if subject is None:
                continue
            rules, err = self._ref_rules(policy, binding.role_kind, binding.role_name, ns, registry)
            if err is not None:
                errs.append(err)
                continue
            source = RuleSource(_describe(binding, subject))
            found.extend((source, rule) for rule in rules)
        return found, errs

    def rules_for(
        self, user: UserInfo, namespace: str, *, registry: bool = False
    ) -> tuple[list[PolicyRule], list[str]]:
        """The rules of ``user`` in ``namespace`` and the resolution errors. The authorizer
        reads roles through listers (``clusterrole.rbac...`` in its errors), the escalation
        check through the registry (``registry=True``: ``clusterroles.rbac...``)."""
        found, errs = self.visit_rules(user, namespace, registry=registry)
        return [rule for _, rule in found], errs

    def authorize(self, attrs: Attributes) -> Decision:
        """Allowed when a rule allows ``attrs``; otherwise no opinion, with the resolution
        errors (``RBAC: ...``) as the reason."""
        if MASTERS_GROUP in attrs.user.groups:
            return Decision(True, "")
        found, errs = self.visit_rules(attrs.user, attrs.namespace)
        for source, rule in found:
            if rule_allows(attrs, rule):
                return Decision(True, f"RBAC: allowed by {source.description}")
        reason = f"RBAC: {aggregate_errors(errs)}" if errs else ""
        return Decision(False, reason)


def aggregate_errors(errs: Sequence[str]) -> str:
    """apimachinery's ``utilerrors.NewAggregate(...).Error()``: one bare, several in ``[..]``
    (duplicates once)."""
    unique = list(dict.fromkeys(errs))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"
