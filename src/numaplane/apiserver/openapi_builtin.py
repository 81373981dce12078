"""The OpenAPI definitions of Kubernetes' built-in types, read from a package's data files.

Source: the ``kubernetes-validate`` package (PyPI, Apache-2.0, maintained by Will Thames), which
ships every Kubernetes release's OpenAPI definitions converted to JSON Schema. We read its
``v1.32.0-local/_definitions.json`` (the kube-apiserver 1.32 definitions, with descriptions and
the ``x-kubernetes-*`` extensions kubectl relies on: ``patch-strategy``, ``patch-merge-key``,
``list-type``, ``list-map-keys``, ``map-type``, ``group-version-kind``) at run time and undo the
JSON Schema conversion (nullable ``type`` lists, ``oneOf`` for int-or-string and quantities,
``enum`` pins on ``apiVersion``/``kind``, ``$defs`` references), which gives back the OpenAPI
v2 definitions kube-apiserver publishes. Nothing is copied into this repository; the package is a
runtime dependency, and its files are only read (its module is never imported).
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

import orjson

from numaplane.apiserver.resource import ResourceInfo
from numaplane.errors import NumaplaneError

SCHEMA_PACKAGE: Final = "kubernetes_validate"
KUBERNETES_VERSION: Final = "v1.32.0"
_DEFS_FILE: Final = ("kubernetes-json-schema", f"{KUBERNETES_VERSION}-local", "_definitions.json")
_JSON_SCHEMA_REF: Final = "#/$defs/"
V2_REF: Final = "#/definitions/"
V3_REF: Final = "#/components/schemas/"

Schema = dict[str, Any]

#: The ``ResourceInfo.extra`` keys under which the CRD code hands over a custom resource
#: version's ``openAPIV3Schema`` (``numaplane.apiserver.crd`` uses ``schema`` and names the CRD
#: under ``crd``); any of them marks a custom resource.
OPENAPI_SCHEMA_KEY: Final = "openapi_schema"
CRD_SCHEMA_KEY: Final = "schema"
CRD_NAME_KEY: Final = "crd"


class SchemaSourceError(NumaplaneError):
    """The built-in type definitions cannot be read (the data package is missing or damaged)."""


def is_custom(info: ResourceInfo) -> bool:
    """Whether ``info`` is a custom resource (served for a CRD)."""
    return any(key in info.extra for key in (OPENAPI_SCHEMA_KEY, CRD_SCHEMA_KEY, CRD_NAME_KEY))


def custom_schema(info: ResourceInfo) -> Schema | None:
    """The ``openAPIV3Schema`` of a custom resource's version, or None (none, or built-in)."""
    for key in (OPENAPI_SCHEMA_KEY, CRD_SCHEMA_KEY):
        schema = info.extra.get(key)
        if isinstance(schema, dict):
            return schema
    return None


