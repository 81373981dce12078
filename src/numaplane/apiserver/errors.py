"""API errors as kube-apiserver returns them: a ``metav1.Status`` with upstream's code, reason and
message wording, so that kubectl and the official clients print what users already know.

Every error the server sends is a :class:`StatusError`; a handler raises one and the HTTP layer
renders :meth:`StatusError.status`. Field-level problems are :class:`FieldError` values, which an
``Invalid`` (422) error aggregates the way apimachinery's ``field.ErrorList`` does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from numaplane.errors import NumaplaneError

OBJECT_MODIFIED: Final = (
    "the object has been modified; please apply your changes to the latest version and try again"
)

#: The field-error types of apimachinery's ``field`` package: cause reason -> message prefix.
FIELD_ERROR_TYPES: Final[dict[str, str]] = {
    "FieldValueNotFound": "Not found",
    "FieldValueRequired": "Required value",
    "FieldValueDuplicate": "Duplicate value",
    "FieldValueInvalid": "Invalid value",
    "FieldValueNotSupported": "Unsupported value",
    "FieldValueForbidden": "Forbidden",
    "FieldValueTooLong": "Too long",
    "FieldValueTooMany": "Too many",
    "InternalError": "Internal error",
    "FieldValueTypeInvalid": "Invalid value",
}


class _Omit:
    """Marker for a field error that quotes no value (``Required value``, ``Forbidden``)."""

    def __repr__(self) -> str:
        return "OMIT"


OMIT: Final = _Omit()


def go_value(value: object) -> str:
    """``value`` printed as Go's ``%#v``-ish formatting in field errors: strings quoted, numbers
    and booleans bare, anything else as compact JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int | float):
        return repr(value)
    if value is None:
        return "null"
    return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)


@dataclass(frozen=True)
class FieldError:
    """One field-level problem, as apimachinery's ``field.Error``.

    ``type`` is the cause reason (``FieldValueRequired``, ``FieldValueInvalid``, ...), ``field``
    the path (``spec.containers[0].name``), ``value`` the offending value (:data:`OMIT` for none),
    ``detail`` the explanation.
    """

    type: str
    field: str
    value: object = OMIT
    detail: str = ""

    def message(self) -> str:
        """The error without its field path: ``Invalid value: "Foo": detail``."""
        text = FIELD_ERROR_TYPES.get(self.type, self.type)
        if self.value is not OMIT:
            text += f": {go_value(self.value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def __str__(self) -> str:
        return f"{self.field}: {self.message()}" if self.field else self.message()

    def cause(self) -> dict[str, str]:
        """The ``StatusCause`` kube-apiserver puts in ``details.causes``."""
        return {"reason": self.type, "message": self.message(), "field": self.field}


def required(path: str, detail: str = "") -> FieldError:
    """``path: Required value``."""
    return FieldError("FieldValueRequired", path, OMIT, detail)


def invalid_value(path: str, value: object, detail: str) -> FieldError:
    """``path: Invalid value: VALUE: detail``."""
    return FieldError("FieldValueInvalid", path, value, detail)


def not_supported(path: str, value: object, supported: list[str] | tuple[str, ...]) -> FieldError:
    """``path: Unsupported value: VALUE: supported values: "a", "b"``."""
    quoted = ", ".join(json.dumps(s) for s in supported)
    return FieldError("FieldValueNotSupported", path, value, f"supported values: {quoted}")


def forbidden_field(path: str, detail: str) -> FieldError:
    """``path: Forbidden: detail``."""
    return FieldError("FieldValueForbidden", path, OMIT, detail)


def duplicate(path: str, value: object) -> FieldError:
    """``path: Duplicate value: VALUE``."""
    return FieldError("FieldValueDuplicate", path, value)


def too_long(path: str, limit: int) -> FieldError:
    """``path: Too long: may not be more than N bytes`` (apimachinery's wording for strings)."""
    return FieldError("FieldValueTooLong", path, OMIT, f"may not be more than {limit} bytes")


@dataclass
class StatusError(NumaplaneError):
    """An API error: HTTP ``code``, machine ``reason`` (``NotFound``, ``Conflict``, ...), the
    ``message`` kubectl prints, and optional ``details`` (name, group, kind, causes)."""

    code: int
    reason: str
    message: str
    details: dict[str, Any] | None = field(default=None)

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message

    def status(self) -> dict[str, Any]:
        """The ``metav1.Status`` body of this error."""
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            body["details"] = self.details
        return body


def _details(group: str, kind: str, name: str) -> dict[str, Any]:
    return {"name": name, "group": group, "kind": kind}


def split_group_resource(group_resource: str) -> tuple[str, str]:
    """``"jobs.batch"`` -> ``("batch", "jobs")``; ``"pods"`` -> ``("", "pods")``."""
    resource, _, group = group_resource.partition(".")
    return group, resource


