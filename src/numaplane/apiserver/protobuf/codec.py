"""Request bodies in ``application/vnd.kubernetes.protobuf``, turned into the JSON object a
Kubernetes API server would have decoded.

kubectl 1.32's typed commands (``create configmap|secret|namespace|serviceaccount|token|job|
role|clusterrole|rolebinding|clusterrolebinding|priorityclass``, ``auth can-i``, ``auth whoami``)
send protobuf, and give up on a 415. The body is the 4 bytes ``k8s\\x00`` then a
``runtime.Unknown`` whose ``typeMeta`` names the kind and whose ``raw`` is the object's message.
The server works on JSON dicts, so :func:`decode` returns the dict Go's encoding/json would write
for the Go object the body decodes to (field names, omitempty, nulls, times, quantities, base64
bytes), which is the JSON kubectl itself sends for the same object.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message
from google.protobuf.unknown_fields import UnknownFieldSet

from numaplane.apiserver import errors
from numaplane.apiserver.protobuf import (
    authentication_v1_pb2,
    authorization_v1_pb2,
    batch_v1_pb2,
    core_v1_pb2,
    meta_v1_pb2,
    rbac_v1_pb2,
    runtime_pb2,
    scheduling_v1_pb2,
)
from numaplane.apiserver.protobuf.gojson import ALWAYS, INLINE, POINTERS

CONTENT_TYPE: Final = "application/vnd.kubernetes.protobuf"
"""The media type of the bodies :func:`decode` reads."""

MAGIC: Final = b"k8s\x00"
"""The prefix of every Kubernetes protobuf body."""

KINDS: Final[dict[tuple[str, str], type[Message]]] = {
    ("v1", "ConfigMap"): core_v1_pb2.ConfigMap,
    ("v1", "Namespace"): core_v1_pb2.Namespace,
    ("v1", "Pod"): core_v1_pb2.Pod,
    ("v1", "Secret"): core_v1_pb2.Secret,
    ("v1", "ServiceAccount"): core_v1_pb2.ServiceAccount,
    ("authentication.k8s.io/v1", "SelfSubjectReview"): authentication_v1_pb2.SelfSubjectReview,
    ("authentication.k8s.io/v1", "TokenRequest"): authentication_v1_pb2.TokenRequest,
    (
        "authorization.k8s.io/v1",
        "SelfSubjectAccessReview",
    ): authorization_v1_pb2.SelfSubjectAccessReview,
    (
        "authorization.k8s.io/v1",
        "SelfSubjectRulesReview",
    ): authorization_v1_pb2.SelfSubjectRulesReview,
    ("batch/v1", "Job"): batch_v1_pb2.Job,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): rbac_v1_pb2.ClusterRole,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): rbac_v1_pb2.ClusterRoleBinding,
    ("rbac.authorization.k8s.io/v1", "Role"): rbac_v1_pb2.Role,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): rbac_v1_pb2.RoleBinding,
    ("scheduling.k8s.io/v1", "PriorityClass"): scheduling_v1_pb2.PriorityClass,
}
"""The (apiVersion, kind) pairs decoded; DeleteOptions is decoded in every apiVersion, as
Kubernetes registers it in every group version."""

_GO_ZERO_UNIX: Final = -62135596800
"""Go's zero time.Time (year 1) in Unix seconds: its JSON is ``null``."""
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_META = "k8s.io.apimachinery.pkg.apis.meta.v1."


class UndecodableError(ValueError):
    """Why a body does not decode, in the words of Kubernetes' protobuf serializer (the HTTP
    wording around it is :func:`decode`'s)."""


