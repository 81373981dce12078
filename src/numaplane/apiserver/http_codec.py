"""(Over 400 lines: negotiation and decoding share the media types and upstream's wording.)

Bodies in and out, as k8s.io/apiserver's negotiation and serializers treat them.

Requests: the 3 MiB body limit, JSON and YAML bodies (decode errors worded as upstream's
``transformDecodeError``), the apiVersion/kind check of an endpoint. Responses: the ``Accept``
header read into a media type (JSON or YAML) and an optional conversion target (``Table``,
``PartialObjectMetadata``, aggregated discovery), and the encoders.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson
import yaml

from numaplane.apiserver.errors import StatusError, bad_request, not_acceptable
from numaplane.apiserver.protobuf import codec as protobuf_codec
from numaplane.gofmt import go_json_syntax_error

#: kube-apiserver's ``--max-request-body-bytes`` default (``maxRequestBodyBytes``): 3 MiB.
MAX_REQUEST_BODY_BYTES: Final = 3 * 1024 * 1024

JSON: Final = "application/json"
YAML: Final = "application/yaml"
JSON_PATCH: Final = "application/json-patch+json"
MERGE_PATCH: Final = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH: Final = "application/strategic-merge-patch+json"
APPLY_PATCH: Final = "application/apply-patch+yaml"
PROTOBUF: Final = "application/vnd.kubernetes.protobuf"
#: The body types every resource endpoint decodes, in upstream's order (protobuf: only the
#: kinds kubectl's typed clients send, see :mod:`numaplane.apiserver.protobuf.codec`).
INPUT_MEDIA_TYPES: Final = (JSON, YAML, PROTOBUF)
#: What :func:`negotiate` may answer with, as named in upstream's 406 message.
OUTPUT_MEDIA_TYPES: Final = (JSON, YAML)

META_GROUP: Final = "meta.k8s.io"
DISCOVERY_GROUP: Final = "apidiscovery.k8s.io"


def unsupported_media_type(accepted: tuple[str, ...] | list[str]) -> StatusError:
    """Upstream's 415 for a body type the endpoint does not decode."""
    return StatusError(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(accepted),
    )


# -- Accept negotiation ------------------------------------------------------------------------


@dataclass(frozen=True)
class MediaRange:
    """One clause of an ``Accept`` header: ``type/subtype;param=value;q=0.5``."""

    type: str
    subtype: str
    params: tuple[tuple[str, str], ...]
    quality: float

    def param(self, name: str) -> str:
        """The value of parameter ``name``, or ""."""
        for key, value in self.params:
            if key == name:
                return value
        return ""


def parse_accept(header: str) -> list[MediaRange]:
    """The clauses of ``header`` ordered by quality (highest first, ties in written order), as
    goautoneg orders them; malformed clauses are skipped."""
    ranges: list[MediaRange] = []
    for clause in header.split(","):
        pieces = [p.strip() for p in clause.split(";")]
        full = pieces[0].lower()
        if not full:
            continue
        kind, _, sub = full.partition("/")
        if not sub:
            if kind != "*":
                continue
            sub = "*"
        params: list[tuple[str, str]] = []
        quality = 1.0
        for piece in pieces[1:]:
            key, eq, value = piece.partition("=")
            if not eq:
                continue
            key, value = key.strip().lower(), value.strip().strip('"')
            if key == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
            else:
                params.append((key, value))
        if quality > 0:
            ranges.append(MediaRange(kind, sub, tuple(params), quality))
    ranges.sort(key=lambda r: -r.quality)
    return ranges


@dataclass(frozen=True)
class Target:
    """A conversion a client asked for with ``;as=KIND;g=GROUP;v=VERSION``."""

    kind: str
    group: str
    version: str

    @property
    def api_version(self) -> str:
        """``meta.k8s.io/v1``."""
        return f"{self.group}/{self.version}"


@dataclass(frozen=True)
class Negotiated:
    """The outcome of :func:`negotiate`: the response ``media_type`` and a conversion ``target``
    (``None``: the object itself)."""

    media_type: str
    target: Target | None = None


