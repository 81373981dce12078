"""The CustomResourceDefinition object itself: defaulting (:func:`default_crd`) and validation
(:func:`validate_crd`, upstream's ``pkg/apis/apiextensions/validation``); its status is
:func:`numaplane.apiserver.crd.status.crd_status`. The kinds that serve
``customresourcedefinitions`` call these.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from numaplane.api.validation import is_dns1035_label, is_dns1123_subdomain
from numaplane.apiserver.crd import cel
from numaplane.apiserver.crd.celcheck import undefined_fields
from numaplane.apiserver.crd.keywords import keyword_errors
from numaplane.apiserver.crd.names import names_errors
from numaplane.apiserver.crd.printer import JSONPathError, parse_jsonpath
from numaplane.apiserver.crd.schema import parse, structural_errors
from numaplane.apiserver.crd.validation import validate
from numaplane.apiserver.errors import (
    FieldError,
    forbidden_field,
    invalid_value,
    not_supported,
    required,
)

PRINTER_COLUMN_TYPES: Final = ("integer", "number", "string", "boolean", "date")
PRINTER_COLUMN_FORMATS: Final = (
    "int32",
    "int64",
    "float",
    "double",
    "byte",
    "date",
    "date-time",
    "password",
)


def default_crd(crd: dict[str, Any]) -> None:
    """apiextensions/v1 defaulting, in place, as upstream's ``SetDefaults_*``: singular and
    listKind from kind, conversion strategy ``None``, a webhook service's port 443."""
    spec = crd.setdefault("spec", {})
    names = spec.setdefault("names", {})
    kind = names.get("kind", "")
    if not names.get("singular") and kind:
        names["singular"] = kind.lower()
    if not names.get("listKind") and kind:
        names["listKind"] = f"{kind}List"
    conversion = spec.setdefault("conversion", {})
    conversion.setdefault("strategy", "None")
    if conversion["strategy"] == "Webhook":
        webhook = conversion.setdefault("webhook", {})
        service = (webhook.get("clientConfig") or {}).get("service")
        if isinstance(service, dict):
            service.setdefault("port", 443)


def _versions_value(versions: Sequence[Mapping[str, Any]]) -> str:
    # Upstream prints the Go struct slice; name the versions instead (one line, still the value).
    return json.dumps([v.get("name", "") for v in versions])


