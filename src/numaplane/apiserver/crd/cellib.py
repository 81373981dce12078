"""The Kubernetes CEL libraries (k8s.io/apiserver/pkg/cel/library and cel-go's strings
extension) as cel-python functions: lists (``isSorted``, ``sum``, ``min``, ``max``, ``indexOf``,
``lastIndexOf``), strings (``charAt``, ``indexOf``, ``lastIndexOf``, ``lowerAscii``,
``upperAscii``, ``replace``, ``split``, ``substring``, ``trim``, ``join``), regex (``find``,
``findAll``), and the optional values ``optionalOldSelf`` binds (``hasValue``, ``value``,
``orValue``).

cel-python calls ``x.f(a)`` as ``f(x, a)``; a name shared by several libraries (``indexOf`` for
strings and lists) dispatches on the receiver's type, as cel-go's overloads do.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Final

from celpy import celtypes


class CELLibraryError(ValueError):
    """A library function applied outside its domain (index out of range, empty list)."""


class Optional:
    """``optional.of(v)`` / ``optional.none()``: what ``oldSelf`` is under ``optionalOldSelf``."""

    def __init__(self, value: Any) -> None:
        """``value`` is ``None`` for an absent optional."""
        self.value = value

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Optional):
            return bool(self.value == other.value)
        return False

    __hash__ = None  # type: ignore[assignment]


def _has_value(opt: Any) -> celtypes.BoolType:
    return celtypes.BoolType(isinstance(opt, Optional) and opt.value is not None)


def _value(opt: Any) -> Any:
    if isinstance(opt, Optional):
        if opt.value is None:
            raise CELLibraryError("optional.none() dereference")
        return opt.value
    return opt


def _or_value(opt: Any, default: Any) -> Any:
    if isinstance(opt, Optional):
        return default if opt.value is None else opt.value
    return opt


# ---- lists


def _is_sorted(items: Any) -> celtypes.BoolType:
    return celtypes.BoolType(all(items[i] <= items[i + 1] for i in range(len(items) - 1)))


def _sum(items: Any) -> Any:
    if not items:
        return celtypes.IntType(0)
    total = items[0]
    for item in items[1:]:
        total = total + item
    return total


def _min(items: Any) -> Any:
    if not items:
        raise CELLibraryError("min called on empty list")
    return min(items)


def _max(items: Any) -> Any:
    if not items:
        raise CELLibraryError("max called on empty list")
    return max(items)


def _index_of(target: Any, needle: Any, start: Any = None) -> celtypes.IntType:
    if isinstance(target, str):
        begin = int(start) if start is not None else 0
        if begin < 0 or begin > len(target):
            raise CELLibraryError(f"index out of range: {begin}")
        return celtypes.IntType(target.find(str(needle), begin))
    for i, item in enumerate(target):
        if item == needle:
            return celtypes.IntType(i)
    return celtypes.IntType(-1)


def _last_index_of(target: Any, needle: Any, end: Any = None) -> celtypes.IntType:
    if isinstance(target, str):
        if end is None:
            return celtypes.IntType(target.rfind(str(needle)))
        stop = int(end)
        if stop < 0 or stop >= len(target) + 1:
            raise CELLibraryError(f"index out of range: {stop}")
        return celtypes.IntType(target.rfind(str(needle), 0, stop + len(needle)))
    for i in range(len(target) - 1, -1, -1):
        if target[i] == needle:
            return celtypes.IntType(i)
    return celtypes.IntType(-1)


# ---- strings


def _char_at(text: Any, index: Any) -> celtypes.StringType:
    i = int(index)
    if i < 0 or i > len(text):
        raise CELLibraryError(f"index out of range: {i}")
    return celtypes.StringType(text[i] if i < len(text) else "")


def _lower(text: Any) -> celtypes.StringType:
    return celtypes.StringType("".join(c.lower() if c.isascii() else c for c in text))


def _upper(text: Any) -> celtypes.StringType:
    return celtypes.StringType("".join(c.upper() if c.isascii() else c for c in text))


def _replace(text: Any, old: Any, new: Any, count: Any = None) -> celtypes.StringType:
    limit = -1 if count is None else int(count)
    return celtypes.StringType(str(text).replace(str(old), str(new), limit))


def _split(text: Any, sep: Any, count: Any = None) -> celtypes.ListType:
    limit = -1 if count is None else int(count)
    if limit == 0:
        return celtypes.ListType([])
    if sep == "":
        parts = list(str(text))
        if limit > 0 and len(parts) > limit:
            parts = [*parts[: limit - 1], "".join(parts[limit - 1 :])]
    else:
        parts = str(text).split(str(sep), limit - 1 if limit > 0 else -1)
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def _substring(text: Any, start: Any, end: Any = None) -> celtypes.StringType:
    begin = int(start)
    stop = len(text) if end is None else int(end)
    if begin < 0 or begin > len(text) or stop < begin or stop > len(text):
        raise CELLibraryError(f"index out of range: {begin}")
    return celtypes.StringType(text[begin:stop])


def _trim(text: Any) -> celtypes.StringType:
    return celtypes.StringType(str(text).strip())


def _join(items: Any, sep: Any = "") -> celtypes.StringType:
    return celtypes.StringType(str(sep).join(str(i) for i in items))


# ---- regex


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _find(text: Any, pattern: Any) -> celtypes.StringType:
    found = _regex(str(pattern)).search(str(text))
    return celtypes.StringType(found.group(0) if found else "")


def _find_all(text: Any, pattern: Any, limit: Any = None) -> celtypes.ListType:
    matches = [m.group(0) for m in _regex(str(pattern)).finditer(str(text))]
    if limit is not None and int(limit) >= 0:
        matches = matches[: int(limit)]
    return celtypes.ListType([celtypes.StringType(m) for m in matches])


#: Every library function, by the name rules call.
FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    "hasValue": _has_value,
    "value": _value,
    "orValue": _or_value,
    "isSorted": _is_sorted,
    "sum": _sum,
    "min": _min,
    "max": _max,
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "charAt": _char_at,
    "lowerAscii": _lower,
    "upperAscii": _upper,
    "replace": _replace,
    "split": _split,
    "substring": _substring,
    "trim": _trim,
    "join": _join,
    "find": _find,
    "findAll": _find_all,
}
