"""Object metadata and name rules, as apimachinery validates them.

The name and label checks answer with apimachinery's exact messages (``util/validation``:
``IsDNS1123Subdomain``, ``IsQualifiedName``, ...), and :func:`validate_object_meta` /
:func:`validate_object_meta_update` are ``ValidateObjectMeta`` / ``ValidateObjectMetaUpdate``
(with core's extra finalizer-name rule), so kubectl prints what users know.

(Over 400 lines: every name, label, annotation and metadata rule upstream shares across kinds,
with its exact message, in one place.)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final

# The checks selectors share live in numaplane.api; re-exported for the kinds.
from numaplane.api.validation import DNS1123_SUBDOMAIN_MAX_LENGTH
from numaplane.api.validation import is_dns1035_label as is_dns1035_label
from numaplane.api.validation import is_dns1123_subdomain as is_dns1123_subdomain
from numaplane.api.validation import is_qualified_name as is_qualified_name
from numaplane.api.validation import is_valid_label_value as is_valid_label_value
from numaplane.api.validation import max_len_error as max_len_error
from numaplane.api.validation import regex_error as regex_error
from numaplane.apiserver.errors import (
    FieldError,
    forbidden_field,
    invalid_value,
    required,
    too_long,
)

Object = dict[str, Any]

#: A kind's name rule: ``(name, is_generate_name_prefix) -> messages`` (upstream's
#: ``ValidateNameFunc``).
NameRule = Callable[[str, bool], list[str]]

DNS1123_LABEL_MAX: Final = 63
#: ``TotalAnnotationSizeLimitB``: keys and values of all annotations together.
ANNOTATIONS_SIZE_LIMIT: Final = 256 * 1024

FIELD_IMMUTABLE: Final = "field is immutable"
IS_NEGATIVE: Final = "must be greater than or equal to 0"

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
_CONFIG_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"

_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)
_CONFIG_KEY_RE = re.compile(_CONFIG_KEY_FMT)

#: Finalizers core accepts without a ``domain/`` prefix (``IsStandardFinalizerName``).
STANDARD_FINALIZERS: Final = frozenset({"kubernetes", "orphan", "foregroundDeletion"})


def inclusive_range_error(low: int, high: int) -> str:
    """``InclusiveRangeError``."""
    return f"must be between {low} and {high}, inclusive"


def is_dns1123_label(value: str) -> list[str]:
    """``IsDNS1123Label``."""
    errors = []
    if len(value) > DNS1123_LABEL_MAX:
        errors.append(max_len_error(DNS1123_LABEL_MAX))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        errors.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errors


def is_config_map_key(value: str) -> list[str]:
    """``IsConfigMapKey``: keys of ConfigMap and Secret data."""
    errors = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errors.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _CONFIG_KEY_RE.fullmatch(value):
        errors.append(
            regex_error(_CONFIG_KEY_MSG, _CONFIG_KEY_FMT, "key.name", "KEY_NAME", "key-name")
        )
    if value == ".":
        errors.append("must not be '.'")
    elif value == "..":
        errors.append("must not be '..'")
    elif value.startswith(".."):
        errors.append("must not start with '..'")
    return errors


def _mask_trailing_dash(name: str) -> str:
    # A generateName prefix may end in '-': the random suffix follows it.
    return name[:-1] + "a" if len(name) > 1 and name.endswith("-") else name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    """``NameIsDNSSubdomain``: the name rule of most kinds."""
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    """``NameIsDNSLabel``: namespaces' name rule."""
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    """``NameIsDNS1035Label``."""
    return is_dns1035_label(_mask_trailing_dash(name) if prefix else name)


def validate_path_segment_name(name: str, prefix: bool) -> list[str]:
    """``ValidatePathSegmentName``: RBAC objects' name rule (anything usable in a URL path)."""
    errors = []
    if not prefix:
        if name == ".":
            errors.append("may not be '.'")
        elif name == "..":
            errors.append("may not be '..'")
    for illegal in ("/", "%"):
        if illegal in name:
            errors.append(f"may not contain '{illegal}'")
    return errors


