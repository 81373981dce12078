"""OpenAPI documents as kube-apiserver 1.32 publishes them, built from ``list[ResourceInfo]``.

- ``/openapi/v3``: the index, ``{"paths": {"api/v1": {"serverRelativeURL":
  "/openapi/v3/api/v1?hash=<HASH>"}, "apis/batch/v1": {...}, ...}}``;
- ``/openapi/v3/api/v1``, ``/openapi/v3/apis/G/V``: one OpenAPI 3.0 document per group-version,
  with the ``paths`` of its resources and the ``components.schemas`` they reach;
- ``/openapi/v2``: one Swagger 2.0 document of everything.

What kubectl 1.32 does with them (observed with ``-v=8``): ``apply``, ``explain``, ``edit`` and
``--validate`` read ``/openapi/v3`` and the group-version documents (JSON); only when
``/openapi/v3`` is missing does kubectl fall back to ``/openapi/v2``, which it asks for in
protobuf only (``application/com.github.proto-openapi.spec.v2@v1.0+protobuf``): serve v2 as
JSON to clients that accept it and answer 406 to protobuf-only requests. ``apply`` takes
strategic-merge-patch metadata of built-in kinds (``x-kubernetes-patch-strategy``,
``x-kubernetes-patch-merge-key``) from the v3 schemas and uses JSON merge patch for custom
resources; ``explain`` finds the schema whose ``x-kubernetes-group-version-kind`` names the
kind; ``--validate=strict`` checks for the ``fieldValidation`` parameter (see
:mod:`numaplane.apiserver.openapi_paths`).

Serving (the HTTP layer's part, as kube-openapi's handler): every document's ETag is the quoted
:func:`~numaplane.apiserver.discovery.document_hash` of its bytes; a group-version request whose
``hash`` query matches gets ``Cache-Control: public, immutable``, one whose ``hash`` differs a
301 to the current ``serverRelativeURL``, one without ``hash`` ``Cache-Control: no-cache``.

Built-in schemas come from :mod:`numaplane.apiserver.openapi_builtin`; a custom resource's
schema is the CRD version's ``openAPIV3Schema``, which the CRD code hands over as
``ResourceInfo.extra["openapi_schema"]`` (the key's presence marks a custom resource).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any, Final

import orjson

from numaplane.apiserver.discovery import document_hash, versions_in_order
from numaplane.apiserver.openapi_builtin import (
    KUBERNETES_VERSION,
    OPENAPI_SCHEMA_KEY,
    V2_REF,
    V3_REF,
    Schema,
    builtin_definitions,
    closure,
    custom_schema,
    definition_name,
    definition_v3,
    is_custom,
)
from numaplane.apiserver.openapi_fields import strict_decoding_message, unknown_fields
from numaplane.apiserver.openapi_paths import PathBuilder
from numaplane.apiserver.resource import ResourceInfo

__all__ = [
    "OPENAPI_SCHEMA_KEY",
    "OpenAPIDocuments",
    "custom_definition_name",
    "custom_definitions",
    "documents_for",
    "is_custom",
    "openapi_v2",
    "openapi_v2_bytes",
    "openapi_v3",
    "openapi_v3_bytes",
    "openapi_v3_index",
    "strict_decoding_message",
    "unknown_fields",
]

_META: Final = "io.k8s.apimachinery.pkg.apis.meta.v1."
#: Definitions every group-version document carries (the bodies and answers of every endpoint).
_ALWAYS: Final = (f"{_META}Status", f"{_META}DeleteOptions", f"{_META}Patch")
_INFO: Final = {"title": "Kubernetes", "version": KUBERNETES_VERSION}
_BEARER: Final = {
    "BearerToken": {
        "type": "apiKey",
        "description": "Bearer Token authentication",
        "name": "authorization",
        "in": "header",
    }
}
_API_CONVENTIONS: Final = (
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
)
V2_PROTOBUF: Final = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


def custom_definition_name(group: str, version: str, kind: str) -> str:
    """``io.x-k8s.kueue.v1beta1.ClusterQueue``: the reversed group, version and kind, as the
    apiextensions OpenAPI builder names a custom resource's definition."""
    return ".".join([*reversed(group.split(".")), version, kind])


def _v2_custom_schema(node: Any) -> Any:
    # Swagger 2.0 has no nullable, oneOf, anyOf or not: upstream's v2 builder drops them.
    if isinstance(node, list):
        return [_v2_custom_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    dropped = ("nullable", "oneOf", "anyOf", "not", "allOf")
    out: Schema = {}
    for key, value in node.items():
        if key in dropped:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _v2_custom_schema(prop) for name, prop in value.items()}
        else:
            out[key] = _v2_custom_schema(value)
    return out


def _type_meta_property(name: str) -> Schema:
    pod = builtin_definitions()["io.k8s.api.core.v1.Pod"]["properties"]
    return {"description": pod[name]["description"], "type": "string"}


