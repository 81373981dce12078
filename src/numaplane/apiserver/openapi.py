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

from collections.abc import Iterable, Mapping
from typing import Any, Final

import orjson

from numaplane.apiserver.discovery import document_hash, versions_in_order
from numaplane.apiserver.openapi_builtin import (
    KUBERNETES_VERSION,
    V2_REF,
    V3_REF,
    Schema,
    builtin_definitions,
    closure,
    definition_name,
    definition_v3,
)
from numaplane.apiserver.openapi_paths import PathBuilder
from numaplane.apiserver.resource import ResourceInfo

OPENAPI_SCHEMA_KEY: Final = "openapi_schema"
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


def is_custom(info: ResourceInfo) -> bool:
    """Whether ``info`` is a custom resource (its CRD handed over a schema)."""
    return OPENAPI_SCHEMA_KEY in info.extra


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
    raw = info.extra.get(OPENAPI_SCHEMA_KEY)
    schema: Schema = {}
    if isinstance(raw, dict):
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


def _kind_definitions(info: ResourceInfo, *, v3: bool) -> tuple[str, str, dict[str, Schema]] | None:
    """``(definition, list definition, extra definitions)`` of ``info``, or None when no
    schema is known for a built-in kind."""
    if is_custom(info):
        custom = custom_definition_name(info.group, info.version, info.kind)
        return custom, custom + "List", custom_definitions(info, v3=v3)
    name = definition_name(info.group, info.version, info.kind)
    if name is None:
        return None
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
        found = _kind_definitions(info, v3=v3)
        if found is None:
            continue
        name, list_name, defs = found
        extra.update(defs)
        roots.extend((name, list_name))
        paths.update(builder.resource_paths(info, name, list_name, is_custom(info)))
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


# --- strict field validation ----------------------------------------------------------------


def _resolve(schema: Mapping[str, Any], defs: Mapping[str, Schema]) -> Mapping[str, Any]:
    seen = 0
    while seen < 32:
        seen += 1
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith(V2_REF):
            schema = defs.get(ref.removeprefix(V2_REF), {})
            continue
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and "properties" not in schema:
            schema = all_of[0]
            continue
        break
    return schema


def _walk(
    schema: Mapping[str, Any],
    value: Any,
    path: str,
    defs: Mapping[str, Schema],
    out: list[str],
) -> None:
    schema = _resolve(schema, defs)
    if schema.get("x-kubernetes-preserve-unknown-fields") is True:
        return
    if isinstance(value, dict):
        props = schema.get("properties")
        more = schema.get("additionalProperties")
        embedded = schema.get("x-kubernetes-embedded-resource") is True
        if props is None and not isinstance(more, dict) and not embedded:
            return  # a free-form object (RawExtension, JSON, FieldsV1)
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if props is not None and key in props:
                _walk(props[key], item, where, defs, out)
            elif embedded and key in ("apiVersion", "kind"):
                continue
            elif embedded and key == "metadata":
                _walk({"$ref": f"{V2_REF}{_META}ObjectMeta"}, item, where, defs, out)
            elif isinstance(more, dict):
                _walk(more, item, where, defs, out)
            else:
                out.append(where)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(value):
                _walk(items, item, f"{path}[{index}]", defs, out)


def unknown_fields(info: ResourceInfo, obj: Mapping[str, Any]) -> list[str]:
    """The fields of ``obj`` its schema does not know, as strict decoding names them
    (``spec.foo``, ``spec.containers[0].bar``, ``metadata.baz``), in document order.

    The server words them ``strict decoding error: unknown field "spec.foo", unknown field
    ...`` (400 under ``fieldValidation=Strict``, a warning each under ``Warn``). Built-in kinds
    are checked against kube-apiserver's definitions; custom resources against their CRD
    schema, honouring ``x-kubernetes-preserve-unknown-fields`` and embedded resources (the CRD
    code's pruning gives the same answer for them). An unknown built-in kind has no unknown
    fields.
    """
    defs = builtin_definitions()
    if is_custom(info):
        raw = info.extra.get(OPENAPI_SCHEMA_KEY)
        top: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {}
        if not top:
            top["x-kubernetes-preserve-unknown-fields"] = True
        props = dict(top.get("properties", {}))
        props["metadata"] = {"$ref": f"{V2_REF}{_META}ObjectMeta"}
        props.setdefault("apiVersion", {"type": "string"})
        props.setdefault("kind", {"type": "string"})
        top["properties"] = props
        schema: Mapping[str, Any] = top
    else:
        name = definition_name(info.group, info.version, info.kind)
        if name is None:
            return []
        schema = defs[name]
    out: list[str] = []
    _walk(schema, obj, "", defs, out)
    return out


def strict_decoding_message(fields: Iterable[str]) -> str:
    """Upstream's message for unknown fields under ``fieldValidation=Strict``."""
    return "strict decoding error: " + ", ".join(f'unknown field "{f}"' for f in fields)
