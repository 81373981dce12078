"""Pod specs as Pods and pod templates (Jobs) share them: ``ValidatePodSpec``'s checks that users
meet (``pkg/apis/core/validation``), with upstream's paths and messages. Their defaulting is
:mod:`numaplane.apiserver.kinds.podspec_defaults`.

(Over 400 lines: containers, resources, volumes and the pod-level fields are one validation
pass upstream, and stay one here so that paths and error order match.)
"""

from __future__ import annotations

import re
from typing import Any, Final

from numaplane.api.quantity import Quantity, QuantityError
from numaplane.api.resourcenames import is_extended_resource_name
from numaplane.apiserver.errors import (
    FieldError,
    bad_request,
    duplicate,
    invalid_value,
    not_supported,
    required,
)
from numaplane.apiserver.kinds.meta import (
    as_dict,
    as_int,
    as_list,
    as_str,
    inclusive_range_error,
    is_dns1123_label,
    is_qualified_name,
    is_valid_label_value,
    max_len_error,
    name_is_dns_subdomain,
    validate_annotations,
    validate_labels,
)

Object = dict[str, Any]

RESTART_POLICIES: Final = ("Always", "OnFailure", "Never")
DNS_POLICIES: Final = ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None")
PULL_POLICIES: Final = ("Always", "IfNotPresent", "Never")
TERMINATION_MESSAGE_POLICIES: Final = ("File", "FallbackToLogsOnError")
PROTOCOLS: Final = ("SCTP", "TCP", "UDP")
_MAX_UINT32: Final = 2**32 - 1
_STANDARD_CONTAINER_RESOURCES: Final = frozenset({"cpu", "memory", "ephemeral-storage"})
_HUGEPAGES: Final = "hugepages-"
_PORT_NAME_CHARSET: Final = re.compile("[-a-z0-9]+")
_PORT_NAME_LETTER: Final = re.compile("[a-z]")
_ENV_NAME_MSG: Final = (
    "a valid environment variable name must consist only of printable ASCII characters other "
    "than '='"
)


# --- validation -------------------------------------------------------------------------------


def parse_quantity(value: object, kind: str) -> Quantity:
    """A quantity in a decoded object; malformed ones are refused as upstream's decoder does
    (400 ``Pod in version "v1" cannot be handled as a Pod: ...``)."""
    try:
        return Quantity.parse(value if isinstance(value, str | int) else str(value))
    except QuantityError as err:
        raise bad_request(
            f'{kind} in version "v1" cannot be handled as a {kind}: {err.reason}'
        ) from err


def _is_hugepages(name: str) -> bool:
    return name.startswith(_HUGEPAGES)


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _overcommit_allowed(name: str) -> bool:
    return _is_native(name) and not _is_hugepages(name)


def _is_integer_resource(name: str) -> bool:
    return is_extended_resource_name(name)


def _validate_container_resource_name(name: str, path: str) -> list[FieldError]:
    errors = [invalid_value(path, name, m) for m in is_qualified_name(name)]
    if "/" not in name:
        if name not in _STANDARD_CONTAINER_RESOURCES and not _is_hugepages(name):
            errors.append(invalid_value(path, name, "must be a standard resource for containers"))
    elif not _is_native(name) and not is_extended_resource_name(name):
        errors.append(invalid_value(path, name, "doesn't follow extended resource name standard"))
    return errors


def _validate_quantity(name: str, quantity: Quantity, path: str) -> list[FieldError]:
    errors = []
    if quantity.sign() < 0:
        errors.append(invalid_value(path, str(quantity), "must be greater than or equal to 0"))
    if _is_integer_resource(name) and quantity.amount.denominator != 1:
        errors.append(invalid_value(path, str(quantity), "must be an integer"))
    return errors


