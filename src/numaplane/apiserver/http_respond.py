"""Responses in the form the client asked for: the verb's result as JSON or YAML, or converted
(as upstream's ``doTransformObject``) to a ``meta.k8s.io`` ``Table`` or ``PartialObjectMetadata``
/ ``PartialObjectMetadataList``; the verb's warnings as ``Warning`` headers.
"""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web

from numaplane.apiserver import errors
from numaplane.apiserver.http_codec import Negotiated, Target, encode
from numaplane.apiserver.http_options import META_GROUP, Query, first_value, warning_header
from numaplane.apiserver.resource import ResourceInfo
from numaplane.apiserver.rest_common import RestResult
from numaplane.apiserver.table import build_table, check_include_object


def respond(
    info: ResourceInfo, query: Query, result: RestResult, negotiated: Negotiated | None = None
) -> web.Response:
    """The response for ``result`` (status code, ``Warning`` headers) in the negotiated form."""
    negotiated = negotiated or Negotiated("application/json")
    body = result.body
    if negotiated.target is not None and body.get("kind") != "Status":
        body = transform(info, query, body, negotiated.target)
    response = web.Response(
        body=encode(body, negotiated.media_type),
        status=result.code,
        content_type=negotiated.media_type,
    )
    for warning in result.warnings:
        response.headers.add("Warning", warning_header(warning))
    return response


def include_object(query: Query) -> str:
    """The ``includeObject`` parameter of a Table request, checked (default ``Metadata``)."""
    return check_include_object(first_value(query, "includeObject"))


def _is_list(body: dict[str, Any]) -> bool:
    return isinstance(body.get("items"), list) and str(body.get("kind", "")).endswith("List")


def _partial(obj: dict[str, Any], version: str) -> dict[str, Any]:
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"{META_GROUP}/{version}",
        "metadata": obj.get("metadata", {}),
    }


def transform(
    info: ResourceInfo, query: Query, body: dict[str, Any], target: Target
) -> dict[str, Any]:
    """``body`` converted to what the ``Accept`` header asked for, as upstream's
    ``doTransformObject``."""
    is_list = _is_list(body)
    if target.kind == "Table":
        items = body["items"] if is_list else [body]
        # A single object's Table carries the object's resourceVersion (list_meta None).
        list_meta = body.get("metadata", {}) if is_list else None
        return build_table(
            info.table,
            items,
            include_object(query),
            list_meta,
            time.time(),
            version=target.version,
        )
    if target.kind == "PartialObjectMetadata":
        if is_list:
            raise errors.not_acceptable(
                "you requested PartialObjectMetadata, but the requested object is a list"
            )
        return _partial(body, target.version)
    if not is_list:
        raise errors.not_acceptable(
            "you requested PartialObjectMetadataList, but the requested object is not a list"
        )
    return {
        "kind": "PartialObjectMetadataList",
        "apiVersion": target.api_version,
        "metadata": body.get("metadata", {}),
        "items": [_partial(item, target.version) for item in body["items"]],
    }
