"""RBAC's escalation prevention (``pkg/registry/rbac``): a user may create or update a Role or
ClusterRole only with rules they already hold, and a RoleBinding or ClusterRoleBinding only to
a role whose rules they hold, unless they may ``escalate`` that role or ``bind`` it.
``system:masters`` may do anything. The refusal lists the missing rules as upstream does::

    clusterroles.rbac.authorization.k8s.io "x" is forbidden: user "bob" (groups=["dev"]) is
    attempting to grant RBAC permissions not currently held:
    {APIGroups:["batch"], Resources:["jobs"], Verbs:["create" "delete"]}
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from numaplane.apiserver.auth.rbac import (
    RBAC_GROUP,
    Attributes,
    PolicyRule,
    RBACAuthorizer,
    aggregate_errors,
)
from numaplane.apiserver.errors import StatusError
from numaplane.apiserver.user import MASTERS_GROUP, UserInfo

Object = dict[str, Any]

_RESOURCES: Final = {
    "Role": "roles",
    "ClusterRole": "clusterroles",
    "RoleBinding": "rolebindings",
    "ClusterRoleBinding": "clusterrolebindings",
}
#: What it takes to write an aggregationRule, which can gather anything: ``*`` on ``*.*``.
FULL_AUTHORITY: Final = (
    PolicyRule(verbs=("*",), api_groups=("*",), resources=("*",)),
    PolicyRule(verbs=("*",), non_resource_urls=("*",)),
)


def go_quote_list(values: Sequence[str]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["a" "b"]``."""
    return "[" + " ".join(json.dumps(v, ensure_ascii=False) for v in values) + "]"


def compact_string(rule: PolicyRule) -> str:
    """Upstream's ``CompactString`` of a rule, the form escalation errors list."""
    parts = []
    for label, values in (
        ("APIGroups", rule.api_groups),
        ("Resources", rule.resources),
        ("NonResourceURLs", rule.non_resource_urls),
        ("ResourceNames", rule.resource_names),
        ("Verbs", rule.verbs),
    ):
        if values:
            parts.append(f"{label}:{go_quote_list(values)}")
    return "{" + ", ".join(parts) + "}"


def breakdown(rule: PolicyRule) -> list[PolicyRule]:
    """``rule`` as rules of one group, resource, verb (and resource name), or one URL and
    verb: the atoms the coverage check compares (upstream's ``BreakdownRule``)."""
    out = []
    for group in rule.api_groups:
        for resource in rule.resources:
            for verb in rule.verbs:
                names = rule.resource_names or ("",)
                for name in names:
                    out.append(
                        PolicyRule(
                            verbs=(verb,),
                            api_groups=(group,),
                            resources=(resource,),
                            resource_names=(name,) if name else (),
                        )
                    )
    for url in rule.non_resource_urls:
        for verb in rule.verbs:
            out.append(PolicyRule(verbs=(verb,), non_resource_urls=(url,)))
    return out


def _resources_cover(owner: Sequence[str], wanted: Sequence[str]) -> bool:
    if "*" in owner or all(r in owner for r in wanted):
        return True
    for path in wanted:
        if path in owner:
            continue
        if "/" not in path:
            return False
        if "*/" + path.split("/", 1)[1] not in owner:
            return False
    return True


def _urls_cover(owner: Sequence[str], wanted: Sequence[str]) -> bool:
    def one(owner_path: str, path: str) -> bool:
        return owner_path == path or (
            owner_path.endswith("*") and path.startswith(owner_path.rstrip("*"))
        )

    return all(any(one(o, path) for o in owner) for path in wanted)


def rule_covers(owner: PolicyRule, sub: PolicyRule) -> bool:
    """Whether ``owner`` grants everything the atomic rule ``sub`` does (``ruleCovers``)."""
    verbs = "*" in owner.verbs or all(v in owner.verbs for v in sub.verbs)
    groups = "*" in owner.api_groups or all(g in owner.api_groups for g in sub.api_groups)
    if sub.resource_names:
        names = not owner.resource_names or all(
            n in owner.resource_names for n in sub.resource_names
        )
    else:
        names = not owner.resource_names
    return (
        verbs
        and groups
        and _resources_cover(owner.resources, sub.resources)
        and _urls_cover(owner.non_resource_urls, sub.non_resource_urls)
        and names
    )


def covers(owner: Sequence[PolicyRule], wanted: Sequence[PolicyRule]) -> list[PolicyRule]:
    """The atoms of ``wanted`` that no rule of ``owner`` covers (empty: covered)."""
    missing = []
    for rule in wanted:
        for sub in breakdown(rule):
            if not any(rule_covers(o, sub) for o in owner):
                missing.append(sub)
    return missing


