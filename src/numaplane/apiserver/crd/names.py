"""Name rules of CustomResourceDefinitions: apimachinery's DNS-1035 label and DNS-1123
subdomain messages, and upstream's ``ValidateCustomResourceDefinitionNames``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from numaplane.apiserver.errors import FieldError, invalid_value

_DNS1035: Final = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS1035_MESSAGE: Final = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
_DNS1123_SUBDOMAIN: Final = re.compile(
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
)
_SUBDOMAIN_MESSAGE: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def dns1035_errors(value: str) -> list[str]:
    """apimachinery's ``IsDNS1035Label`` messages for ``value``."""
    errs: list[str] = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS1035.fullmatch(value):
        errs.append(_DNS1035_MESSAGE)
    return errs


def subdomain_errors(value: str) -> list[str]:
    """apimachinery's ``IsDNS1123Subdomain`` messages for ``value``."""
    errs: list[str] = []
    if len(value) > 253:
        errs.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errs.append(_SUBDOMAIN_MESSAGE)
    return errs


def names_errors(names: Mapping[str, Any], path: str) -> list[FieldError]:
    """Upstream's ``ValidateCustomResourceDefinitionNames``."""
    errs: list[FieldError] = []
    for key in ("plural", "singular"):
        value = str(names.get(key, "") or "")
        if value and (problems := dns1035_errors(value)):
            errs.append(invalid_value(f"{path}.{key}", value, ",".join(problems)))
    for key in ("kind", "listKind"):
        value = str(names.get(key, "") or "")
        if value and (problems := dns1035_errors(value.lower())):
            detail = "may have mixed case, but should otherwise match: " + ",".join(problems)
            errs.append(invalid_value(f"{path}.{key}", value, detail))
    for i, short in enumerate(names.get("shortNames") or ()):
        if problems := dns1035_errors(str(short)):
            errs.append(invalid_value(f"{path}.shortNames[{i}]", short, ",".join(problems)))
    kind = names.get("kind", "")
    if kind and kind == names.get("listKind"):
        errs.append(
            invalid_value(f"{path}.listKind", kind, "kind and listKind may not be the same")
        )
    for i, category in enumerate(names.get("categories") or ()):
        if problems := dns1035_errors(str(category)):
            errs.append(invalid_value(f"{path}.categories[{i}]", category, ",".join(problems)))
    return errs
