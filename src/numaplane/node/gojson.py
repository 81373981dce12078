"""Go's ``encoding/json`` over the ``gocodec`` type model: ``Marshal`` and ``Unmarshal``.

The kubelet writes checkpoints with ``json.Marshal`` and reads them with ``json.Unmarshal``; the
Go types decide what the bytes look like (field order, sorted map keys, ``omitempty``, base64
``[]byte``, HTML-safe escapes) and how reading behaves (case-insensitive keys, unknown keys
ignored, nil-versus-empty, Go's error wording). ``go_marshal`` and ``go_unmarshal`` reproduce
both over plain Python values (see ``gocodec`` for the value of each kind).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any

from numaplane.errors import NumaplaneError
from numaplane.gofmt import go_json_string, go_json_syntax_error
from numaplane.node.gocodec import GoField, GoType, Kind, elem_of, key_of, zero


class GoJSONError(NumaplaneError):
    """The input is not JSON of the expected shape; the message is Go's ``encoding/json``'s."""


# -- encoding/json Marshal -------------------------------------------------------------------


def go_marshal(value: Any, t: GoType) -> bytes:
    """``json.Marshal`` of ``value``: compact, struct fields in order, map keys sorted."""
    out: list[str] = []
    _marshal(value, t, out)
    return "".join(out).encode("utf-8")


def _is_empty(value: Any, t: GoType) -> bool:
    if t.kind in (Kind.SLICE, Kind.MAP):
        return value is None or len(value) == 0
    if t.kind is Kind.PTR:
        return value is None
    if t.kind is Kind.STRUCT:
        return False
    return not value


def _marshal(value: Any, t: GoType, out: list[str]) -> None:
    if t.kind is Kind.STRING:
        out.append(go_json_string(value))
    elif t.kind in (Kind.INT, Kind.UINT):
        out.append(str(value))
    elif value is None:
        out.append("null")
    elif t.kind is Kind.PTR:
        _marshal(value, elem_of(t), out)
    elif t.is_bytes:
        out.append(go_json_string(base64.b64encode(bytes(value)).decode("ascii")))
    elif t.kind is Kind.SLICE:
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _marshal(item, elem_of(t), out)
        out.append("]")
    elif t.kind is Kind.MAP:
        # encoding/json sorts map keys by their *string* form, also for integer keys.
        pairs = sorted((str(key), item) for key, item in value.items())
        out.append("{")
        for index, (key_text, item) in enumerate(pairs):
            if index:
                out.append(",")
            out.append(go_json_string(key_text))
            out.append(":")
            _marshal(item, elem_of(t), out)
        out.append("}")
    else:
        out.append("{")
        first = True
        for item in t.fields:
            field_value = value[item.name]
            if item.omitempty and _is_empty(field_value, item.type):
                continue
            if not first:
                out.append(",")
            first = False
            out.append(go_json_string(item.json_name))
            out.append(":")
            _marshal(field_value, item.type, out)
        out.append("}")


# -- encoding/json Unmarshal -----------------------------------------------------------------


@dataclass(frozen=True)
class _Number:
    """A JSON number literal, kept as text: Go's errors quote it and ints must be exact."""

    text: str


@dataclass
class _Pairs:
    """A JSON object as its key/value pairs in document order (duplicates kept, as Go)."""

    items: list[tuple[str, Any]]


_INT_LITERAL = re.compile(r"-?(0|[1-9][0-9]*)\Z")


@dataclass
class _DecodeState:
    struct: GoType | None = None
    stack: tuple[str, ...] = ()
    first_error: str | None = None

    def type_error(self, json_kind: str, t: GoType, *, contextual: bool = True) -> None:
        if self.first_error is not None:
            return
        if contextual and (self.struct is not None or self.stack):
            where = f"Go struct field {self.struct.short_name if self.struct else ''}"
            where += "." + ".".join(self.stack)
        else:
            where = "Go value"
        self.first_error = f"json: cannot unmarshal {json_kind} into {where} of type {t.name}"


def go_unmarshal(data: bytes | str, t: GoType, into: Any = None) -> Any:
    """``json.Unmarshal(data, &v)`` where ``v`` starts as ``into`` (``zero(t)`` if ``None``).

    Raises ``GoJSONError`` with Go's message. As Go, syntax is checked first, type
    errors do not stop decoding and the first one is reported.
    """
    document = parse_go_json(data)
    state = _DecodeState()
    value = _decode(document, t, zero(t) if into is None else into, state)
    if state.first_error is not None:
        raise GoJSONError(state.first_error)
    return value


