"""Schema validation of custom resources with upstream's messages.

kube-apiserver validates a custom resource with kube-openapi's ``validate`` package and turns each
result into a ``field.Error`` (apiextensions' ``kubeOpenAPIResultToFieldErrors``): a missing
required field is ``Required value``, an enum miss ``Unsupported value: "x": supported values:
"a", "b"``, a type miss ``Invalid value: "string": spec.x in body must be of type integer:
"string"``, maxLength ``Too long: may not be longer than 5``, maxItems/maxProperties ``Too many: 4:
must have at most 3 items``, everything else ``Invalid value: V: <kube-openapi message>`` (``spec.x
in body should be greater than or equal to 0``). :func:`validate` does the same walk; then
:func:`list_errors` checks ``x-kubernetes-list-type`` set/map uniqueness (upstream's
``listtype`` package).
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
import math
import re
import uuid
from collections.abc import Callable, Mapping
from datetime import date, datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any, Final

from numaplane.apiserver.crd.schema import Node
from numaplane.apiserver.errors import (
    OMIT,
    FieldError,
    duplicate,
    invalid_value,
    not_supported,
    required,
)

_IN: Final = "body"


def child_path(path: str, key: str) -> str:
    """``spec`` + ``replicas`` -> ``spec.replicas`` (the root is ``""``)."""
    return f"{path}.{key}" if path else key


def index_path(path: str, index: int) -> str:
    """``spec.items`` + 0 -> ``spec.items[0]``."""
    return f"{path}[{index}]"


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


def validate(node: Node, value: Any, path: str = "") -> list[FieldError]:
    """Field errors of ``value`` against ``node``, in kube-openapi's order (type, junctors,
    string, format, number, array, enum, object)."""
    errs: list[FieldError] = []
    _validate(node, value, path, errs)
    return errs


def _validate(node: Node, value: Any, path: str, errs: list[FieldError]) -> None:
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
        # enum check is the one that still fires.
        _enum(raw, value, path, errs)
        return
    if node.has_junctors:
        _junctors(node, value, path, errs)
    if kind == "string":
        _string(raw, value, name, errs)
    if kind in ("integer", "number"):
        _number(raw, value, name, errs)
    if kind == "array":
        _array(node, value, path, errs)
    _enum(raw, value, path, errs)
    if kind == "object":
        _object(node, value, path, errs)


def _type_invalid(path: str, node: Node, kind: str) -> FieldError:
    return FieldError(
        "FieldValueTypeInvalid",
        path,
        kind,
        f'{path or "."} in {_IN} must be of type {_type_name(node)}: "{kind}"',
    )


def _junctors(node: Node, value: Any, path: str, errs: list[FieldError]) -> None:
    shown = path or "."
    for sub in node.all_of:
        sub_errs = validate(sub, value, path)
        if sub_errs:
            errs.extend(sub_errs)
            errs.append(
                _junctor_error(path, f"{shown} in {_IN} must validate all the schemas (allOf)")
            )
    if node.any_of and all(validate(sub, value, path) for sub in node.any_of):
        errs.append(
            _junctor_error(path, f"{shown} in {_IN} must validate at least one schema (anyOf)")
        )
    if node.one_of and sum(1 for sub in node.one_of if not validate(sub, value, path)) != 1:
        errs.append(
            _junctor_error(path, f"{shown} in {_IN} must validate one and only one schema (oneOf)")
        )
    if node.not_ is not None and not validate(node.not_, value, path):
        errs.append(_junctor_error(path, f"{shown} in {_IN} must not validate the schema (not)"))


def _junctor_error(path: str, detail: str) -> FieldError:
    return invalid_value(path, "", detail)


@lru_cache(maxsize=512)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


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
            matched = _regex(pattern).search(value) is not None
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


def _array(node: Node, value: list[Any], path: str, errs: list[FieldError]) -> None:
    raw = node.raw
    if node.items is not None:
        for i, item in enumerate(value):
            _validate(node.items, item, index_path(path, i), errs)
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
        seen = {_canonical(item) for item in value}
        if len(seen) != size:
            errs.append(invalid_value(path, "", f"{path} in {_IN} shouldn't contain duplicates"))


def too_many(path: str, actual: int, limit: int) -> FieldError:
    """``path: Too many: N: must have at most M items`` (apimachinery's ``field.TooMany``)."""
    return FieldError("FieldValueTooMany", path, actual, f"must have at most {limit} items")


def _enum(raw: Mapping[str, Any], value: Any, path: str, errs: list[FieldError]) -> None:
    allowed = raw.get("enum")
    if not allowed:
        return
    key = _canonical(value)
    if any(_canonical(option) == key for option in allowed):
        return
    shown = [o if isinstance(o, str) else json.dumps(o, separators=(",", ":")) for o in allowed]
    errs.append(not_supported(path, value, shown))


def _object(node: Node, value: Mapping[str, Any], path: str, errs: list[FieldError]) -> None:
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
            _validate(sub, value[key], child_path(path, key), errs)


def _canonical(value: Any) -> str:
    # Integral floats equal their integers, as Go compares decoded JSON numbers.
    def norm(v: Any) -> Any:
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return v

    return json.dumps(norm(value), sort_keys=True, separators=(",", ":"))


def list_errors(node: Node, value: Any, path: str = "") -> list[FieldError]:
    """Duplicates in ``x-kubernetes-list-type: set`` and ``map`` lists, and map items missing a
    key (upstream's ``listtype.ValidateListSetsAndMaps``)."""
    errs: list[FieldError] = []
    _lists(node, value, path, errs)
    return errs


def _lists(node: Node, value: Any, path: str, errs: list[FieldError]) -> None:
    if isinstance(value, dict):
        for key in sorted(value):
            sub = node.child(key)
            if sub is not None:
                _lists(sub, value[key], child_path(path, key), errs)
        return
    if not isinstance(value, list):
        return
    if node.list_type == "set":
        seen: set[str] = set()
        for i, item in enumerate(value):
            key = _canonical(item)
            if key in seen:
                errs.append(duplicate(index_path(path, i), item))
            seen.add(key)
    elif node.list_type == "map":
        seen_keys: set[str] = set()
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                continue
            keys = {k: _key_value(node, item, k) for k in node.map_keys}
            missing = [k for k, v in keys.items() if v is _MISSING]
            if missing:
                errs.extend(required(child_path(index_path(path, i), k)) for k in missing)
                continue
            key = _canonical(keys)
            if key in seen_keys:
                errs.append(duplicate(index_path(path, i), keys))
            seen_keys.add(key)
    if node.items is not None:
        for i, item in enumerate(value):
            _lists(node.items, item, index_path(path, i), errs)


_MISSING: Final = object()


def _key_value(node: Node, item: Mapping[str, Any], key: str) -> Any:
    if key in item:
        return item[key]
    # A map key with a default counts as set (the default is applied before validation).
    prop = node.items.properties.get(key) if node.items is not None else None
    if prop is not None and prop.has_default:
        return prop.default
    return _MISSING


# ---- formats (apiextensions' supported formats; unknown formats are not checked, as upstream
# strips them from the schema before validating)


def _date_time(value: str) -> bool:
    text = value.replace("z", "Z")
    if not re.fullmatch(
        r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})", text
    ):
        return False
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00").replace(" ", "T").replace("t", "T"))
    except ValueError:
        return False
    return True


