"""core/v1 Secret, ConfigMap and ServiceAccount (``pkg/registry/core/{secret,configmap,
serviceaccount}``): data keys, sizes, Secret types and their required keys, immutability.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Final

from numaplane.apiserver import errors
from numaplane.apiserver.errors import (
    FieldError,
    forbidden_field,
    invalid_value,
    required,
    too_long,
)
from numaplane.apiserver.kinds.meta import (
    as_dict,
    as_list,
    as_str,
    is_config_map_key,
    metadata,
    name_is_dns_subdomain,
    validate_immutable,
)
from numaplane.apiserver.kinds.printing import meta_fields, name_age_printer
from numaplane.apiserver.kinds.strategy import KindStrategy
from numaplane.apiserver.resource import TableColumn

Object = dict[str, Any]

#: ``MaxSecretSize``: the data of a Secret or a ConfigMap, 1 MiB.
MAX_DATA_SIZE: Final = 1024 * 1024
SERVICE_ACCOUNT_TOKEN_TYPE: Final = "kubernetes.io/service-account-token"
SERVICE_ACCOUNT_NAME_KEY: Final = "kubernetes.io/service-account.name"
SERVICE_ACCOUNT_UID_KEY: Final = "kubernetes.io/service-account.uid"
_IMMUTABLE: Final = "field is immutable when `immutable` is set"


def decode_data(secret: Object) -> dict[str, bytes]:
    """A Secret's ``data`` decoded; a value that is not base64 is refused as upstream's decoder
    does (400 ``Secret in version "v1" cannot be handled as a Secret: illegal base64 data at
    input byte N``)."""
    decoded = {}
    for key, value in as_dict(secret.get("data")).items():
        text = value if isinstance(value, str) else ""
        try:
            decoded[key] = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as err:
            position = _bad_base64_at(text)
            raise errors.bad_request(
                'Secret in version "v1" cannot be handled as a Secret: '
                f"illegal base64 data at input byte {position}"
            ) from err
    return decoded


_BASE64_ALPHABET: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
)


def _bad_base64_at(text: str) -> int:
    # Go reports the first byte it cannot use: a stray character, or the start of an
    # incomplete final quantum.
    for i, ch in enumerate(text):
        if ch not in _BASE64_ALPHABET and ch != "=":
            return i
    return len(text) - len(text) % 4


# --- Secret -----------------------------------------------------------------------------------


def default_secret(secret: Object) -> None:
    """``SetDefaults_Secret`` (type Opaque) and the v1 conversion: ``stringData`` is written
    into ``data`` (base64, winning over the same key) and dropped."""
    if not secret.get("type"):
        secret["type"] = "Opaque"
    string_data = secret.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = secret.get("data")
        if not isinstance(data, dict):
            data = secret["data"] = {}
        for key, value in string_data.items():
            data[key] = base64.b64encode(as_str(value).encode()).decode()


def validate_secret(secret: Object) -> list[FieldError]:
    """``ValidateSecret``: keys, 1 MiB of data, and each type's required content."""
    data = decode_data(secret)
    errors_: list[FieldError] = []
    for key in sorted(data):
        errors_.extend(invalid_value(f"data[{key}]", key, m) for m in is_config_map_key(key))
    if sum(len(v) for v in data.values()) > MAX_DATA_SIZE:
        errors_.append(too_long("data", MAX_DATA_SIZE))
    kind = as_str(secret.get("type"))
    annotations = as_dict(metadata(secret).get("annotations"))
    if kind == SERVICE_ACCOUNT_TOKEN_TYPE:
        if not as_str(annotations.get(SERVICE_ACCOUNT_NAME_KEY)):
            errors_.append(required(f"metadata.annotations[{SERVICE_ACCOUNT_NAME_KEY}]"))
    elif kind in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
        key = ".dockercfg" if kind == "kubernetes.io/dockercfg" else ".dockerconfigjson"
        if key not in data:
            errors_.append(required(f"data[{key}]"))
        else:
            try:
                parsed = json.loads(data[key])
                if not isinstance(parsed, dict):
                    raise ValueError(
                        "json: cannot unmarshal into Go value of type map[string]interface {}"
                    )
            except ValueError as err:
                errors_.append(
                    invalid_value(f"data[{key}]", "<secret contents redacted>", str(err))
                )
    elif kind == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            errors_.append(required("data[username]"))
            errors_.append(required("data[password]"))
    elif kind == "kubernetes.io/ssh-auth":
        if not data.get("ssh-privatekey"):
            errors_.append(required("data[ssh-privatekey]"))
    elif kind == "kubernetes.io/tls":
        for key in ("tls.crt", "tls.key"):
            if key not in data:
                errors_.append(required(f"data[{key}]"))
    return errors_


