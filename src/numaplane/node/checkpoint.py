"""Kubelet-compatible checkpoint files: Go value model, checksums, atomic file store.

The kubelet persists its resource managers' state as JSON files whose checksum is the FNV-32a
hash of a go-spew ``%#v`` rendering of the Go struct (``checksum.New`` → ``DeepHashObject``
with ``SortKeys``, ``DisableMethods``, ``SpewKeys``). Reproducing that byte for byte needs the
Go *types*, not just the JSON: the rendering names each struct field's type, and Go's
``encoding/json`` decides nil-versus-empty, key matching and error wording by type. So this
module describes the few Go shapes the checkpoints use (``GoType``) and implements, over plain
Python values, the three things the kubelet does with them: ``json.Unmarshal``
(``go_unmarshal``), ``json.Marshal`` (``go_marshal``) and the spew rendering (``spew_sharp_v``).

Python values per kind: strings ``str``; integers ``int``; slices ``list`` (``bytes`` for
``[]uint8``) or ``None`` for nil; maps ``dict`` or ``None``; pointers the pointee or ``None``;
structs a ``dict`` keyed by Go field name.

This is the one module of ``numaplane.node`` that touches files: ``CheckpointStore`` writes
atomically (temporary file in the same directory, fsync, rename, fsync of the directory).
"""

from __future__ import annotations

import base64
import binascii
import enum
import json
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from numaplane.errors import NumaplaneError

# -- errors ----------------------------------------------------------------------------------


class CheckpointError(NumaplaneError):
    """A checkpoint cannot be read, verified, restored or written.

    ``source`` names the file (or other origin) when known; it is not part of the message,
    which keeps the kubelet's wording.
    """

    def __init__(self, message: str, *, source: str | None = None) -> None:
        super().__init__(message)
        self.source = source


class CheckpointNotFoundError(CheckpointError):
    """No checkpoint is stored under the name (upstream ``ErrCheckpointNotFound``)."""

    def __init__(self, *, source: str | None = None) -> None:
        super().__init__("checkpoint is not found", source=source)


class CorruptCheckpointError(CheckpointError):
    """The stored checksum does not match the content (upstream ``CorruptCheckpointError``)."""

    def __init__(self, actual: int, expected: int, *, source: str | None = None) -> None:
        super().__init__("checkpoint is corrupted", source=source)
        self.actual = actual
        self.expected = expected


class CheckpointDecodeError(CheckpointError):
    """The content is not JSON of the expected shape; the message is Go's ``encoding/json``'s."""


class CheckpointRestoreError(CheckpointError):
    """A manager could not restore its state: "could not restore state from checkpoint: …"."""

    def __init__(self, cause: str, *, hint: str | None = None, source: str | None = None) -> None:
        message = f"could not restore state from checkpoint: {cause}"
        if hint:
            message = f"{message}, {hint}"
        super().__init__(message, source=source)
        self.cause = cause


class CheckpointStoreError(CheckpointError):
    """The state directory could not be read or written."""


# -- FNV-32a ---------------------------------------------------------------------------------

_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


def fnv32a(data: bytes | str) -> int:
    """The 32-bit FNV-1a hash of ``data`` (a ``str`` is hashed as UTF-8)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    value = _FNV32_OFFSET
    for byte in raw:
        value = ((value ^ byte) * _FNV32_PRIME) & 0xFFFFFFFF
    return value


# -- Go types --------------------------------------------------------------------------------


class Kind(enum.Enum):
    """The Go kinds checkpoints use."""

    STRING = "string"
    INT = "int"
    UINT = "uint"
    SLICE = "slice"
    MAP = "map"
    PTR = "ptr"
    STRUCT = "struct"


@dataclass(frozen=True)
class GoField:
    """A struct field: Go name, JSON name, type and ``omitempty``."""

    name: str
    type: GoType
    json: str = ""
    omitempty: bool = False

    @property
    def json_name(self) -> str:
        """The JSON key: the tag's name, or the Go name when untagged."""
        return self.json or self.name


@dataclass(frozen=True)
class GoType:
    """A Go type: ``name`` as ``reflect.Type.String()`` prints it, kind and parts."""

    name: str
    kind: Kind
    elem: GoType | None = None
    key: GoType | None = None
    fields: tuple[GoField, ...] = ()
    bits: int = 64

    def named(self, name: str) -> GoType:
        """The same underlying type under a defined name (``type X map[...]...``)."""
        return replace(self, name=name)

    @property
    def short_name(self) -> str:
        """The unqualified name (``reflect.Type.Name()``), as JSON errors print structs."""
        return self.name.rsplit(".", 1)[-1]

    @property
    def is_bytes(self) -> bool:
        """``[]uint8``: JSON writes it as base64, spew as decimal bytes."""
        return self.kind is Kind.SLICE and self.elem is not None and self.elem.bits == 8

    def field_named(self, name: str) -> GoField:
        """The field with Go name ``name``."""
        for item in self.fields:
            if item.name == name:
                return item
        raise KeyError(name)