def validate_resources(resources: object, path: str, kind: str) -> list[FieldError]:
    """``ValidateResourceRequirements``: names, non-negative (integer where required) amounts,
    requests at most limits (equal for resources that cannot be overcommitted), HugePages only
    next to cpu or memory."""
    res = as_dict(resources)
    limits = {k: parse_quantity(v, kind) for k, v in as_dict(res.get("limits")).items()}
    requests = {k: parse_quantity(v, kind) for k, v in as_dict(res.get("requests")).items()}
    errors: list[FieldError] = []
    lim_path, req_path = f"{path}.limits", f"{path}.requests"
    for name, quantity in sorted(limits.items()):
        errors.extend(_validate_container_resource_name(name, f"{lim_path}[{name}]"))
        errors.extend(_validate_quantity(name, quantity, f"{lim_path}[{name}]"))
    for name, quantity in sorted(requests.items()):
        errors.extend(_validate_container_resource_name(name, f"{req_path}[{name}]"))
        errors.extend(_validate_quantity(name, quantity, f"{req_path}[{name}]"))
        limit = limits.get(name)
        if limit is not None:
            if quantity != limit and not _overcommit_allowed(name):
                errors.append(
                    invalid_value(
                        req_path, str(quantity), f"must be equal to {name} limit of {limit}"
                    )
                )
            elif quantity > limit:
                errors.append(
                    invalid_value(
                        req_path,
                        str(quantity),
                        f"must be less than or equal to {name} limit of {limit}",
                    )
                )
        elif not _overcommit_allowed(name):
            errors.append(required(lim_path, "Limit must be set for non overcommitable resources"))
    names = set(limits) | set(requests)
    if any(_is_hugepages(n) for n in names) and not names & {"cpu", "memory"}:
        errors.append(
            FieldError("FieldValueForbidden", path, detail="HugePages require cpu or memory")
        )
    return errors


