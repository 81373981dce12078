"""Strategic merge patch, as apimachinery's ``util/strategicpatch`` applies one on the server
(``StrategicMergeMapPatch`` with parallel lists merged and unmatched nulls ignored).

Lists merge by the field's ``patchStrategy``/``patchMergeKey`` (:mod:`.patchmeta`), maps merge
key by key, ``null`` deletes; the directives ``$patch: replace|delete|merge``, ``$retainKeys``,
``$setElementOrder/<list>`` and ``$deleteFromPrimitiveList/<list>`` act as upstream's do, and the
order of a merged list follows upstream's rules (patch order first, server-only items kept next
to their old neighbours). Errors are :class:`StrategicPatchError` carrying the HTTP answer
kube-apiserver's patch handler gives for each (400, 422, or a 500 with the bare message).
The list ordering rules are :mod:`.patch_lists`; Go's decoding, printing and error answers
:mod:`.patch_go`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from numaplane.apiserver.patch_go import (
    BAD_PRIMITIVE_LIST,
    BAD_RETAIN_KEYS,
    BAD_SET_ELEMENT_ORDER,
    DELETE_FROM_PRIMITIVE_LIST,
    DELETE_FROM_PRIMITIVE_LIST_PREFIX,
    DIRECTIVE,
    RETAIN_KEYS,
    SET_ELEMENT_ORDER,
    SET_ELEMENT_ORDER_PREFIX,
    JSONBodyError,
    bad_patch_type,
    go_kind,
    json_type,
    loads_go,
    no_merge_key,
    patch_bad_request,
    patch_internal,
)
from numaplane.apiserver.patch_lists import (
    element_kind,
    expected_list,
    go_dedupe,
    key_eq,
    normalize_order,
    partition,
    same_value,
    validate_order,
)
from numaplane.apiserver.patchmeta import UNKNOWN, Schema, builtin_schema


def strategic_merge_patch(
    obj: Mapping[str, Any],
    patch: Mapping[str, Any] | bytes | str,
    kind_key: tuple[str, str] | None = None,
    *,
    schema: Schema | None = None,
) -> dict[str, Any]:
    """``obj`` with the strategic merge ``patch`` applied (neither argument is modified).

    ``kind_key`` is ``(group, kind)`` of a built-in kind whose patch metadata applies
    (:func:`~numaplane.apiserver.patchmeta.builtin_schema`); ``schema`` overrides it. Raises
    :class:`StrategicPatchError` with kube-apiserver's status for a patch that cannot apply.
    """
    if isinstance(patch, bytes | str):
        try:
            patch = loads_go(patch)
        except JSONBodyError as err:
            raise patch_bad_request(str(err)) from None
    if patch is None:
        patch = {}  # Go decodes `null` into a map as no change
    if not isinstance(patch, Mapping):
        raise patch_bad_request(
            f"json: cannot unmarshal {json_type(patch)} into Go value of type "
            "map[string]interface {}"
        )
    if schema is None:
        schema = builtin_schema(*kind_key) if kind_key is not None else UNKNOWN
    merged = _merge_map(copy.deepcopy(dict(obj)), copy.deepcopy(dict(patch)), schema)
    return merged


def _discard_nulls(value: Any) -> None:
    if isinstance(value, dict):
        for k in [k for k, v in value.items() if v is None]:
            del value[k]
        for v in value.values():
            _discard_nulls(v)
    elif isinstance(value, list):
        for v in value:
            _discard_nulls(v)


def _is_directive_key(key: str) -> bool:
    return key == RETAIN_KEYS or key.startswith((SET_ELEMENT_ORDER, DELETE_FROM_PRIMITIVE_LIST))


def _remove_directives(value: Any) -> tuple[Any, bool]:
    # A value taken whole from the patch keeps no map carrying "$patch" (upstream drops them),
    # nor the other directive keys (which upstream's typed decoding of the result drops).
    if isinstance(value, dict):
        if DIRECTIVE in value:
            return None, False
        for k in list(value):
            if _is_directive_key(k):
                del value[k]
                continue
            value[k], keep = _remove_directives(value[k])
            if not keep:
                del value[k]
        return value, True
    if isinstance(value, list):
        kept = []
        for v in value:
            new, keep = _remove_directives(v)
            if keep:
                kept.append(new)
        return kept, True
    return value, True


def _strategy(schema: Schema) -> str:
    # extractRetainKeysPatchStrategy: the strategy other than retainKeys.
    strategies = [s for s in schema.strategies() if s != "retainKeys"]
    if len(strategies) > 1 or len(schema.strategies()) > 2:
        raise patch_internal(f"unexpected patch strategy: [{' '.join(schema.strategies())}]")
    return strategies[0] if strategies else ""


def _merge_map(original: dict[str, Any], patch: dict[str, Any], schema: Schema) -> dict[str, Any]:
    if DIRECTIVE in patch:
        directive = patch[DIRECTIVE]
        if directive == "replace":
            del patch[DIRECTIVE]
            return patch
        if directive == "delete":
            return {}
        raise bad_patch_type(directive, patch)
    _apply_retain_keys(original, patch)
    _merge_ordered_lists(original, patch, schema)
    for key in list(patch):
        patch_value = patch[key]
        is_delete_list = key.startswith(DELETE_FROM_PRIMITIVE_LIST_PREFIX)
        if is_delete_list:
            prefix, slash, key = key.partition("/")
            if not slash or prefix != DELETE_FROM_PRIMITIVE_LIST_PREFIX:
                raise patch_bad_request(BAD_PRIMITIVE_LIST)
        if patch_value is None:
            original.pop(key, None)
            continue
        if key not in original or go_kind(original[key]) != go_kind(patch_value):
            if not is_delete_list:
                _discard_nulls(patch_value)
                taken, keep = _remove_directives(patch_value)
                if keep:
                    original[key] = taken
                else:
                    original.pop(key, None)
            continue
        sub = schema.child(key)
        current = original[key]
        if isinstance(current, dict):
            if _strategy(sub) == "replace":
                original[key] = patch_value
            else:
                original[key] = _merge_map(current, patch_value, sub)
        elif isinstance(current, list):
            original[key] = _merge_list_field(current, patch_value, sub, is_delete_list)[0]
        else:
            taken, keep = _remove_directives(patch_value)
            if keep:
                original[key] = taken
            else:
                original.pop(key, None)
    return original


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    if RETAIN_KEYS not in patch:
        return
    retained = patch.pop(RETAIN_KEYS)
    if not isinstance(retained, list):
        raise patch_bad_request(BAD_RETAIN_KEYS)
    keep = {json.dumps(v, sort_keys=True) for v in retained}
    for key, value in patch.items():
        if value is None or key.startswith((DELETE_FROM_PRIMITIVE_LIST, SET_ELEMENT_ORDER)):
            continue
        if json.dumps(key) not in keep:
            raise patch_bad_request(BAD_RETAIN_KEYS)
    for key in [k for k in original if json.dumps(k) not in keep]:
        del original[key]


def _merge_list_field(
    original: list[Any], patch: list[Any], schema: Schema, is_delete_list: bool
) -> tuple[list[Any], list[Any]]:
    # (the field's new list, what upstream's caller then sees in its view of `original`).
    if _strategy(schema) == "merge" or is_delete_list:
        return _merge_list(original, patch, schema, is_delete_list)
    return patch, original


def _merge_list(
    original: list[Any], patch: list[Any], schema: Schema, is_delete_list: bool
) -> tuple[list[Any], list[Any]]:
    """Merge a list whose strategy is ``merge``. Returns the merged list and the caller's view
    of ``original`` afterwards: upstream deletes and appends in place in the live list's backing
    array, and its ``$setElementOrder`` handling orders by that mutated view, so reproducing
    upstream's order means reproducing the aliasing (the server's lists have no spare
    capacity, being built by the unstructured converter)."""
    if not original and not patch:
        return original, original
    kind = element_kind(original, patch)
    key = schema.patch_merge_key
    if kind != "map":
        if is_delete_list:
            return [v for v in original if not any(same_value(v, d) for d in patch)], original
        if patch:
            merged = go_dedupe([*original, *patch])
            window = original
        else:
            window = list(original)
            merged = go_dedupe(window)
        patch_items, server_only = partition(merged, patch, key, kind)
        return normalize_order(patch_items, server_only, patch, window, key, kind), window
    if not key:
        raise patch_internal("cannot merge lists without merge key for ")
    backing = list(original)
    length = len(backing)
    plain: list[Any] = []
    replace = False
    for item in patch:
        if DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[DIRECTIVE]
        if directive == "delete":
            if key not in item:
                raise no_merge_key(item, key)
            # One directive deletes one matching item (duplicates go one at a time), shifting
            # the rest left in place as Go's append(s[:k], s[k+1:]...) does.
            for i in range(length):
                if isinstance(backing[i], dict) and key_eq(backing[i], key, item):
                    backing[i : length - 1] = backing[i + 1 : length]
                    length -= 1
                    break
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise patch_internal("merging lists cannot yet be specified in the patch")
        else:
            raise bad_patch_type(directive, item)
    if replace:
        merged = [_remove_directives(item)[0] for item in plain]
        return normalize_order([], merged, [], merged, key, kind), backing
    server_order = backing[:length]
    array, size = backing, length
    item_schema = schema.item()
    for item in plain:
        if key not in item:
            raise no_merge_key(item, key)
        for i in range(size):
            if isinstance(array[i], dict) and key_eq(array[i], key, item):
                array[i] = _merge_map(array[i], item, item_schema)
                break
        else:
            new = _remove_directives(item)[0]
            if array is backing and size < len(backing):
                backing[size] = new  # an append within capacity lands in the shared array
            else:
                array = [*array[:size], new]
            size += 1
    merged = array[:size]
    patch_items, server_only = partition(merged, plain, key, kind)
    return normalize_order(patch_items, server_only, plain, server_order, key, kind), backing


def _merge_ordered_lists(original: dict[str, Any], patch: dict[str, Any], schema: Schema) -> None:
    # `$setElementOrder/<list>`: merge that list here and order it as the directive says
    # (precedence: the directive's order, then the patch's, then the live list's).
    for directive_key in [k for k in patch if k.startswith(SET_ELEMENT_ORDER_PREFIX)]:
        order = patch.pop(directive_key)
        if not isinstance(order, list):
            raise expected_list(order)
        prefix, slash, key_name = directive_key.partition("/")
        if not slash or prefix != SET_ELEMENT_ORDER_PREFIX:
            raise patch_bad_request(BAD_SET_ELEMENT_ORDER)
        found_original = key_name in original
        found_patch = key_name in patch
        original_list = original.get(key_name) if found_original else []
        patch_list = patch.get(key_name) if found_patch else []
        if not isinstance(original_list, list):
            raise expected_list(original_list)
        if not isinstance(patch_list, list):
            raise expected_list(patch_list)
        sub = schema.child(key_name)
        merge_key = sub.patch_merge_key
        validate_order(patch_list, order, merge_key)
        window = original_list
        if found_original and not found_patch:
            merged = original_list
        elif found_patch and not found_original:
            merged = _remove_directives(patch_list)[0]
        elif found_original and found_patch:
            merged, window = _merge_list_field(original_list, patch_list, sub, False)
        else:
            continue
        kind = element_kind(original_list, patch_list)
        patch_items, server_only = partition(merged, order, merge_key, kind)
        original[key_name] = normalize_order(
            patch_items, server_only, order, window, merge_key, kind
        )
        patch.pop(key_name, None)
