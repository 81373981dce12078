"""The Job fields beyond counts and template (``pkg/apis/batch/validation``): ``managedBy``
(MultiKueue hands a Job to another cluster's controller through it), per-index backoff and
``podFailurePolicy``."""

from __future__ import annotations

import re
from typing import Any, Final

from numaplane.apiserver.errors import FieldError, invalid_value, not_supported, required, too_long
from numaplane.apiserver.kinds.meta import (
    as_dict,
    as_int,
    as_list,
    as_str,
    is_dns1123_subdomain,
    regex_error,
    validate_nonnegative,
)

MAX_MANAGED_BY_LENGTH: Final = 63
MAX_BACKOFF_LIMIT_PER_INDEX: Final = 10_000
POD_FAILURE_ACTIONS: Final = ("Count", "FailIndex", "FailJob", "Ignore")
_HTTP_PATH_FMT: Final = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
_HTTP_PATH_RE: Final = re.compile(_HTTP_PATH_FMT)


def is_domain_prefixed_path(value: str, path: str) -> list[FieldError]:
    """``IsDomainPrefixedPath``: ``acme.io/foo``."""
    if not value:
        return [required(path)]
    host, slash, rest = value.partition("/")
    if not slash or not host or not rest:
        return [
            invalid_value(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')
        ]
    errors = [invalid_value(path, host, m) for m in is_dns1123_subdomain(host)]
    if not _HTTP_PATH_RE.fullmatch(rest):
        errors.append(invalid_value(path, rest, regex_error("Invalid path", _HTTP_PATH_FMT)))
    return errors


def validate_job_policies(spec: dict[str, Any], path: str) -> list[FieldError]:
    """managedBy (a domain-prefixed path of at most 63 characters), backoffLimitPerIndex and
    maxFailedIndexes (Indexed jobs only), podFailurePolicy (known actions, restartPolicy
    Never)."""
    errors: list[FieldError] = []
    managed_by = spec.get("managedBy")
    if managed_by is not None:
        text = as_str(managed_by)
        errors.extend(is_domain_prefixed_path(text, f"{path}.managedBy"))
        if len(text) > MAX_MANAGED_BY_LENGTH:
            errors.append(too_long(f"{path}.managedBy", MAX_MANAGED_BY_LENGTH))
    indexed = spec.get("completionMode") == "Indexed"
    per_index = spec.get("backoffLimitPerIndex")
    if per_index is not None:
        errors.extend(validate_nonnegative(as_int(per_index), f"{path}.backoffLimitPerIndex"))
        if not indexed:
            errors.append(
                invalid_value(
                    f"{path}.backoffLimitPerIndex", per_index, "requires indexed completion mode"
                )
            )
    max_failed = spec.get("maxFailedIndexes")
    if max_failed is not None:
        errors.extend(validate_nonnegative(as_int(max_failed), f"{path}.maxFailedIndexes"))
        if per_index is None:
            errors.append(
                required(f"{path}.backoffLimitPerIndex", "when maxFailedIndexes is specified")
            )
    policy = spec.get("podFailurePolicy")
    if isinstance(policy, dict):
        for i, rule in enumerate(as_list(policy.get("rules"))):
            action = as_str(as_dict(rule).get("action"))
            if action not in POD_FAILURE_ACTIONS:
                errors.append(
                    not_supported(
                        f"{path}.podFailurePolicy.rules[{i}].action", action, POD_FAILURE_ACTIONS
                    )
                )
        restart = as_str(as_dict(as_dict(spec.get("template")).get("spec")).get("restartPolicy"))
        if restart == "OnFailure":
            errors.append(
                invalid_value(
                    f"{path}.template.spec.restartPolicy",
                    restart,
                    'only "Never" is supported when podFailurePolicy is specified',
                )
            )
    return errors