STRING = GoType("string", Kind.STRING)
INT = GoType("int", Kind.INT)
INT64 = GoType("int64", Kind.INT)
UINT64 = GoType("uint64", Kind.UINT)
UINT8 = GoType("uint8", Kind.UINT, bits=8)
CHECKSUM = UINT64.named("checksum.Checksum")


def slice_of(elem: GoType) -> GoType:
    """``[]elem``."""
    return GoType(f"[]{elem.name}", Kind.SLICE, elem=elem)


def map_of(key: GoType, elem: GoType) -> GoType:
    """``map[key]elem``."""
    return GoType(f"map[{key.name}]{elem.name}", Kind.MAP, elem=elem, key=key)


def ptr_to(elem: GoType) -> GoType:
    """``*elem``."""
    return GoType(f"*{elem.name}", Kind.PTR, elem=elem)


def struct(name: str, *fields: GoField) -> GoType:
    """A named struct type with ``fields`` in declaration order."""
    return GoType(name, Kind.STRUCT, fields=tuple(fields))


def zero(t: GoType) -> Any:
    """Go's zero value of ``t``."""
    if t.kind is Kind.STRING:
        return ""
    if t.kind in (Kind.INT, Kind.UINT):
        return 0
    if t.kind is Kind.STRUCT:
        return {f.name: zero(f.type) for f in t.fields}
    return None


def _elem(t: GoType) -> GoType:
    assert t.elem is not None, t.name
    return t.elem


def _key(t: GoType) -> GoType:
    assert t.key is not None, t.name
    return t.key


# -- go-spew %#v -----------------------------------------------------------------------------


def spew_sharp_v(value: Any, t: GoType) -> str:
    """go-spew's ``%#v`` of ``value`` (kubelet ``ConfigState``: sorted keys, no methods)."""
    out: list[str] = []
    _spew(value, t, True, out)
    return "".join(out)


def _spew(value: Any, t: GoType, show_type: bool, out: list[str]) -> None:
    if t.kind is Kind.PTR:
        if value is None:
            out.append(f"({t.name})<nil>" if show_type else "<nil>")
            return
        out.append(f"({t.name})" if show_type else "<*>")
        _spew(value, _elem(t), False, out)
        return
    if show_type:
        out.append(f"({t.name})")
    if t.kind is Kind.STRING:
        out.append(value)
    elif t.kind in (Kind.INT, Kind.UINT):
        out.append(str(value))
    elif value is None:  # nil slice or map
        out.append("<nil>")
    elif t.kind is Kind.SLICE:
        out.append("[")
        if t.is_bytes:
            out.append(" ".join(str(b) for b in value))
        else:
            for index, item in enumerate(value):
                if index:
                    out.append(" ")
                _spew(item, _elem(t), False, out)
        out.append("]")
    elif t.kind is Kind.MAP:
        out.append("map[")
        # spew orders integer keys numerically and strings bytewise; the code-point order of
        # Python strings is the byte order of their UTF-8 encoding.
        for index, key in enumerate(sorted(value)):
            if index:
                out.append(" ")
            _spew(key, _key(t), False, out)
            out.append(":")
            _spew(value[key], _elem(t), False, out)
        out.append("]")
    else:  # struct
        out.append("{")
        for index, item in enumerate(t.fields):
            if index:
                out.append(" ")
            out.append(f"{item.name}:")
            _spew(value[item.name], item.type, True, out)
        out.append("}")


def go_checksum(value: Any, t: GoType, *, rename: Callable[[str], str] | None = None) -> int:
    """``checksum.New``: FNV-32a of the spew rendering, optionally rewritten by ``rename``.

    ``rename`` reproduces upstream's ``strings.Replace`` of versioned type names
    (``CPUManagerCheckpointV1`` → ``CPUManagerCheckpoint``) before hashing.
    """
    rendered = spew_sharp_v(value, t)
    if rename is not None:
        rendered = rename(rendered)
    return fnv32a(rendered)


# -- encoding/json Marshal -------------------------------------------------------------------

_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_SHORT_ESCAPES |= {"\b": "\\b", "\f": "\\f"}


