"""The Kubernetes CEL environment on cel-python: cel-go's operators and the libraries of
k8s.io/apiserver/pkg/cel/library. About 400 lines in one module because the functions share
one name table: cel-python calls ``x.f(a)`` as ``f(x, a)``, so a name several libraries use
(``indexOf`` for strings and lists) dispatches on the receiver's type as cel-go's overloads do.

- equality and ordering as cel-go's (heterogeneous: ``1 == 1.0``, ``'a' == 1`` is false, int,
  uint and double compare numerically; ``set``/``map`` lists compare without order);
- lists: ``isSorted``, ``sum``, ``min``, ``max``, ``indexOf``, ``lastIndexOf``;
- strings (cel-go ext): ``charAt``, ``indexOf``, ``lastIndexOf``, ``lowerAscii``, ``upperAscii``,
  ``replace``, ``split``, ``substring``, ``trim``, ``join``, ``reverse``, ``format``;
- regex: ``find``, ``findAll``;
- ``quantity``/``isQuantity`` and their methods, ``url``/``isURL`` and getters, ``ip``/``isIP``,
  ``cidr``/``isCIDR`` and their methods (:mod:`numaplane.apiserver.crd.celtypes_k8s`),
  ``format.<name>()`` (:mod:`numaplane.apiserver.crd.celformat`);
- optionals for ``optionalOldSelf``: ``hasValue``, ``value``, ``orValue``.

A function outside its domain returns a ``CELEvalError`` carrying cel-go's message
(``index out of range: 5``), which the rule reports as ``<message> evaluating rule: ...``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from celpy import celtypes
from celpy.evaluation import CELEvalError

from numaplane.apiserver.crd import celformat
from numaplane.apiserver.crd import celtypes_k8s as k8s
from numaplane.apiserver.crd.celvalues import equal, is_number
from numaplane.apiserver.crd.re2 import compile_re2


def fail(message: str) -> CELEvalError:
    """A CEL evaluation error with ``message`` (returned, never raised, as celpy expects)."""
    return CELEvalError(message)


Optional = k8s.Optional


def _has_value(opt: Any) -> celtypes.BoolType:
    return celtypes.BoolType(isinstance(opt, Optional) and opt.value is not None)


def _value(opt: Any) -> Any:
    if isinstance(opt, Optional):
        return fail("optional.none() dereference") if opt.value is None else opt.value
    return opt


def _or_value(opt: Any, default: Any) -> Any:
    if isinstance(opt, Optional):
        return default if opt.value is None else opt.value
    return opt


# ---- equality and ordering (cel-go's heterogeneous equality)


def _eq(left: Any, right: Any) -> Any:
    if isinstance(left, CELEvalError):
        return left
    if isinstance(right, CELEvalError):
        return right
    return celtypes.BoolType(equal(left, right))


def _ne(left: Any, right: Any) -> Any:
    result = _eq(left, right)
    return result if isinstance(result, CELEvalError) else celtypes.BoolType(not result)


def _compare(op: Callable[[Any, Any], bool]) -> Callable[[Any, Any], Any]:
    def compare(left: Any, right: Any) -> Any:
        if isinstance(left, CELEvalError):
            return left
        if isinstance(right, CELEvalError):
            return right
        if is_number(left) and is_number(right):
            if isinstance(left, float) or isinstance(right, float):
                return celtypes.BoolType(op(float(left), float(right)))
            return celtypes.BoolType(op(int(left), int(right)))
        if isinstance(left, bool | celtypes.BoolType) != isinstance(
            right, bool | celtypes.BoolType
        ):
            return fail("no such overload")
        if type(left) is not type(right) and not (isinstance(left, str) and isinstance(right, str)):
            return fail("no such overload")
        try:
            return celtypes.BoolType(op(left, right))
        except TypeError:
            return fail("no such overload")

    return compare


def _in(item: Any, container: Any) -> Any:
    if isinstance(item, CELEvalError):
        return item
    if isinstance(container, CELEvalError):
        return container
    if isinstance(container, dict):
        return celtypes.BoolType(any(equal(item, key) for key in container))
    if isinstance(container, list):
        return celtypes.BoolType(any(equal(item, x) for x in container))
    return fail("no such overload")


# ---- lists


def _is_sorted(items: Any) -> Any:
    less = _compare(lambda a, b: a <= b)
    for i in range(len(items) - 1):
        result = less(items[i], items[i + 1])
        if isinstance(result, CELEvalError):
            return result
        if not result:
            return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _sum(items: Any) -> Any:
    if not items:
        return celtypes.IntType(0)
    total = items[0]
    for item in items[1:]:
        total = total + item
    return total


def _min(items: Any) -> Any:
    if not items:
        return fail("min(list) argument must not be empty")
    return min(items)


def _max(items: Any) -> Any:
    if not items:
        return fail("max(list) argument must not be empty")
    return max(items)


def _index_of(target: Any, needle: Any, start: Any = None) -> Any:
    if isinstance(target, str):
        begin = int(start) if start is not None else 0
        if begin < 0 or begin > len(target):
            return fail(f"index out of range: {begin}")
        return celtypes.IntType(target.find(str(needle), begin))
    for i, item in enumerate(target):
        if equal(item, needle):
            return celtypes.IntType(i)
    return celtypes.IntType(-1)


def _last_index_of(target: Any, needle: Any, end: Any = None) -> Any:
    if isinstance(target, str):
        if end is None:
            return celtypes.IntType(target.rfind(str(needle)))
        stop = int(end)
        if stop < 0 or stop > len(target):
            return fail(f"index out of range: {stop}")
        return celtypes.IntType(target.rfind(str(needle), 0, stop + len(needle)))
    for i in range(len(target) - 1, -1, -1):
        if equal(target[i], needle):
            return celtypes.IntType(i)
    return celtypes.IntType(-1)


# ---- strings


def _char_at(text: Any, index: Any) -> Any:
    i = int(index)
    if i < 0 or i > len(text):
        return fail(f"index out of range: {i}")
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


def _substring(text: Any, start: Any, end: Any = None) -> Any:
    begin = int(start)
    stop = len(text) if end is None else int(end)
    if begin < 0 or begin > len(text):
        return fail(f"index out of range: {begin}")
    if stop < 0 or stop > len(text):
        return fail(f"index out of range: {stop}")
    if stop < begin:
        return fail(f"invalid substring range. start: {begin}, end: {stop}")
    return celtypes.StringType(text[begin:stop])


def _trim(text: Any) -> celtypes.StringType:
    return celtypes.StringType(str(text).strip())


def _join(items: Any, sep: Any = "") -> celtypes.StringType:
    return celtypes.StringType(str(sep).join(str(i) for i in items))


def _reverse(text: Any) -> celtypes.StringType:
    return celtypes.StringType(str(text)[::-1])


_VERB: Final = re.compile(r"%(\.\d+)?([sdfeboxX%])")


def _format(template: Any, args: Any) -> Any:
    values = list(args)
    out: list[str] = []
    pos = 0
    index = 0
    for verb in _VERB.finditer(str(template)):
        out.append(str(template)[pos : verb.start()])
        pos = verb.end()
        precision, kind = verb.groups()
        if kind == "%":
            out.append("%")
            continue
        if index >= len(values):
            return fail(f"index {index} out of range")
        value = values[index]
        index += 1
        try:
            out.append(_format_one(kind, precision, value))
        except (TypeError, ValueError):
            return fail(f"error during formatting: {kind} not allowed for {type(value).__name__}")
    out.append(str(template)[pos:])
    return celtypes.StringType("".join(out))


def _format_one(kind: str, precision: str | None, value: Any) -> str:
    if kind == "s":
        return format_value(value)
    if kind == "d":
        return str(int(value))
    if kind in "fe":
        digits = int(precision[1:]) if precision else 6
        return f"{float(value):.{digits}{kind}}"
    if kind == "b":
        return format(int(value), "b")
    if kind == "o":
        return format(int(value), "o")
    if kind == "x":
        return (
            value.hex()
            if isinstance(value, bytes)
            else format(int(value), "x")
            if not isinstance(value, str)
            else value.encode().hex()
        )
    return format(int(value), "X") if not isinstance(value, str) else value.encode().hex().upper()


def format_value(value: Any) -> str:
    """A value as cel-go's ``%s`` prints it."""
    if isinstance(value, bool | celtypes.BoolType):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{format_value(k)}: {format_value(v)}" for k, v in value.items())
        return "{" + items + "}"
    if isinstance(value, float):
        return (
            repr(float(value)).removesuffix(".0")
            if float(value).is_integer()
            else repr(float(value))
        )
    return str(value)


