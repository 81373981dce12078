"""The create-only review kinds kubectl uses: authorization.k8s.io/v1
SelfSubjectAccessReview and SelfSubjectRulesReview (``kubectl auth can-i``) and
authentication.k8s.io/v1 SelfSubjectReview (``kubectl auth whoami``). Answering them is the
auth package's; here they are validated as upstream does.
"""

from __future__ import annotations

from typing import Any, Final

from numaplane.apiserver.errors import FieldError, invalid_value
from numaplane.apiserver.kinds.meta import as_dict, metadata, name_is_dns_subdomain
from numaplane.apiserver.kinds.strategy import KindStrategy

Object = dict[str, Any]


def _meta_empty(review: Object) -> list[FieldError]:
    meta = {k: v for k, v in metadata(review).items() if v not in (None, "", {}, [])}
    if meta:
        return [invalid_value("metadata", meta, "must be empty")]
    return []


def validate_access_review(review: Object) -> list[FieldError]:
    """``ValidateSelfSubjectAccessReview``: empty metadata, exactly one of resource and
    non-resource attributes."""
    spec = as_dict(review.get("spec"))
    errors = _meta_empty(review)
    resource = spec.get("resourceAttributes")
    non_resource = spec.get("nonResourceAttributes")
    if resource is not None and non_resource is not None:
        errors.append(
            invalid_value(
                "spec.nonResourceAttributes",
                non_resource,
                "cannot be specified in combination with resourceAttributes",
            )
        )
    if resource is None and non_resource is None:
        errors.append(
            invalid_value(
                "spec.resourceAttributes",
                None,
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        )
    return errors


def validate_rules_review(review: Object) -> list[FieldError]:
    """``ValidateSelfSubjectRulesReview``: empty metadata."""
    return _meta_empty(review)


def _review_strategy(validator: Any) -> KindStrategy:
    # Reviews are never stored: no name, no object-meta rules, only the review's own.
    return KindStrategy(
        namespaced=False,
        name_rule=name_is_dns_subdomain,
        validator=validator,
        meta_rules=False,
    )


ACCESS_REVIEW_STRATEGY: Final = _review_strategy(validate_access_review)
RULES_REVIEW_STRATEGY: Final = _review_strategy(validate_rules_review)
SELF_SUBJECT_REVIEW_STRATEGY: Final = _review_strategy(lambda review: [])