def not_found(group_resource: str, name: str) -> StatusError:
    """``jobs.batch "x" not found`` (404 NotFound); ``group_resource`` is ``pods`` for core."""
    group, resource = split_group_resource(group_resource)
    return StatusError(
        404, "NotFound", f'{group_resource} "{name}" not found', _details(group, resource, name)
    )


def already_exists(group_resource: str, name: str) -> StatusError:
    """``configmaps "x" already exists`` (409 AlreadyExists)."""
    group, resource = split_group_resource(group_resource)
    return StatusError(
        409,
        "AlreadyExists",
        f'{group_resource} "{name}" already exists',
        _details(group, resource, name),
    )


def conflict(group_resource: str, name: str, why: str = OBJECT_MODIFIED) -> StatusError:
    """``Operation cannot be fulfilled on jobs.batch "x": <why>`` (409 Conflict)."""
    group, resource = split_group_resource(group_resource)
    return StatusError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {group_resource} "{name}": {why}',
        _details(group, resource, name),
    )


def invalid(group: str, kind: str, name: str, errors: list[FieldError]) -> StatusError:
    """``Job.batch "x" is invalid: <errors>`` (422 Invalid), one error bare, several in ``[..]``."""
    qualified = f"{kind}.{group}" if group else kind
    listed = str(errors[0]) if len(errors) == 1 else "[" + ", ".join(map(str, errors)) + "]"
    details = _details(group, kind, name)
    details["causes"] = [e.cause() for e in errors]
    return StatusError(422, "Invalid", f'{qualified} "{name}" is invalid: {listed}', details)


def bad_request(message: str) -> StatusError:
    """A 400 BadRequest with ``message``."""
    return StatusError(400, "BadRequest", message)


def unauthorized() -> StatusError:
    """A 401 for a request with no or bad credentials (worded ``Unauthorized``)."""
    return StatusError(401, "Unauthorized", "Unauthorized")


def forbidden(
    user: str,
    verb: str,
    resource: str,
    group: str,
    namespace: str = "",
    name: str = "",
    subresource: str = "",
    reason: str = "",
) -> StatusError:
    """The authorization filter's refusal, worded as kube-apiserver's: ``pods "p" is forbidden:
    User "u" cannot get resource "pods/log" in API group "" in the namespace "ns"``, with the
    authorizer's ``reason`` appended after ``: `` when there is one. The subject is the group
    resource alone (no subresource), as ``apierrors.NewForbidden`` prints it."""
    shown = f"{resource}/{subresource}" if subresource else resource
    scope = f' in the namespace "{namespace}"' if namespace else " at the cluster scope"
    why = f'User "{user}" cannot {verb} resource "{shown}" in API group "{group}"{scope}'
    if reason:
        why += f": {reason}"
    group_resource = f"{resource}.{group}" if group else resource
    subject = f'{group_resource} "{name}"' if name else group_resource
    return StatusError(
        403,
        "Forbidden",
        f"{subject} is forbidden: {why}",
        {"name": name, "group": group, "kind": resource},
    )


def forbidden_path(user: str, verb: str, path: str, reason: str = "") -> StatusError:
    """The refusal of a non-resource request: ``forbidden: User "u" cannot get path "/x"``."""
    why = f'User "{user}" cannot {verb} path "{path}"'
    if reason:
        why += f": {reason}"
    return StatusError(403, "Forbidden", f"forbidden: {why}", {})


def gone(message: str) -> StatusError:
    """A 410 Expired (``too old resource version: 5 (10)``)."""
    return StatusError(410, "Expired", message)


def method_not_supported(group_resource: str, verb: str) -> StatusError:
    """A 405 MethodNotAllowed: ``<verb> is not supported on resources of kind "<gr>"``."""
    return StatusError(
        405,
        "MethodNotAllowed",
        f'{verb} is not supported on resources of kind "{group_resource}"',
    )


def entity_too_large(limit: int) -> StatusError:
    """A 413 RequestEntityTooLarge, worded as kube-apiserver's body limit."""
    return StatusError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}")


def unsupported_media_type(content_type: str) -> StatusError:
    """A 415 UnsupportedMediaType for a body type the endpoint does not decode."""
    return StatusError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types include: "
        f"application/json, application/yaml, application/vnd.kubernetes.protobuf; "
        f'got "{content_type}"',
    )


def not_acceptable(accepted: str) -> StatusError:
    """A 406 NotAcceptable when no response type the client accepts can be produced."""
    return StatusError(
        406,
        "NotAcceptable",
        f"only the following media types are accepted: {accepted}",
    )


def internal_error(why: str) -> StatusError:
    """A 500 InternalError: ``Internal error occurred: <why>``."""
    return StatusError(500, "InternalError", f"Internal error occurred: {why}")


def timeout(message: str) -> StatusError:
    """A 504 Timeout."""
    return StatusError(504, "Timeout", message)


def service_unavailable(message: str) -> StatusError:
    """A 503 ServiceUnavailable."""
    return StatusError(503, "ServiceUnavailable", message)
