"""Strategic merge patch, as apimachinery's ``util/strategicpatch`` applies one on the server
(``StrategicMergeMapPatch`` with parallel lists merged and unmatched nulls ignored).

Lists merge by the field's ``patchStrategy``/``patchMergeKey`` (:mod:`.patchmeta`), maps merge
key by key, ``null`` deletes; the directives ``$patch: replace|delete|merge``, ``$retainKeys``,
``$setElementOrder/<list>`` and ``$deleteFromPrimitiveList/<list>`` act as upstream's do, and the
order of a merged list follows upstream's rules (patch order first, server-only items kept next
to their old neighbours). Errors are :class:`StrategicPatchError` carrying the HTTP answer
kube-apiserver's patch handler gives for each (400, 422, or a 500 with the bare message).
(Over 400 lines: one algorithm, upstream's merge plus its list-ordering rules, kept whole.)
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any, Final

from numaplane.apiserver.errors import StatusError
from numaplane.apiserver.patchmeta import UNKNOWN, Schema, builtin_schema
from numaplane.errors import NumaplaneError
from numaplane.node.gojson import GoJSONError, parse_go_json

DIRECTIVE: Final = "$patch"
RETAIN_KEYS: Final = "$retainKeys"
DELETE_FROM_PRIMITIVE_LIST: Final = "$deleteFromPrimitiveList/"
SET_ELEMENT_ORDER: Final = "$setElementOrder/"
SET_ELEMENT_ORDER_PREFIX: Final = "$setElementOrder"
DELETE_FROM_PRIMITIVE_LIST_PREFIX: Final = "$deleteFromPrimitiveList"

# mergepatch's sentinel errors, by the answer interpretStrategicMergePatchError gives them.
BAD_RETAIN_KEYS: Final = "invalid patch format of retainKeys"
BAD_SET_ELEMENT_ORDER: Final = "invalid patch format of setElementOrder list"
BAD_PRIMITIVE_LIST: Final = "invalid patch format of primitive list"
NO_LIST_OF_LISTS: Final = "lists of lists are not supported"


class StrategicPatchError(StatusError):
    """A strategic merge patch that cannot apply, with kube-apiserver's status for it."""


def _bad_request(message: str) -> StrategicPatchError:
    return StrategicPatchError(400, "BadRequest", message)


def _unprocessable(message: str) -> StrategicPatchError:
    # errors.NewGenericServerResponse(422, ...): a fixed message, the reason in a cause.
    return StrategicPatchError(
        422,
        "Invalid",
        "the server rejected our request due to an error in our request",
        {"causes": [{"reason": "UnexpectedServerResponse", "message": message}]},
    )


def _internal(message: str) -> StrategicPatchError:
    # A plain Go error reaching the handler: 500 with no reason and the error's own text.
    return StrategicPatchError(500, "", message)


def go_value(value: object) -> str:
    """``value`` as Go's ``%v`` prints a decoded JSON value (``map[a:1 b:[x y]]``)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        inner = " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value))
        return f"map[{inner}]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return str(value)


def _no_merge_key(item: Mapping[str, Any], key: str) -> StrategicPatchError:
    return _internal(f"map: {go_value(dict(item))} does not contain declared merge key: {key}")


def _bad_patch_type(directive: object, where: Mapping[str, Any]) -> StrategicPatchError:
    return _internal(f"unknown patch type: {go_value(directive)} in map: {go_value(dict(where))}")


class JSONBodyError(NumaplaneError):
    """A body that is not JSON; ``str()`` is Go's ``encoding/json`` syntax error."""


def _reject_constant(name: str) -> Any:
    # Go's JSON has no NaN or Infinity.
    raise ValueError(name)


