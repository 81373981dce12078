"""Field paths and field sets as sigs.k8s.io/structured-merge-diff has them, and the walks over an
object that server-side apply is made of: the set of fields a value sets (``ToFieldSet``), the
comparison of two values (added / modified / removed fields), the merge of an applied
configuration into a live object, and the removal of a set of fields.

A path is a tuple of elements: ``("f", name)`` a field, ``("k", '{"name":"x"}')`` a keyed list
item (its keys as canonical JSON), ``("v", '"x"')`` a set item (its value as JSON), ``("i", 3)`` a
list index. A set of paths is a ``frozenset``; :func:`to_fields_v1` and :func:`from_fields_v1`
convert it to and from the ``fieldsV1`` encoding of ``managedFields`` (``f:``, ``k:``, ``v:``,
``i:``, with ``.`` marking a member that also has children).
(Over 400 lines: the four walks share one notion of path and item identity, kept together.)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

import orjson

from numaplane.apiserver.patchmeta import Schema
from numaplane.gofmt import go_quote

PathElement = tuple[str, Any]
Path = tuple[PathElement, ...]
FieldSet = frozenset[Path]

EMPTY: Final[FieldSet] = frozenset()


class FieldPathError(ValueError):
    """A value that does not fit its schema (a keyed list item without its key, a bad
    ``fieldsV1``), worded as structured-merge-diff's errors."""


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()
"""An absent value (as opposed to an explicit ``null``)."""