def _validate_immutable_data(new: Object, old: Object, keys: tuple[str, ...]) -> list[FieldError]:
    if old.get("immutable") is not True:
        return []
    errors_: list[FieldError] = []
    if new.get("immutable") is not True:
        errors_.append(forbidden_field("immutable", _IMMUTABLE))
    for key in keys:
        if as_dict(new.get(key)) != as_dict(old.get(key)):
            errors_.append(forbidden_field(key, _IMMUTABLE))
    return errors_


def validate_secret_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidateSecretUpdate``: the type immutable, an immutable secret's data too."""
    errors_ = validate_immutable(new.get("type"), old.get("type"), "type")
    errors_.extend(_validate_immutable_data(new, old, ("data",)))
    return errors_ + validate_secret(new)


SECRET_STRATEGY: Final = KindStrategy(
    namespaced=True,
    name_rule=name_is_dns_subdomain,
    defaulter=default_secret,
    validator=validate_secret,
    update_validator=validate_secret_update,
)


def secret_fields(secret: Object) -> dict[str, str]:
    """``SelectableFields`` of secrets: ``type``."""
    fields = meta_fields(secret, True)
    fields["type"] = as_str(secret.get("type"))
    return fields


SECRET_PRINTER: Final = name_age_printer(
    (
        TableColumn(
            "Type", "string", "", "Used to facilitate programmatic handling of secret data."
        ),
        lambda s: as_str(s.get("type")),
    ),
    (
        TableColumn("Data", "integer", "", "The number of data entries in the secret."),
        lambda s: len(as_dict(s.get("data"))),
    ),
)


# --- ConfigMap --------------------------------------------------------------------------------


def validate_config_map(cm: Object) -> list[FieldError]:
    """``ValidateConfigMap``: keys valid and not in both ``data`` and ``binaryData``, 1 MiB in
    all."""
    data, binary = as_dict(cm.get("data")), as_dict(cm.get("binaryData"))
    errors_: list[FieldError] = []
    total = 0
    for key in sorted(data):
        errors_.extend(invalid_value(f"data[{key}]", key, m) for m in is_config_map_key(key))
        if key in binary:
            errors_.append(
                invalid_value(f"data[{key}]", key, "duplicate of key present in binaryData")
            )
        total += len(as_str(data[key]).encode())
    for key in sorted(binary):
        errors_.extend(invalid_value(f"binaryData[{key}]", key, m) for m in is_config_map_key(key))
        total += len(as_str(binary[key])) * 3 // 4
    if total > MAX_DATA_SIZE:
        # Upstream reports the whole object through an empty path, which prints as "[]".
        errors_.append(too_long("[]", MAX_DATA_SIZE))
    return errors_


def validate_config_map_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidateConfigMapUpdate``: an immutable ConfigMap keeps its data and binaryData."""
    return _validate_immutable_data(new, old, ("data", "binaryData")) + validate_config_map(new)


CONFIG_MAP_STRATEGY: Final = KindStrategy(
    namespaced=True,
    name_rule=name_is_dns_subdomain,
    validator=validate_config_map,
    update_validator=validate_config_map_update,
)

CONFIG_MAP_PRINTER: Final = name_age_printer(
    (
        TableColumn("Data", "integer", "", "The number of data entries in the config map."),
        lambda cm: len(as_dict(cm.get("data"))) + len(as_dict(cm.get("binaryData"))),
    ),
)


# --- ServiceAccount ---------------------------------------------------------------------------


SERVICE_ACCOUNT_STRATEGY: Final = KindStrategy(
    namespaced=True,
    name_rule=name_is_dns_subdomain,
)

SERVICE_ACCOUNT_PRINTER: Final = name_age_printer(
    (
        TableColumn("Secrets", "integer", "", "The number of secrets of the service account."),
        lambda sa: len(as_list(sa.get("secrets"))),
    ),
)