def _validate_env(env: object, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for i, var in enumerate(as_list(env)):
        name = as_str(as_dict(var).get("name"))
        if not name:
            errors.append(required(f"{path}[{i}].name"))
        elif any(ord(ch) < 32 or ord(ch) > 126 or ch == "=" for ch in name):
            errors.append(invalid_value(f"{path}[{i}].name", name, _ENV_NAME_MSG))
    return errors


def is_valid_port_name(name: str) -> list[str]:
    """``IsValidPortName``: an IANA service name (at most 15 of ``a-z0-9-``, a letter, no
    leading, trailing or doubled hyphen)."""
    errors = []
    if len(name) > 15:
        errors.append(max_len_error(15))
    if not _PORT_NAME_CHARSET.fullmatch(name):
        errors.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _PORT_NAME_LETTER.search(name):
        errors.append("must contain at least one letter (a-z)")
    if "--" in name:
        errors.append("must not contain consecutive hyphens")
    if name and (name[0] == "-" or name[-1] == "-"):
        errors.append("must not begin or end with a hyphen")
    return errors


def _validate_ports(ports: object, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(as_list(ports)):
        port = as_dict(port)
        at = f"{path}[{i}]"
        name = as_str(port.get("name"))
        if name:
            messages = is_valid_port_name(name)
            if messages:
                errors.extend(invalid_value(f"{at}.name", name, m) for m in messages)
            elif name in names:
                errors.append(duplicate(f"{at}.name", name))
            names.add(name)
        number = as_int(port.get("containerPort"))
        if not 1 <= number <= 65535:
            errors.append(
                invalid_value(f"{at}.containerPort", number, inclusive_range_error(1, 65535))
            )
        host = as_int(port.get("hostPort"))
        if "hostPort" in port and not 1 <= host <= 65535 and host != 0:
            errors.append(invalid_value(f"{at}.hostPort", host, inclusive_range_error(1, 65535)))
        protocol = as_str(port.get("protocol"))
        if not protocol:
            errors.append(required(f"{at}.protocol"))
        elif protocol not in PROTOCOLS:
            errors.append(not_supported(f"{at}.protocol", protocol, PROTOCOLS))
    return errors


def _validate_container(
    container: Object, path: str, volumes: set[str], kind: str
) -> list[FieldError]:
    errors: list[FieldError] = []
    image = as_str(container.get("image"))
    if not image:
        errors.append(required(f"{path}.image"))
    elif image != image.strip():
        errors.append(
            invalid_value(f"{path}.image", image, "must not have leading or trailing whitespace")
        )
    policy = as_str(container.get("terminationMessagePolicy"))
    if not policy:
        errors.append(required(f"{path}.terminationMessagePolicy"))
    elif policy not in TERMINATION_MESSAGE_POLICIES:
        errors.append(
            not_supported(f"{path}.terminationMessagePolicy", policy, TERMINATION_MESSAGE_POLICIES)
        )
    errors.extend(_validate_ports(container.get("ports"), f"{path}.ports"))
    errors.extend(_validate_env(container.get("env"), f"{path}.env"))
    mount_paths: set[str] = set()
    for i, mount in enumerate(as_list(container.get("volumeMounts"))):
        mount = as_dict(mount)
        at = f"{path}.volumeMounts[{i}]"
        name = as_str(mount.get("name"))
        if not name:
            errors.append(required(f"{at}.name"))
        elif name not in volumes:
            errors.append(FieldError("FieldValueNotFound", f"{at}.name", name))
        mount_path = as_str(mount.get("mountPath"))
        if not mount_path:
            errors.append(required(f"{at}.mountPath"))
        elif mount_path in mount_paths:
            errors.append(invalid_value(f"{at}.mountPath", mount_path, "must be unique"))
        mount_paths.add(mount_path)
    pull = as_str(container.get("imagePullPolicy"))
    if not pull:
        errors.append(required(f"{path}.imagePullPolicy"))
    elif pull not in PULL_POLICIES:
        errors.append(not_supported(f"{path}.imagePullPolicy", pull, PULL_POLICIES))
    errors.extend(validate_resources(container.get("resources"), f"{path}.resources", kind))
    return errors


def _validate_volumes(volumes: object, path: str) -> tuple[set[str], list[FieldError]]:
    names: set[str] = set()
    errors: list[FieldError] = []
    for i, volume in enumerate(as_list(volumes)):
        name = as_str(as_dict(volume).get("name"))
        at = f"{path}[{i}].name"
        if not name:
            errors.append(required(at))
        else:
            errors.extend(invalid_value(at, name, m) for m in is_dns1123_label(name))
            if name in names:
                errors.append(duplicate(at, name))
        names.add(name)
        errors.extend(_validate_volume_source(as_dict(volume), f"{path}[{i}]"))
    return names, errors


#: The field each common volume source cannot do without (validateXVolumeSource).
_VOLUME_SOURCE_REQUIRED: Final = (
    ("hostPath", "path"),
    ("secret", "secretName"),
    ("persistentVolumeClaim", "claimName"),
    ("configMap", "name"),
)


def _validate_volume_source(volume: Object, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for source, key in _VOLUME_SOURCE_REQUIRED:
        spec = volume.get(source)
        if isinstance(spec, dict) and not as_str(spec.get(key)):
            errors.append(required(f"{path}.{source}.{key}"))
    return errors


TAINT_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_OPERATORS: Final = ("Equal", "Exists")


def validate_taint_effect(effect: str, allow_empty: bool, path: str) -> list[FieldError]:
    """``validateTaintEffect``."""
    if not effect:
        return [] if allow_empty else [required(path)]
    if effect not in TAINT_EFFECTS:
        return [not_supported(path, effect, TAINT_EFFECTS)]
    return []


def validate_tolerations(tolerations: object, path: str) -> list[FieldError]:
    """``ValidateTolerations``: keys, operator against key and value, effect (NoExecute when
    tolerationSeconds is set)."""
    errors: list[FieldError] = []
    for i, item in enumerate(as_list(tolerations)):
        toleration = as_dict(item)
        at = f"{path}[{i}]"
        key = as_str(toleration.get("key"))
        operator = as_str(toleration.get("operator"))
        value = as_str(toleration.get("value"))
        effect = as_str(toleration.get("effect"))
        if key:
            errors.extend(invalid_value(f"{at}.key", key, m) for m in is_qualified_name(key))
        if not key and operator != "Exists":
            errors.append(
                invalid_value(
                    f"{at}.operator",
                    operator,
                    'operator must be Exists when `key` is empty, which means "match all values '
                    'and all keys"',
                )
            )
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            errors.append(
                invalid_value(
                    f"{at}.effect",
                    effect,
                    "effect must be 'NoExecute' when `tolerationSeconds` is set",
                )
            )
        if operator in ("Equal", ""):
            messages = is_valid_label_value(value)
            if messages:
                errors.append(invalid_value(f"{at}.operator", value, ";".join(messages)))
        elif operator == "Exists":
            if value:
                errors.append(
                    invalid_value(
                        f"{at}.operator",
                        toleration,
                        "value must be empty when `operator` is 'Exists'",
                    )
                )
        else:
            errors.append(not_supported(f"{at}.operator", operator, TOLERATION_OPERATORS))
        errors.extend(validate_taint_effect(effect, True, f"{at}.effect"))
    return errors


def validate_restart_policy(policy: str, path: str) -> list[FieldError]:
    """``validateRestartPolicy``."""
    if not policy:
        return [required(path)]
    if policy not in RESTART_POLICIES:
        return [not_supported(path, policy, RESTART_POLICIES)]
    return []


def validate_pod_spec(spec: object, path: str, kind: str = "Pod") -> list[FieldError]:
    """``ValidatePodSpec``'s checks users meet: volumes, containers (names unique across init
    and app containers, DNS labels; images; ports; env; mounts; resources), restartPolicy,
    dnsPolicy, nodeSelector, tolerations, serviceAccountName, nodeName, priorityClassName,
    hostname and subdomain, activeDeadlineSeconds."""
    spec = as_dict(spec)
    volume_names, errors = _validate_volumes(spec.get("volumes"), f"{path}.volumes")
    containers = as_list(spec.get("containers"))
    names: set[str] = set()
    # App containers first, then init containers, each name unique across both (as upstream).
    groups = (("containers", containers), ("initContainers", as_list(spec.get("initContainers"))))
    if not containers:
        errors.append(required(f"{path}.containers"))
    for key, items in groups:
        for i, item in enumerate(items):
            container = as_dict(item)
            at = f"{path}.{key}[{i}]"
            name = as_str(container.get("name"))
            if not name:
                errors.append(required(f"{at}.name"))
            else:
                errors.extend(invalid_value(f"{at}.name", name, m) for m in is_dns1123_label(name))
                if name in names:
                    errors.append(duplicate(f"{at}.name", name))
            names.add(name)
            errors.extend(_validate_container(container, at, volume_names, kind))
    errors.extend(
        validate_restart_policy(as_str(spec.get("restartPolicy")), f"{path}.restartPolicy")
    )
    dns = as_str(spec.get("dnsPolicy"))
    if not dns:
        errors.append(required(f"{path}.dnsPolicy"))
    elif dns not in DNS_POLICIES:
        errors.append(not_supported(f"{path}.dnsPolicy", dns, DNS_POLICIES))
    errors.extend(validate_labels(spec.get("nodeSelector"), f"{path}.nodeSelector"))
    errors.extend(validate_tolerations(spec.get("tolerations"), f"{path}.tolerations"))
    for key in ("serviceAccountName", "nodeName", "priorityClassName"):
        value = as_str(spec.get(key))
        if value:
            errors.extend(
                invalid_value(f"{path}.{key}", value, m)
                for m in name_is_dns_subdomain(value, False)
            )
    for key in ("hostname", "subdomain"):
        value = as_str(spec.get(key))
        if value:
            errors.extend(invalid_value(f"{path}.{key}", value, m) for m in is_dns1123_label(value))
    if "activeDeadlineSeconds" in spec and spec["activeDeadlineSeconds"] is not None:
        deadline = as_int(spec.get("activeDeadlineSeconds"))
        if not 1 <= deadline <= _MAX_UINT32:
            errors.append(
                invalid_value(
                    f"{path}.activeDeadlineSeconds", deadline, inclusive_range_error(1, _MAX_UINT32)
                )
            )
    return errors


def validate_pod_template(template: object, path: str, kind: str) -> list[FieldError]:
    """``ValidatePodTemplateSpec``: the template's labels and annotations, then its spec."""
    template = as_dict(template)
    meta = as_dict(template.get("metadata"))
    errors = validate_labels(meta.get("labels"), f"{path}.labels")
    errors.extend(validate_annotations(meta.get("annotations"), f"{path}.annotations"))
    errors.extend(validate_pod_spec(template.get("spec"), f"{path}.spec", kind))
    return errors