#: Conversion targets a resource endpoint can produce, by (kind, group) -> versions.
RESOURCE_TARGETS: Final[Mapping[tuple[str, str], tuple[str, ...]]] = {
    ("Table", META_GROUP): ("v1", "v1beta1"),
    ("PartialObjectMetadata", META_GROUP): ("v1", "v1beta1"),
    ("PartialObjectMetadataList", META_GROUP): ("v1", "v1beta1"),
}
#: Conversion targets of the discovery roots (aggregated discovery).
DISCOVERY_TARGETS: Final[Mapping[tuple[str, str], tuple[str, ...]]] = {
    ("APIGroupDiscoveryList", DISCOVERY_GROUP): ("v2", "v2beta1"),
}


def _media_type_for(rng: MediaRange) -> str | None:
    if rng.type == "*" and rng.subtype == "*":
        return JSON
    if rng.type != "application":
        return None
    if rng.subtype in ("*", "json"):
        return JSON
    if rng.subtype == "yaml":
        return YAML
    return None


def negotiate(
    accept: str,
    targets: Mapping[tuple[str, str], tuple[str, ...]] | None = None,
    *,
    stream: bool = False,
) -> Negotiated:
    """Pick the response type for ``accept`` as upstream's ``NegotiateOutputMediaType``.

    A clause asking for a conversion (``as=``) is taken only if ``targets`` offers it; a clause
    with ``stream=watch`` only when ``stream``. No usable clause: 406 NotAcceptable, worded as
    upstream. An empty header means JSON.
    """
    if not accept.strip():
        return Negotiated(JSON)
    offered = targets or {}
    for rng in parse_accept(accept):
        media_type = _media_type_for(rng)
        if media_type is None:
            continue
        stream_param = rng.param("stream")
        if stream_param and not (stream and stream_param == "watch"):
            continue
        if any(key not in ("as", "g", "v", "stream", "pretty", "charset") for key, _ in rng.params):
            continue
        as_kind = rng.param("as")
        if not as_kind:
            return Negotiated(media_type)
        group, version = rng.param("g"), rng.param("v")
        if version in offered.get((as_kind, group), ()):
            return Negotiated(media_type, Target(as_kind, group, version))
    raise not_acceptable(", ".join(OUTPUT_MEDIA_TYPES))


# -- encoding ----------------------------------------------------------------------------------


def encode(obj: Any, media_type: str = JSON) -> bytes:
    """``obj`` as ``media_type`` (JSON compact, as the Go encoder writes it, or YAML)."""
    if media_type == YAML:
        text = yaml.safe_dump(obj, default_flow_style=False, sort_keys=False, allow_unicode=True)
        return text.encode()
    return orjson.dumps(obj)


# -- decoding ----------------------------------------------------------------------------------


def media_type_of(content_type: str) -> str:
    """The bare, lower-cased media type of a ``Content-Type`` header (parameters dropped)."""
    return content_type.split(";", 1)[0].strip().lower()


_GO_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "bool"}


def go_json_error(err: json.JSONDecodeError) -> str:
    """A Python JSON error worded as Go's ``encoding/json`` scanner words it."""
    return go_json_syntax_error(err, err.doc)


def _unrecognized(kind: str, detail: str, body: bytes) -> StatusError:
    # kube-apiserver's 400 for a body it cannot read as an object, with the start of the body.
    return bad_request(
        f"the object provided is unrecognized (must be of type {kind}): {detail} "
        f"({summarize(body)})"
    )


class DecodeError(Exception):
    """A body that is no JSON or YAML object; ``str`` is upstream's inner message."""


def _yaml_error(err: yaml.YAMLError) -> str:
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    line = f"line {mark.line + 1}: " if mark is not None else ""
    return f"error converting YAML to JSON: yaml: {line}{problem}"


def parse_document(body: bytes, media_type: str, expected: tuple[str, str] | None = None) -> Any:
    """``body`` parsed as JSON, YAML or Kubernetes protobuf (by ``media_type``); raises
    :class:`DecodeError` with upstream's wording (``couldn't get version/kind; json parse
    error: ...``). A protobuf body the server cannot decode raises the codec's own 400/415
    ``StatusError``, worded for the endpoint's ``expected`` (group/version, kind)."""
    if media_type == PROTOBUF:
        return protobuf_codec.decode(body, expected)
    if media_type == YAML:
        try:
            doc = yaml.safe_load(body)
        except yaml.YAMLError as err:
            raise DecodeError(_yaml_error(err)) from err
        # YAML timestamps and other non-JSON scalars become their JSON text, as YAMLToJSON does.
        return json.loads(json.dumps(doc, default=str)) if doc is not None else None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DecodeError(
            "couldn't get version/kind; json parse error: invalid character "
            f"'\\x{body[err.start]:02x}' looking for beginning of value"
        ) from err
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise DecodeError(
            f"couldn't get version/kind; json parse error: {go_json_error(err)}"
        ) from err
    except RecursionError as err:
        raise DecodeError(
            "couldn't get version/kind; json parse error: exceeded max depth"
        ) from err


