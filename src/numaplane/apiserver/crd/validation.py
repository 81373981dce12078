"""Schema validation of custom resources with upstream's messages.

kube-apiserver validates a custom resource with kube-openapi's ``validate`` package and turns each
result into a ``field.Error`` (apiextensions' ``kubeOpenAPIResultToFieldErrors``): a missing
required field is ``Required value``, an enum miss ``Unsupported value: "x": supported values:
"a", "b"``, a type miss ``Invalid value: "string": spec.x in body must be of type integer:
"string"``, maxLength ``Too long: may not be longer than 5``, maxItems/maxProperties ``Too many: 4:
must have at most 3 items``, everything else ``Invalid value: V: <kube-openapi message>`` (``spec.x
in body should be greater than or equal to 0``). :func:`validate` does the same walk
(formats in :mod:`~numaplane.apiserver.crd.formats`, list types in
:mod:`~numaplane.apiserver.crd.listtype`), and :func:`embedded_errors` upstream's checks of
``x-kubernetes-embedded-resource`` objects.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Final

from numaplane.apiserver.crd.correlation import NO_OLD, canonical, correlate, json_equal
from numaplane.apiserver.crd.formats import FORMATS
from numaplane.apiserver.crd.paths import child_path, field_path, index_path
from numaplane.apiserver.crd.re2 import compile_re2
from numaplane.apiserver.crd.schema import Node
from numaplane.apiserver.errors import (
    OMIT,
    FieldError,
    invalid_value,
    not_supported,
    required,
)

_IN: Final = "body"


def json_type(value: object) -> str:
    """The OpenAPI type name of a JSON value (an integral float counts as an integer, as Go's
    decoder and kube-openapi read it)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def go_number(value: float | int) -> str:
    """A number as Go's ``%v`` prints a float64 (``strconv`` 'g', shortest digits, exponent form
    from 1e+06 or below 1e-04): ``0``, ``1.5``, ``100000``, ``1e+06``, ``1.234567e+06``."""
    number = float(value)
    if number == 0:
        return "0"
    if math.isinf(number) or math.isnan(number):
        return {"inf": "+Inf", "-inf": "-Inf"}.get(repr(number), "NaN")
    digits = Decimal(repr(number))
    exponent = digits.adjusted()
    if exponent < -4 or exponent >= 6:
        mantissa = format(digits.scaleb(-exponent).normalize(), "f")
        sign = "-" if exponent < 0 else "+"
        return f"{mantissa}e{sign}{abs(exponent):02d}"
    return format(digits.normalize(), "f")


def _type_ok(node: Node, kind: str) -> bool:
    if node.int_or_string:
        return kind in ("integer", "string")
    if not node.type:
        return True
    if node.type == "number":
        return kind in ("number", "integer")
    return node.type == kind


def _type_name(node: Node) -> str:
    return "integer,string" if node.int_or_string else node.type


def validate(node: Node, value: Any, path: str = "", old: Any = NO_OLD) -> list[FieldError]:
    """Field errors of ``value`` against ``node``, in kube-openapi's order (type, junctors,
    string, format, number, array, enum, object).

    With ``old`` (an update), errors in a part of the object that is unchanged from the
    correlated old value are not reported (upstream's CRD validation ratcheting, on by default
    since Kubernetes 1.30): tightening a schema does not block unrelated updates.
    """
    errs: list[FieldError] = []
    _validate(node, value, path, errs, old)
    return errs


def _validate(node: Node, value: Any, path: str, errs: list[FieldError], old: Any = NO_OLD) -> None:
    if old is not NO_OLD and json_equal(value, old):
        return
    kind = json_type(value)
    raw = node.raw
    name = path
    if value is None:
        if (node.type or node.int_or_string) and not node.nullable:
            errs.append(_type_invalid(path, node, "null"))
        return
    if not _type_ok(node, kind):
        errs.append(_type_invalid(path, node, kind))
        # kube-openapi goes on with the validators that apply to the value's own kind; the
        # junctors and the enum are the ones that still fire.
        if node.has_junctors:
            _junctors(node, value, path, errs)
        _enum(raw, value, path, errs)
        return
    if node.has_junctors:
        _junctors(node, value, path, errs)
    if kind == "string":
        _string(raw, value, name, errs)
    if kind in ("integer", "number"):
        _number(raw, value, name, errs)
    if kind == "array":
        _array(node, value, path, errs, old)
    _enum(raw, value, path, errs)
    if kind == "object":
        _object(node, value, path, errs, old)