def go_quote(text: str) -> str:
    """A JSON string as Go's ``json.Marshal`` writes it (HTML-safe escapes, U+2028/9)."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif code < 0x20 or ch in "<>&" or code in (0x2028, 0x2029):
            out.append(f"\\u{code:04x}")
        elif 0xD800 <= code <= 0xDFFF:  # a lone surrogate is invalid UTF-8 to Go
            out.append("\\ufffd")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_percent_q(text: str) -> str:
    """Go's ``%q`` (``strconv.Quote``) of a string, as upstream error messages print names."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif ch == "\a" or ch == "\v":
            out.append({"\a": "\\a", "\v": "\\v"}[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif not ch.isprintable() and code > 0x7F:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


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
        out.append(go_quote(value))
    elif t.kind in (Kind.INT, Kind.UINT):
        out.append(str(value))
    elif value is None:
        out.append("null")
    elif t.kind is Kind.PTR:
        _marshal(value, _elem(t), out)
    elif t.is_bytes:
        out.append(go_quote(base64.b64encode(bytes(value)).decode("ascii")))
    elif t.kind is Kind.SLICE:
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _marshal(item, _elem(t), out)
        out.append("]")
    elif t.kind is Kind.MAP:
        # encoding/json sorts map keys by their *string* form, also for integer keys.
        pairs = sorted((str(key), item) for key, item in value.items())
        out.append("{")
        for index, (key_text, item) in enumerate(pairs):
            if index:
                out.append(",")
            out.append(go_quote(key_text))
            out.append(":")
            _marshal(item, _elem(t), out)
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
            out.append(go_quote(item.json_name))
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

    Raises ``CheckpointDecodeError`` with Go's message. As Go, syntax is checked first, type
    errors do not stop decoding and the first one is reported.
    """
    document = parse_go_json(data)
    state = _DecodeState()
    value = _decode(document, t, zero(t) if into is None else into, state)
    if state.first_error is not None:
        raise CheckpointDecodeError(state.first_error)
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
        raise CheckpointDecodeError(_go_syntax_message(exc, text)) from None


def _reject_constant(name: str) -> Any:
    raise json.JSONDecodeError("Expecting value", name, 0)


def _quote_char(ch: str) -> str:
    if ch == "'":
        return "'\\''"
    if ch == '"':
        return "'\"'"
    quoted = json.dumps(ch, ensure_ascii=False)
    return "'" + quoted[1:-1] + "'"


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


def _go_syntax_message(exc: json.JSONDecodeError, text: str) -> str:
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
        return _decode(node, _elem(t), zero(_elem(t)) if current is None else current, state)
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
            return [_decode(item, _elem(t), zero(_elem(t)), state) for item in node]
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
    key_type = _key(t)
    for key_text, item in node.items:
        key: Any = key_text
        if key_type.kind in (Kind.INT, Kind.UINT):
            if not _INT_LITERAL.match(key_text) or not _fits(int(key_text), key_type):
                state.type_error(f"number {key_text}", key_type, contextual=False)
                continue
            key = int(key_text)
        result[key] = _decode(item, _elem(t), zero(_elem(t)), state)
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


# -- the file store --------------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z0-9]+([._-][A-Za-z0-9]+)*\Z")


@dataclass(frozen=True)
class CheckpointStore:
    """Checkpoint files in one state directory (the kubelet's ``--root-dir`` layout).

    ``write`` is atomic: a reader sees the old file or the new one, never a mix, even if the
    process dies mid-write.
    """

    state_dir: Path
    _fsync: Callable[[int], None] = field(default=os.fsync, repr=False, compare=False)

    def path(self, name: str) -> Path:
        """Where checkpoint ``name`` lives; the name must be a plain file name."""
        if not _NAME.match(name):
            raise CheckpointStoreError(f"invalid checkpoint name {name!r}")
        return self.state_dir / name

    def read(self, name: str) -> bytes | None:
        """The checkpoint's bytes, or ``None`` if there is none."""
        path = self.path(name)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise CheckpointStoreError(f"read {path}: {exc}", source=str(path)) from exc

    def write(self, name: str, data: bytes) -> None:
        """Replace checkpoint ``name`` with ``data`` atomically and durably."""
        path = self.path(name)
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", dir=self.state_dir)
        except OSError as exc:
            raise CheckpointStoreError(f"write {path}: {exc}", source=str(path)) from exc
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                self._fsync(handle.fileno())
            os.replace(tmp_name, path)
        except BaseException as exc:
            Path(tmp_name).unlink(missing_ok=True)
            if isinstance(exc, OSError):
                raise CheckpointStoreError(f"write {path}: {exc}", source=str(path)) from exc
            raise
        self._sync_dir()

    def remove(self, name: str) -> None:
        """Delete checkpoint ``name``; a missing one is not an error."""
        path = self.path(name)
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            raise CheckpointStoreError(f"remove {path}: {exc}", source=str(path)) from exc

    def names(self) -> list[str]:
        """The checkpoints present, sorted (temporary files of unfinished writes excluded)."""
        if not self.state_dir.is_dir():
            return []
        return sorted(p.name for p in self.state_dir.iterdir() if _NAME.match(p.name))

    def _sync_dir(self) -> None:
        try:
            fd = os.open(self.state_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            return  # directories cannot be opened on every platform; the rename is done
        try:
            self._fsync(fd)
        except OSError:
            pass  # some filesystems refuse fsync on directories
        finally:
            os.close(fd)
