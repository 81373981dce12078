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

The objects come from ``list_objects(group_resource)``. With a ``revision`` callable (the
store's resourceVersion) they are listed again only when the revision moves, and compiled again
(aggregation, an index of bindings by subject) only when one of them changed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from numaplane.apiserver.auth.rules import (
    Attributes,
    Decision,
    PolicyRule,
    aggregate,
    aggregate_rules,
    by_name,
    meta_of,
    own_rules,
    rule_allows,
    selector_matches,
)
from numaplane.apiserver.auth.serviceaccount import service_account_username
from numaplane.apiserver.user import MASTERS_GROUP, UserInfo

Object = dict[str, Any]
ListObjects = Callable[[str], list[Object]]

__all__ = [
    "CLUSTER_ROLES",
    "CLUSTER_ROLE_BINDINGS",
    "RBAC_GROUP",
    "ROLES",
    "ROLE_BINDINGS",
    "Attributes",
    "Decision",
    "PolicyRule",
    "RBACAuthorizer",
    "RuleSource",
    "aggregate_errors",
    "aggregate_rules",
    "rule_allows",
    "selector_matches",
]

RBAC_GROUP: Final = "rbac.authorization.k8s.io"
ROLES: Final = "roles.rbac.authorization.k8s.io"
CLUSTER_ROLES: Final = "clusterroles.rbac.authorization.k8s.io"
ROLE_BINDINGS: Final = "rolebindings.rbac.authorization.k8s.io"
CLUSTER_ROLE_BINDINGS: Final = "clusterrolebindings.rbac.authorization.k8s.io"


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
    # (kind, name) of a subject -> positions of the bindings naming it, so a request visits the
    # bindings that can apply to its user, not all of them.
    cluster_index: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    index: dict[str, dict[tuple[str, str], list[int]]] = field(default_factory=dict)


def _subject_key(subject: Mapping[str, Any], namespace: str) -> tuple[str, str] | None:
    kind, name = subject.get("kind"), str(subject.get("name", ""))
    if kind == "User":
        return ("user", name)
    if kind == "Group":
        return ("group", name)
    if kind == "ServiceAccount":
        sa_namespace = str(subject.get("namespace") or namespace)
        return ("user", service_account_username(sa_namespace, name)) if sa_namespace else None
    return None


def _index(bindings: Sequence[_Binding], namespace: str) -> dict[tuple[str, str], list[int]]:
    index: dict[tuple[str, str], list[int]] = {}
    for position, binding in enumerate(bindings):
        for subject in binding.subjects:
            key = _subject_key(subject, namespace)
            if key is not None:
                listed = index.setdefault(key, [])
                if not listed or listed[-1] != position:
                    listed.append(position)
    return index


def _user_keys(user: UserInfo) -> list[tuple[str, str]]:
    return [("user", user.name), *(("group", g) for g in user.groups)]


def _candidates(
    bindings: Sequence[_Binding], index: Mapping[tuple[str, str], list[int]], user: UserInfo
) -> list[_Binding]:
    positions: set[int] = set()
    for key in _user_keys(user):
        positions.update(index.get(key, ()))
    return [bindings[i] for i in sorted(positions)]


def _binding(obj: Mapping[str, Any], kind: str) -> _Binding:
    meta, ref = meta_of(obj), obj.get("roleRef") or {}
    subjects = tuple(s for s in obj.get("subjects") or [] if isinstance(s, Mapping))
    return _Binding(
        kind,
        str(meta.get("name", "")),
        str(meta.get("namespace", "")),
        str(ref.get("kind", "")),
        str(ref.get("name", "")),
        subjects,
    )


_RBAC_RESOURCES: Final = (CLUSTER_ROLES, ROLES, CLUSTER_ROLE_BINDINGS, ROLE_BINDINGS)


def _list_all(list_objects: ListObjects) -> dict[str, list[Object]]:
    return {resource: list_objects(resource) for resource in _RBAC_RESOURCES}


def _fingerprint(listed: Mapping[str, list[Object]]) -> tuple[object, ...]:
    """What identifies a state of the RBAC objects: each object's resourceVersion (the store
    replaces an object on every write, never mutates it, so its identity stands in when there
    is no resourceVersion)."""
    out: list[object] = []
    for resource in _RBAC_RESOURCES:
        for obj in listed[resource]:
            meta = meta_of(obj)
            out.append(
                (meta.get("namespace"), meta.get("name"), meta.get("resourceVersion"), id(obj))
            )
        out.append(resource)
    return tuple(out)


def _compile(listed: Mapping[str, list[Object]]) -> _Policy:
    policy = _Policy()
    named = by_name(listed[CLUSTER_ROLES])
    for name, role in named.items():
        policy.cluster_roles[name] = aggregate(role, named, ())
    for role in listed[ROLES]:
        meta = meta_of(role)
        policy.roles[(str(meta.get("namespace", "")), str(meta.get("name", "")))] = own_rules(role)
    bindings = sorted(
        (_binding(b, "ClusterRoleBinding") for b in listed[CLUSTER_ROLE_BINDINGS]),
        key=lambda b: b.name,
    )
    policy.cluster_bindings = bindings
    for obj in listed[ROLE_BINDINGS]:
        binding = _binding(obj, "RoleBinding")
        policy.bindings.setdefault(binding.namespace, []).append(binding)
    for namespace, in_namespace in policy.bindings.items():
        in_namespace.sort(key=lambda b: b.name)
        policy.index[namespace] = _index(in_namespace, namespace)
    policy.cluster_index = _index(policy.cluster_bindings, "")
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
        self._cached_rv: int | None = None
        self._cached: tuple[tuple[object, ...], _Policy] | None = None

    def _policy(self) -> _Policy:
        rv = None if self._revision is None else self._revision()
        if self._cached is not None and rv is not None and rv == self._cached_rv:
            return self._cached[1]
        # The revision is the whole store's: most writes touch no RBAC object, and listing
        # four small resources costs far less than compiling (aggregation) again.
        listed = _list_all(self._list_objects)
        fingerprint = _fingerprint(listed)
        if self._cached is None or self._cached[0] != fingerprint:
            self._cached = (fingerprint, _compile(listed))
        self._cached_rv = rv
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
        found: list[tuple[RuleSource, PolicyRule]] = []
        errs: list[str] = []
        for source, rules, err in self._visit(user, namespace, registry):
            if err is not None:
                errs.append(err)
            else:
                found.extend((source, rule) for rule in rules)
        return found, errs

    def _visit(
        self, user: UserInfo, namespace: str, registry: bool
    ) -> Iterator[tuple[RuleSource, list[PolicyRule], str | None]]:
        """The bindings that apply to ``user``, ClusterRoleBindings first, each with its
        source, its role's rules and the role's resolution error; lazily, so the authorizer
        stops at the first rule that allows."""
        policy = self._policy()
        scoped = [(b, "") for b in _candidates(policy.cluster_bindings, policy.cluster_index, user)]
        if namespace:
            in_namespace = policy.bindings.get(namespace, [])
            index = policy.index.get(namespace, {})
            scoped += [(b, namespace) for b in _candidates(in_namespace, index, user)]
        for binding, ns in scoped:
            subject = next((s for s in binding.subjects if _applies(user, s, ns)), None)
            if subject is None:
                continue
            rules, err = self._ref_rules(policy, binding.role_kind, binding.role_name, ns, registry)
            yield RuleSource(_describe(binding, subject)), rules, err

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
        errs: list[str] = []
        for source, rules, err in self._visit(attrs.user, attrs.namespace, False):
            if err is not None:
                errs.append(err)
                continue
            for rule in rules:
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
