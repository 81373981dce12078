"""Go's formatting and parsing of plain values, as upstream messages and files show them.

One home for what numaplane reproduces of Go's standard library so that messages match the
kubelet's byte for byte:

- ``go_quote``: ``%q`` / ``strconv.Quote`` of a string (names in error messages);
- ``go_json_string``: a string as ``encoding/json`` writes it (checkpoints);
- ``go_json_syntax_error``: a JSON syntax error worded as ``encoding/json``'s scanner words it;
- ``go_atoi`` / ``go_parse_bool``: ``strconv.Atoi`` / ``strconv.ParseBool`` with Go's errors;
- ``go_parse_cpuset``: ``cpuset.Parse`` (k8s.io/utils), the Linux CPU list format;
- ``go_map``: ``%v`` of a ``map[string]string``;
- ``human_duration``: apimachinery's ``duration.HumanDuration`` (the ages kubectl prints).

Every parse error is a ``ValueError`` whose message is Go's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from numaplane.cpuset import CPUSet

_SHORT_ESCAPES: Final = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}
_PERCENT_Q_ESCAPES: Final = {**_SHORT_ESCAPES, "\a": "\\a", "\v": "\\v"}


def go_quote(text: str) -> str:
    """Go's ``%q`` (``strconv.Quote``) of a string."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        escape = _PERCENT_Q_ESCAPES.get(ch)
        if escape is not None:
            out.append(escape)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif not ch.isprintable() and code > 0x7F:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_json_string(text: str) -> str:
    """A JSON string as Go's ``json.Marshal`` writes it (HTML-safe escapes, U+2028/9)."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        escape = _SHORT_ESCAPES.get(ch)
        if escape is not None:
            out.append(escape)
        elif code < 0x20 or ch in "<>&" or code in (0x2028, 0x2029):
            out.append(f"\\u{code:04x}")
        elif 0xD800 <= code <= 0xDFFF:  # a lone surrogate is invalid UTF-8 to Go
            out.append("\\ufffd")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


_INT64_MAX: Final = (1 << 63) - 1
_TRUE: Final = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE: Final = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def go_atoi(text: str) -> int:
    """Go's ``strconv.Atoi`` on a 64-bit platform (an optional sign, ASCII digits only)."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not all("0" <= ch <= "9" for ch in digits):
        raise ValueError(f"strconv.Atoi: parsing {go_quote(text)}: invalid syntax")
    value = int(digits) if text[:1] != "-" else -int(digits)
    if not -_INT64_MAX - 1 <= value <= _INT64_MAX:
        raise ValueError(f"strconv.Atoi: parsing {go_quote(text)}: value out of range")
    return value


def go_parse_bool(text: str) -> bool:
    """Go's ``strconv.ParseBool``."""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"strconv.ParseBool: parsing {go_quote(text)}: invalid syntax")


def go_parse_cpuset(text: str) -> CPUSet:
    """``cpuset.Parse`` (k8s.io/utils): the Linux list format, with Go's error messages.

    Raises ``ValueError`` worded as upstream, e.g.
    ``strconv.Atoi: parsing "1.3": invalid syntax`` or ``invalid range "3-1" (3 > 1)``.
    """
    if text == "":
        return CPUSet()
    ids: set[int] = set()
    for item in text.split(","):
        low_text, dash, high_text = item.partition("-")
        if not dash:
            ids.add(_check_cpu_id(go_atoi(low_text), item))
            continue
        low, high = go_atoi(low_text), go_atoi(high_text)
        if low > high:
            raise ValueError(f"invalid range {go_quote(item)} ({low} > {high})")
        ids.update(range(_check_cpu_id(low, item), high + 1))
    return CPUSet(ids)


def _check_cpu_id(cpu: int, item: str) -> int:
    # Go would store a negative id; a CPUSet cannot, so say so rather than crash.
    if cpu < 0:
        raise ValueError(f"negative CPU id in {go_quote(item)}")
    return cpu


def go_map(values: Mapping[str, str]) -> str:
    """``%v`` of a ``map[string]string``: ``map[k:v k2:v2]``, keys sorted."""
    return "map[" + " ".join(f"{key}:{values[key]}" for key in sorted(values)) + "]"


def human_duration(seconds: float) -> str:
    """``duration.HumanDuration``: ``45s``, ``3m20s``, ``5h30m``, ``3d4h``, ``2y10d``; under
    two seconds in the future reads ``0s``, further is ``<invalid>``."""
    whole = int(seconds)  # Go truncates toward zero
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        rest = whole % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        years = hours // 24 // 365
        return f"{years}y" if days == 0 else f"{years}y{days}d"
    return f"{hours // 24 // 365}y"


def _quote_char(ch: str) -> str:
    # encoding/json's quoteChar: strconv.Quote between single quotes.
    if ch == "'":
        return "'\\''"
    if ch == '"':
        return "'\"'"
    return "'" + go_quote(ch)[1:-1] + "'"


def _container_at(text: str, pos: int) -> str:
    """``{`` or ``[``: the innermost open container before ``pos`` (strings skipped)."""
    stack: list[str] = []
    in_string = escaped = False
    for ch in text[:pos]:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append(ch)
        elif ch in "}]" and stack:
            stack.pop()
    return stack[-1] if stack else ""


def go_json_syntax_error(exc: json.JSONDecodeError, text: str) -> str:
    """Python's JSON syntax error on ``text`` worded as Go's ``encoding/json`` scanner words it
    (``invalid character 'x' after object key``, ``unexpected end of JSON input``)."""
    message = exc.msg
    pos = exc.pos
    if message.startswith("Unterminated string") or pos >= len(text.rstrip(" \t\r\n")):
        return "unexpected end of JSON input"
    if message.startswith("Invalid \\escape"):
        return f"invalid character {_quote_char(text[pos + 1])} in string escape code"
    ch = _quote_char(text[pos])
    if message.startswith("Invalid control character"):
        return f"invalid character {ch} in string literal"
    if message.startswith("Extra data"):
        return f"invalid character {ch} after top-level value"
    if message.startswith("Expecting property name"):
        return f"invalid character {ch} looking for beginning of object key string"
    if message.startswith("Expecting ':'"):
        return f"invalid character {ch} after object key"
    if message.startswith("Expecting ','"):
        after = "object key:value pair" if _container_at(text, pos) == "{" else "array element"
        return f"invalid character {ch} after {after}"
    return f"invalid character {ch} looking for beginning of value"