# ---- regex


def _matches(text: Any, pattern: Any) -> Any:
    try:
        return celtypes.BoolType(compile_re2(str(pattern)).search(str(text)) is not None)
    except re.error as exc:
        return fail(f"invalid regex: {exc}")


def _find(text: Any, pattern: Any) -> celtypes.StringType:
    found = compile_re2(str(pattern)).search(str(text))
    return celtypes.StringType(found.group(0) if found else "")


def _find_all(text: Any, pattern: Any, limit: Any = None) -> celtypes.ListType:
    matches = [m.group(0) for m in compile_re2(str(pattern)).finditer(str(text))]
    if limit is not None and int(limit) >= 0:
        matches = matches[: int(limit)]
    return celtypes.ListType([celtypes.StringType(m) for m in matches])


def _dispatch(
    name: str, table: dict[type, Callable[..., Any]], fallback: Callable[..., Any] | None = None
) -> Callable[..., Any]:
    def call(target: Any, *args: Any) -> Any:
        for kind, function in table.items():
            if isinstance(target, kind):
                return function(target, *args)
        if fallback is not None:
            return fallback(target, *args)
        return fail(f"no such overload: {name}")

    return call


#: Every function and operator of the environment, by the name celpy resolves.
FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    "_==_": _eq,
    "_!=_": _ne,
    "_<_": _compare(lambda a, b: a < b),
    "_<=_": _compare(lambda a, b: a <= b),
    "_>_": _compare(lambda a, b: a > b),
    "_>=_": _compare(lambda a, b: a >= b),
    "_in_": _in,
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
    "reverse": _reverse,
    "format": _format,
    "matches": _matches,
    "find": _find,
    "findAll": _find_all,
    "quantity": k8s.quantity,
    "isQuantity": k8s.is_quantity,
    "sign": k8s.q_sign,
    "isInteger": k8s.q_is_integer,
    "asInteger": k8s.q_as_integer,
    "asApproximateFloat": k8s.q_as_float,
    "add": _dispatch("add", {k8s.QuantityValue: k8s.q_add}),
    "sub": _dispatch("sub", {k8s.QuantityValue: k8s.q_sub}),
    "compareTo": k8s.q_compare,
    "isGreaterThan": k8s.q_greater,
    "isLessThan": k8s.q_less,
    "url": k8s.url,
    "isURL": k8s.is_url,
    "getScheme": k8s.url_scheme,
    "getHost": k8s.url_host,
    "getHostname": k8s.url_hostname,
    "getPort": k8s.url_port,
    "getEscapedPath": k8s.url_path,
    "getQuery": k8s.url_query,
    "ip": _dispatch("ip", {k8s.CIDRValue: k8s.cidr_ip}, k8s.ip),
    "isIP": k8s.is_ip,
    "cidr": k8s.cidr,
    "isCIDR": k8s.is_cidr,
    "family": k8s.ip_family,
    "isCanonical": k8s.ip_is_canonical,
    "isUnspecified": k8s.ip_is_unspecified,
    "isLoopback": k8s.ip_is_loopback,
    "isLinkLocalMulticast": k8s.ip_is_link_local_multicast,
    "isLinkLocalUnicast": k8s.ip_is_link_local_unicast,
    "isGlobalUnicast": k8s.ip_is_global_unicast,
    "containsIP": k8s.cidr_contains_ip,
    "containsCIDR": k8s.cidr_contains_cidr,
    "prefixLength": k8s.cidr_prefix_length,
    "masked": k8s.cidr_masked,
    "named": celformat.format_named,
    "validate": celformat.format_validate,
    **celformat.FORMAT_FUNCTIONS,
}
