"""A CRD version's ``openAPIV3Schema`` read once into a tree of :class:`Node` (upstream's
``schema.Structural``), which validation, pruning, defaulting and CEL walk.

Only the structural parts get their own attributes (type, properties, items,
additionalProperties, the ``x-kubernetes-*`` extensions, default); value validations (enum,
bounds, pattern, junctors, ...) are read from :attr:`Node.raw` where they are checked.
:func:`structural_errors` says why a schema is not structural, as ``validate_crd`` reports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from numaplane.apiserver.errors import FieldError, forbidden_field, invalid_value, required

_NO_DEFAULT: Final = object()

#: The fields of ObjectMeta: what survives in ``metadata`` of a custom resource (and of an
#: embedded resource); anything else is an unknown field, dropped as upstream's objectmeta coercion.
OBJECT_META_FIELDS: Final = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)


@dataclass(eq=False)
class Node:
    """One schema node. ``type`` is ``""`` where the schema leaves it open (int-or-string,
    preserve-unknown-fields, or a value-validation-only junctor branch)."""

    raw: Mapping[str, Any]
    type: str = ""
    properties: dict[str, Node] = field(default_factory=dict)
    items: Node | None = None
    additional: Node | None = None
    additional_allowed: bool = False
    preserve_unknown: bool = False
    embedded: bool = False
    int_or_string: bool = False
    nullable: bool = False
    default: Any = _NO_DEFAULT
    list_type: str = ""
    map_keys: tuple[str, ...] = ()
    map_type: str = ""
    rules: tuple[Mapping[str, Any], ...] = ()
    required: tuple[str, ...] = ()
    all_of: tuple[Node, ...] = ()
    any_of: tuple[Node, ...] = ()
    one_of: tuple[Node, ...] = ()
    not_: Node | None = None

    @property
    def has_junctors(self) -> bool:
        """Whether allOf/anyOf/oneOf/not constrain the value."""
        return bool(self.all_of or self.any_of or self.one_of or self.not_ is not None)

    @property
    def has_default(self) -> bool:
        """Whether the schema sets ``default``."""
        return self.default is not _NO_DEFAULT

    def child(self, key: str) -> Node | None:
        """The schema of an object's field ``key``: a property, else additionalProperties."""
        found = self.properties.get(key)
        return found if found is not None else self.additional

    def walk(self) -> list[Node]:
        """This node and every node below it (properties, items, additionalProperties)."""
        out: list[Node] = [self]
        for prop in self.properties.values():
            out.extend(prop.walk())
        for sub in (self.items, self.additional):
            if sub is not None:
                out.extend(sub.walk())
        return out


def parse(raw: Mapping[str, Any] | None) -> Node:
    """``raw`` (an ``openAPIV3Schema``, possibly ``None`` for "accept anything") as a tree."""
    if raw is None:
        return Node(raw={}, preserve_unknown=True)
    node = Node(
        raw=raw,
        type=str(raw.get("type", "") or ""),
        preserve_unknown=bool(raw.get("x-kubernetes-preserve-unknown-fields", False)),
        embedded=bool(raw.get("x-kubernetes-embedded-resource", False)),
        int_or_string=bool(raw.get("x-kubernetes-int-or-string", False)),
        nullable=bool(raw.get("nullable", False)),
        default=raw.get("default", _NO_DEFAULT),
        list_type=str(raw.get("x-kubernetes-list-type", "") or ""),
        map_keys=tuple(raw.get("x-kubernetes-list-map-keys") or ()),
        map_type=str(raw.get("x-kubernetes-map-type", "") or ""),
        rules=tuple(raw.get("x-kubernetes-validations") or ()),
        required=tuple(raw.get("required") or ()),
    )
    for name, sub in (raw.get("properties") or {}).items():
        node.properties[name] = parse(sub)
    items = raw.get("items")
    if isinstance(items, Mapping):
        node.items = parse(items)
    additional = raw.get("additionalProperties")
    if isinstance(additional, Mapping):
        node.additional = parse(additional)
        node.additional_allowed = True
    elif additional is True:
        node.additional_allowed = True
    node.all_of = tuple(parse(sub) for sub in raw.get("allOf") or ())
    node.any_of = tuple(parse(sub) for sub in raw.get("anyOf") or ())
    node.one_of = tuple(parse(sub) for sub in raw.get("oneOf") or ())
    if isinstance(raw.get("not"), Mapping):
        node.not_ = parse(raw["not"])
    return node


_FORBIDDEN_IN_STRUCTURAL: Final = (
    ("$ref", "$ref"),
    ("definitions", "definitions"),
    ("dependencies", "dependencies"),
    ("additionalItems", "additionalItems"),
    ("patternProperties", "patternProperties"),
    ("id", "id"),
)


def structural_errors(raw: Mapping[str, Any], path: str) -> list[FieldError]:
    """Why ``raw`` is not a structural schema (upstream's ``ValidateStructural``): every node
    with a type (or int-or-string / preserve-unknown-fields), no ``$ref`` and friends,
    additionalProperties not beside properties, the list-type extensions well formed."""
    errs: list[FieldError] = []
    _structural(raw, path, errs, root=True)
    return errs


