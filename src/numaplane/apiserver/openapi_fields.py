"""Strict field validation: the fields of an object its schema does not know.

kube-apiserver decodes request bodies strictly under ``fieldValidation=Strict`` (kubectl's
default) and refuses unknown fields with ``strict decoding error: unknown field "spec.foo"``
(400), or warns once per field under ``Warn``. Built-in kinds are checked against the
definitions of :mod:`numaplane.apiserver.openapi_builtin`; custom resources against their CRD
schema (``ResourceInfo.extra["openapi_schema"]``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from numaplane.apiserver.openapi_builtin import (
    V2_REF,
    Schema,
    builtin_definitions,
    custom_schema,
    definition_name,
    is_custom,
)
from numaplane.apiserver.resource import ResourceInfo

_OBJECT_META: Final = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


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


@dataclass(frozen=True, slots=True)
class _Node:
    """A schema resolved once: what the walk asks of it at every value it checks."""

    preserve: bool
    free_form: bool
    props: Any
    more: Mapping[str, Any] | None
    embedded: bool
    items: Mapping[str, Any] | None


#: Resolved schemas by the identity of the schema and the definitions (both kept alive, so
#: that their ids are not reused): definitions and CRD schemas live as long as the server.
_NODES: dict[tuple[int, int], tuple[Mapping[str, Any], Mapping[str, Schema], _Node]] = {}
_NODES_LIMIT: Final = 20000
_META_REF: Final = {"$ref": f"{V2_REF}{_OBJECT_META}"}


def _node(schema: Mapping[str, Any], defs: Mapping[str, Schema]) -> _Node:
    key = (id(schema), id(defs))
    found = _NODES.get(key)
    if found is not None:
        return found[2]
    resolved = _resolve(schema, defs)
    props = resolved.get("properties")
    more = resolved.get("additionalProperties")
    embedded = resolved.get("x-kubernetes-embedded-resource") is True
    items = resolved.get("items")
    node = _Node(
        preserve=resolved.get("x-kubernetes-preserve-unknown-fields") is True,
        free_form=props is None and not isinstance(more, dict) and not embedded,
        props=props,
        more=more if isinstance(more, dict) else None,
        embedded=embedded,
        items=items if isinstance(items, dict) else None,
    )
    if len(_NODES) > _NODES_LIMIT:
        _NODES.clear()
    _NODES[key] = (schema, defs, node)
    return node


def _walk(
    schema: Mapping[str, Any],
    value: Any,
    path: str,
    defs: Mapping[str, Schema],
    out: list[str],
) -> None:
    # Only objects and lists can hold unknown fields: scalars are not walked into.
    node = _node(schema, defs)
    if node.preserve:
        return
    if isinstance(value, dict):
        if node.free_form:
            return  # a free-form object (RawExtension, JSON, FieldsV1)
        props, more, embedded = node.props, node.more, node.embedded
        for key, item in value.items():
            if props is not None and key in props:
                if isinstance(item, dict | list):
                    _walk(props[key], item, f"{path}.{key}" if path else str(key), defs, out)
            elif embedded and key in ("apiVersion", "kind"):
                continue
            elif embedded and key == "metadata":
                if isinstance(item, dict | list):
                    _walk(_META_REF, item, f"{path}.{key}" if path else str(key), defs, out)
            elif more is not None:
                if isinstance(item, dict | list):
                    _walk(more, item, f"{path}.{key}" if path else str(key), defs, out)
            else:
                out.append(f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        items = node.items
        if items is not None:
            for index, item in enumerate(value):
                if isinstance(item, dict | list):
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
        raw = custom_schema(info)
        top: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {}
        if not top:
            top["x-kubernetes-preserve-unknown-fields"] = True
        props = dict(top.get("properties", {}))
        props["metadata"] = {"$ref": f"{V2_REF}{_OBJECT_META}"}
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