def decode(body: bytes, expected: tuple[str, str] | None = None) -> dict[str, Any]:
    """The JSON object of a protobuf request body (Content-Type :data:`CONTENT_TYPE`).

    ``expected`` is the endpoint's (apiVersion, kind): it fills an envelope that leaves them
    empty (as Kubernetes' defaulting decoder does) and words errors as kube-apiserver's
    handlers do (``the object provided is unrecognized (must be of type ConfigMap): ...``,
    ``ConfigMap in version "v1" cannot be handled as a ConfigMap: ...``). The result carries
    ``kind`` and ``apiVersion`` from the envelope, so the HTTP layer checks them as for a JSON
    body. Raises :class:`errors.StatusError`: 400 BadRequest for a body that is not a
    Kubernetes protobuf message or does not decode (or that sets a field this server does not
    decode, rather than dropping it), 415 UnsupportedMediaType for a kind not decoded from
    protobuf here.

    The HTTP layer's wiring is this one call where it parses a body of media type
    :data:`CONTENT_TYPE`; the body size limit applies to ``body`` as received.
    """
    envelope_kind: tuple[str, str] | None = None
    try:
        if not body:
            raise UndecodableError("empty data")
        if not body.startswith(MAGIC):
            raise UndecodableError(
                "provided data does not appear to be a protobuf message, expected prefix ["
                + " ".join(str(b) for b in MAGIC)
                + "]"
            )
        if len(body) == len(MAGIC):
            raise UndecodableError("empty body")
        envelope = runtime_pb2.Unknown()
        try:
            envelope.ParseFromString(body[len(MAGIC) :])
        except DecodeError as exc:
            raise UndecodableError(str(exc)) from None
        api_version = _text(envelope.typeMeta.apiVersion) or (expected[0] if expected else "")
        kind = _text(envelope.typeMeta.kind) or (expected[1] if expected else "")
        envelope_kind = (api_version, kind)
        if not kind:
            raise UndecodableError(
                "Object 'Kind' is missing in "
                f'\'runtime.TypeMeta{{APIVersion:"{api_version}", Kind:""}}\''
            )
        message_type = (
            meta_v1_pb2.DeleteOptions if kind == "DeleteOptions" else KINDS.get((api_version, kind))
        )
        if message_type is None:
            raise errors.StatusError(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types "
                f"include: application/json, application/yaml ({CONTENT_TYPE} is not decoded "
                f'for kind "{kind}" in version "{api_version}")',
            )
        obj = message_type()
        try:
            obj.ParseFromString(envelope.raw)
        except DecodeError as exc:
            raise UndecodableError(str(exc)) from None
        result: dict[str, Any] = {"kind": kind}
        if api_version:
            result["apiVersion"] = api_version
        result.update(to_json(obj))
        return result
    except UndecodableError as exc:
        raise _bad_request(str(exc), body, envelope_kind, expected) from None


def _bad_request(
    why: str,
    body: bytes,
    envelope_kind: tuple[str, str] | None,
    expected: tuple[str, str] | None,
) -> errors.StatusError:
    """kube-apiserver's 400 for a body that did not decode: named by the envelope's kind when
    the envelope was read, else with a summary of the body."""
    if expected is None:
        return errors.bad_request(why)
    if envelope_kind is not None and envelope_kind[1]:
        version = envelope_kind[0].rpartition("/")[2]
        return errors.bad_request(
            f'{envelope_kind[1]} in version "{version}" cannot be handled as a {expected[1]}: {why}'
        )
    return errors.bad_request(
        f"the object provided is unrecognized (must be of type {expected[1]}): {why} "
        f"({summarize(body)})"
    )


def summarize(body: bytes, limit: int = 30) -> str:
    """A body as Kubernetes' handlers quote it in errors: JSON-looking text as is, anything
    else in hex, cut at ``limit`` bytes."""
    if not body:
        return "<empty>"
    cut = body[:limit]
    shown = cut.decode("utf-8", errors="replace") if body[:1] == b"{" else cut.hex()
    return shown + " ..." if len(body) > limit else shown


@dataclass(frozen=True)
class _Field:
    """How one field of a message is written (from the descriptor and :mod:`.gojson`)."""

    descriptor: FieldDescriptor
    name: str
    always: bool
    pointer: bool
    inline: bool
    is_map: bool
    is_message: bool


@dataclass(frozen=True)
class _Plan:
    """A message's fields by number, the declaration order, and the fields written even when
    the body leaves them out (Go structs, inline structs, fields without omitempty)."""

    by_number: dict[int, _Field]
    order: tuple[str, ...]
    when_absent: tuple[_Field, ...]


_PLANS: dict[str, _Plan] = {}


def _plan(descriptor: Descriptor) -> _Plan:
    plan = _PLANS.get(descriptor.full_name)
    if plan is None:
        fields = []
        for field in descriptor.fields:
            key = f"{descriptor.full_name}.{field.name}"
            fields.append(
                _Field(
                    descriptor=field,
                    name=field.name,
                    always=key in ALWAYS,
                    pointer=key in POINTERS,
                    inline=key in INLINE,
                    is_map=_is_map(field),
                    is_message=field.message_type is not None and not field.is_repeated,
                )
            )
        plan = _Plan(
            by_number={f.descriptor.number: f for f in fields},
            order=tuple(f.name for f in fields),
            when_absent=tuple(
                f for f in fields if f.always or f.inline or (f.is_message and not f.pointer)
            ),
        )
        _PLANS[descriptor.full_name] = plan
    return plan