def _structural(raw: Mapping[str, Any], path: str, errs: list[FieldError], *, root: bool) -> None:
    kind = raw.get("type", "")
    open_type = raw.get("x-kubernetes-int-or-string") or raw.get(
        "x-kubernetes-preserve-unknown-fields"
    )
    if not kind and not open_type:
        errs.append(required(f"{path}.type", "must not be empty for specified object fields"))
    if root and kind and kind != "object":
        errs.append(invalid_value(f"{path}.type", kind, "must be object at the root"))
    for key, shown in _FORBIDDEN_IN_STRUCTURAL:
        if key in raw:
            errs.append(forbidden_field(f"{path}.{shown}", "must not be specified"))
    if raw.get("properties") and raw.get("additionalProperties") not in (None, False):
        errs.append(
            forbidden_field(
                f"{path}.additionalProperties",
                "additionalProperties and properties are mutual exclusive",
            )
        )
    errs.extend(list_type_errors(raw, path))
    for name, sub in (raw.get("properties") or {}).items():
        if isinstance(sub, Mapping):
            _structural(sub, f"{path}.properties[{name}]", errs, root=False)
    items = raw.get("items")
    if isinstance(items, Mapping):
        _structural(items, f"{path}.items", errs, root=False)
    elif kind == "array" and items is None:
        errs.append(required(f"{path}.items", "must be specified"))
    additional = raw.get("additionalProperties")
    if isinstance(additional, Mapping):
        _structural(additional, f"{path}.additionalProperties", errs, root=False)


def list_type_errors(raw: Mapping[str, Any], path: str) -> list[FieldError]:
    """The ``x-kubernetes-list-type`` / ``x-kubernetes-list-map-keys`` rules of upstream's CRD
    schema validation: known list types, map keys naming required (or defaulted) scalar item
    properties, set items atomic."""
    errs: list[FieldError] = []
    list_type = raw.get("x-kubernetes-list-type")
    keys = list(raw.get("x-kubernetes-list-map-keys") or ())
    here = f"{path}.x-kubernetes-list-type"
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        errs.append(
            FieldError(
                "FieldValueNotSupported",
                here,
                list_type,
                'supported values: "atomic", "set", "map"',
            )
        )
    elif list_type is not None and raw.get("type") != "array":
        errs.append(invalid_value(here, list_type, "must only be used if type is array"))
    if keys and list_type is None:
        errs.append(required(here, "must be map if x-kubernetes-list-map-keys is non-empty"))
    elif keys and list_type != "map":
        errs.append(
            invalid_value(here, list_type, "must be map if x-kubernetes-list-map-keys is non-empty")
        )
    items = raw.get("items")
    if list_type == "map":
        errs.extend(_map_list_errors(items, keys, path))
    if list_type == "set" and isinstance(items, Mapping):
        if (
            items.get("type") == "array"
            and items.get("x-kubernetes-list-type", "atomic") != "atomic"
        ):
            errs.append(
                invalid_value(
                    f"{path}.items.x-kubernetes-list-type",
                    items.get("x-kubernetes-list-type"),
                    "must be atomic as item of a list with x-kubernetes-list-type=set",
                )
            )
        if items.get("type") == "object" and items.get("x-kubernetes-map-type") != "atomic":
            errs.append(
                invalid_value(
                    f"{path}.items.x-kubernetes-map-type",
                    items.get("x-kubernetes-map-type"),
                    "must be atomic as item of a list with x-kubernetes-list-type=set",
                )
            )
    return errs


def _map_list_errors(items: Any, keys: list[str], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    keys_path = f"{path}.x-kubernetes-list-map-keys"
    if not keys:
        errs.append(required(keys_path, "must not be empty if x-kubernetes-list-type is map"))
    if not isinstance(items, Mapping):
        errs.append(
            required(f"{path}.items", "must have a schema if x-kubernetes-list-type is map")
        )
        return errs
    if items.get("type") != "object":
        errs.append(
            invalid_value(
                f"{path}.items.type",
                items.get("type", ""),
                "must be object if parent array's x-kubernetes-list-type is map",
            )
        )
        return errs
    properties = items.get("properties") or {}
    required_keys = set(items.get("required") or ())
    seen: set[str] = set()
    for key in keys:
        prop = properties.get(key)
        if prop is None:
            errs.append(
                invalid_value(keys_path, keys, "entries must all be names of item properties")
            )
        else:
            if prop.get("type") in ("array", "object"):
                errs.append(
                    invalid_value(
                        f"{path}.items.properties[{key}].type",
                        prop.get("type"),
                        "must be a scalar type if parent array's x-kubernetes-list-type is map",
                    )
                )
            if key not in required_keys and "default" not in prop:
                errs.append(
                    required(
                        f"{path}.items.properties[{key}].default",
                        "this property is in x-kubernetes-list-map-keys, so it must have a "
                        "default or be a required property",
                    )
                )
        if key in seen:
            errs.append(invalid_value(keys_path, keys, "must not contain duplicate entries"))
        seen.add(key)
    return errs
