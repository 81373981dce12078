"""How strategic merge patch merges and orders lists, as apimachinery's ``strategicpatch``:
element kinds, Go's de-duplication, merge-key lookups, the partition into items the patch
names and server-only ones, and the ``$setElementOrder`` rules (patch order first, server-only
items kept next to their old neighbours, the order list validated as upstream)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numaplane.apiserver.patch_go import (
    DIRECTIVE,
    NO_LIST_OF_LISTS,
    StrategicPatchError,
    go_kind,
    go_value,
    no_merge_key,
    patch_internal,
    patch_unprocessable,
)


def element_kind(*lists: list[Any]) -> str:
    found = ""
    for items in lists:
        for v in items:
            kind = go_kind(v)
            if not found:
                if kind == "slice":
                    raise patch_unprocessable(NO_LIST_OF_LISTS)
                found = kind
            elif kind != found:
                shown = " ".join(go_value(x) for x in lists)
                raise patch_internal(f"list element types are not identical: [{shown}]")
    if not found:
        raise patch_internal("no elements in any of the given slices")
    return found


def same_value(a: Any, b: Any) -> bool:
    # Go's interface equality of two decoded JSON scalars.
    return bool(a == b) and go_kind(a) == go_kind(b)


def go_dedupe(values: list[Any]) -> list[Any]:
    # deduplicateScalars, in place as upstream's: a duplicate is overwritten by the last item.
    last = len(values) - 1
    i = 0
    while i < last:
        j = i + 1
        while j <= last:
            if same_value(values[i], values[j]):
                values[j] = values[last]
                last -= 1
                j -= 1
            j += 1
        i += 1
    return values[: last + 1]


def key_eq(item: Mapping[str, Any], key: str, other: Mapping[str, Any]) -> bool:
    return key in item and item[key] == other[key] and go_kind(item[key]) == go_kind(other[key])


def _index(values: list[Any], wanted: Any, key: str, kind: str) -> int:
    for i, v in enumerate(values):
        if kind == "map":
            both_maps = isinstance(v, dict) and isinstance(wanted, dict)
            if both_maps and key in wanted and key_eq(v, key, wanted):
                return i
        elif v == wanted and go_kind(v) == go_kind(wanted):
            return i
    return -1


def partition(
    merged: list[Any], patch: list[Any], key: str, kind: str
) -> tuple[list[Any], list[Any]]:
    in_patch: list[Any] = []
    server_only: list[Any] = []
    for item in merged:
        if kind == "map" and not (isinstance(item, dict) and key in item):
            raise no_merge_key(item if isinstance(item, dict) else {}, key)
        (in_patch if _index(patch, item, key, kind) >= 0 else server_only).append(item)
    return in_patch, server_only


def normalize_order(
    patch_items: list[Any],
    server_only: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    key: str,
    kind: str,
) -> list[Any]:
    patch_items = _sort_by(patch_items, patch_order, key, kind)
    server_only = _sort_by(server_only, server_order, key, kind)
    return _merge_sorted(server_only, patch_items, server_order, key, kind)


def _sort_by(items: list[Any], order: list[Any], key: str, kind: str) -> list[Any]:
    to_delete: list[Any] = []
    if kind == "map":
        for item in [*items, *order]:
            if not isinstance(item, dict) or key not in item:
                raise no_merge_key(item if isinstance(item, dict) else {}, key)
        to_delete = [i for i in items if i.get(DIRECTIVE) == "delete"]
        items = [i for i in items if i.get(DIRECTIVE) != "delete"]
    # Items all found in `order` (always true here), sorted stably by their place there.
    positions = [_index(order, item, key, kind) for item in items]
    ranked = sorted(range(len(items)), key=lambda i: (positions[i] < 0, positions[i]))
    return [items[i] for i in ranked] + to_delete


def _merge_sorted(
    left: list[Any], right: list[Any], server_order: list[Any], key: str, kind: str
) -> list[Any]:
    # Server-only items (left) slot in before the first patch item (right) that followed them
    # in the live list; each list keeps its own order.
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            li = _index(server_order, left[i], key, kind)
            ri = _index(server_order, right[j], key, kind)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out


def _go_type(value: object) -> str:
    # reflect.TypeOf of a decoded JSON value, as mergepatch.ErrBadArgType prints it.
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "map[string]interface {}"
    return "[]interface {}"


def expected_list(value: object) -> StrategicPatchError:
    return patch_internal(f"expected a []interface {{}}, but received a {_go_type(value)}")


def validate_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    # Every item of the patch list (deletions aside) appears in $setElementOrder, in its order.
    if not order or not patch_list:
        return
    items = patch_list
    if merge_key:
        items = [
            i for i in patch_list if not (isinstance(i, dict) and i.get(DIRECTIVE) == "delete")
        ]
    pi = oi = 0
    while pi < len(items) and oi < len(order):
        item = items[pi]
        if isinstance(item, dict) and DIRECTIVE in item:
            pi += 1
            continue
        if merge_key:
            for side in (item, order[oi]):
                if not isinstance(side, dict):
                    raise patch_internal(
                        f"expected a map[string]interface {{}}, but received a {_go_type(side)}"
                    )
                if merge_key not in side:
                    raise no_merge_key(side, merge_key)
            equal = item[merge_key] == order[oi][merge_key]
        else:
            equal = item == order[oi]
        if equal:
            pi += 1
        oi += 1
    if pi < len(items) and oi >= len(order):
        raise patch_internal(
            f"The order in patch list:\n{go_value(patch_list)}\n doesn't match "
            f"$setElementOrder list:\n{go_value(order)}\n"
        )