def validate_crd(crd: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> list[FieldError]:
    """Upstream's ``ValidateCustomResourceDefinition`` (and ``...Update`` with ``old``): the
    name is ``<plural>.<group>``, group, scope, names, versions (unique, exactly one storage),
    each version's schema structural with compilable rules and valid defaults, printer
    columns, subresources, conversion, stored versions.

    ``crd`` is checked as :func:`default_crd` leaves it (upstream validates decoded, so
    defaulted, objects): a definition without ``singular`` or ``listKind`` is not refused."""
    defaulted = copy.deepcopy(dict(crd))
    default_crd(defaulted)
    crd = defaulted
    meta = crd.get("metadata") or {}
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    errs: list[FieldError] = []
    name = str(meta.get("name", ""))
    group = str(spec.get("group", ""))
    if not name:
        errs.append(required("metadata.name", "name or generateName is required"))
    else:
        problems = is_dns1123_subdomain(name)
        if name != f"{names.get('plural', '')}.{group}":
            problems.append('must be spec.names.plural+"."+spec.group')
        errs.extend(invalid_value("metadata.name", name, p) for p in problems)
    errs.extend(_spec_errors(spec))
    if old is not None:
        errs.extend(_update_errors(spec, old.get("spec") or {}, old))
    errs.extend(_stored_version_errors(crd))
    return errs


def _spec_errors(spec: Mapping[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    group = str(spec.get("group", ""))
    if not group:
        errs.append(required("spec.group"))
    elif problems := is_dns1123_subdomain(group):
        errs.append(invalid_value("spec.group", group, ",".join(problems)))
    elif "." not in group:
        errs.append(invalid_value("spec.group", group, "should be a domain with at least one dot"))
    scope = str(spec.get("scope", ""))
    if not scope:
        errs.append(required("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        errs.append(not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))
    versions = list(spec.get("versions") or ())
    seen: set[str] = set()
    unique = True
    storage = 0
    for i, version in enumerate(versions):
        path = f"spec.versions[{i}]"
        version_name = str(version.get("name", ""))
        if version_name in seen:
            unique = False
        seen.add(version_name)
        storage += 1 if version.get("storage") else 0
        if problems := is_dns1035_label(version_name):
            errs.append(invalid_value(f"{path}.name", version_name, ",".join(problems)))
        errs.extend(_version_errors(version, path))
    if not unique:
        errs.append(
            invalid_value(
                "spec.versions", _versions_value(versions), "must contain unique version names"
            )
        )
    if storage != 1:
        errs.append(
            invalid_value(
                "spec.versions",
                _versions_value(versions) if versions else None,
                "must have exactly one version marked as storage version",
            )
        )
    names = spec.get("names") or {}
    for key in ("plural", "singular", "kind", "listKind"):
        if not names.get(key):
            errs.append(required(f"spec.names.{key}"))
    errs.extend(names_errors(names, "spec.names"))
    errs.extend(_conversion_errors(spec.get("conversion")))
    return errs


def _version_errors(version: Mapping[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    schema = (version.get("schema") or {}).get("openAPIV3Schema")
    schema_path = f"{path}.schema.openAPIV3Schema"
    if schema is None:
        errs.append(required(schema_path, "schemas are required"))
    else:
        errs.extend(_schema_errors(schema, schema_path, version))
    for i, column in enumerate(version.get("additionalPrinterColumns") or ()):
        errs.extend(_column_errors(column, f"{path}.additionalPrinterColumns[{i}]"))
    for i, selectable in enumerate(version.get("selectableFields") or ()):
        json_path = str(selectable.get("jsonPath", "") or "")
        here = f"{path}.selectableFields[{i}].jsonPath"
        if not json_path:
            errs.append(required(here))
        else:
            errs.extend(_json_path_errors(json_path, here))
    scale = (version.get("subresources") or {}).get("scale")
    if isinstance(scale, Mapping):
        errs.extend(_scale_errors(scale, f"{path}.subresources.scale"))
    return errs


def _schema_errors(
    schema: Mapping[str, Any], path: str, version: Mapping[str, Any]
) -> list[FieldError]:
    errs = [e for sub, sub_path in _walk_raw(schema, path) for e in keyword_errors(sub, sub_path)]
    if errs:
        # A schema whose keywords do not even have their types cannot be read further.
        return errs
    errs = structural_errors(schema, path)
    if errs:
        return errs
    metadata = (schema.get("properties") or {}).get("metadata")
    if isinstance(metadata, Mapping):
        for key in metadata.get("properties") or {}:
            if key not in ("name", "generateName"):
                errs.append(
                    forbidden_field(
                        f"{path}.properties[metadata].properties[{key}]",
                        "must not be specified",
                    )
                )
    errs.extend(_rule_errors(schema, path))
    errs.extend(_default_errors(schema, path))
    return errs


def _rule_errors(schema: Mapping[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    nodes = {id(node.raw): node for node in parse(schema).walk()}
    for sub, sub_path, uncorrelated in _walk_correlated(schema, path, ""):
        for i, raw in enumerate(sub.get("x-kubernetes-validations") or ()):
            rule = cel.compile_rule(raw)
            rule_path = f"{sub_path}.x-kubernetes-validations[{i}]"
            if rule.transition and uncorrelated:
                errs.append(
                    invalid_value(
                        f"{rule_path}.rule",
                        rule.rule,
                        "oldSelf cannot be used on the uncorrelatable portion of the schema "
                        f"within {uncorrelated}",
                    )
                )
            if not rule.rule:
                errs.append(required(f"{rule_path}.rule"))
            elif rule.error:
                errs.append(invalid_value(f"{rule_path}.rule", rule.rule, rule.error))
            else:
                tree = cel.parse_rule(rule.rule)
                for problem in undefined_fields(tree, nodes[id(sub)], root=sub is schema):
                    detail = f"compilation failed: {problem}"
                    errs.append(invalid_value(f"{rule_path}.rule", rule.rule, detail))
            if raw.get("message") is not None and not str(raw["message"]).strip():
                errs.append(
                    required(f"{rule_path}.message", "message must be non-empty if specified")
                )
            if rule.reason and rule.reason not in cel.REASONS:
                errs.append(not_supported(f"{rule_path}.reason", rule.reason, list(cel.REASONS)))
    return errs


def _default_errors(schema: Mapping[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for sub, sub_path in _walk_raw(schema, path):
        if "default" not in sub or (sub.get("default") is None and sub.get("nullable")):
            continue
        errs.extend(validate(parse(sub), copy.deepcopy(sub["default"]), f"{sub_path}.default"))
    return errs


def _walk_raw(schema: Mapping[str, Any], path: str) -> list[tuple[Mapping[str, Any], str]]:
    return [(sub, sub_path) for sub, sub_path, _ in _walk_correlated(schema, path, "")]


def _walk_correlated(
    schema: Mapping[str, Any], path: str, uncorrelated: str
) -> list[tuple[Mapping[str, Any], str, str]]:
    # Each node with its path and, when an ancestor is a list other than a map list (whose
    # items have no identity across an update), that list's items path.
    out = [(schema, path, uncorrelated)]
    for name, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, Mapping):
            out.extend(_walk_correlated(sub, f"{path}.properties[{name}]", uncorrelated))
    items = schema.get("items")
    if isinstance(items, Mapping):
        here = f"{path}.items"
        lost = uncorrelated or ("" if schema.get("x-kubernetes-list-type") == "map" else here)
        out.extend(_walk_correlated(items, here, lost))
    additional = schema.get("additionalProperties")
    if isinstance(additional, Mapping):
        out.extend(_walk_correlated(additional, f"{path}.additionalProperties", uncorrelated))
    return out


def _column_errors(column: Mapping[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not column.get("name"):
        errs.append(required(f"{path}.name"))
    kind = column.get("type", "")
    if not kind:
        errs.append(
            required(f"{path}.type", "must be one of " + ", ".join(sorted(PRINTER_COLUMN_TYPES)))
        )
    elif kind not in PRINTER_COLUMN_TYPES:
        errs.append(not_supported(f"{path}.type", kind, sorted(PRINTER_COLUMN_TYPES)))
    fmt = column.get("format", "")
    if fmt and fmt not in PRINTER_COLUMN_FORMATS:
        errs.append(not_supported(f"{path}.format", fmt, sorted(PRINTER_COLUMN_FORMATS)))
    json_path = str(column.get("jsonPath", "") or "")
    if not json_path:
        errs.append(required(f"{path}.jsonPath"))
    else:
        errs.extend(_json_path_errors(json_path, f"{path}.jsonPath"))
    return errs


def _json_path_errors(json_path: str, path: str) -> list[FieldError]:
    try:
        parse_jsonpath(json_path)
    except JSONPathError as exc:
        return [invalid_value(path, json_path, f"must be a valid JSON path: {exc}")]
    if not json_path.startswith("."):
        return [invalid_value(path, json_path, "must be a simple json path starting with .")]
    return []


def _scale_errors(scale: Mapping[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in ("specReplicasPath", "statusReplicasPath"):
        value = scale.get(key)
        if not value:
            errs.append(required(f"{path}.{key}"))
            continue
        prefix = ".spec." if key == "specReplicasPath" else ".status."
        if not str(value).startswith(prefix):
            errs.append(
                invalid_value(
                    f"{path}.{key}", value, f"should be a json path under {prefix.rstrip('.')}"
                )
            )
    selector = scale.get("labelSelectorPath")
    if selector and not str(selector).startswith((".spec.", ".status.")):
        errs.append(
            invalid_value(
                f"{path}.labelSelectorPath",
                selector,
                "should be a json path under either .spec or .status",
            )
        )
    return errs


def _conversion_errors(conversion: Any) -> list[FieldError]:
    if not isinstance(conversion, Mapping):
        return []
    strategy = conversion.get("strategy", "")
    if not strategy:
        return [required("spec.conversion.strategy")]
    if strategy not in ("None", "Webhook"):
        return [not_supported("spec.conversion.strategy", strategy, ["None", "Webhook"])]
    if strategy == "Webhook" and not (conversion.get("webhook") or {}).get("clientConfig"):
        return [required("spec.conversion.webhook", "required when strategy is set to Webhook")]
    return []


def _update_errors(
    spec: Mapping[str, Any], old_spec: Mapping[str, Any], old: Mapping[str, Any]
) -> list[FieldError]:
    errs: list[FieldError] = []
    if spec.get("group") != old_spec.get("group"):
        errs.append(invalid_value("spec.group", spec.get("group", ""), "field is immutable"))
    if spec.get("scope") != old_spec.get("scope"):
        errs.append(invalid_value("spec.scope", spec.get("scope", ""), "field is immutable"))
    established = any(
        c.get("type") == "Established" and c.get("status") == "True"
        for c in (old.get("status") or {}).get("conditions") or ()
    )
    new_plural = (spec.get("names") or {}).get("plural", "")
    if established and new_plural != (old_spec.get("names") or {}).get("plural", ""):
        errs.append(invalid_value("spec.names.plural", new_plural, "field is immutable"))
    return errs


def _stored_version_errors(crd: Mapping[str, Any]) -> list[FieldError]:
    status = crd.get("status") or {}
    if "storedVersions" not in status:
        # Not yet filled (a create before crd_status): upstream fills it first, so no error.
        return []
    stored = list(status.get("storedVersions") or ())
    path = "status.storedVersions"
    if not stored:
        return [invalid_value(path, None, "must have at least one stored version")]
    errs: list[FieldError] = []
    versions = (crd.get("spec") or {}).get("versions") or ()
    names = {str(v.get("name", "")) for v in versions}
    for version in versions:
        if version.get("storage") and version.get("name") not in stored:
            errs.append(
                invalid_value(
                    path,
                    version.get("name", ""),
                    f"must have the storage version {version.get('name', '')}",
                )
            )
    for i, name in enumerate(stored):
        if name not in names:
            errs.append(invalid_value(f"{path}[{i}]", name, "must appear in spec.versions"))
    return errs