def to_json(message: Message) -> Any:
    """Go's JSON for ``message`` (a message of this package), as :func:`decode` writes it;
    raises :class:`UndecodableError` for a field this package does not declare."""
    descriptor = message.DESCRIPTOR
    special = _SPECIAL.get(descriptor.full_name)
    if special is not None:
        return special(message)
    _refuse_unknown(message)
    plan = _plan(descriptor)
    out: dict[str, Any] = {}
    inlined: dict[str, dict[str, Any]] = {}
    for field_descriptor, value in message.ListFields():
        field = plan.by_number[field_descriptor.number]
        if field.inline:
            inlined[field.name] = to_json(value)
        elif field.is_map:
            out[field.name] = _map(field_descriptor, value)
        elif field_descriptor.is_repeated:
            out[field.name] = [_value(field_descriptor, item) for item in value]
        elif field.is_message or field.pointer or field.always or value:
            # Set scalars: Go wrote a zero one only for a pointer, or for a field without
            # omitempty; an omitempty zero is left out as Go's JSON leaves it out.
            out[field.name] = _value(field_descriptor, value)
    for field in plan.when_absent:
        if field.name in out or field.name in inlined:
            continue
        if field.inline:
            inlined[field.name] = to_json(getattr(message, field.name))
        elif field.pointer or field.descriptor.is_repeated:
            out[field.name] = None
        elif field.is_message:
            # A Go struct: written even when the body left it out.
            out[field.name] = to_json(_message_class(field.descriptor.message_type)())
        elif not message.HasField(field.name):
            out[field.name] = _value(field.descriptor, getattr(message, field.name))
    # Go writes fields in declaration order, an inline struct's fields where it is declared.
    result: dict[str, Any] = {}
    for name in plan.order:
        if name in inlined:
            result.update(inlined[name])
        elif name in out:
            result[name] = out[name]
    return result


def _message_class(descriptor: Descriptor) -> type[Message]:
    made: type[Message] = message_factory.GetMessageClass(descriptor)
    return made


def _refuse_unknown(message: Message) -> None:
    """A field number this package does not declare is a field Kubernetes knows and this server
    would otherwise lose without a word: refused, naming it, so the client can send JSON."""
    numbers = sorted({item.field_number for item in UnknownFieldSet(message)})
    if numbers:
        shown = ", ".join(str(n) for n in numbers)
        raise UndecodableError(
            f"field number(s) {shown} of {message.DESCRIPTOR.full_name} are not decoded from "
            f"{CONTENT_TYPE} by this server; send the object as application/json"
        )


def _is_map(field: FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def _map(field: FieldDescriptor, entries: Any) -> dict[str, Any]:
    value_field = field.message_type.fields_by_name["value"]
    # Go writes map keys sorted.
    return {_text(key): _value(value_field, entries[key]) for key in sorted(entries)}


def _value(field: FieldDescriptor, value: Any) -> Any:
    if field.message_type is not None:
        return to_json(value)
    if field.type == FieldDescriptor.TYPE_BYTES:
        # Go's encoding/json writes []byte as standard base64 (Secret.data, binaryData).
        return base64.b64encode(value).decode("ascii")
    return _text(value)


def _text(value: Any) -> Any:
    """A proto2 string that is not UTF-8 comes back as bytes; Go's JSON writes each bad byte as
    U+FFFD."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


def _time(message: Message) -> str | None:
    """metav1.Time: an empty message is Go's zero time (``null``); Kubernetes keeps whole
    seconds only (its decoder drops nanos) and writes RFC 3339 in UTC."""
    if message.ByteSize() == 0:
        return None
    seconds = message.seconds
    if seconds == _GO_ZERO_UNIX:
        return None
    return _rfc3339(seconds, None)


def _micro_time(message: Message) -> str | None:
    """metav1.MicroTime: as Time, with microseconds (``2006-01-02T15:04:05.000000Z``)."""
    if message.ByteSize() == 0:
        return None
    seconds, nanos = message.seconds, message.nanos
    if seconds == _GO_ZERO_UNIX and nanos == 0:
        return None
    return _rfc3339(seconds, nanos // 1000)


def _rfc3339(seconds: int, micros: int | None) -> str:
    """UTC RFC 3339 as Go writes it (4-digit year; ``.000000`` when ``micros`` is given)."""
    try:
        moment = _EPOCH + timedelta(seconds=seconds, microseconds=micros or 0)
    except OverflowError:
        # Go's Time.MarshalJSON refuses such a time too.
        raise UndecodableError("Time.MarshalJSON: year outside of range [0,9999]") from None
    text = (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
        f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"
    )
    return f"{text}.{moment.microsecond:06d}Z" if micros is not None else f"{text}Z"


def _embedded_json(raw: bytes, what: str) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise UndecodableError(f"invalid {what}: {exc}") from None


def _quantity(message: Message) -> str:
    # Go writes a zero Quantity as "0"; a set one as its canonical string, which the client put
    # on the wire.
    return str(message.string) or "0"


def _int_or_string(message: Message) -> int | str:
    return str(message.strVal) if message.type == 1 else int(message.intVal)


_SPECIAL: Final[dict[str, Callable[[Any], Any]]] = {
    _META + "Time": _time,
    _META + "MicroTime": _micro_time,
    _META + "FieldsV1": lambda m: _embedded_json(m.Raw, "FieldsV1"),
    "k8s.io.apimachinery.pkg.runtime.RawExtension": lambda m: _embedded_json(m.raw, "RawExtension"),
    "k8s.io.apimachinery.pkg.api.resource.Quantity": _quantity,
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": _int_or_string,
}
"""Types whose Go JSON is not an object of their fields (custom MarshalJSON upstream)."""