def as_dict(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (absent and null read as empty)."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    """``value`` if it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def as_str(value: object) -> str:
    """``value`` if it is a string, else ``""``."""
    return value if isinstance(value, str) else ""


def as_int(value: object, default: int = 0) -> int:
    """``value`` if it is an integer (booleans excluded), else ``default``."""
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def metadata(obj: Mapping[str, Any]) -> dict[str, Any]:
    """``obj.metadata`` (empty when absent)."""
    return as_dict(obj.get("metadata"))


def validate_labels(labels: object, path: str) -> list[FieldError]:
    """``ValidateLabels``: every key a qualified name, every value a label value (keys sorted,
    where Go's map order is random)."""
    errors: list[FieldError] = []
    for key, value in sorted(as_dict(labels).items()):
        errors.extend(invalid_value(path, key, m) for m in is_qualified_name(key))
        text = value if isinstance(value, str) else str(value)
        errors.extend(invalid_value(path, text, m) for m in is_valid_label_value(text))
    return errors


def validate_annotations(annotations: object, path: str) -> list[FieldError]:
    """``ValidateAnnotations``: qualified keys (checked lower-cased) and 256 KiB in all."""
    errors: list[FieldError] = []
    total = 0
    for key, value in sorted(as_dict(annotations).items()):
        errors.extend(invalid_value(path, key, m) for m in is_qualified_name(key.lower()))
        total += len(key) + len(value if isinstance(value, str) else str(value))
    if total > ANNOTATIONS_SIZE_LIMIT:
        errors.append(too_long(path, ANNOTATIONS_SIZE_LIMIT))
    return errors


def validate_nonnegative(value: int, path: str) -> list[FieldError]:
    """``ValidateNonnegativeField``."""
    return [invalid_value(path, value, IS_NEGATIVE)] if value < 0 else []


def validate_immutable(new: object, old: object, path: str) -> list[FieldError]:
    """``ValidateImmutableField`` (the new value is quoted)."""
    return [] if new == old else [invalid_value(path, new, FIELD_IMMUTABLE)]


def _validate_owner_references(refs: object, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    first_controller = ""
    for ref in as_list(refs):
        ref = as_dict(ref)
        if not as_str(ref.get("apiVersion")):
            errors.append(invalid_value(f"{path}.apiVersion", "", "version must not be empty"))
        if not as_str(ref.get("kind")):
            errors.append(invalid_value(f"{path}.kind", "", "kind must not be empty"))
        if not as_str(ref.get("name")):
            errors.append(invalid_value(f"{path}.name", "", "name must not be empty"))
        if not as_str(ref.get("uid")):
            errors.append(invalid_value(f"{path}.uid", "", "uid must not be empty"))
        if ref.get("controller") is True:
            current = f"{as_str(ref.get('kind'))}/{as_str(ref.get('name'))}"
            if first_controller:
                errors.append(
                    invalid_value(
                        path,
                        refs,
                        'Only one reference can have Controller set to true. Found "true" in '
                        f"references for {first_controller} and {current}",
                    )
                )
            else:
                first_controller = current
    return errors


def _validate_finalizers(finalizers: object, path: str, kube_rule: bool) -> list[FieldError]:
    names = [f for f in as_list(finalizers) if isinstance(f, str)]
    errors: list[FieldError] = []
    for name in names:
        errors.extend(invalid_value(path, name, m) for m in is_qualified_name(name))
    if "orphan" in names and "foregroundDeletion" in names:
        errors.append(
            invalid_value(path, names, "finalizer orphan and foregroundDeletion cannot be both set")
        )
    if kube_rule:
        errors.extend(_validate_kube_finalizers(finalizers, path))
    return errors


def _validate_kube_finalizers(finalizers: object, path: str) -> list[FieldError]:
    # Core's extra rule (validateKubeFinalizerName): an unprefixed finalizer must be standard.
    errors: list[FieldError] = []
    for i, name in enumerate(as_list(finalizers)):
        if isinstance(name, str) and "/" not in name and name not in STANDARD_FINALIZERS:
            errors.append(
                invalid_value(
                    f"{path}[{i}]",
                    name,
                    "name is neither a standard finalizer name nor is it fully qualified",
                )
            )
    return errors


def validate_object_meta(
    obj: Mapping[str, Any],
    namespaced: bool,
    name_rule: NameRule,
    *,
    path: str = "metadata",
    kube_finalizers: bool = True,
) -> list[FieldError]:
    """``ValidateObjectMeta`` of a new object: generateName and name by ``name_rule``, the
    namespace (required, a DNS label) or its absence, labels, annotations, owner references and
    finalizers. ``kube_finalizers`` adds core's rule that an unprefixed finalizer be standard."""
    meta = as_dict(obj.get("metadata")) if path == "metadata" else as_dict(obj)
    errors: list[FieldError] = []
    generate_name = as_str(meta.get("generateName"))
    if generate_name:
        errors.extend(
            invalid_value(f"{path}.generateName", generate_name, m)
            for m in name_rule(generate_name, True)
        )
    name = as_str(meta.get("name"))
    if not name:
        errors.append(required(f"{path}.name", "name or generateName is required"))
    else:
        errors.extend(invalid_value(f"{path}.name", name, m) for m in name_rule(name, False))
    namespace = as_str(meta.get("namespace"))
    if namespaced:
        if not namespace:
            errors.append(required(f"{path}.namespace"))
        else:
            errors.extend(
                invalid_value(f"{path}.namespace", namespace, m)
                for m in name_is_dns_label(namespace, False)
            )
    elif namespace:
        errors.append(forbidden_field(f"{path}.namespace", "not allowed on this type"))
    errors.extend(validate_nonnegative(as_int(meta.get("generation")), f"{path}.generation"))
    errors.extend(validate_labels(meta.get("labels"), f"{path}.labels"))
    errors.extend(validate_annotations(meta.get("annotations"), f"{path}.annotations"))
    errors.extend(
        _validate_owner_references(meta.get("ownerReferences"), f"{path}.ownerReferences")
    )
    errors.extend(
        _validate_finalizers(meta.get("finalizers"), f"{path}.finalizers", kube_finalizers)
    )
    return errors


def validate_object_meta_update(
    new: Mapping[str, Any],
    old: Mapping[str, Any],
    *,
    path: str = "metadata",
    kube_finalizers: bool = True,
) -> list[FieldError]:
    """``ValidateObjectMetaUpdate``: no new finalizers once deleting, a resourceVersion given,
    generation not decremented, identity fields immutable, and the new labels, annotations and
    owner references valid (finalizer names: core's rule only, as upstream)."""
    meta = metadata(new)
    old_meta = metadata(old)
    errors: list[FieldError] = []
    if old_meta.get("deletionTimestamp"):
        old_finalizers = set(as_list(old_meta.get("finalizers")))
        extra = sorted(
            {f for f in as_list(meta.get("finalizers")) if isinstance(f, str)} - old_finalizers
        )
        if extra:
            shown = ", ".join(f'"{f}"' for f in extra)
            errors.append(
                forbidden_field(
                    f"{path}.finalizers",
                    "no new finalizers can be added if the object is being deleted, found new "
                    f"finalizers []string{{{shown}}}",
                )
            )
    resource_version = as_str(meta.get("resourceVersion"))
    if not resource_version:
        errors.append(
            invalid_value(f"{path}.resourceVersion", "", "must be specified for an update")
        )
    generation = as_int(meta.get("generation"))
    if generation < as_int(old_meta.get("generation")):
        errors.append(invalid_value(f"{path}.generation", generation, "must not be decremented"))
    for key, empty in (
        ("name", ""),
        ("namespace", ""),
        ("uid", ""),
        ("creationTimestamp", None),
        ("deletionTimestamp", None),
        ("deletionGracePeriodSeconds", None),
    ):
        errors.extend(
            validate_immutable(meta.get(key, empty), old_meta.get(key, empty), f"{path}.{key}")
        )
    errors.extend(validate_labels(meta.get("labels"), f"{path}.labels"))
    errors.extend(validate_annotations(meta.get("annotations"), f"{path}.annotations"))
    errors.extend(
        _validate_owner_references(meta.get("ownerReferences"), f"{path}.ownerReferences")
    )
    if kube_finalizers:
        errors.extend(_validate_kube_finalizers(meta.get("finalizers"), f"{path}.finalizers"))
    return errors
