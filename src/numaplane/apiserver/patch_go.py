"""What strategic merge patch shares with Go's side of kube-apiserver: JSON decoded and its
syntax errors worded as ``encoding/json``'s, values printed as Go's ``%v``, the reflect kinds the
merge compares, the directive names, and the status each failure gets from the patch handler
(400, 422, or a 500 with the bare message)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from numaplane.apiserver.errors import StatusError
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


def patch_bad_request(message: str) -> StrategicPatchError:
    return StrategicPatchError(400, "BadRequest", message)


def patch_unprocessable(message: str) -> StrategicPatchError:
    # errors.NewGenericServerResponse(422, ...): a fixed message, the reason in a cause.
    return StrategicPatchError(
        422,
        "Invalid",
        "the server rejected our request due to an error in our request",
        {"causes": [{"reason": "UnexpectedServerResponse", "message": message}]},
    )


def patch_internal(message: str) -> StrategicPatchError:
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


def no_merge_key(item: Mapping[str, Any], key: str) -> StrategicPatchError:
    return patch_internal(f"map: {go_value(dict(item))} does not contain declared merge key: {key}")


def bad_patch_type(directive: object, where: Mapping[str, Any]) -> StrategicPatchError:
    return patch_internal(
        f"unknown patch type: {go_value(directive)} in map: {go_value(dict(where))}"
    )


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


def json_type(value: object) -> str:
    # How Go's decoder names a JSON value it cannot put in a Go type.
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "string"


def go_kind(value: object) -> str:
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