def _type_invalid(path: str, node: Node, kind: str) -> FieldError:
    return FieldError(
        "FieldValueTypeInvalid",
        path,
        kind,
        f'{path or "."} in {_IN} must be of type {_type_name(node)}: "{kind}"',
    )


def _junctors(node: Node, value: Any, path: str, errs: list[FieldError]) -> None:
    # go-openapi's order (anyOf, oneOf, allOf, not) and wording. These composite errors are
    # not field-level validation errors upstream, so they report at the nil path with an
    # empty value: `<nil>: Invalid value: "": "spec.x" must validate ...`.
    quoted = json.dumps(path)
    if node.any_of:
        results = [validate(sub, value, path) for sub in node.any_of]
        if all(results):
            errs.append(_composite(f"{quoted} must validate at least one schema (anyOf)"))
            errs.extend(_closest(results))
    if node.one_of:
        results = [validate(sub, value, path) for sub in node.one_of]
        valid = sum(1 for r in results if not r)
        if valid != 1:
            found = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
            errs.append(
                _composite(f"{quoted} must validate one and only one schema (oneOf). {found}")
            )
            if valid == 0:
                errs.extend(_closest(results))
    if node.all_of:
        results = [validate(sub, value, path) for sub in node.all_of]
        for result in results:
            errs.extend(result)
        valid = sum(1 for r in results if not r)
        if valid != len(results):
            none = ". None validated" if valid == 0 else ""
            errs.append(_composite(f"{quoted} must validate all the schemas (allOf){none}"))
    if node.not_ is not None and not validate(node.not_, value, path):
        errs.append(_composite(f"{quoted} must not validate the schema (not)"))


def _closest(results: list[list[FieldError]]) -> list[FieldError]:
    # go-openapi reports the failing branch that matched best; the one with fewest errors.
    return sorted(results, key=len)[0]


def _composite(detail: str) -> FieldError:
    return invalid_value("<nil>", "", detail)


def _string(raw: Mapping[str, Any], value: str, path: str, errs: list[FieldError]) -> None:
    length = len(value)
    if "maxLength" in raw and length > raw["maxLength"]:
        errs.append(
            FieldError(
                "FieldValueTooLong", path, OMIT, f"may not be longer than {raw['maxLength']}"
            )
        )
    if "minLength" in raw and length < raw["minLength"]:
        errs.append(
            invalid_value(
                path, value, f"{path} in {_IN} should be at least {raw['minLength']} chars long"
            )
        )
    pattern = raw.get("pattern")
    if pattern:
        try:
            matched = compile_re2(pattern).search(value) is not None
        except re.error:
            matched = True
        if not matched:
            errs.append(invalid_value(path, value, f"{path} in {_IN} should match '{pattern}'"))
    fmt = raw.get("format")
    if fmt:
        check = FORMATS.get(fmt)
        if check is not None and not check(value):
            errs.append(
                FieldError(
                    "FieldValueTypeInvalid",
                    path,
                    value,
                    f'{path} in {_IN} must be of type {fmt}: "{value}"',
                )
            )


def _number(raw: Mapping[str, Any], value: float, path: str, errs: list[FieldError]) -> None:
    multiple = raw.get("multipleOf")
    if multiple:
        ratio = value / multiple
        if not math.isclose(ratio, round(ratio), abs_tol=1e-9):
            errs.append(
                invalid_value(
                    path, value, f"{path} in {_IN} should be a multiple of {go_number(multiple)}"
                )
            )
    if "maximum" in raw:
        bound = raw["maximum"]
        if raw.get("exclusiveMaximum") and value >= bound:
            errs.append(
                invalid_value(
                    path, value, f"{path} in {_IN} should be less than {go_number(bound)}"
                )
            )
        elif value > bound:
            errs.append(
                invalid_value(
                    path,
                    value,
                    f"{path} in {_IN} should be less than or equal to {go_number(bound)}",
                )
            )
    if "minimum" in raw:
        bound = raw["minimum"]
        if raw.get("exclusiveMinimum") and value <= bound:
            errs.append(
                invalid_value(
                    path, value, f"{path} in {_IN} should be greater than {go_number(bound)}"
                )
            )
        elif value < bound:
            errs.append(
                invalid_value(
                    path,
                    value,
                    f"{path} in {_IN} should be greater than or equal to {go_number(bound)}",
                )
            )