def summarize(body: bytes, max_length: int = 30) -> str:
    """Upstream's ``summarizeData``: an object's first bytes as text, anything else as hex."""
    if not body:
        return "<empty>"
    if body[:1] == b"{":
        head = body[:max_length].decode("utf-8", "replace")
        return head + " ..." if len(body) > max_length else head
    head = body[:max_length].hex()
    return head + " ..." if len(body) > max_length else head


#: ``(group, version, kind) -> bool``: whether the server knows that kind at that version.
KindKnown = Callable[[str, str, str], bool]


def _internal_package(group: str) -> str:
    """The Go package of a group's internal types, as conversion errors name it."""
    return group.split(".", 1)[0] if group else "core"


def decode_object(
    body: bytes,
    content_type: str,
    *,
    group: str,
    version: str,
    kind: str,
    kind_known: KindKnown | None = None,
    check_kind: bool = True,
) -> dict[str, Any]:
    """The object a create or update sends to the ``group/version`` endpoint of ``kind``.

    Missing ``apiVersion``/``kind`` are filled from the endpoint (as upstream's defaulting
    decoder does). A body of another kind, or of this kind at another API version, gets
    upstream's 400 wording. ``check_kind`` off leaves kind checks to the resource's strategy
    (custom resources, whose strategy words them as 422s upstream).
    """
    media_type = media_type_of(content_type) or JSON
    if media_type not in INPUT_MEDIA_TYPES:
        raise unsupported_media_type(INPUT_MEDIA_TYPES)
    group_version = f"{group}/{version}" if group else version
    try:
        doc = parse_document(body, media_type, (group_version, kind))
    except DecodeError as err:
        raise _unrecognized(kind, str(err), body) from err
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        go_type = _GO_TYPES.get(type(doc), "value")
        raise _unrecognized(
            kind,
            "couldn't get version/kind; json parse error: json: cannot unmarshal "
            f"{go_type} into Go value of "
            'type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string '
            '"json:\\"kind,omitempty\\"" }',
            body,
        )
    endpoint_gv = f"{group}/{version}" if group else version
    api_version = doc.get("apiVersion")
    body_kind = doc.get("kind")
    if not isinstance(api_version, str) or not api_version:
        api_version = endpoint_gv
    if not isinstance(body_kind, str) or not body_kind:
        body_kind = kind
    doc["apiVersion"], doc["kind"] = api_version, body_kind
    if not check_kind:
        return doc
    body_group, _, body_version = api_version.rpartition("/")
    known = kind_known(body_group, body_version, body_kind) if kind_known else True
    if body_kind == kind and api_version == endpoint_gv:
        return doc
    if not known:
        raise bad_request(
            f'{body_kind} in version "{body_version}" cannot be handled as a {kind}: no kind '
            f'"{body_kind}" is registered for version "{api_version}" in scheme '
            '"pkg/api/legacyscheme/scheme.go:30"'
        )
    if body_kind != kind:
        raise bad_request(
            f'{body_kind} in version "{body_version}" cannot be handled as a {kind}: converting '
            f"({body_version}.{body_kind}) to ({_internal_package(group)}.{kind}): "
            "unknown conversion"
        )
    raise bad_request(
        f"the API version in the data ({api_version}) does not match the expected API version "
        f"({endpoint_gv})"
    )


def decode_options(body: bytes, content_type: str, kind: str) -> dict[str, Any]:
    """An options body (``DeleteOptions``) as a dict; empty body: ``{}``."""
    if not body.strip():
        return {}
    media_type = media_type_of(content_type) or JSON
    if media_type not in INPUT_MEDIA_TYPES:
        raise unsupported_media_type(INPUT_MEDIA_TYPES)
    try:
        doc = parse_document(body, media_type)
    except DecodeError as err:
        raise _unrecognized(kind, str(err), body) from err
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise _unrecognized(
            kind,
            "couldn't get version/kind; json parse error: json: cannot unmarshal "
            f"{_GO_TYPES.get(type(doc), 'value')} into Go value",
            body,
        )
    return doc