def _date(value: str) -> bool:
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return re.fullmatch(r"\d{4}-\d{2}-\d{2}", value) is not None


def _byte(value: str) -> bool:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _uuid(version: int | None) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        if not re.fullmatch(
            r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}",
            value,
        ):
            return False
        return version is None or uuid.UUID(value).version == version

    return check


def _ip(version: int) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        try:
            return ipaddress.ip_address(value).version == version
        except ValueError:
            return False

    return check


def _cidr(value: str) -> bool:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return False
    return "/" in value


_HOSTNAME: Final = re.compile(
    r"^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}"
    r"[a-zA-Z0-9])?)*\.?$"
)
_DURATION: Final = re.compile(r"^(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h|d|w))+$")

#: The string formats validated, by name (apiextensions' ``supportedFormats``).
FORMATS: Final[dict[str, Callable[[str], bool]]] = {
    "date-time": _date_time,
    "datetime": _date_time,
    "date": _date,
    "byte": _byte,
    "uuid": _uuid(None),
    "uuid3": _uuid(3),
    "uuid4": _uuid(4),
    "uuid5": _uuid(5),
    "ipv4": _ip(4),
    "ipv6": _ip(6),
    "cidr": _cidr,
    "hostname": lambda v: len(v) <= 255 and _HOSTNAME.match(v) is not None,
    "email": lambda v: re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", v) is not None,
    "mac": lambda v: re.fullmatch(r"(?:[0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}", v) is not None,
    "duration": lambda v: v in ("0", "") or _DURATION.match(v) is not None,
    "password": lambda _v: True,
}
