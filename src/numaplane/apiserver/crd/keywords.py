"""Each schema keyword of a CRD has the JSON type upstream's typed ``JSONSchemaProps`` decodes
(a definition whose ``maxLength`` is ``"5"`` never reaches validation there), a known ``type``,
a pattern that compiles, and none of the settings upstream forbids in CRDs (``uniqueItems:
true``, ``additionalProperties: false``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from numaplane.apiserver.crd.re2 import compile_re2
from numaplane.apiserver.errors import FieldError, forbidden_field, invalid_value, not_supported

TYPES: Final = ("array", "boolean", "integer", "number", "object", "string")
_COUNTS: Final = (
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "maxProperties",
    "minProperties",
)
_NUMBERS: Final = ("maximum", "minimum", "multipleOf")
_FLAGS: Final = (
    "exclusiveMaximum",
    "exclusiveMinimum",
    "nullable",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
)


def keyword_errors(raw: Mapping[str, Any], path: str) -> list[FieldError]:
    """The problems of one schema node's own keywords (not its children)."""
    errs: list[FieldError] = []
    kind = raw.get("type")
    if kind not in (None, "") and kind not in TYPES:
        errs.append(not_supported(f"{path}.type", kind, list(TYPES)))
    for key in _COUNTS:
        value = raw.get(key)
        if value is not None and not (_is_int(value) and value >= 0):
            errs.append(invalid_value(f"{path}.{key}", value, "must be a non-negative integer"))
    for key in _NUMBERS:
        value = raw.get(key)
        if value is not None and not _is_number(value):
            errs.append(invalid_value(f"{path}.{key}", value, "must be a number"))
    multiple = raw.get("multipleOf")
    if isinstance(multiple, int | float) and _is_number(multiple) and multiple <= 0:
        errs.append(invalid_value(f"{path}.multipleOf", multiple, "must be greater than zero"))
    for key in _FLAGS:
        value = raw.get(key)
        if value is not None and not isinstance(value, bool):
            errs.append(invalid_value(f"{path}.{key}", value, "must be a boolean"))
    errs.extend(_shape_errors(raw, path))
    pattern = raw.get("pattern")
    if pattern is not None:
        if not isinstance(pattern, str):
            errs.append(invalid_value(f"{path}.pattern", pattern, "must be a string"))
        else:
            try:
                compile_re2(pattern)
            except re.error as exc:
                errs.append(
                    invalid_value(
                        f"{path}.pattern",
                        pattern,
                        f"must be a valid regular expression, but isn't: {exc}",
                    )
                )
    if raw.get("uniqueItems") is True:
        errs.append(
            forbidden_field(
                f"{path}.uniqueItems",
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        )
    if raw.get("additionalProperties") is False:
        errs.append(
            forbidden_field(
                f"{path}.additionalProperties", "additionalProperties cannot be set to false"
            )
        )
    return errs


def _shape_errors(raw: Mapping[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    required = raw.get("required")
    if required is not None and not (
        isinstance(required, list) and all(isinstance(r, str) for r in required)
    ):
        errs.append(invalid_value(f"{path}.required", required, "must be a list of strings"))
    enum = raw.get("enum")
    if enum is not None and not isinstance(enum, list):
        errs.append(invalid_value(f"{path}.enum", enum, "must be a list"))
    properties = raw.get("properties")
    if properties is not None and not (
        isinstance(properties, Mapping) and all(isinstance(p, Mapping) for p in properties.values())
    ):
        errs.append(invalid_value(f"{path}.properties", "", "must map names to schemas"))
    items = raw.get("items")
    if items is not None and not isinstance(items, Mapping):
        errs.append(invalid_value(f"{path}.items", "", "must be a single schema"))
    additional = raw.get("additionalProperties")
    if additional is not None and not isinstance(additional, bool | Mapping):
        errs.append(
            invalid_value(f"{path}.additionalProperties", "", "must be a schema or a boolean")
        )
    rules = raw.get("x-kubernetes-validations")
    if rules is not None and not (
        isinstance(rules, list) and all(isinstance(r, Mapping) for r in rules)
    ):
        errs.append(
            invalid_value(f"{path}.x-kubernetes-validations", "", "must be a list of rules")
        )
    return errs


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
