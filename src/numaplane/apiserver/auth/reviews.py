"""The self-review APIs, as kube-apiserver answers them: ``SelfSubjectAccessReview`` (``kubectl
auth can-i VERB RESOURCE``), ``SelfSubjectRulesReview`` (``kubectl auth can-i --list``) and
``SelfSubjectReview`` (``kubectl auth whoami``). Each takes the decoded request body and
returns the response body; bad input raises :class:`StatusError` with upstream's message.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Final

from numaplane.apiserver import errors
from numaplane.apiserver.auth.rbac import Attributes, RBACAuthorizer, aggregate_errors
from numaplane.apiserver.user import UserInfo

Object = dict[str, Any]

AUTHORIZATION_V1: Final = "authorization.k8s.io/v1"
AUTHENTICATION_V1: Final = "authentication.k8s.io/v1"


def _metadata_is_empty(body: Mapping[str, Any]) -> bool:
    meta = body.get("metadata") or {}
    # kubectl sends ``creationTimestamp: null``, which decodes to the zero value.
    return all(v in (None, "", {}, []) for v in meta.values())


def self_subject_access_review(
    user: UserInfo, body: Mapping[str, Any], authorizer: RBACAuthorizer
) -> Object:
    """Whether ``user`` may do what ``spec.resourceAttributes`` or
    ``spec.nonResourceAttributes`` describe: the request echoed with ``status.allowed`` (and
    ``reason`` when the authorizer gives one)."""
    spec = body.get("spec") or {}
    resource = spec.get("resourceAttributes")
    non_resource = spec.get("nonResourceAttributes")
    problems = []
    if not _metadata_is_empty(body):
        problems.append(errors.invalid_value("metadata", body.get("metadata"), "must be empty"))
    if resource is not None and non_resource is not None:
        problems.append(
            errors.invalid_value(
                "spec.nonResourceAttributes",
                non_resource,
                "cannot be specified in combination with resourceAttributes",
            )
        )
    if resource is None and non_resource is None:
        problems.append(
            errors.invalid_value(
                "spec.resourceAttributes",
                "null",
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        )
    if problems:
        raise errors.invalid("authorization.k8s.io", "SelfSubjectAccessReview", "", problems)
    if isinstance(resource, Mapping):
        attrs = Attributes(
            user,
            str(resource.get("verb", "")),
            namespace=str(resource.get("namespace", "")),
            api_group=str(resource.get("group", "")),
            api_version=str(resource.get("version", "")),
            resource=str(resource.get("resource", "")),
            subresource=str(resource.get("subresource", "")),
            name=str(resource.get("name", "")),
        )
    else:
        attrs = Attributes(
            user,
            str(non_resource.get("verb", "")) if isinstance(non_resource, Mapping) else "",
            resource_request=False,
            path=str(non_resource.get("path", "")) if isinstance(non_resource, Mapping) else "",
        )
    decision = authorizer.authorize(attrs)
    status: Object = {"allowed": decision.allowed}
    if decision.denied:
        status["denied"] = True
    if decision.reason:
        status["reason"] = decision.reason
    out = dict(body)
    out["apiVersion"] = AUTHORIZATION_V1
    out["kind"] = "SelfSubjectAccessReview"
    out["metadata"] = {"creationTimestamp": None}
    out["spec"] = dict(spec)
    out["status"] = status
    return out


def self_subject_rules_review(
    user: UserInfo, body: Mapping[str, Any], authorizer: RBACAuthorizer
) -> Object:
    """The rules ``user`` holds in ``spec.namespace`` (cluster-wide ones included), as RBAC
    lists them; the response carries only the status, as upstream's does. The privileged-group
    authorizer resolves no rules upstream, so a ``system:masters`` user sees what its
    ``cluster-admin`` binding grants."""
    namespace = str((body.get("spec") or {}).get("namespace") or "")
    if not namespace:
        raise errors.bad_request("no namespace on request")
    rules, errs = authorizer.rules_for(user, namespace)
    resource_rules = []
    non_resource_rules = []
    for rule in rules:
        if rule.resources:
            entry: Object = {"verbs": list(rule.verbs)}
            if rule.api_groups:
                entry["apiGroups"] = list(rule.api_groups)
            entry["resources"] = list(rule.resources)
            if rule.resource_names:
                entry["resourceNames"] = list(rule.resource_names)
            resource_rules.append(entry)
        if rule.non_resource_urls:
            non_resource_rules.append(
                {"verbs": list(rule.verbs), "nonResourceURLs": list(rule.non_resource_urls)}
            )
    status: Object = {
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": False,
    }
    if errs:
        status["evaluationError"] = aggregate_errors(errs)
    return {
        "kind": "SelfSubjectRulesReview",
        "apiVersion": AUTHORIZATION_V1,
        "metadata": {"creationTimestamp": None},
        "spec": {},
        "status": status,
    }


def self_subject_review(user: UserInfo, body: Mapping[str, Any], now: str | None = None) -> Object:
    """Who ``user`` is (``status.userInfo``), stamped with ``now`` (RFC 3339)."""
    del body  # the request carries nothing upstream reads
    if now is None:
        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    info: Object = {"username": user.name}
    if user.uid:
        info["uid"] = user.uid
    if user.groups:
        info["groups"] = list(user.groups)
    if user.extra:
        info["extra"] = {k: list(v) for k, v in user.extra.items()}
    return {
        "kind": "SelfSubjectReview",
        "apiVersion": AUTHENTICATION_V1,
        "metadata": {"creationTimestamp": now},
        "status": {"userInfo": info},
    }