def _normal(value: Any) -> Any:
    # One JSON spelling per value: integral floats are integers, as Go's decoder would compare.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def canonical(value: Any) -> str:
    """``value`` as compact JSON with sorted keys (how paths name keys and set values)."""
    return json.dumps(_normal(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _scalar_json(value: Any) -> str:
    # canonical() of one value, without the generic walk for the common scalars.
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return canonical(value)


def same_value(a: Any, b: Any) -> bool:
    """JSON equality (``true`` is not ``1``; ``1`` is ``1.0``)."""
    if (type(a) is type(b) and isinstance(a, str | int | bool)) or a is None or b is None:
        return a == b and type(a) is type(b)
    decided = _decided(a, b)
    if decided is not None:
        return decided
    return canonical(a) == canonical(b)


def _dumps_sorted(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def _decided(a: Any, b: Any) -> bool | None:
    # canonical(a) == canonical(b), decided in C where that is sure, else None (the caller
    # then compares canonical forms, as before). Python's == is JSON equality except that it
    # takes true for 1 (equal values are therefore confirmed by their bytes) and NaN for
    # unequal to itself (so unequal values are trusted only when neither holds a NaN or an
    # infinity, which orjson writes as null and a round trip therefore reveals).
    if a is b:
        return True
    try:
        if a == b:
            return True if _dumps_sorted(a) == _dumps_sorted(b) else None
        if orjson.loads(orjson.dumps(a)) == a and orjson.loads(orjson.dumps(b)) == b:
            return False
    except (TypeError, ValueError, RecursionError):
        pass
    return None


def _identical(a: Any, b: Any) -> bool:
    # The same JSON value, proven in C; False only means "not proven".
    return _decided(a, b) is True if a is not b else True


def _is_granular_list(schema: Schema) -> bool:
    return schema.list_type in ("set", "map")


def _is_granular_map(schema: Schema) -> bool:
    return schema.map_type != "atomic"


def _is_map_entry(schema: Schema, key: str) -> bool:
    # A key of a map (``additionalProperties``), as opposed to a field of a struct.
    return key not in schema.fields and schema.elements is not None


def _where(path: Path) -> str:
    return f"{path_string(path)}: " if path else ""


def item_element(item: Any, schema: Schema, index: int, path: Path = ()) -> PathElement:
    """The path element naming ``item`` (at ``index``) of the list at ``path``."""
    if schema.list_type == "map":
        if not isinstance(item, dict):
            raise FieldPathError(
                f"{_where(path)}element {index}: expected map, got {_value_string(item)}"
            )
        parts: list[str] = []
        for name in sorted(schema.map_keys):
            if name in item:
                value = item[name]
            elif name in schema.key_defaults:
                value = schema.key_defaults[name]
            else:
                raise FieldPathError(
                    f"{_where(path)}element {index}: associative list with keys has an element "
                    "that omits "
                    f'key field "{name}" (and doesn\'t have default value)'
                )
            parts.append(f"{json.dumps(name, ensure_ascii=False)}:{_scalar_json(value)}")
        return ("k", "{" + ",".join(parts) + "}")
    if schema.list_type == "set":
        return ("v", _scalar_json(item))
    return ("i", index)


# --- printing and fieldsV1 -----------------------------------------------------------------


def _value_string(value: Any) -> str:
    # value.ToString: strings quoted, numbers and booleans bare.
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, dict):
        return "{" + ";".join(f"{k}={_value_string(value[k])}" for k in sorted(value)) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_value_string(v) for v in value) + "]"
    return str(_normal(value))


def element_string(element: PathElement) -> str:
    """One element as a path prints it: ``.name``, ``[name="x"]``, ``[="v"]``, ``[3]``."""
    kind, data = element
    if kind == "f":
        return f".{data}"
    if kind == "k":
        keys = json.loads(data)
        return "[" + ",".join(f"{k}={_value_string(keys[k])}" for k in sorted(keys)) + "]"
    if kind == "v":
        return f"[={_value_string(json.loads(data))}]"
    return f"[{data}]"


def path_string(path: Path) -> str:
    """A path as conflicts print it: ``.spec.containers[name="c"].image``."""
    return "".join(element_string(e) for e in path)


_KIND_ORDER: Final = {"f": 0, "k": 1, "v": 2, "i": 3}


def _sort_key(element: PathElement) -> tuple[int, Any]:
    return (_KIND_ORDER[element[0]], element[1])


def _encode_element(element: PathElement) -> str:
    kind, data = element
    return f"{kind}:{data}"


#: ``fieldsV1`` encodings of recent field sets, as JSON: most writes record the same sets again
#: (a pod's status patch by its kubelet, every pod of one shape created by one client).
_ENCODED: dict[FieldSet, bytes] = {}
_ENCODED_LIMIT: Final = 512


def to_fields_v1(fields: Iterable[Path]) -> dict[str, Any]:
    """The ``fieldsV1`` object of a field set (members sorted as upstream serializes them)."""
    key = fields if isinstance(fields, frozenset) else frozenset(fields)
    found = _ENCODED.get(key)
    if found is None:
        found = orjson.dumps(_encode_fields_v1(key))
        if len(_ENCODED) >= _ENCODED_LIMIT:
            _ENCODED.clear()
        _ENCODED[key] = found
    # A fresh object each time: the caller owns (and may change) what it is given.
    encoded: dict[str, Any] = orjson.loads(found)
    return encoded


def _encode_fields_v1(fields: Iterable[Path]) -> dict[str, Any]:
    root: dict[PathElement, Any] = {}
    # The trie nodes of the members, by identity (a member with children is marked ".").
    marked: set[int] = set()
    for path in fields:
        node = root
        for element in path:
            child = node.get(element)
            if child is None:
                child = node[element] = {}
            node = child
        marked.add(id(node))

    def emit(node: dict[PathElement, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if id(node) in marked:
            out["."] = {}
        for element in sorted(node, key=_sort_key) if len(node) > 1 else node:
            child = node[element]
            out[f"{element[0]}:{element[1]}"] = emit(child) if child else {}
        return out

    return emit(root) if root else {}


def from_fields_v1(encoded: Mapping[str, Any]) -> FieldSet:
    """The field set of a ``fieldsV1`` object; raises :class:`FieldPathError` when malformed."""
    found: set[Path] = set()

    def walk(node: Mapping[str, Any], prefix: Path) -> None:
        for raw, child in node.items():
            if raw == ".":
                found.add(prefix)
                continue
            if not isinstance(child, Mapping) or len(raw) < 2 or raw[1] != ":":
                raise FieldPathError(f"parsing JSON: invalid path element {raw!r}")
            kind, data = raw[0], raw[2:]
            element: PathElement
            if kind == "f":
                element = ("f", data)
            elif kind in ("k", "v"):
                try:
                    element = (kind, canonical(json.loads(data)))
                except ValueError:
                    raise FieldPathError(f"parsing JSON: invalid path element {raw!r}") from None
            elif kind == "i" and data.lstrip("-").isdigit():
                element = ("i", int(data))
            else:
                raise FieldPathError(f"parsing JSON: unknown path element type {kind!r}")
            path = (*prefix, element)
            if not child:
                found.add(path)
            else:
                walk(child, path)

    walk(encoded, ())
    return frozenset(found)


# --- walks over values ------------------------------------------------------------------------


def to_field_set(value: Any, schema: Schema, *, allow_duplicates: bool = True) -> FieldSet:
    """The fields ``value`` sets (``TypedValue.ToFieldSet``): every scalar and atomic value,
    every keyed or set list item, every map entry, every null or empty object. Without
    ``allow_duplicates`` (an applied configuration) two items with one key are an error."""
    out: set[Path] = set()
    _collect(value, schema, (), out, allow_duplicates)
    return frozenset(out)


def _collect(value: Any, schema: Schema, path: Path, out: set[Path], dupes: bool = True) -> None:
    if isinstance(value, dict) and _is_granular_map(schema):
        for key, child in value.items():
            child_path = (*path, ("f", key))
            _collect(child, schema.child(key), child_path, out, dupes)
            empty = child is None or (isinstance(child, dict) and not child)
            if empty or _is_map_entry(schema, key):
                out.add(child_path)
        return
    if isinstance(value, list) and _is_granular_list(schema):
        for index, item in enumerate(value):
            item_path = (*path, item_element(item, schema, index, path))
            if not dupes and item_path in out:
                raise FieldPathError(
                    f"{path_string(path)}: duplicate entries for key "
                    f"{element_string(item_path[-1])}"
                )
            _collect(item, schema.item(), item_path, out, dupes)
            out.add(item_path)
        return
    if path:
        out.add(path)


def _schema_at(schema: Schema, path: Path) -> Schema:
    for kind, data in path:
        schema = schema.child(data) if kind == "f" else schema.item()
    return schema


def with_named_fields(fields: FieldSet, schema: Schema) -> FieldSet:
    """``EnsureNamedFieldsAreMembers``: ``fields`` plus every struct field that is an ancestor
    of one of them (``spec`` for ``spec.replicas``; a key of a map is no named field)."""
    out = set(fields)
    for path in fields:
        parent = schema
        for depth, (kind, data) in enumerate(path[:-1]):
            if kind == "f":
                # A field of a struct (anything but a map with declared values) is named; a
                # built-in schema declares only the fields whose merging differs.
                named = data in parent.fields or parent.elements is None
                if named:
                    out.add(path[: depth + 1])
                parent = parent.child(data)
            else:
                parent = parent.item()
    return frozenset(out)


def compare(lhs: Any, rhs: Any, schema: Schema) -> tuple[FieldSet, FieldSet, FieldSet]:
    """``(added, modified, removed)`` between two values (``TypedValue.Compare``); absent
    values are :data:`MISSING`."""
    added: set[Path] = set()
    modified: set[Path] = set()
    removed: set[Path] = set()
    _compare(lhs, rhs, schema, (), added, modified, removed)
    return frozenset(added), frozenset(modified), frozenset(removed)


def _container(value: Any, schema: Schema) -> str:
    if isinstance(value, dict) and _is_granular_map(schema):
        return "map"
    if isinstance(value, list) and _is_granular_list(schema):
        return "list"
    return ""


_KEYED: dict[int, tuple[Schema, bool]] = {}
#: Past this many schemas the memo starts over (schemas built per call must not pile up).
_KEYED_LIMIT: Final = 20000


def _has_keyed_list(schema: Schema) -> bool:
    # Whether a keyed list (whose items may lack their keys) lies under ``schema``. Memoised by
    # identity (schemas are built once per kind and kept); the entry holds the schema alive so
    # that its id is not reused.
    found = _KEYED.get(id(schema))
    if found is not None:
        return found[1]
    if len(_KEYED) > _KEYED_LIMIT:
        _KEYED.clear()
    _KEYED[id(schema)] = (schema, True)  # a recursive schema is assumed to hold one
    keyed = (
        schema.list_type == "map"
        or any(_has_keyed_list(sub) for sub in schema.fields.values())
        or (schema.elements is not None and _has_keyed_list(schema.elements))
    )
    _KEYED[id(schema)] = (schema, keyed)
    return keyed


def _items_named(value: Any, schema: Schema, path: Path) -> bool:
    """Whether every keyed list item under ``value`` has its keys: the only thing the
    comparison of two equal values can fail on (it then raises as before, from the full
    walk)."""
    if not _has_keyed_list(schema):
        return True
    try:
        _name_items(value, schema, path)
    except FieldPathError:
        return False
    return True


def _name_items(value: Any, schema: Schema, path: Path) -> None:
    kind = _container(value, schema)
    if kind == "map":
        for key, child in value.items():
            sub = schema.child(key)
            if _has_keyed_list(sub):
                _name_items(child, sub, (*path, ("f", key)))
    elif kind == "list":
        item_schema = schema.item()
        walk = _has_keyed_list(item_schema)
        for index, item in enumerate(value):
            element = item_element(item, schema, index, path)
            if walk:
                _name_items(item, item_schema, (*path, element))


def _children(
    value: Any, schema: Schema, kind: str, path: Path
) -> dict[PathElement, tuple[Any, Schema]]:
    if kind == "map":
        return {("f", k): (v, schema.child(k)) for k, v in value.items()}
    found: dict[PathElement, tuple[Any, Schema]] = {}
    for index, item in enumerate(value):
        found.setdefault(item_element(item, schema, index, path), (item, schema.item()))
    return found


def _compare(
    lhs: Any,
    rhs: Any,
    schema: Schema,
    path: Path,
    added: set[Path],
    modified: set[Path],
    removed: set[Path],
) -> None:
    lkind = "" if lhs is MISSING else _container(lhs, schema)
    rkind = "" if rhs is MISSING else _container(rhs, schema)
    if lkind and lkind == rkind and _identical(lhs, rhs) and _items_named(lhs, schema, path):
        # An unchanged subtree adds, modifies and removes nothing; the walk below would only
        # find that out, path by path (most of an update: a status patch leaves spec alone).
        return
    if lkind and lkind == rkind:
        left = _children(lhs, schema, lkind, path)
        right = _children(rhs, schema, rkind, path)
        for element in {**left, **right}:
            lv, ls = left.get(element, (MISSING, schema))
            rv, rs = right.get(element, (MISSING, schema))
            sub = rs if rv is not MISSING else ls
            _compare(lv, rv, sub, (*path, element), added, modified, removed)
        return
    if lkind and rhs is MISSING:
        _every_path(lhs, schema, lkind, path, removed)
        return
    if rkind and lhs is MISSING:
        _every_path(rhs, schema, rkind, path, added)
        return
    if lkind or rkind:
        # A container on one side, something else on the other: the field changed, and the
        # container's own fields appear or disappear with it.
        if lkind:
            for element, (value, sub) in _children(lhs, schema, lkind, path).items():
                _compare(value, MISSING, sub, (*path, element), added, modified, removed)
        if rkind:
            for element, (value, sub) in _children(rhs, schema, rkind, path).items():
                _compare(MISSING, value, sub, (*path, element), added, modified, removed)
        if path:
            modified.add(path)
        return
    if not path:
        return
    if lhs is MISSING:
        added.add(path)
    elif rhs is MISSING:
        removed.add(path)
    elif not same_value(lhs, rhs):
        modified.add(path)


def _every_path(value: Any, schema: Schema, kind: str, path: Path, out: set[Path]) -> None:
    # The comparison of a container with nothing on the other side: it and everything in it
    # (added or removed, as ``out`` is).
    for element, (child, sub) in _children(value, schema, kind, path).items():
        child_path = (*path, element)
        child_kind = _container(child, sub)
        if child_kind:
            _every_path(child, sub, child_kind, child_path, out)
        else:
            out.add(child_path)
    out.add(path)