def loads_go(body: bytes | str) -> Any:
    """``body`` decoded as JSON, or :class:`JSONBodyError` worded as Go's decoder
    (``invalid character 'x' looking for beginning of value``)."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except ValueError:
        try:
            parse_go_json(text)
        except GoJSONError as err:
            raise JSONBodyError(str(err)) from None
        raise JSONBodyError("invalid character 'N' looking for beginning of value") from None


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
            raise _bad_request(str(err)) from None
    if patch is None:
        patch = {}  # Go decodes `null` into a map as no change
    if not isinstance(patch, Mapping):
        raise _bad_request(
            f"json: cannot unmarshal {_json_type(patch)} into Go value of type "
            "map[string]interface {}"
        )
    if schema is None:
        schema = builtin_schema(*kind_key) if kind_key is not None else UNKNOWN
    merged = _merge_map(copy.deepcopy(dict(obj)), copy.deepcopy(dict(patch)), schema)
    return merged


def _json_type(value: object) -> str:
    # How Go's decoder names a JSON value it cannot put in a Go type.
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "string"


def _kind(value: object) -> str:
    # reflect.Type as the merge compares it: JSON numbers are one Go type (float64).
    if isinstance(value, dict):
        return "map"
    if isinstance(value, list):
        return "slice"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "nil"


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
        raise _internal(f"unexpected patch strategy: [{' '.join(schema.strategies())}]")
    return strategies[0] if strategies else ""


def _merge_map(original: dict[str, Any], patch: dict[str, Any], schema: Schema) -> dict[str, Any]:
    if DIRECTIVE in patch:
        directive = patch[DIRECTIVE]
        if directive == "replace":
            del patch[DIRECTIVE]
            return patch
        if directive == "delete":
            return {}
        raise _bad_patch_type(directive, patch)
    _apply_retain_keys(original, patch)
    _merge_ordered_lists(original, patch, schema)
    for key in list(patch):
        patch_value = patch[key]
        is_delete_list = key.startswith(DELETE_FROM_PRIMITIVE_LIST_PREFIX)
        if is_delete_list:
            prefix, slash, key = key.partition("/")
            if not slash or prefix != DELETE_FROM_PRIMITIVE_LIST_PREFIX:
                raise _bad_request(BAD_PRIMITIVE_LIST)
        if patch_value is None:
            original.pop(key, None)
            continue
        if key not in original or _kind(original[key]) != _kind(patch_value):
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
        raise _bad_request(BAD_RETAIN_KEYS)
    keep = {json.dumps(v, sort_keys=True) for v in retained}
    for key, value in patch.items():
        if value is None or key.startswith((DELETE_FROM_PRIMITIVE_LIST, SET_ELEMENT_ORDER)):
            continue
        if json.dumps(key) not in keep:
            raise _bad_request(BAD_RETAIN_KEYS)
    for key in [k for k in original if json.dumps(k) not in keep]:
        del original[key]


def _merge_list_field(
    original: list[Any], patch: list[Any], schema: Schema, is_delete_list: bool
) -> tuple[list[Any], list[Any]]:
    # (the field's new list, what upstream's caller then sees in its view of `original`).
    if _strategy(schema) == "merge" or is_delete_list:
        return _merge_list(original, patch, schema, is_delete_list)
    return patch, original


def _element_kind(*lists: list[Any]) -> str:
    found = ""
    for items in lists:
        for v in items:
            kind = _kind(v)
            if not found:
                if kind == "slice":
                    raise _unprocessable(NO_LIST_OF_LISTS)
                found = kind
            elif kind != found:
                shown = " ".join(go_value(x) for x in lists)
                raise _internal(f"list element types are not identical: [{shown}]")
    if not found:
        raise _internal("no elements in any of the given slices")
    return found


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
    kind = _element_kind(original, patch)
    key = schema.patch_merge_key
    if kind != "map":
        if is_delete_list:
            return [v for v in original if not any(_same(v, d) for d in patch)], original
        if patch:
            merged = _go_dedupe([*original, *patch])
            window = original
        else:
            window = list(original)
            merged = _go_dedupe(window)
        patch_items, server_only = _partition(merged, patch, key, kind)
        return _normalize_order(patch_items, server_only, patch, window, key, kind), window
    if not key:
        raise _internal("cannot merge lists without merge key for ")
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
                raise _no_merge_key(item, key)
            # One directive deletes one matching item (duplicates go one at a time), shifting
            # the rest left in place as Go's append(s[:k], s[k+1:]...) does.
            for i in range(length):
                if isinstance(backing[i], dict) and _key_eq(backing[i], key, item):
                    backing[i : length - 1] = backing[i + 1 : length]
                    length -= 1
                    break
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise _internal("merging lists cannot yet be specified in the patch")
        else:
            raise _bad_patch_type(directive, item)
    if replace:
        merged = [_remove_directives(item)[0] for item in plain]
        return _normalize_order([], merged, [], merged, key, kind), backing
    server_order = backing[:length]
    array, size = backing, length
    item_schema = schema.item()
    for item in plain:
        if key not in item:
            raise _no_merge_key(item, key)
        for i in range(size):
            if isinstance(array[i], dict) and _key_eq(array[i], key, item):
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
    patch_items, server_only = _partition(merged, plain, key, kind)
    return _normalize_order(patch_items, server_only, plain, server_order, key, kind), backing


def _same(a: Any, b: Any) -> bool:
    # Go's interface equality of two decoded JSON scalars.
    return bool(a == b) and _kind(a) == _kind(b)


def _go_dedupe(values: list[Any]) -> list[Any]:
    # deduplicateScalars, in place as upstream's: a duplicate is overwritten by the last item.
    last = len(values) - 1
    i = 0
    while i < last:
        j = i + 1
        while j <= last:
            if _same(values[i], values[j]):
                values[j] = values[last]
                last -= 1
                j -= 1
            j += 1
        i += 1
    return values[: last + 1]


def _key_eq(item: Mapping[str, Any], key: str, other: Mapping[str, Any]) -> bool:
    return key in item and item[key] == other[key] and _kind(item[key]) == _kind(other[key])


def _index(values: list[Any], wanted: Any, key: str, kind: str) -> int:
    for i, v in enumerate(values):
        if kind == "map":
            both_maps = isinstance(v, dict) and isinstance(wanted, dict)
            if both_maps and key in wanted and _key_eq(v, key, wanted):
                return i
        elif v == wanted and _kind(v) == _kind(wanted):
            return i
    return -1


def _partition(
    merged: list[Any], patch: list[Any], key: str, kind: str
) -> tuple[list[Any], list[Any]]:
    in_patch: list[Any] = []
    server_only: list[Any] = []
    for item in merged:
        if kind == "map" and not (isinstance(item, dict) and key in item):
            raise _no_merge_key(item if isinstance(item, dict) else {}, key)
        (in_patch if _index(patch, item, key, kind) >= 0 else server_only).append(item)
    return in_patch, server_only


def _normalize_order(
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
                raise _no_merge_key(item if isinstance(item, dict) else {}, key)
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


def _expected_list(value: object) -> StrategicPatchError:
    return _internal(f"expected a []interface {{}}, but received a {_go_type(value)}")


def _validate_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
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
                    raise _internal(
                        f"expected a map[string]interface {{}}, but received a {_go_type(side)}"
                    )
                if merge_key not in side:
                    raise _no_merge_key(side, merge_key)
            equal = item[merge_key] == order[oi][merge_key]
        else:
            equal = item == order[oi]
        if equal:
            pi += 1
        oi += 1
    if pi < len(items) and oi >= len(order):
        raise _internal(
            f"The order in patch list:\n{go_value(patch_list)}\n doesn't match "
            f"$setElementOrder list:\n{go_value(order)}\n"
        )


def _merge_ordered_lists(original: dict[str, Any], patch: dict[str, Any], schema: Schema) -> None:
    # `$setElementOrder/<list>`: merge that list here and order it as the directive says
    # (precedence: the directive's order, then the patch's, then the live list's).
    for directive_key in [k for k in patch if k.startswith(SET_ELEMENT_ORDER_PREFIX)]:
        order = patch.pop(directive_key)
        if not isinstance(order, list):
            raise _expected_list(order)
        prefix, slash, key_name = directive_key.partition("/")
        if not slash or prefix != SET_ELEMENT_ORDER_PREFIX:
            raise _bad_request(BAD_SET_ELEMENT_ORDER)
        found_original = key_name in original
        found_patch = key_name in patch
        original_list = original.get(key_name) if found_original else []
        patch_list = patch.get(key_name) if found_patch else []
        if not isinstance(original_list, list):
            raise _expected_list(original_list)
        if not isinstance(patch_list, list):
            raise _expected_list(patch_list)
        sub = schema.child(key_name)
        merge_key = sub.patch_merge_key
        _validate_order(patch_list, order, merge_key)
        window = original_list
        if found_original and not found_patch:
            merged = original_list
        elif found_patch and not found_original:
            merged = _remove_directives(patch_list)[0]
        elif found_original and found_patch:
            merged, window = _merge_list_field(original_list, patch_list, sub, False)
        else:
            continue
        kind = _element_kind(original_list, patch_list)
        patch_items, server_only = _partition(merged, order, merge_key, kind)
        original[key_name] = _normalize_order(
            patch_items, server_only, order, window, merge_key, kind
        )
        patch.pop(key_name, None)
