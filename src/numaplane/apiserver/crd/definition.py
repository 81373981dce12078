"""A CustomResourceDefinition as the resources it serves: :func:`crd_resource_infos`.

Each served version becomes a :class:`~numaplane.apiserver.resource.ResourceInfo` whose strategy
prunes unknown fields, applies the schema's defaults, and validates with the version's schema
(kube-openapi messages), its list types and its ``x-kubernetes-validations`` CEL rules.

Versions and conversion: a CRD with several served versions and no conversion webhook has
conversion strategy ``None``, as upstream: objects are stored at the storage version and served
at every version unchanged except ``apiVersion``. Nothing else is converted: a write through a
version is pruned, defaulted and validated with that version's schema, then stored as it is
under the storage version's ``apiVersion``; upstream also prunes with the storage version's
schema when it reads an object back (the storage version's ``extra["prune"]`` does that for a
caller that wants it). A ``Webhook`` strategy is served the same way (no webhook is called).

Compiled schemas are cached per CRD (uid, generation), so a registry may rebuild its infos on
every CRD event without recompiling CEL rules.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from numaplane.api.validation import is_dns1123_subdomain
from numaplane.apiserver.crd import cel
from numaplane.apiserver.crd.correlation import NO_OLD
from numaplane.apiserver.crd.defaulting import apply_defaults
from numaplane.apiserver.crd.listtype import list_errors
from numaplane.apiserver.crd.printer import (
    CRDTablePrinter,
    JSONPathError,
    find,
    parse_jsonpath,
    text_of,
)
from numaplane.apiserver.crd.pruning import prune, prune_nulls
from numaplane.apiserver.crd.schema import Node, parse
from numaplane.apiserver.crd.validation import embedded_errors, validate
from numaplane.apiserver.errors import FieldError, forbidden_field, invalid_value, required
from numaplane.apiserver.resource import ALL_VERBS, Object, ResourceInfo

RULES_NOT_CHECKED: Final = (
    "some validation rules were not checked because the object was invalid; correct the "
    "existing errors to complete validation"
)
_BLOCKING: Final = frozenset(
    {
        "FieldValueNotSupported",
        "FieldValueRequired",
        "FieldValueTooLong",
        "FieldValueTooMany",
        "FieldValueTypeInvalid",
    }
)

MetaValidator = Callable[[Object, bool], list[FieldError]]
MetaUpdateValidator = Callable[[Object, Object], list[FieldError]]


def default_meta_validator(obj: Object, namespaced: bool) -> list[FieldError]:
    """Custom resources' object-meta checks (name a DNS-1123 subdomain, namespace by scope),
    used when the caller passes no fuller validator."""
    meta = obj.get("metadata") or {}
    errs: list[FieldError] = []
    name = meta.get("name", "")
    if not name and not meta.get("generateName"):
        errs.append(required("metadata.name", "name or generateName is required"))
    elif name and (problems := is_dns1123_subdomain(name)):
        # Only the first problem: the length one when the name is too long.
        errs.append(invalid_value("metadata.name", name, problems[0]))
    namespace = meta.get("namespace", "")
    if namespaced and not namespace:
        errs.append(required("metadata.namespace"))
    if not namespaced and namespace:
        errs.append(forbidden_field("metadata.namespace", "not allowed on this type"))
    return errs


@dataclass(frozen=True)
class CompiledVersion:
    """One version's schema, read and compiled once."""

    name: str
    node: Node
    rules: cel.CompiledRules
    status: bool
    scale: Mapping[str, Any] | None