def _array(node: Node, value: list[Any], path: str, errs: list[FieldError], old: Any) -> None:
    raw = node.raw
    if node.items is not None:
        olds = correlate(node, value, old)
        for i, item in enumerate(value):
            _validate(node.items, item, index_path(path, i), errs, olds[i])
    size = len(value)
    if "minItems" in raw and size < raw["minItems"]:
        errs.append(
            invalid_value(
                path, size, f"{path} in {_IN} should have at least {raw['minItems']} items"
            )
        )
    if "maxItems" in raw and size > raw["maxItems"]:
        errs.append(too_many(path, size, raw["maxItems"]))
    if raw.get("uniqueItems"):
        seen = {canonical(item) for item in value}
        if len(seen) != size:
            errs.append(invalid_value(path, "", f"{path} in {_IN} shouldn't contain duplicates"))


def too_many(path: str, actual: int, limit: int) -> FieldError:
    """``path: Too many: N: must have at most M items`` (apimachinery's ``field.TooMany``)."""
    return FieldError("FieldValueTooMany", path, actual, f"must have at most {limit} items")


def _enum(raw: Mapping[str, Any], value: Any, path: str, errs: list[FieldError]) -> None:
    allowed = raw.get("enum")
    if not allowed:
        return
    key = canonical(value)
    if any(canonical(option) == key for option in allowed):
        return
    shown = [o if isinstance(o, str) else json.dumps(o, separators=(",", ":")) for o in allowed]
    errs.append(not_supported(path, value, shown))


def _object(
    node: Node, value: Mapping[str, Any], path: str, errs: list[FieldError], old: Any
) -> None:
    raw = node.raw
    count = len(value)
    if "maxProperties" in raw and count > raw["maxProperties"]:
        errs.append(too_many(path, count, raw["maxProperties"]))
    if "minProperties" in raw and count < raw["minProperties"]:
        errs.append(
            invalid_value(
                path,
                count,
                f"{path or '.'} in {_IN} should have at least {raw['minProperties']} properties",
            )
        )
    for key in node.required:
        if key not in value:
            errs.append(required(child_path(path, key)))
    for key in sorted(value):
        sub = node.properties.get(key)
        if sub is None:
            sub = node.additional
        if sub is not None:
            old_sub = old.get(key, NO_OLD) if isinstance(old, dict) else NO_OLD
            _validate(sub, value[key], child_path(path, key), errs, old_sub)


def embedded_errors(node: Node, value: Any, path: str = "") -> list[FieldError]:
    """``x-kubernetes-embedded-resource`` objects need ``apiVersion`` and ``kind`` (upstream's
    ``objectmeta.Validate``)."""
    errs: list[FieldError] = []
    _embedded(node, value, path, errs)
    return errs


def _embedded(node: Node, value: Any, path: str, errs: list[FieldError]) -> None:
    if isinstance(value, dict):
        if node.embedded:
            for key in ("apiVersion", "kind"):
                here = child_path(path, key)
                if key not in value:
                    errs.append(required(here, "must not be empty"))
                elif not isinstance(value[key], str):
                    errs.append(invalid_value(here, value[key], "must be a string"))
                elif not value[key]:
                    errs.append(invalid_value(here, value[key], "must not be empty"))
        for key in sorted(value):
            sub = node.child(key)
            if sub is not None:
                here = field_path(path, key, key in node.properties)
                _embedded(sub, value[key], here, errs)
    elif isinstance(value, list) and node.items is not None:
        for i, item in enumerate(value):
            _embedded(node.items, item, index_path(path, i), errs)
