"""Name rules of CustomResourceDefinitions: upstream's ``ValidateCustomResourceDefinitionNames``
(over apimachinery's DNS-1035 label check)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numaplane.api.validation import is_dns1035_label
from numaplane.apiserver.errors import FieldError, invalid_value


def names_errors(names: Mapping[str, Any], path: str) -> list[FieldError]:
    """Upstream's ``ValidateCustomResourceDefinitionNames``."""
    errs: list[FieldError] = []
    for key in ("plural", "singular"):
        value = str(names.get(key, "") or "")
        if value and (problems := is_dns1035_label(value)):
            errs.append(invalid_value(f"{path}.{key}", value, ",".join(problems)))
    for key in ("kind", "listKind"):
        value = str(names.get(key, "") or "")
        if value and (problems := is_dns1035_label(value.lower())):
            detail = "may have mixed case, but should otherwise match: " + ",".join(problems)
            errs.append(invalid_value(f"{path}.{key}", value, detail))
    for i, short in enumerate(names.get("shortNames") or ()):
        if problems := is_dns1035_label(str(short)):
            errs.append(invalid_value(f"{path}.shortNames[{i}]", short, ",".join(problems)))
    kind = names.get("kind", "")
    if kind and kind == names.get("listKind"):
        errs.append(
            invalid_value(f"{path}.listKind", kind, "kind and listKind may not be the same")
        )
    for i, category in enumerate(names.get("categories") or ()):
        if problems := is_dns1035_label(str(category)):
            errs.append(invalid_value(f"{path}.categories[{i}]", category, ",".join(problems)))
    return errs