def custom_definitions(info: ResourceInfo, *, v3: bool) -> dict[str, Schema]:
    """The definitions of a custom resource and its list: the CRD's schema with
    ``apiVersion``, ``kind`` and ``metadata`` (ObjectMeta) filled in and the kind's
    ``x-kubernetes-group-version-kind``. References are in v2 form (:func:`definition_v3`
    rewrites them); for ``v3`` False what Swagger 2.0 cannot say is left out."""
    name = custom_definition_name(info.group, info.version, info.kind)
    raw = custom_schema(info)
    # No schema known: anything goes (what a CRD without validation meant upstream).
    schema: Schema = {"x-kubernetes-preserve-unknown-fields": True}
    if raw is not None:
        schema = dict(raw) if v3 else _v2_custom_schema(raw)
    schema.setdefault("type", "object")
    props = dict(schema.get("properties", {}))
    props["apiVersion"] = _type_meta_property("apiVersion")
    props["kind"] = _type_meta_property("kind")
    props["metadata"] = {
        "$ref": f"{V2_REF}{_META}ObjectMeta",
        "description": f"Standard object's metadata. More info: {_API_CONVENTIONS}#metadata",
    }
    schema["properties"] = dict(sorted(props.items()))
    gvk = {"group": info.group, "kind": info.kind, "version": info.version}
    schema["x-kubernetes-group-version-kind"] = [gvk]
    list_schema: Schema = {
        "description": f"{info.list_kind} is a list of {info.kind}",
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": _type_meta_property("apiVersion"),
            "items": {
                "description": f"List of {info.resource}. More info: {_API_CONVENTIONS}",
                "type": "array",
                "items": {"$ref": V2_REF + name},
            },
            "kind": _type_meta_property("kind"),
            "metadata": {
                "$ref": f"{V2_REF}{_META}ListMeta",
                "description": f"Standard list metadata. More info: {_API_CONVENTIONS}#types-kinds",
            },
        },
        "x-kubernetes-group-version-kind": [{**gvk, "kind": info.list_kind}],
    }
    return {name: schema, name + "List": list_schema}


def _kind_definitions(info: ResourceInfo, *, v3: bool) -> tuple[str, str, dict[str, Schema]]:
    """``(definition, list definition, extra definitions)`` of ``info``. A kind that is
    neither built-in nor marked custom is described as a schemaless custom resource, so that
    its paths (and kubectl's fieldValidation check) are still there."""
    name = None if is_custom(info) else definition_name(info.group, info.version, info.kind)
    if name is None:
        custom = custom_definition_name(info.group, info.version, info.kind)
        return custom, custom + "List", custom_definitions(info, v3=v3)
    list_name = definition_name(info.group, info.version, info.list_kind) or name
    return name, list_name, {}


def _group_version_document(
    infos: list[ResourceInfo], group: str, version: str, *, v3: bool
) -> tuple[dict[str, Any], dict[str, Schema]]:
    """``(paths, definitions)`` of one group-version, definitions in v2 form."""
    builder = PathBuilder(group, version, v3=v3, ref=V3_REF if v3 else V2_REF)
    paths: dict[str, Any] = {}
    extra: dict[str, Schema] = {}
    roots: list[str] = list(_ALWAYS)
    for info in sorted(infos, key=lambda i: i.resource):
        name, list_name, defs = _kind_definitions(info, v3=v3)
        extra.update(defs)
        roots.extend((name, list_name))
        paths.update(builder.resource_paths(info, name, list_name, bool(defs)))
    everything = {**builtin_definitions(), **extra}
    definitions = {n: everything[n] for n in closure(roots, everything)}
    return dict(sorted(paths.items())), definitions


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