def go_unmarshal_lenient(data: bytes | str, t: GoType, into: Any = None) -> tuple[Any, str | None]:
    """Like ``go_unmarshal`` but returns what was decoded alongside the first type error.

    Upstream sometimes inspects a struct after a failed ``Unmarshal`` (memory manager V3 looks
    at ``data``/``dataChecksum``); syntax errors still raise, having decoded nothing.
    """
    document = parse_go_json(data)
    state = _DecodeState()
    value = _decode(document, t, zero(t) if into is None else into, state)
    return value, state.first_error


def parse_go_json(data: bytes | str) -> Any:
    """Parse JSON to ``_Pairs``/list/str/``_Number``/bool/``None``, with Go's syntax errors."""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    try:
        return json.loads(
            text,
            object_pairs_hook=_Pairs,
            parse_int=_Number,
            parse_float=_Number,
            parse_constant=_reject_constant,
        )
    except json.JSONDecodeError as exc:
        raise GoJSONError(go_json_syntax_error(exc, text)) from None


def _reject_constant(name: str) -> Any:
    raise json.JSONDecodeError("Expecting value", name, 0)


def _json_kind(node: Any) -> str:
    if isinstance(node, bool):
        return "bool"
    if isinstance(node, _Number):
        return "number"
    if isinstance(node, str):
        return "string"
    if isinstance(node, list):
        return "array"
    return "object"


def _fits(number: int, t: GoType) -> bool:
    if t.kind is Kind.UINT:
        return 0 <= number < (1 << t.bits)
    return -(1 << (t.bits - 1)) <= number < (1 << (t.bits - 1))


def _decode_int(node: _Number, t: GoType, state: _DecodeState) -> int | None:
    if _INT_LITERAL.match(node.text) and _fits(int(node.text), t):
        return int(node.text)
    state.type_error(f"number {node.text}", t)
    return None


def _decode(node: Any, t: GoType, current: Any, state: _DecodeState) -> Any:
    if node is None:  # null clears maps, slices and pointers, and leaves the rest alone
        return None if t.kind in (Kind.MAP, Kind.SLICE, Kind.PTR) else current
    if t.kind is Kind.PTR:
        return _decode(node, elem_of(t), zero(elem_of(t)) if current is None else current, state)
    if t.kind is Kind.STRING:
        if isinstance(node, str):
            return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in node)
    elif t.kind in (Kind.INT, Kind.UINT):
        if isinstance(node, _Number):
            decoded = _decode_int(node, t, state)
            return current if decoded is None else decoded
    elif t.is_bytes and isinstance(node, str):
        return _decode_base64(node, t, current, state)
    elif t.kind is Kind.SLICE:
        if isinstance(node, list):
            return [_decode(item, elem_of(t), zero(elem_of(t)), state) for item in node]
    elif t.kind is Kind.MAP:
        if isinstance(node, _Pairs):
            return _decode_map(node, t, current, state)
    elif isinstance(node, _Pairs):
        return _decode_struct(node, t, current, state)
    state.type_error(_json_kind(node), t)
    return current


def _decode_base64(node: str, t: GoType, current: Any, state: _DecodeState) -> Any:
    cleaned = node.replace("\r", "").replace("\n", "")
    try:
        return base64.b64decode(cleaned.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        if state.first_error is None:
            state.first_error = "illegal base64 data at input byte 0"
        return current


def _decode_map(node: _Pairs, t: GoType, current: Any, state: _DecodeState) -> Any:
    result: dict[Any, Any] = {} if current is None else dict(current)
    key_type = key_of(t)
    for key_text, item in node.items:
        key: Any = key_text
        if key_type.kind in (Kind.INT, Kind.UINT):
            if not _INT_LITERAL.match(key_text) or not _fits(int(key_text), key_type):
                state.type_error(f"number {key_text}", key_type, contextual=False)
                continue
            key = int(key_text)
        result[key] = _decode(item, elem_of(t), zero(elem_of(t)), state)
    return result


def _decode_struct(node: _Pairs, t: GoType, current: Any, state: _DecodeState) -> Any:
    result = dict(current)
    for key, item in node.items:
        target = _find_field(t, key)
        if target is None:
            continue  # unknown keys are ignored, as Go does
        saved = (state.struct, state.stack)
        state.struct, state.stack = t, (*state.stack, target.json_name)
        result[target.name] = _decode(item, target.type, result[target.name], state)
        state.struct, state.stack = saved
    return result


def _find_field(t: GoType, key: str) -> GoField | None:
    for item in t.fields:
        if item.json_name == key:
            return item
    folded = key.casefold()
    for item in t.fields:
        if item.json_name.casefold() == folded:
            return item
    return None
