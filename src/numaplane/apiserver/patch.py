"""The patch types of ``PATCH`` requests, applied to an object (a JSON dict) with kube-apiserver's
answers for a patch that cannot apply.

- JSON patch (RFC 6902, ``application/json-patch+json``) through the ``jsonpatch`` library, its
  failures worded as evanphx/json-patch's and answered as the patch handler does: an undecodable
  patch 400, more than 10,000 operations 413, an operation that does not apply 422.
- JSON merge patch (RFC 7386, ``application/merge-patch+json``), and :func:`create_merge_patch`
  (the patch that turns one document into another, as ``jsonpatch.CreateMergePatch``).
- Strategic merge patch lives in :mod:`.patch_strategic` and is re-exported here.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

import jsonpatch  # type: ignore[import-untyped]
import jsonpointer  # type: ignore[import-untyped]

from numaplane.apiserver.errors import StatusError, bad_request
from numaplane.apiserver.jsoncopy import json_copy
from numaplane.apiserver.patch_go import JSONBodyError, StrategicPatchError, loads_go
from numaplane.apiserver.patch_strategic import strategic_merge_patch

__all__ = [
    "MAX_JSON_PATCH_OPERATIONS",
    "JSONBodyError",
    "StrategicPatchError",
    "create_merge_patch",
    "json_patch",
    "loads_go",
    "merge_patch",
    "strategic_merge_patch",
]

MAX_JSON_PATCH_OPERATIONS: Final = 10000
_OPS: Final = ("add", "remove", "replace", "move", "copy", "test")


def _invalid(cause: str) -> StatusError:
    # errors.NewGenericServerResponse(422, ...): a fixed message; the reason goes in a cause.
    return StatusError(
        422,
        "Invalid",
        "the server rejected our request due to an error in our request",
        {"causes": [{"reason": "UnexpectedServerResponse", "message": cause}]},
    )


def _strict(field_validation: str) -> bool:
    return field_validation in ("Strict", "Warn")


def _decode(doc: bytes | str | Sequence[Any] | Mapping[str, Any], strict: bool) -> Any:
    # With strict or warning field validation the handler decodes the patch first and words
    # a failure "error decoding patch: ..."; otherwise the patch library's error goes out bare.
    if isinstance(doc, bytes | str):
        try:
            return loads_go(doc)
        except JSONBodyError as err:
            raise bad_request(f"error decoding patch: {err}" if strict else str(err)) from None
    return doc


def json_patch(
    obj: Mapping[str, Any],
    patch_doc: bytes | str | Sequence[Mapping[str, Any]],
    *,
    field_validation: str = "Strict",
) -> dict[str, Any]:
    """``obj`` with the RFC 6902 ``patch_doc`` applied (``obj`` is not modified); raises
    :class:`StatusError` as kube-apiserver answers a patch that does not decode or apply
    (``field_validation`` is the request's: ``Strict`` and ``Warn`` word decoding errors
    ``error decoding patch: ...``)."""
    ops = _decode(patch_doc, _strict(field_validation))
    if not isinstance(ops, list):
        kind = "object" if isinstance(ops, dict) else type(ops).__name__
        raise bad_request(f"json: cannot unmarshal {kind} into Go value of type jsonpatch.Patch")
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise StatusError(
            413,
            "RequestEntityTooLarge",
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, "
            f"got {len(ops)}",
        )
    doc: Any = copy.deepcopy(dict(obj))
    for op in ops:
        if not isinstance(op, dict):
            raise bad_request(
                "json: cannot unmarshal "
                f"{'array' if isinstance(op, list) else 'string'} into Go value of type "
                "jsonpatch.Operation"
            )
        op_kind = op.get("op")
        if not isinstance(op_kind, str) or op_kind not in _OPS:
            shown = op_kind if isinstance(op_kind, str) else "unknown"
            raise _invalid(f"Unexpected kind: {shown}")
        doc = _apply_one(doc, op, op_kind)
    if not isinstance(doc, dict):
        raise bad_request("json: cannot unmarshal into Go value of type map[string]interface {}")
    return doc


def _apply_one(doc: Any, op: dict[str, Any], kind: str) -> Any:
    path = op.get("path")
    if not isinstance(path, str):
        raise _invalid(f'{kind} operation does not apply: doc is missing path: "": missing value')
    if kind in ("move", "copy") and not isinstance(op.get("from"), str):
        raise _invalid(
            f"{kind} operation does not apply: doc is missing from path: : missing value"
        )
    if kind in ("add", "replace", "test") and "value" not in op:
        # evanphx/json-patch reads a missing value as null.
        op = {**op, "value": None}
    try:
        return jsonpatch.JsonPatch([op]).apply(doc, in_place=True)
    except jsonpatch.JsonPatchTestFailed:
        raise _invalid(f"testing value {path} failed: test failed") from None
    except jsonpatch.InvalidJsonPatch as err:
        raise _invalid(str(err)) from None
    except (
        jsonpatch.JsonPatchConflict,
        jsonpointer.JsonPointerException,
        KeyError,
        IndexError,
        # The library walks into a null or a scalar with a TypeError where evanphx/json-patch
        # finds no container there: the path is missing.
        TypeError,
    ):
        if kind in ("move", "copy"):
            raise _invalid(
                f"{kind} operation does not apply: doc is missing from path: "
                f"{op.get('from', '')}: missing value"
            ) from None
        if kind == "replace":
            raise _invalid(
                f"replace operation does not apply: doc is missing key: {path}: missing value"
            ) from None
        if kind == "remove":
            raise _invalid(
                f'remove operation does not apply: doc is missing path: "{path}": missing value'
            ) from None
        raise _invalid(
            f'add operation does not apply: doc is missing path: "{path}": missing value'
        ) from None


def merge_patch(
    obj: Mapping[str, Any],
    patch: bytes | str | Mapping[str, Any] | Any,
    *,
    field_validation: str = "Strict",
    consume: bool = False,
) -> dict[str, Any]:
    """``obj`` with the RFC 7386 merge ``patch`` applied (``obj`` is not modified, unless
    ``consume`` says the caller has no further use for it: it is then patched in place,
    sparing a copy). A patch that
    is not JSON is a 400: ``error decoding patch: ...`` under ``Strict``/``Warn`` field
    validation, else evanphx's ``Invalid JSON Patch``; a patch that is not an object replaces
    the whole document, which then fails to decode as an object."""
    # A patch decoded here is this call's own: its values go into the result uncopied.
    private = False
    if isinstance(patch, bytes | str):
        private = True
        try:
            patch = loads_go(patch)
        except JSONBodyError as err:
            if _strict(field_validation):
                raise bad_request(f"error decoding patch: {err}") from None
            raise bad_request("Invalid JSON Patch") from None
    result = _merge(dict(obj) if consume else json_copy(dict(obj)), patch, private)
    if not isinstance(result, dict):
        kind = "array" if isinstance(result, list) else "string"
        raise bad_request(
            f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
        )
    return result


_ATOMS: Final = (str, int, float)


def _merge(target: Any, patch: Any, private: bool = False) -> Any:
    if not isinstance(patch, Mapping):
        # An atom is its own copy (as deepcopy has it).
        return patch if private or isinstance(patch, _ATOMS) else copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = _merge(target.get(key), value, private)
    return target


def create_merge_patch(original: Any, modified: Any) -> Any:
    """The merge patch that turns ``original`` into ``modified``: removed keys as ``null``,
    changed objects as their own patch, anything else whole. ``merge_patch`` of it gives back
    ``modified`` whenever ``modified`` holds no ``null`` inside an object."""
    if not isinstance(original, Mapping) or not isinstance(modified, Mapping):
        return copy.deepcopy(modified)
    patch: dict[str, Any] = {}
    for key in original:
        if key not in modified:
            patch[key] = None
    for key, value in modified.items():
        if key not in original:
            patch[key] = copy.deepcopy(value)
        elif isinstance(value, Mapping) and isinstance(original[key], Mapping):
            sub = create_merge_patch(original[key], value)
            if sub:
                patch[key] = sub
        elif not _same(original[key], value):
            patch[key] = copy.deepcopy(value)
    return patch


def _same(a: Any, b: Any) -> bool:
    # JSON equality: a boolean is never the number 1 (Python's == says it is).
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
