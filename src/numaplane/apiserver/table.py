"""``meta.k8s.io/v1`` Table responses and the ``Accept`` negotiation that asks for them.

kubectl ``get`` (human-readable output) sends :data:`KUBECTL_TABLE_ACCEPT` and the server
answers with a Table built by the resource's :class:`TablePrinter`; each row carries the object
as ``includeObject`` asks: ``Metadata`` (the default) a ``PartialObjectMetadata``, ``Object`` the
whole object, ``None`` nothing. On a watch only the first event's Table has column definitions
(upstream's ``NoHeaders`` on later events).

Clients that read only metadata (garbage collectors, metadata informers) ask for
``as=PartialObjectMetadata`` / ``PartialObjectMetadataList``; :func:`negotiate_output` tells
those apart too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from numaplane.apiserver import errors
from numaplane.apiserver.discovery import parse_accept
from numaplane.apiserver.resource import (
    CREATION_DESCRIPTION,
    NAME_DESCRIPTION,
    Object,
    TableColumn,
    TablePrinter,
)

#: What kubectl get sends, for reference and tests.
KUBECTL_TABLE_ACCEPT: Final = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,"
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
    "application/json"
)

INCLUDE_OBJECT_VALUES: Final = ("Metadata", "Object", "None")
_META_VERSIONS: Final = ("v1", "v1beta1")


@dataclass(frozen=True)
class Output:
    """How a response body is to be shaped: ``kind`` is ``"object"`` (plain JSON), ``"Table"``,
    ``"PartialObjectMetadata"`` or ``"PartialObjectMetadataList"``; ``version`` the
    ``meta.k8s.io`` version asked for (``v1`` or ``v1beta1``) when not plain."""

    kind: str = "object"
    version: str = ""
    mime: str = "application/json"

    @property
    def api_version(self) -> str:
        """``meta.k8s.io/v1`` (or ``/v1beta1``) for the meta kinds, empty for plain JSON."""
        return f"meta.k8s.io/{self.version}" if self.version else ""


PLAIN: Final = Output()
_META_KINDS: Final = ("Table", "PartialObjectMetadata", "PartialObjectMetadataList")


def negotiate_output(accept: str) -> Output:
    """The representation the ``Accept`` header prefers among those the server can give.

    The first acceptable range wins (ordered by ``q``); plain ``application/json`` (or ``*/*``)
    means the object itself, ``application/yaml`` the object as YAML (``mime``). Raises
    ``406 NotAcceptable`` when nothing in the header can be served, as upstream does for e.g.
    ``as=Table;g=example.com`` alone.
    """
    for media in parse_accept(accept):
        if media.mime == "application/yaml" and not media.params.get("as"):
            return Output(mime="application/yaml")
        if not media.is_json():
            continue
        kind = media.params.get("as", "")
        if not kind and "g" not in media.params:
            return PLAIN
        group, version = media.params.get("g", ""), media.params.get("v", "")
        if kind in _META_KINDS and group == "meta.k8s.io" and version in _META_VERSIONS:
            return Output(kind, version)
    raise errors.not_acceptable(
        "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    )


def wants_table(accept: str) -> bool:
    """Whether the ``Accept`` header asks for a ``meta.k8s.io`` Table (as kubectl get does)."""
    try:
        return negotiate_output(accept).kind == "Table"
    except errors.StatusError:
        return False


def check_include_object(value: str) -> str:
    """``value`` of the ``includeObject`` query parameter, defaulted to ``Metadata``; anything
    else is refused with upstream's 400."""
    if value in ("", *INCLUDE_OBJECT_VALUES):
        return value or "Metadata"
    raise errors.bad_request(
        "Unable to convert to Table as requested: includeObject: Invalid value: "
        f"{errors.go_value(value)}: must be 'Metadata', 'Object', 'None', or empty"
    )


def partial_object_metadata(obj: Object, version: str = "v1") -> dict[str, Any]:
    """``obj`` reduced to a ``PartialObjectMetadata`` (its whole ``metadata``)."""
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": obj.get("metadata", {}),
    }


def partial_object_metadata_list(
    objs: Iterable[Object], list_meta: Mapping[str, Any], version: str = "v1"
) -> dict[str, Any]:
    """A list reduced to a ``PartialObjectMetadataList``."""
    return {
        "kind": "PartialObjectMetadataList",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": dict(list_meta),
        "items": [partial_object_metadata(o, version) for o in objs],
    }


def column_definition(column: TableColumn) -> dict[str, Any]:
    """One ``columnDefinitions`` entry (every field present, as Go writes them)."""
    return {
        "name": column.name,
        "type": column.type,
        "format": column.format,
        "description": column.description,
        "priority": column.priority,
    }


def _row_object(obj: Object, include_object: str, version: str) -> dict[str, Any] | None:
    if include_object == "None":
        return None
    if include_object == "Object":
        return obj
    return partial_object_metadata(obj, version)


def build_table(
    printer: TablePrinter,
    objs: Iterable[Object],
    include_object: str = "Metadata",
    list_meta: Mapping[str, Any] | None = None,
    now: float = 0.0,
    *,
    no_headers: bool = False,
    version: str = "v1",
) -> dict[str, Any]:
    """The ``meta.k8s.io`` Table of ``objs`` (one row each, in order).

    ``include_object`` is ``Metadata`` / ``Object`` / ``None`` (see :func:`check_include_object`);
    ``list_meta`` is the list's ``metadata`` (``resourceVersion``, ``continue``,
    ``remainingItemCount``) for a list, None for a single object (whose ``resourceVersion``
    the table then carries, as upstream's table convertors do); ``now`` (epoch seconds) is
    passed to the printer for ages; ``no_headers`` leaves ``columnDefinitions`` null, as
    upstream does on every watch event after the first.
    """
    include = check_include_object(include_object)
    objs = list(objs)
    rows = [
        {"cells": printer.row(obj, now), "object": _row_object(obj, include, version)}
        for obj in objs
    ]
    columns = None if no_headers else [column_definition(c) for c in printer.columns()]
    metadata: dict[str, Any] = {}
    if list_meta is not None:
        metadata = dict(list_meta)
    elif objs and objs[0].get("metadata", {}).get("resourceVersion"):
        metadata = {"resourceVersion": objs[0]["metadata"]["resourceVersion"]}
    return {
        "kind": "Table",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": metadata,
        "columnDefinitions": columns,
        "rows": rows,
    }


class DefaultTablePrinter:
    """Upstream's default table (``rest.NewDefaultTableConvertor``) for resources without
    printer columns: ``Name`` and ``Created At``."""

    def columns(self) -> tuple[TableColumn, ...]:
        """``Name`` and ``Created At`` with ObjectMeta's descriptions."""
        return (
            TableColumn("Name", "string", "name", NAME_DESCRIPTION),
            TableColumn("Created At", "date", "", CREATION_DESCRIPTION),
        )

    def row(self, obj: Object, now: float) -> list[Any]:
        """The object's name and creation timestamp (RFC 3339, as stored)."""
        meta = obj.get("metadata", {})
        return [meta.get("name", ""), meta.get("creationTimestamp")]
