"""JSON values as the CEL values Kubernetes binds (typed by the schema), and cel-go's equality
over them."""

from __future__ import annotations

import base64
import binascii
from typing import Any, Final

from celpy import celtypes

from numaplane.apiserver.crd.celtypes_k8s import Optional
from numaplane.apiserver.crd.schema import Node

#: Property names CEL cannot spell as written, escaped as Kubernetes does.
_RESERVED: Final = frozenset(
    {
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    }
)


def escape_name(name: str) -> str:
    """A property name as CEL sees it (``__dash__``, ``__dot__``, ``__slash__``, reserved words
    as ``__name__``, ``__`` as ``__underscores__``)."""
    if name in _RESERVED:
        return f"__{name}__"
    escaped = name.replace("__", "__underscores__")
    return escaped.replace(".", "__dot__").replace("-", "__dash__").replace("/", "__slash__")


class SetList(celtypes.ListType):
    """A ``set`` or ``map`` list: equal to another with the same items in any order."""

    unordered = True

    def __eq__(self, other: object) -> bool:
        return equal(self, other)

    def __ne__(self, other: object) -> bool:
        return not equal(self, other)

    __hash__ = None  # type: ignore[assignment]


#: What CEL sees of ``metadata`` at the root and in embedded resources (upstream's schema for
#: them declares only these).
_VISIBLE_META: Final = ("name", "generateName")


def to_cel(node: Node | None, value: Any, *, resource: bool = False) -> Any:
    """A JSON value as the CEL value Kubernetes binds for a field of schema ``node``;
    ``resource`` for the object's root, whose ``metadata`` shows only name and generateName."""
    if value is None:
        return None
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        if node is not None and node.type == "number":
            return celtypes.DoubleType(float(value))
        return celtypes.IntType(value)
    if isinstance(value, float):
        if node is not None and node.type == "integer" and value.is_integer():
            return celtypes.IntType(int(value))
        return celtypes.DoubleType(value)
    if isinstance(value, str):
        return _string(node, value)
    if isinstance(value, list):
        items = node.items if node is not None else None
        converted = [to_cel(items, v) for v in value]
        if node is not None and node.list_type in ("set", "map"):
            return SetList(converted)
        return celtypes.ListType(converted)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        resource = resource or (node is not None and node.embedded)
        for key, sub in value.items():
            if resource and key == "metadata" and isinstance(sub, dict):
                meta = {k: celtypes.StringType(v) for k, v in sub.items() if k in _VISIBLE_META}
                out[celtypes.StringType("metadata")] = celtypes.MapType(
                    {celtypes.StringType(k): v for k, v in meta.items()}
                )
                continue
            prop = node.properties.get(key) if node is not None else None
            if prop is not None:
                out[celtypes.StringType(escape_name(key))] = to_cel(prop, sub)
            else:
                extra = node.additional if node is not None else None
                out[celtypes.StringType(key)] = to_cel(extra, sub)
        return celtypes.MapType(out)
    return value


def _string(node: Node | None, value: str) -> Any:
    fmt = node.raw.get("format", "") if node is not None else ""
    try:
        if fmt in ("date-time", "datetime"):
            return celtypes.TimestampType(value)
        if fmt == "duration":
            return celtypes.DurationType(value)
        if fmt == "byte":
            return celtypes.BytesType(base64.b64decode(value, validate=True))
    except (ValueError, TypeError, binascii.Error):
        pass
    return celtypes.StringType(value)


def is_number(value: Any) -> bool:
    """Whether ``value`` is a CEL number (int, uint or double; a bool is not)."""
    return isinstance(
        value, celtypes.IntType | celtypes.UintType | celtypes.DoubleType | int | float
    ) and not isinstance(value, bool | celtypes.BoolType)


def equal(left: Any, right: Any) -> bool:
    """cel-go's ``==``: numbers across int/uint/double, lists and maps deeply, other mixed types
    unequal (never an error)."""
    if left is None or right is None:
        return left is None and right is None
    if isinstance(left, bool | celtypes.BoolType) or isinstance(right, bool | celtypes.BoolType):
        both = isinstance(left, bool | celtypes.BoolType) and isinstance(
            right, bool | celtypes.BoolType
        )
        return both and bool(left) == bool(right)
    if is_number(left) and is_number(right):
        return (
            float(left) == float(right)
            if isinstance(left, float) or isinstance(right, float)
            else int(left) == int(right)
        )
    if isinstance(left, str) and isinstance(right, str):
        return str(left) == str(right)
    if isinstance(left, list) and isinstance(right, list):
        if len(left) != len(right):
            return False
        if getattr(left, "unordered", False) or getattr(right, "unordered", False):
            return _same_items(left, right)
        return all(equal(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, dict) and isinstance(right, dict):
        if len(left) != len(right):
            return False
        return all(k in right and equal(v, right[k]) for k, v in left.items())
    if isinstance(left, Optional) or isinstance(right, Optional):
        return bool(left == right)
    if type(left) is not type(right) and not (
        isinstance(left, type(right)) or isinstance(right, type(left))
    ):
        return False
    try:
        return bool(left == right)
    except TypeError:
        return False


def _same_items(left: list[Any], right: list[Any]) -> bool:
    remaining = list(right)
    for item in left:
        for i, candidate in enumerate(remaining):
            if equal(item, candidate):
                del remaining[i]
                break
        else:
            return False
    return True
