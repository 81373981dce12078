"""What an RBAC rule grants (``rbacv1helpers`` and ``RuleAllows`` upstream): the request
attributes a rule is matched against, the rule itself, label selectors, and the rules an
aggregated ClusterRole gathers. Pure values and functions; :mod:`.rbac` decides requests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from numaplane.apiserver.user import UserInfo

Object = dict[str, Any]


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


def meta_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """``obj.metadata``, or an empty mapping."""
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def own_rules(role: Mapping[str, Any]) -> list[PolicyRule]:
    """The ``rules`` of a role object."""
    return [PolicyRule.from_dict(r) for r in role.get("rules") or [] if isinstance(r, Mapping)]


def aggregate_rules(
    cluster_role: Mapping[str, Any], cluster_roles: Sequence[Object]
) -> list[Object]:
    """The ``rules`` the aggregation controller writes into ``cluster_role`` (which has an
    ``aggregationRule``): for each selector in turn, the rules of every other matching
    ClusterRole in name order, each rule once."""
    return [r.to_dict() for r in aggregate(cluster_role, by_name(cluster_roles), ())]


def by_name(cluster_roles: Sequence[Object]) -> dict[str, Object]:
    """ClusterRoles by name."""
    return {str(meta_of(r).get("name", "")): r for r in cluster_roles}


def aggregate(
    role: Mapping[str, Any], named: Mapping[str, Object], seen: tuple[str, ...]
) -> list[PolicyRule]:
    """The effective rules of ``role`` among the ClusterRoles ``named``: its own, or for an
    aggregated role what its selectors gather (``seen``: the roles being resolved, to end
    cycles)."""
    name = str(meta_of(role).get("name", ""))
    rule = role.get("aggregationRule")
    if not isinstance(rule, Mapping):
        return own_rules(role)
    out: list[PolicyRule] = []
    for selector in rule.get("clusterRoleSelectors") or []:
        for other_name in sorted(named):
            other = named[other_name]
            if other_name == name or other_name in seen:
                continue
            if not selector_matches(selector, meta_of(other).get("labels") or {}):
                continue
            # An aggregated role's own rules are what the controller wrote into it, which is
            # what it would have aggregated: resolve it the same way (cycles stop at `seen`).
            for r in aggregate(other, named, (*seen, name)):
                if r not in out:
                    out.append(r)
    return out
