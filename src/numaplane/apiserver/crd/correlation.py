"""Old values beside new ones on update: deep JSON equality, and which old list item goes with
each new one (``map`` lists by key, ``set`` lists by value), for transition rules and
ratcheting."""

from __future__ import annotations

import json
from typing import Any, Final

import orjson

from numaplane.apiserver.crd.schema import Node


class _NoOld:
    def __repr__(self) -> str:
        return "NO_OLD"


#: "No old value at this path" (a create, or a new list item / field on update).
NO_OLD: Final = _NoOld()


def json_equal(left: Any, right: Any) -> bool:
    """Deep equality of JSON values where ``true`` is not ``1`` (Python's ``==`` says it is)."""
    # Decided in C where that is sure: values this equality holds for are equal under ==, and
    # equal bytes with sorted keys mean the same values and types, unless a NaN hides behind
    # orjson's null (a round trip shows it). Anything else takes the walk.
    try:
        if left != right:
            return False
        data = orjson.dumps(left, option=orjson.OPT_SORT_KEYS)
        if data == orjson.dumps(right, option=orjson.OPT_SORT_KEYS) and orjson.loads(data) == left:
            return True
    except (TypeError, ValueError, RecursionError):
        pass
    return _walk_equal(left, right)


def _walk_equal(left: Any, right: Any) -> bool:
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, dict):
        return (
            isinstance(right, dict)
            and left.keys() == right.keys()
            and all(_walk_equal(v, right[k]) for k, v in left.items())
        )
    if isinstance(left, list):
        return (
            isinstance(right, list)
            and len(left) == len(right)
            and all(_walk_equal(a, b) for a, b in zip(left, right, strict=True))
        )
    if isinstance(left, int | float) and isinstance(right, int | float):
        return bool(left == right)
    return type(left) is type(right) and bool(left == right)


def correlate(node: Node, value: list[Any], old: Any) -> list[Any]:
    """The old item of each item of ``value`` (:data:`NO_OLD` where none): ``map`` lists by
    their keys, ``set`` lists by value; atomic lists do not correlate item by item."""
    if not isinstance(old, list):
        return [NO_OLD] * len(value)
    if node.list_type == "map" and node.map_keys:

        def key(item: Any) -> str | None:
            if not isinstance(item, dict):
                return None
            return canonical([item.get(k) for k in node.map_keys])

        by_key = {key(item): item for item in old if key(item) is not None}
        return [by_key.get(key(item), NO_OLD) for item in value]
    if node.list_type == "set":
        olds = {canonical(item): item for item in old}
        return [olds.get(canonical(item), NO_OLD) for item in value]
    return [NO_OLD] * len(value)


def canonical(value: Any) -> str:
    """``value`` as a key: JSON with sorted keys, integral floats as integers."""

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
