"""Server-side apply's merge of objects: a configuration merged into the live object, and
the fields a manager gave up removed from it, both along the schema's list and map types (the
field sets themselves are in ``numaplane.apiserver.fieldpath``)."""

from __future__ import annotations

from typing import Any

from numaplane.apiserver.fieldpath import (
    MISSING,
    FieldSet,
    Path,
    PathElement,
    _container,
    _is_granular_list,
    _is_granular_map,
    item_element,
)
from numaplane.apiserver.patchmeta import Schema


def merge(live: Any, config: Any, schema: Schema) -> Any:
    """The applied ``config`` merged into ``live`` (``TypedValue.Merge``): granular maps and
    keyed/set lists merge item by item in upstream's order, anything else the config replaces.
    A ``null`` in the config clears the field."""
    if config is MISSING:
        return live
    if live is MISSING or live is None or config is None:
        return config
    if isinstance(live, dict) and isinstance(config, dict) and _is_granular_map(schema):
        out = dict(live)
        for key, value in config.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = merge(live.get(key, MISSING), value, schema.child(key))
        return out
    if isinstance(live, list) and isinstance(config, list) and _is_granular_list(schema):
        return _merge_list(live, config, schema)
    return config


def _merge_list(lhs: list[Any], rhs: list[Any], schema: Schema) -> list[Any]:
    # structured-merge-diff's visitListItems: the config's order, with live-only items kept
    # where they were relative to the items both lists share.
    item_schema = schema.item()
    lhs_pes = [item_element(v, schema, i) for i, v in enumerate(lhs)]
    rhs_pes = [item_element(v, schema, i) for i, v in enumerate(rhs)]
    observed_lhs: dict[PathElement, Any] = {}
    for pe, v in zip(lhs_pes, lhs, strict=True):
        observed_lhs.setdefault(pe, v)
    observed_rhs: dict[PathElement, Any] = {}
    for pe, v in zip(rhs_pes, rhs, strict=True):
        observed_rhs.setdefault(pe, v)
    shared = [pe for pe in rhs_pes if pe in observed_lhs]
    next_shared = shared.pop(0) if shared else None
    merged_rhs: set[PathElement] = set()
    out: list[Any] = []
    li = ri = 0
    while li < len(lhs) or ri < len(rhs):
        if li < len(lhs) and ri < len(rhs):
            pe = lhs_pes[li]
            if pe == rhs_pes[ri]:
                merged_rhs.add(pe)
                out.append(merge(observed_lhs[pe], observed_rhs[pe], item_schema))
                li += 1
                ri += 1
                next_shared = shared.pop(0) if shared else None
                continue
            if pe in observed_rhs and next_shared is not None and next_shared != pe:
                li += 1
                continue
        if li < len(lhs):
            pe = lhs_pes[li]
            if pe not in observed_rhs:
                out.append(lhs[li])
                li += 1
                continue
            if pe in merged_rhs:
                li += 1
                continue
        if ri < len(rhs):
            pe = rhs_pes[ri]
            merged_rhs.add(pe)
            out.append(merge(observed_lhs.get(pe, MISSING), observed_rhs[pe], item_schema))
            ri += 1
            if next_shared is not None and next_shared == pe:
                next_shared = shared.pop(0) if shared else None
    return out


def remove_items(value: Any, fields: FieldSet, schema: Schema) -> Any:
    """``value`` without the members of ``fields`` (each removed with all it holds)."""
    tree: dict[PathElement, Any] = {}
    members: set[Path] = set(fields)
    for path in fields:
        node = tree
        for element in path:
            node = node.setdefault(element, {})
    return _remove(value, tree, members, (), schema)


def _remove(
    value: Any, tree: dict[PathElement, Any], members: set[Path], path: Path, schema: Schema
) -> Any:
    kind = _container(value, schema)
    if kind == "map":
        out: dict[str, Any] = {}
        for key, child in value.items():
            element: PathElement = ("f", key)
            child_path = (*path, element)
            if child_path in members:
                continue
            sub = tree.get(element)
            out[key] = (
                child
                if sub is None
                else _remove(child, sub, members, child_path, schema.child(key))
            )
        return out
    if kind == "list":
        kept: list[Any] = []
        for index, item in enumerate(value):
            element = item_element(item, schema, index)
            item_path = (*path, element)
            if item_path in members:
                continue
            sub = tree.get(element)
            kept.append(
                item if sub is None else _remove(item, sub, members, item_path, schema.item())
            )
        return kept
    return value
