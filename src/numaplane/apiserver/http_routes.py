"""The discovery and OpenAPI routes of a logical cluster: ``/api``, ``/apis``, ``/api/v1``,
``/apis/G``, ``/apis/G/V`` (legacy documents, or the aggregated ``APIGroupDiscoveryList`` when
the ``Accept`` header asks for it, as kubectl 1.32 does) and ``/openapi/v2``, ``/openapi/v3``,
``/openapi/v3/{api/v1,apis/G/V}``. The documents themselves come from
:mod:`numaplane.apiserver.discovery` and :mod:`numaplane.apiserver.openapi`.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

from aiohttp import web

from numaplane.apiserver import discovery, openapi
from numaplane.apiserver.http_codec import encode, negotiate
from numaplane.apiserver.rest import Cluster


def _json(doc: Any, content_type: str = "application/json") -> web.Response:
    response = web.Response(body=encode(doc))
    response.headers["Content-Type"] = content_type
    return response


def _root(request: web.Request, cluster: Cluster, core: bool) -> web.Response:
    infos = cluster.registry.all()
    version = discovery.negotiate_discovery(request.headers.get("Accept", ""))
    if version is not None:
        doc = discovery.aggregated_discovery(infos, core=core, version=version)
        return _json(doc, discovery.aggregated_content_type(version))
    if core:
        host = request.host or ""
        return _json(discovery.api_versions(host))
    return _json(discovery.api_group_list(infos))


def serve_discovery(
    request: web.Request, cluster: Cluster, parts: Sequence[str], prefix: str = ""
) -> web.StreamResponse | None:
    """The response for a discovery or OpenAPI path (``parts`` are its segments below the
    logical cluster's ``prefix``), or ``None`` when the path is not one (the caller answers
    404)."""
    if request.method not in ("GET", "HEAD"):
        return None
    infos = cluster.registry.all()
    doc: dict[str, Any] | None
    match list(parts):
        case ["api"]:
            return _root(request, cluster, core=True)
        case ["apis"]:
            return _root(request, cluster, core=False)
        case ["api", version]:
            doc = discovery.api_resource_list(infos, "", version)
        case ["apis", group]:
            doc = discovery.api_group(infos, group)
        case ["apis", group, version]:
            doc = discovery.api_resource_list(infos, group, version)
        case ["openapi", *rest]:
            return openapi_response(request, cluster, rest, prefix)
        case _:
            return None
    return None if doc is None else _json(doc)


def _bytes(body: bytes, etag: str) -> web.Response:
    response = web.Response(body=body)
    response.headers["Content-Type"] = "application/json"
    response.headers["Etag"] = f'"{etag}"'
    return response


def _v3_document(
    request: web.Request, prefix: str, path: str, body: bytes, etag: str
) -> web.StreamResponse:
    """One group-version document as kube-openapi serves it: ``?hash=`` of the current
    document is cacheable forever, a stale hash is redirected to the current one, no hash is
    not to be cached."""
    asked = request.query.get("hash")
    if asked is not None and asked != etag:
        location = f"{prefix}/openapi/v3/{path}?hash={etag}"
        response = web.Response(status=301)
        response.headers["Location"] = location
        return response
    response = _bytes(body, etag)
    if asked is not None:
        response.headers["Cache-Control"] = "public, immutable"
        expires = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=365)
        response.headers["Expires"] = expires.strftime("%a, %d %b %Y %H:%M:%S GMT")
    return response


def openapi_response(
    request: web.Request, cluster: Cluster, rest: Sequence[str], prefix: str = ""
) -> web.StreamResponse | None:
    """``/openapi/v2``, ``/openapi/v3`` and ``/openapi/v3/<group-version path>``."""
    # kubectl asks for OpenAPI v2 as protobuf only; the 406 tells it to use v3.
    negotiate(request.headers.get("Accept", ""))
    infos = cluster.registry.all()
    match list(rest):
        case ["v2"]:
            body, etag = openapi.openapi_v2_bytes(infos)
            return _bytes(body, etag)
        case ["v3"]:
            index = openapi.openapi_v3_index(infos)
            if prefix:
                # Clients fetch these URLs as absolute paths on the host, so under a logical
                # cluster they carry its prefix.
                index = {
                    **index,
                    "paths": {
                        key: {**entry, "serverRelativeURL": prefix + entry["serverRelativeURL"]}
                        for key, entry in index.get("paths", {}).items()
                    },
                }
            return _json(index)
        case ["v3", *gv_path] if gv_path:
            path = "/".join(gv_path)
            found = openapi.openapi_v3_bytes(infos, path)
            if found is None:
                return None
            return _v3_document(request, prefix, path, *found)
        case _:
            return None