class CRDStrategy:
    """Writes to a custom resource (``status=False``) or its ``status`` subresource."""

    def __init__(
        self,
        group: str,
        compiled: CompiledVersion,
        namespaced: bool,
        *,
        status: bool,
        meta_validator: MetaValidator,
    ) -> None:
        """``compiled`` is the served version; ``status`` picks the status-subresource rules."""
        self._group = group
        self._compiled = compiled
        self._namespaced = namespaced
        self._status = status
        self._meta_validator = meta_validator

    @property
    def schema(self) -> Node:
        """The version's schema tree."""
        return self._compiled.node

    def prune(self, obj: Object) -> list[str]:
        """Remove unknown fields from ``obj``; their paths (for strict field validation)."""
        return prune(self._compiled.node, obj)

    def default(self, obj: Object) -> None:
        """Prune unknown fields and non-nullable nulls, then apply the schema's defaults (the
        order of upstream's decoder: coercion, then the defaulter)."""
        node = self._compiled.node
        prune(node, obj)
        prune_nulls(node, obj)
        apply_defaults(node, obj)

    def prepare_for_create(self, obj: Object) -> None:
        """Drop ``status`` when the status subresource owns it; generation starts at 1."""
        if self._compiled.status and not self._status:
            obj.pop("status", None)
        obj.setdefault("metadata", {})["generation"] = 1

    def prepare_for_update(self, new: Object, old: Object) -> None:
        """Main resource: keep the old ``status``. Status subresource: keep everything but
        ``status`` (and the new managedFields) from the old object."""
        if not self._compiled.status:
            return
        if not self._status:
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)
            return
        status = new.get("status")
        has_status = "status" in new
        managed = (new.get("metadata") or {}).get("managedFields")
        new.clear()
        new.update(copy.deepcopy(old))
        if managed is not None:
            new.setdefault("metadata", {})["managedFields"] = managed
        if has_status:
            new["status"] = status
        else:
            new.pop("status", None)

    def validate(self, obj: Object) -> list[FieldError]:
        """Object meta, schema, list types, then CEL rules (upstream's order)."""
        errs = self._meta_validator(obj, self._namespaced)
        errs.extend(self._schema_errors(obj, NO_OLD))
        return self._with_rules(errs, obj, None)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        """As :meth:`validate`, with transition rules seeing ``oldSelf``, and schema and rule
        errors in parts left unchanged not reported (upstream's ratcheting)."""
        errs = self._meta_validator(new, self._namespaced)
        errs.extend(self._schema_errors(new, old))
        return self._with_rules(errs, new, old)

    def _with_rules(
        self, errs: list[FieldError], new: Object, old: Object | None
    ) -> list[FieldError]:
        # As upstream's hasBlockingErr: a type, required, enum or size error means the CEL
        # rules would see values of the wrong shape, so they are skipped with one notice.
        if self._compiled.rules.empty:
            return errs
        if any(e.type in _BLOCKING for e in errs):
            errs.append(FieldError("FieldValueInvalid", cel.ROOT_PATH, None, RULES_NOT_CHECKED))
            return errs
        errs.extend(cel.validate(self._compiled.rules, new, old))
        return errs

    def _schema_errors(self, obj: Object, old: Any) -> list[FieldError]:
        # The schema is ratcheted against the old object; embedded resources and list types
        # are checked in full, as upstream does.
        node = self._compiled.node
        errs = validate(node, obj, old=old)
        errs.extend(embedded_errors(node, obj))
        errs.extend(list_errors(node, obj))
        return errs

    def bumps_generation(self, new: Object, old: Object) -> bool:
        """A change outside ``metadata`` (and outside ``status`` when it is a subresource)."""
        if self._status:
            return False
        skip = {"metadata", "status"} if self._compiled.status else {"metadata"}
        left = {k: v for k, v in new.items() if k not in skip}
        right = {k: v for k, v in old.items() if k not in skip}
        return left != right


_CACHE: dict[tuple[str, str, int, str], CompiledVersion] = {}
_CACHE_LIMIT: Final = 512


def compile_version(crd: Mapping[str, Any], version: Mapping[str, Any]) -> CompiledVersion:
    """``version`` of ``crd`` read and its rules compiled (cached by uid, generation, name)."""
    meta = crd.get("metadata") or {}
    key = (
        str(meta.get("name", "")),
        str(meta.get("uid", "")),
        int(meta.get("generation", 0) or 0),
        str(version.get("name", "")),
    )
    found = _CACHE.get(key)
    if found is not None and meta.get("uid"):
        return found
    raw = ((version.get("schema") or {}).get("openAPIV3Schema")) or None
    node = parse(raw)
    subresources = version.get("subresources") or {}
    compiled = CompiledVersion(
        name=str(version.get("name", "")),
        node=node,
        rules=cel.compile_schema(node),
        status="status" in subresources,
        scale=subresources.get("scale"),
    )
    if len(_CACHE) >= _CACHE_LIMIT:
        _CACHE.clear()
    _CACHE[key] = compiled
    return compiled


