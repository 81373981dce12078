"""Pruning of unknown fields, as upstream's ``structuralpruning.PruneWithOptions``.

Every object field the schema does not name (no property, no additionalProperties) is removed,
except under ``x-kubernetes-preserve-unknown-fields`` (where known properties are still pruned
inside). At the resource root and at every ``x-kubernetes-embedded-resource``, ``apiVersion``,
``kind`` and ``metadata`` stay, and ``metadata`` keeps only ObjectMeta's fields (upstream's
objectmeta coercion drops the rest). The removed paths come back (``spec.foo``,
``spec.items[0].bar``) so strict field validation can answer ``unknown field "spec.foo"``.
"""

from __future__ import annotations

from typing import Any

from numaplane.apiserver.crd.paths import child_path, index_path
from numaplane.apiserver.crd.schema import OBJECT_META_FIELDS, Node


def prune(node: Node, obj: dict[str, Any]) -> list[str]:
    """Remove from the resource ``obj`` (in place) what ``node`` does not know; the removed
    paths, sorted (as upstream sorts them for ``unknown field`` errors)."""
    pruned: list[str] = []
    _prune_object(node, obj, "", pruned, resource=True)
    return sorted(pruned)


def _prune_meta(meta: Any, path: str, pruned: list[str]) -> None:
    if not isinstance(meta, dict):
        return
    for key in [k for k in meta if k not in OBJECT_META_FIELDS]:
        del meta[key]
        pruned.append(child_path(path, key))


def _prune_object(
    node: Node | None, obj: dict[str, Any], path: str, pruned: list[str], *, resource: bool
) -> None:
    preserve = node is not None and (node.preserve_unknown or node.additional_allowed)
    for key in list(obj):
        here = child_path(path, key)
        if resource and key in ("apiVersion", "kind"):
            continue
        if resource and key == "metadata":
            _prune_meta(obj[key], here, pruned)
            continue
        sub = node.child(key) if node is not None else None
        if sub is None and not preserve:
            del obj[key]
            pruned.append(here)
            continue
        _prune_value(sub, obj[key], here, pruned)


def _prune_value(node: Node | None, value: Any, path: str, pruned: list[str]) -> None:
    if isinstance(value, dict):
        if node is None:
            # Under preserve-unknown-fields with no schema for this field: kept whole.
            return
        _prune_object(node, value, path, pruned, resource=node.embedded)
    elif isinstance(value, list) and node is not None:
        for i, item in enumerate(value):
            _prune_value(node.items, item, index_path(path, i), pruned)


def prune_nulls(node: Node, obj: Any) -> None:
    """Drop ``null`` fields whose schema is neither nullable nor defaulted (upstream's
    ``PruneNonNullableNullsWithoutDefaults``), after defaulting."""
    if isinstance(obj, dict):
        for key in list(obj):
            sub = node.child(key)
            if sub is None:
                continue
            if obj[key] is None and not sub.nullable and not sub.has_default:
                del obj[key]
                continue
            prune_nulls(sub, obj[key])
    elif isinstance(obj, list) and node.items is not None:
        for item in obj:
            prune_nulls(node.items, item)
