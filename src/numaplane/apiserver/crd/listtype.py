"""``x-kubernetes-list-type`` invariants: no duplicate in a ``set``, no duplicate key (and no
missing key) in a ``map`` list, as upstream's ``listtype.ValidateListSetsAndMaps``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from numaplane.apiserver.crd.correlation import canonical
from numaplane.apiserver.crd.paths import child_path, field_path, index_path
from numaplane.apiserver.crd.schema import Node
from numaplane.apiserver.errors import FieldError, duplicate, required


def list_errors(node: Node, value: Any, path: str = "") -> list[FieldError]:
    """Duplicates in ``x-kubernetes-list-type: set`` and ``map`` lists, and map items missing a
    key (upstream's ``listtype.ValidateListSetsAndMaps``)."""
    errs: list[FieldError] = []
    _lists(node, value, path, errs)
    return errs


#: Whether a schema node has a ``set`` or ``map`` list at or below it, by node (kept alive so
#: that its id is not reused); nodes are compiled once per CRD version.
_HAS_LISTS: dict[int, tuple[Node, bool]] = {}
_HAS_LISTS_LIMIT: Final = 20000


def _has_lists(node: Node) -> bool:
    found = _HAS_LISTS.get(id(node))
    if found is None:
        if len(_HAS_LISTS) > _HAS_LISTS_LIMIT:
            _HAS_LISTS.clear()
        found = (node, any(n.list_type in ("set", "map") for n in node.walk()))
        _HAS_LISTS[id(node)] = found
    return found[1]


def _lists(node: Node, value: Any, path: str, errs: list[FieldError]) -> None:
    if not _has_lists(node):
        # Nothing below can break a list invariant: the walk would find nothing.
        return
    if isinstance(value, dict):
        for key in sorted(value):
            sub = node.child(key)
            if sub is not None:
                _lists(sub, value[key], field_path(path, key, key in node.properties), errs)
        return
    if not isinstance(value, list):
        return
    if node.list_type == "set":
        seen: set[str] = set()
        for i, item in enumerate(value):
            key = canonical(item)
            if key in seen:
                errs.append(duplicate(index_path(path, i), item))
            seen.add(key)
    elif node.list_type == "map":
        seen_keys: set[str] = set()
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                continue
            keys = {k: _key_value(node, item, k) for k in node.map_keys}
            missing = [k for k, v in keys.items() if v is _MISSING]
            if missing:
                errs.extend(required(child_path(index_path(path, i), k)) for k in missing)
                continue
            key = canonical(keys)
            if key in seen_keys:
                errs.append(duplicate(index_path(path, i), keys))
            seen_keys.add(key)
    if node.items is not None:
        for i, item in enumerate(value):
            _lists(node.items, item, index_path(path, i), errs)


_MISSING: Final = object()


def _key_value(node: Node, item: Mapping[str, Any], key: str) -> Any:
    if key in item:
        return item[key]
    # A map key with a default counts as set (the default is applied before validation).
    prop = node.items.properties.get(key) if node.items is not None else None
    if prop is not None and prop.has_default:
        return prop.default
    return _MISSING