def _field_set(
    selectable: tuple[tuple[str, tuple[Any, ...]], ...],
) -> Callable[[Object], dict[str, str]]:
    def fields(obj: Object) -> dict[str, str]:
        meta = obj.get("metadata") or {}
        out = {
            "metadata.name": meta.get("name", ""),
            "metadata.namespace": meta.get("namespace", ""),
        }
        for name, steps in selectable:
            found = find(steps, obj)
            out[name] = text_of(found[0]) if found and found[0] is not None else ""
        return out

    return fields


def _selectable(version: Mapping[str, Any]) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    # selectableFields as (field label, parsed path); a path outside the subset is left out
    # (validate_crd refuses such a definition; this keeps a stored one from breaking serving).
    out: list[tuple[str, tuple[Any, ...]]] = []
    for entry in version.get("selectableFields") or ():
        path = str(entry.get("jsonPath", ""))
        try:
            out.append((path.lstrip("."), parse_jsonpath(path)))
        except JSONPathError:
            continue
    return tuple(out)


def _deprecation(group: str, kind: str, version: Mapping[str, Any]) -> str | None:
    # The Warning header upstream sends for a deprecated version: its own text, or the default.
    if not version.get("deprecated", False):
        return None
    custom = version.get("deprecationWarning")
    if custom:
        return str(custom)
    return f"{group}/{version.get('name', '')} {kind} is deprecated"


def crd_resource_infos(
    crd: Mapping[str, Any],
    *,
    meta_validator: MetaValidator | None = None,
) -> list[ResourceInfo]:
    """One :class:`ResourceInfo` per served version of ``crd`` (storage version noted).

    ``extra`` carries ``schema`` and ``openapi_schema`` (the version's raw
    ``openAPIV3Schema``, for OpenAPI and ``kubectl explain``), ``scale`` (the scale
    subresource's paths, or ``None``), ``crd`` (the CRD's name), ``prune`` (a function
    pruning an object in place and returning the unknown-field paths), ``deprecated`` and
    ``deprecation_warning`` (the ``Warning`` header text for a deprecated version, else
    ``None``).
    """
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group = str(spec.get("group", ""))
    kind = str(names.get("kind", ""))
    namespaced = spec.get("scope", "Namespaced") == "Namespaced"
    versions = spec.get("versions") or []
    storage = next((str(v["name"]) for v in versions if v.get("storage")), "")
    checker = meta_validator or default_meta_validator
    infos: list[ResourceInfo] = []
    for version in versions:
        if not version.get("served", False):
            continue
        compiled = compile_version(crd, version)
        strategy = CRDStrategy(group, compiled, namespaced, status=False, meta_validator=checker)
        status_strategy = (
            CRDStrategy(group, compiled, namespaced, status=True, meta_validator=checker)
            if compiled.status
            else None
        )
        subresources = tuple(
            s for s in ("status", "scale") if s in (version.get("subresources") or {})
        )
        selectable = _selectable(version)
        infos.append(
            ResourceInfo(
                group=group,
                version=str(version["name"]),
                resource=str(names.get("plural", "")),
                kind=kind,
                namespaced=namespaced,
                strategy=strategy,
                table=CRDTablePrinter(version.get("additionalPrinterColumns") or ()),
                field_set=_field_set(selectable),
                singular=str(names.get("singular", "") or kind.lower()),
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                verbs=ALL_VERBS,
                subresources=subresources,
                status_strategy=status_strategy,
                storage_version=storage,
                extra={
                    "schema": (version.get("schema") or {}).get("openAPIV3Schema"),
                    "openapi_schema": (version.get("schema") or {}).get("openAPIV3Schema"),
                    "scale": compiled.scale,
                    "crd": (crd.get("metadata") or {}).get("name", ""),
                    "prune": strategy.prune,
                    "deprecated": bool(version.get("deprecated", False)),
                    "deprecation_warning": _deprecation(group, kind, version),
                },
            )
        )
    return infos