def compact(rules: Sequence[PolicyRule]) -> list[PolicyRule]:
    """Upstream's ``CompactRules``: rules of one group, one resource, at most one name and
    nothing else merge their verbs (in order); any other rule stays as it is."""
    merged: dict[tuple[str, str, tuple[str, ...]], PolicyRule] = {}
    others = []
    for rule in rules:
        simple = (
            len(rule.api_groups) == 1
            and len(rule.resources) == 1
            and len(rule.resource_names) <= 1
            and not rule.non_resource_urls
        )
        if not simple:
            others.append(rule)
            continue
        key = (rule.api_groups[0], rule.resources[0], rule.resource_names)
        if key in merged:
            old = merged[key]
            merged[key] = PolicyRule(
                (*old.verbs, *rule.verbs), old.api_groups, old.resources, old.resource_names
            )
        else:
            merged[key] = rule
    return others + list(merged.values())


def _forbidden(resource: str, name: str, why: str) -> StatusError:
    """``apierrors.NewForbidden`` of an RBAC group resource."""
    return StatusError(
        403,
        "Forbidden",
        f'{resource}.{RBAC_GROUP} "{name}" is forbidden: {why}',
        {"name": name, "group": RBAC_GROUP, "kind": resource},
    )


def confirm_no_escalation(
    user: UserInfo, namespace: str, rules: Sequence[PolicyRule], authorizer: RBACAuthorizer
) -> str | None:
    """Why ``user`` may not grant ``rules`` in ``namespace`` (None when they hold them all):
    upstream's ``ConfirmNoEscalation`` message."""
    held, errs = authorizer.rules_for(user, namespace, registry=True)
    missing = covers(held, rules)
    if not missing:
        return None
    listed = sorted({compact_string(r) for r in compact(missing)})
    msg = (
        f'user "{user.name}" (groups={go_quote_list(user.groups)}) is attempting to grant RBAC '
        "permissions not currently held:\n" + "\n".join(listed)
    )
    if errs:
        msg += f"; resolution errors: [{aggregate_errors(errs)}]"
    return msg


def _only_gc_fields(obj: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """Whether ``obj`` differs from ``old`` at most in what the garbage collector writes
    (ownerReferences, finalizers) and bookkeeping, as upstream's ``IsOnlyMutatingGCFields``."""

    def strip(o: Mapping[str, Any]) -> Object:
        copy = dict(o)
        meta = dict(copy.get("metadata") or {})
        for key in ("ownerReferences", "finalizers", "managedFields", "resourceVersion"):
            meta.pop(key, None)
        copy["metadata"] = meta
        return copy

    return strip(obj) == strip(old)


def check_escalation(
    user: UserInfo,
    obj: Mapping[str, Any],
    authorizer: RBACAuthorizer,
    old: Mapping[str, Any] | None = None,
) -> StatusError | None:
    """The 403 refusing ``user``'s create (``old`` None) or update of the RBAC object ``obj``,
    or None when it is allowed."""
    kind = str(obj.get("kind", ""))
    resource = _RESOURCES.get(kind)
    if resource is None or MASTERS_GROUP in user.groups:
        return None
    if old is not None and _only_gc_fields(obj, old):
        return None
    meta = obj.get("metadata") or {}
    name, namespace = str(meta.get("name", "")), str(meta.get("namespace", ""))
    if kind in ("Role", "ClusterRole"):
        escalate = Attributes(user, "escalate", namespace, RBAC_GROUP, "*", resource, name=name)
        if authorizer.authorize(escalate).allowed:
            return None
        rules = [PolicyRule.from_dict(r) for r in obj.get("rules") or []]
        why = confirm_no_escalation(user, namespace, rules, authorizer)
        if why is not None:
            return _forbidden(resource, name, why)
        aggregation = obj.get("aggregationRule")
        changed = old is None or aggregation != (old or {}).get("aggregationRule")
        if (
            kind == "ClusterRole"
            and aggregation
            and changed
            and confirm_no_escalation(user, namespace, FULL_AUTHORITY, authorizer) is not None
        ):
            return _forbidden(
                resource, name, "must have cluster-admin privileges to use the aggregationRule"
            )
        return None
    ref = obj.get("roleRef") or {}
    role_kind, role_name = str(ref.get("kind", "")), str(ref.get("name", ""))
    role_resource = _RESOURCES.get(role_kind)
    if role_resource is not None:
        bind = Attributes(
            user,
            "bind",
            namespace,
            str(ref.get("apiGroup", "")),
            resource=role_resource,
            name=role_name,
        )
        if authorizer.authorize(bind).allowed:
            return None
    rules, err = authorizer.role_reference_rules(role_kind, role_name, namespace, registry=True)
    if err is not None:
        return _forbidden(resource, name, err)
    why = confirm_no_escalation(user, namespace, rules, authorizer)
    return None if why is None else _forbidden(resource, name, why)
