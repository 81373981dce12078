"""Go values for kubelet-compatible checkpoints: the type model, go-spew ``%#v``, FNV-32a.

The kubelet's checkpoint checksums are the FNV-32a hash of a go-spew ``%#v`` rendering of a Go
struct (``checksum.New`` → ``DeepHashObject`` with ``SortKeys``, ``DisableMethods``,
``SpewKeys``). Reproducing that byte for byte needs the Go *types*, not just the values: the
rendering names each struct field's type. So this module describes the few Go shapes the
checkpoints use (``GoType``) and renders plain Python values of them (``spew_sharp_v``,
``go_checksum``). Go's ``encoding/json`` over the same model lives in ``gojson``.

Python values per kind: strings ``str``; integers ``int``; slices ``list`` (``bytes`` for
``[]uint8``) or ``None`` for nil; maps ``dict`` or ``None``; pointers the pointee or ``None``;
structs a ``dict`` keyed by Go field name.

Go's string quoting and parsing of plain values live in ``numaplane.gofmt``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

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


def elem_of(t: GoType) -> GoType:
    """The element type of a slice, map or pointer type."""
    assert t.elem is not None, t.name
    return t.elem


def key_of(t: GoType) -> GoType:
    """The key type of a map type."""
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
        _spew(value, elem_of(t), False, out)
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
                _spew(item, elem_of(t), False, out)
        out.append("]")
    elif t.kind is Kind.MAP:
        out.append("map[")
        # spew orders integer keys numerically and strings bytewise; the code-point order of
        # Python strings is the byte order of their UTF-8 encoding.
        for index, key in enumerate(sorted(value)):
            if index:
                out.append(" ")
            _spew(key, key_of(t), False, out)
            out.append(":")
            _spew(value[key], elem_of(t), False, out)
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