class OpenAPIDocuments:
    """The OpenAPI documents of one cluster's served resources.

    Build one per state of the served set (a CRD added, changed or removed makes a new one);
    documents are assembled on first use and kept, with their serialized bytes and hashes.
    """

    def __init__(self, infos: Iterable[ResourceInfo]) -> None:
        self._infos = list(infos)
        self._by_gv: dict[str, tuple[str, str, list[ResourceInfo]]] = {}
        for info in self._infos:
            path = _gv_path(info.group, info.version)
            self._by_gv.setdefault(path, (info.group, info.version, []))[2].append(info)
        self._v3: dict[str, tuple[bytes, str]] = {}
        self._v2: tuple[bytes, str] | None = None

    def group_versions(self) -> list[str]:
        """The v3 document paths (``api/v1``, ``apis/batch/v1``, ...), in discovery order."""
        ordered: list[str] = []
        groups = sorted({g for g, _, _ in self._by_gv.values()})
        for group in groups:
            for version in versions_in_order(self._infos, group):
                ordered.append(_gv_path(group, version))
        return ordered

    def v3_document(self, path: str) -> dict[str, Any] | None:
        """The OpenAPI 3.0 document of ``path`` (``api/v1``, ``apis/G/V``), or None."""
        entry = self._by_gv.get(path.strip("/"))
        if entry is None:
            return None
        group, version, infos = entry
        paths, definitions = _group_version_document(infos, group, version, v3=True)
        schemas = {name: definition_v3(name, schema) for name, schema in definitions.items()}
        return {
            "openapi": "3.0.0",
            "info": dict(_INFO),
            "paths": paths,
            "components": {"schemas": schemas, "securitySchemes": dict(_BEARER)},
        }

    def v3_bytes(self, path: str) -> tuple[bytes, str] | None:
        """``(JSON bytes, hash)`` of the v3 document of ``path`` (kept after the first call)."""
        key = path.strip("/")
        if key not in self._v3:
            doc = self.v3_document(key)
            if doc is None:
                return None
            data = orjson.dumps(doc)
            self._v3[key] = (data, document_hash(data))
        return self._v3[key]

    def v3_root(self) -> dict[str, Any]:
        """The ``/openapi/v3`` index: each group-version's ``serverRelativeURL`` with its hash."""
        paths: dict[str, Any] = {}
        for path in self.group_versions():
            found = self.v3_bytes(path)
            if found is not None:
                paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={found[1]}"}
        return {"paths": paths}

    def v2_document(self) -> dict[str, Any]:
        """The Swagger 2.0 document of every served resource."""
        paths: dict[str, Any] = {}
        definitions: dict[str, Schema] = {}
        for group, version, infos in self._by_gv.values():
            gv_paths, gv_defs = _group_version_document(infos, group, version, v3=False)
            paths.update(gv_paths)
            definitions.update(gv_defs)
        return {
            "swagger": "2.0",
            "info": dict(_INFO),
            "paths": dict(sorted(paths.items())),
            "definitions": dict(sorted(definitions.items())),
            "securityDefinitions": dict(_BEARER),
            "security": [{"BearerToken": []}],
        }

    def v2_bytes(self) -> tuple[bytes, str]:
        """``(JSON bytes, hash)`` of the v2 document (kept after the first call)."""
        if self._v2 is None:
            data = orjson.dumps(self.v2_document())
            self._v2 = (data, document_hash(data))
        return self._v2


# --- per-request entry points ---------------------------------------------------------------

_MEMO_SIZE: Final = 8


def _fingerprint(infos: Iterable[ResourceInfo]) -> bytes:
    """A value key of what the documents depend on: names, scope, verbs, subresources and the
    custom schemas (two registries serving the same thing share documents)."""
    described = sorted(
        (
            i.group,
            i.version,
            i.resource,
            i.kind,
            i.namespaced,
            sorted(i.verbs),
            sorted(i.subresources),
            custom_schema(i) if is_custom(i) else False,
        )
        for i in infos
    )
    return hashlib.sha256(orjson.dumps(described, option=orjson.OPT_SORT_KEYS)).digest()


_memo: dict[bytes, OpenAPIDocuments] = {}


def documents_for(infos: Iterable[ResourceInfo]) -> OpenAPIDocuments:
    """The documents of ``infos``, shared with earlier calls for the same served set (a
    bounded memo keyed by value, so a CRD change gives new documents and old sets age out)."""
    served = list(infos)
    key = _fingerprint(served)
    found = _memo.get(key)
    if found is None:
        if len(_memo) >= _MEMO_SIZE:
            del _memo[next(iter(_memo))]
        found = _memo[key] = OpenAPIDocuments(served)
    return found


def openapi_v3_index(infos: Iterable[ResourceInfo]) -> dict[str, Any]:
    """``GET /openapi/v3``."""
    return documents_for(infos).v3_root()


def openapi_v3(infos: Iterable[ResourceInfo], path: str) -> dict[str, Any] | None:
    """``GET /openapi/v3/<path>`` (``api/v1``, ``apis/G/V``), or None (404). Prefer
    :func:`openapi_v3_bytes`, which also gives the ETag."""
    found = documents_for(infos).v3_bytes(path)
    return None if found is None else dict(orjson.loads(found[0]))


def openapi_v3_bytes(infos: Iterable[ResourceInfo], path: str) -> tuple[bytes, str] | None:
    """``(JSON body, hash)`` of ``GET /openapi/v3/<path>``, or None (404)."""
    return documents_for(infos).v3_bytes(path)


def openapi_v2(infos: Iterable[ResourceInfo]) -> dict[str, Any]:
    """``GET /openapi/v2`` (JSON; kubectl's protobuf-only request gets a 406 from the caller)."""
    return dict(orjson.loads(documents_for(infos).v2_bytes()[0]))


def openapi_v2_bytes(infos: Iterable[ResourceInfo]) -> tuple[bytes, str]:
    """``(JSON body, hash)`` of ``GET /openapi/v2``."""
    return documents_for(infos).v2_bytes()