def _definitions_path() -> Path:
    # find_spec locates the package without running its __init__ (which imports jsonschema).
    spec = importlib.util.find_spec(SCHEMA_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise SchemaSourceError(
            f"{SCHEMA_PACKAGE}: not installed (pip install kubernetes-validate): the built-in "
            "OpenAPI definitions come from it"
        )
    path = Path(next(iter(spec.submodule_search_locations))).joinpath(*_DEFS_FILE)
    if not path.is_file():
        raise SchemaSourceError(f"{path}: missing from {SCHEMA_PACKAGE}")
    return path


def _int_or_string(alternatives: list[Any]) -> str | None:
    kinds = {t for alt in alternatives for t in _types(alt.get("type"))}
    if kinds == {"string", "integer"}:
        return "int-or-string"
    if kinds == {"string", "number"}:
        return "quantity"
    return None


def _types(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(t) for t in value if t != "null"]
    return [str(value)] if isinstance(value, str) else []


def _convert(node: Any) -> Any:
    """One JSON Schema node back to its OpenAPI form (references left as ``#/definitions/``)."""
    if isinstance(node, list):
        return [_convert(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: Schema = {}
    special = _int_or_string(node["oneOf"]) if "oneOf" in node else None
    for key, value in node.items():
        if key == "oneOf" and special is not None:
            continue
        if key == "type":
            # ["string", "null"] -> "string": OpenAPI v2 has no null type.
            types = _types(value)
            if types:
                out[key] = types[0]
        elif key == "$ref" and isinstance(value, str):
            out[key] = V2_REF + value.removeprefix(_JSON_SCHEMA_REF)
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: _convert(prop) for name, prop in value.items()}
        else:
            out[key] = _convert(value)
    if special == "int-or-string":
        out["type"] = "string"
        out["format"] = "int-or-string"
    elif special == "quantity":
        out["type"] = "string"
    return out


def _unpin_type_meta(definition: Schema) -> None:
    # The JSON Schema conversion pins apiVersion and kind of every top-level kind with an
    # ``enum``; kube-apiserver's definitions have none.
    for name in ("apiVersion", "kind"):
        prop = definition.get("properties", {}).get(name)
        if isinstance(prop, dict):
            prop.pop("enum", None)


@functools.cache
def builtin_definitions() -> Mapping[str, Schema]:
    """Every built-in definition by name (``io.k8s.api.core.v1.Pod``), in OpenAPI v2 form.

    Read once per process (about 4 MiB of JSON); callers must not mutate what they get.
    """
    raw = orjson.loads(_definitions_path().read_bytes())
    defs = raw.get("$defs")
    if not isinstance(defs, dict):
        raise SchemaSourceError(f"{_definitions_path()}: no $defs")
    converted: dict[str, Schema] = {}
    for name, definition in defs.items():
        out = _convert(definition)
        if "x-kubernetes-group-version-kind" in out:
            _unpin_type_meta(out)
        converted[name] = out
    return converted


@functools.cache
def _gvk_index() -> Mapping[tuple[str, str, str], str]:
    index: dict[tuple[str, str, str], str] = {}
    for name, definition in builtin_definitions().items():
        for gvk in definition.get("x-kubernetes-group-version-kind", ()):
            key = (gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", ""))
            # Several definitions may claim one GVK (DeleteOptions for every group); the
            # first in name order is the canonical one, as kube-openapi picks.
            index.setdefault(key, name)
    return index


def definition_name(group: str, version: str, kind: str) -> str | None:
    """The built-in definition of ``group/version, Kind=kind``, or None when there is none."""
    return _gvk_index().get((group, version, kind))


def references(node: Any, prefix: str = V2_REF) -> Iterable[str]:
    """The definition names ``node`` refers to (directly, not transitively)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith(prefix):
                yield value.removeprefix(prefix)
            else:
                yield from references(value, prefix)
    elif isinstance(node, list):
        for item in node:
            yield from references(item, prefix)


def closure(
    roots: Iterable[str], definitions: Mapping[str, Schema], prefix: str = V2_REF
) -> list[str]:
    """``roots`` and every definition they reach, sorted by name (unknown names skipped)."""
    seen: set[str] = set()
    stack = [r for r in roots if r in definitions]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        stack.extend(r for r in references(definitions[name], prefix) if r in definitions)
    return sorted(seen)


#: Types whose OpenAPI v3 schema differs from their v2 one beyond references: kube-openapi
#: publishes them in v3 as ``oneOf`` their JSON forms (``OpenAPIV3OneOfTypes``), in v2 as strings.
V3_DEFINITIONS: Final[dict[str, Schema]] = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {
        "oneOf": [{"type": "string"}, {"type": "number"}],
    },
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
        "format": "int-or-string",
        "oneOf": [{"type": "integer"}, {"type": "string"}],
    },
}


def definition_v3(name: str, definition: Schema) -> Schema:
    """A definition in the v3 form kube-openapi publishes (see :func:`to_v3`)."""
    special = V3_DEFINITIONS.get(name)
    if special is not None:
        return {**{k: v for k, v in definition.items() if k == "description"}, **special}
    converted: Schema = to_v3(definition)
    return converted


def to_v3(node: Any) -> Any:
    """An OpenAPI v2 schema in the v3 form kube-openapi publishes: references point at
    ``#/components/schemas/`` and a reference with siblings (a description) is wrapped in
    ``allOf``, since OpenAPI 3.0 ignores a ``$ref``'s siblings."""
    if isinstance(node, list):
        return [to_v3(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: Schema = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: to_v3(prop) for name, prop in value.items()}
        elif key != "$ref":
            out[key] = to_v3(value)
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = V3_REF + ref.removeprefix(V2_REF)
        out = {"allOf": [{"$ref": target}], **out} if out else {"$ref": target}
    return out
