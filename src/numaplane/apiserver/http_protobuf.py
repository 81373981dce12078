"""(Over 400 lines: most of it is the table of the protobuf messages it decodes.)

Kubernetes protobuf request bodies (``application/vnd.kubernetes.protobuf``) decoded to JSON
objects, for the kinds kubectl's typed clients send that way.

kubectl's ``create configmap|secret|namespace|serviceaccount|token|role|clusterrole|rolebinding|
clusterrolebinding|priorityclass`` and ``auth can-i|whoami`` post protobuf (they accept JSON
answers, which is what the server sends). A body is the 4-byte magic ``k8s\\0`` and a
``runtime.Unknown`` (``typeMeta``, ``raw``), whose ``raw`` is the object in the go-to-protobuf
encoding of k8s.io/api. The field numbers below are those of the upstream ``generated.proto``
files; the wire format is read by hand (no generated code), and the result has the JSON field
names and encodings (bytes as base64, times as RFC 3339) with empty values dropped, as Go's
``omitempty`` would.
"""

from __future__ import annotations

import base64
import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson

PROTOBUF: Final = "application/vnd.kubernetes.protobuf"
MAGIC: Final = b"k8s\x00"


class ProtobufError(ValueError):
    """A body that is no Kubernetes protobuf envelope of a kind this server decodes."""


@dataclass(frozen=True)
class F:
    """One field: JSON ``name``, ``type`` (``string``, ``bytes``, ``int``, ``bool``, ``time``,
    ``rawjson``, ``ignore`` (read past: a status Go writes on a create, which the server
    sets itself), a message name, or ``map:VALUE`` for ``map<string, VALUE>``),
    ``repeated``,
    and ``keep`` for a field Go writes even when zero."""

    name: str
    type: str
    repeated: bool = False
    keep: bool = False


def _selector_requirement() -> dict[int, F]:
    return {1: F("key", "string"), 2: F("operator", "string"), 3: F("values", "string", True)}


#: Message name -> field number -> field, from k8s.io/api and apimachinery's generated.proto.
MESSAGES: Final[Mapping[str, Mapping[int, F]]] = {
    "ObjectMeta": {
        1: F("name", "string"),
        2: F("generateName", "string"),
        3: F("namespace", "string"),
        4: F("selfLink", "string"),
        5: F("uid", "string"),
        6: F("resourceVersion", "string"),
        7: F("generation", "int"),
        8: F("creationTimestamp", "time"),
        9: F("deletionTimestamp", "time"),
        10: F("deletionGracePeriodSeconds", "int"),
        11: F("labels", "map:string"),
        12: F("annotations", "map:string"),
        13: F("ownerReferences", "OwnerReference", True),
        14: F("finalizers", "string", True),
        17: F("managedFields", "ManagedFieldsEntry", True),
    },
    "OwnerReference": {
        1: F("kind", "string"),
        3: F("name", "string"),
        4: F("uid", "string"),
        5: F("apiVersion", "string"),
        6: F("controller", "bool"),
        7: F("blockOwnerDeletion", "bool"),
    },
    "ManagedFieldsEntry": {
        1: F("manager", "string"),
        2: F("operation", "string"),
        3: F("apiVersion", "string"),
        4: F("time", "time"),
        6: F("fieldsType", "string"),
        7: F("fieldsV1", "FieldsV1"),
        8: F("subresource", "string"),
    },
    "FieldsV1": {1: F("Raw", "rawjson")},
    "LabelSelector": {
        1: F("matchLabels", "map:string"),
        2: F("matchExpressions", "LabelSelectorRequirement", True),
    },
    "LabelSelectorRequirement": _selector_requirement(),
    "ObjectReference": {
        1: F("kind", "string"),
        2: F("namespace", "string"),
        3: F("name", "string"),
        4: F("uid", "string"),
        5: F("apiVersion", "string"),
        6: F("resourceVersion", "string"),
        7: F("fieldPath", "string"),
    },
    "LocalObjectReference": {1: F("name", "string")},
    # core/v1
    "ConfigMap": {
        1: F("metadata", "ObjectMeta"),
        2: F("data", "map:string"),
        3: F("binaryData", "map:bytes"),
        4: F("immutable", "bool", keep=True),
    },
    "Secret": {
        1: F("metadata", "ObjectMeta"),
        2: F("data", "map:bytes"),
        3: F("type", "string"),
        4: F("stringData", "map:string"),
        5: F("immutable", "bool", keep=True),
    },
    "Namespace": {
        1: F("metadata", "ObjectMeta"),
        2: F("spec", "NamespaceSpec"),
        3: F("status", "NamespaceStatus"),
    },
    "NamespaceSpec": {1: F("finalizers", "string", True)},
    "NamespaceStatus": {1: F("phase", "string"), 2: F("conditions", "ignore", True)},
    "ServiceAccount": {
        1: F("metadata", "ObjectMeta"),
        2: F("secrets", "ObjectReference", True),
        3: F("imagePullSecrets", "LocalObjectReference", True),
        4: F("automountServiceAccountToken", "bool", keep=True),
    },
    # authentication/v1
    "TokenRequest": {
        1: F("metadata", "ObjectMeta"),
        2: F("spec", "TokenRequestSpec"),
        3: F("status", "ignore"),
    },
    "TokenRequestSpec": {
        1: F("audiences", "string", True),
        3: F("boundObjectRef", "BoundObjectReference"),
        4: F("expirationSeconds", "int", keep=True),
    },
    "BoundObjectReference": {
        1: F("kind", "string"),
        2: F("apiVersion", "string"),
        3: F("name", "string"),
        4: F("uid", "string"),
    },
    "SelfSubjectReview": {1: F("metadata", "ObjectMeta"), 2: F("status", "ignore")},
    # authorization/v1
    "SelfSubjectAccessReview": {
        1: F("metadata", "ObjectMeta"),
        2: F("spec", "SelfSubjectAccessReviewSpec"),
        3: F("status", "ignore"),
    },
    "SelfSubjectAccessReviewSpec": {
        1: F("resourceAttributes", "ResourceAttributes"),
        2: F("nonResourceAttributes", "NonResourceAttributes"),
    },
    "ResourceAttributes": {
        1: F("namespace", "string"),
        2: F("verb", "string"),
        3: F("group", "string"),
        4: F("version", "string"),
        5: F("resource", "string"),
        6: F("subresource", "string"),
        7: F("name", "string"),
        8: F("fieldSelector", "FieldSelectorAttributes"),
        9: F("labelSelector", "LabelSelectorAttributes"),
    },
    "FieldSelectorAttributes": {
        1: F("rawSelector", "string"),
        2: F("requirements", "FieldSelectorRequirement", True),
    },
    "FieldSelectorRequirement": _selector_requirement(),
    "LabelSelectorAttributes": {
        1: F("rawSelector", "string"),
        2: F("requirements", "LabelSelectorRequirement", True),
    },
    "NonResourceAttributes": {1: F("path", "string"), 2: F("verb", "string")},
    "SelfSubjectRulesReview": {
        1: F("metadata", "ObjectMeta"),
        2: F("spec", "SelfSubjectRulesReviewSpec"),
        3: F("status", "ignore"),
    },
    "SelfSubjectRulesReviewSpec": {1: F("namespace", "string")},
    # rbac.authorization.k8s.io/v1
    "Role": {1: F("metadata", "ObjectMeta"), 2: F("rules", "PolicyRule", True)},
    "ClusterRole": {
        1: F("metadata", "ObjectMeta"),
        2: F("rules", "PolicyRule", True),
        3: F("aggregationRule", "AggregationRule"),
    },
    "PolicyRule": {
        1: F("verbs", "string", True),
        2: F("apiGroups", "string", True),
        3: F("resources", "string", True),
        4: F("resourceNames", "string", True),
        5: F("nonResourceURLs", "string", True),
    },
    "AggregationRule": {1: F("clusterRoleSelectors", "LabelSelector", True)},
    "RoleBinding": {
        1: F("metadata", "ObjectMeta"),
        2: F("subjects", "Subject", True),
        3: F("roleRef", "RoleRef"),
    },
    "ClusterRoleBinding": {
        1: F("metadata", "ObjectMeta"),
        2: F("subjects", "Subject", True),
        3: F("roleRef", "RoleRef"),
    },
    "Subject": {
        1: F("kind", "string"),
        2: F("apiGroup", "string"),
        3: F("name", "string"),
        4: F("namespace", "string"),
    },
    "RoleRef": {1: F("apiGroup", "string"), 2: F("kind", "string"), 3: F("name", "string")},
    # batch/v1 (what ``kubectl create job`` sends: a pod template with containers)
    "Job": {1: F("metadata", "ObjectMeta"), 2: F("spec", "JobSpec"), 3: F("status", "ignore")},
    "JobSpec": {
        1: F("parallelism", "int", keep=True),
        2: F("completions", "int", keep=True),
        3: F("activeDeadlineSeconds", "int", keep=True),
        4: F("selector", "LabelSelector"),
        5: F("manualSelector", "bool", keep=True),
        6: F("template", "PodTemplateSpec"),
        7: F("backoffLimit", "int", keep=True),
        8: F("ttlSecondsAfterFinished", "int", keep=True),
        9: F("completionMode", "string"),
        10: F("suspend", "bool", keep=True),
    },
    "PodTemplateSpec": {1: F("metadata", "ObjectMeta"), 2: F("spec", "PodSpec")},
    "PodSpec": {
        2: F("containers", "Container", True),
        3: F("restartPolicy", "string"),
        4: F("terminationGracePeriodSeconds", "int", keep=True),
        5: F("activeDeadlineSeconds", "int", keep=True),
        6: F("dnsPolicy", "string"),
        7: F("nodeSelector", "map:string"),
        8: F("serviceAccountName", "string"),
        9: F("serviceAccount", "string"),
        10: F("nodeName", "string"),
        11: F("hostNetwork", "bool"),
        12: F("hostPID", "bool"),
        13: F("hostIPC", "bool"),
        16: F("hostname", "string"),
        17: F("subdomain", "string"),
        19: F("schedulerName", "string"),
        20: F("initContainers", "Container", True),
        24: F("priorityClassName", "string"),
        25: F("priority", "int", keep=True),
    },
    "Container": {
        1: F("name", "string"),
        2: F("image", "string"),
        3: F("command", "string", True),
        4: F("args", "string", True),
        5: F("workingDir", "string"),
        7: F("env", "EnvVar", True),
        8: F("resources", "ResourceRequirements", keep=True),
        13: F("terminationMessagePath", "string"),
        14: F("imagePullPolicy", "string"),
        16: F("stdin", "bool"),
        17: F("stdinOnce", "bool"),
        18: F("tty", "bool"),
        20: F("terminationMessagePolicy", "string"),
    },
    "EnvVar": {1: F("name", "string"), 2: F("value", "string")},
    "ResourceRequirements": {1: F("limits", "map:Quantity"), 2: F("requests", "map:Quantity")},
    "Quantity": {1: F("string", "string")},
    # scheduling.k8s.io/v1
    "PriorityClass": {
        1: F("metadata", "ObjectMeta"),
        2: F("value", "int", keep=True),
        3: F("globalDefault", "bool"),
        4: F("description", "string"),
        5: F("preemptionPolicy", "string"),
    },
}

#: (apiVersion, kind) a protobuf body may carry -> its message.
TOP_LEVEL: Final[Mapping[tuple[str, str], str]] = {
    ("v1", "ConfigMap"): "ConfigMap",
    ("v1", "Secret"): "Secret",
    ("v1", "Namespace"): "Namespace",
    ("v1", "ServiceAccount"): "ServiceAccount",
    ("authentication.k8s.io/v1", "TokenRequest"): "TokenRequest",
    ("authentication.k8s.io/v1", "SelfSubjectReview"): "SelfSubjectReview",
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): "SelfSubjectAccessReview",
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): "SelfSubjectRulesReview",
    ("rbac.authorization.k8s.io/v1", "Role"): "Role",
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): "ClusterRole",
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): "RoleBinding",
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): "ClusterRoleBinding",
    ("scheduling.k8s.io/v1", "PriorityClass"): "PriorityClass",
    ("batch/v1", "Job"): "Job",
}

_UNKNOWN: Final[Mapping[int, F]] = {
    1: F("typeMeta", "TypeMeta"),
    2: F("raw", "bytes"),
    3: F("contentEncoding", "string"),
    4: F("contentType", "string"),
}
_TYPE_META: Final[Mapping[int, F]] = {1: F("apiVersion", "string"), 2: F("kind", "string")}
_TIME: Final[Mapping[int, F]] = {1: F("seconds", "int"), 2: F("nanos", "int")}


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ProtobufError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ProtobufError("varint too long")


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """The ``(field number, value)`` pairs of one message: varints as ints, length-delimited
    fields as bytes (fixed-width fields, which these messages do not use, are skipped)."""
    out: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            out.append((number, value))
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise ProtobufError("truncated field")
            out.append((number, data[pos : pos + length]))
            pos += length
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise ProtobufError(f"unsupported wire type {wire}")
    if pos != len(data):
        raise ProtobufError("truncated message")
    return out


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _time(data: bytes) -> str | None:
    parts = _message(data, _TIME)
    if not parts:
        return None
    seconds = int(parts.get("seconds", 0))
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _scalar(kind: str, value: int | bytes) -> Any:
    if kind == "int":
        return _signed(value) if isinstance(value, int) else None
    if kind == "bool":
        return bool(value) if isinstance(value, int) else None
    if not isinstance(value, bytes):
        raise ProtobufError(f"a {kind} field holds a varint")
    if kind == "string":
        return value.decode("utf-8")
    if kind == "bytes":
        return base64.b64encode(value).decode()
    if kind == "time":
        return _time(value)
    if kind == "rawjson":
        return orjson.loads(value) if value else None
    if kind == "Quantity":
        return _message(value, MESSAGES[kind]).get("string", "")
    return _message(value, MESSAGES[kind])


def _message(data: bytes, schema: Mapping[int, F]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, value in _fields(data):
        field = schema.get(number)
        if field is None:
            # Dropping a field the client set would change its object; refuse instead.
            raise ProtobufError(
                f"protobuf field {number} is not decoded by this server (send JSON instead)"
            )
        if field.type == "ignore":
            continue
        if field.type.startswith("map:"):
            if not isinstance(value, bytes):
                raise ProtobufError(f"map {field.name} holds a varint")
            entry = dict(_fields(value))
            key = entry.get(1, b"")
            if not isinstance(key, bytes):
                raise ProtobufError(f"map {field.name} has a varint key")
            out.setdefault(field.name, {})[key.decode("utf-8")] = _scalar(
                field.type[4:], entry.get(2, b"")
            )
        elif field.repeated:
            out.setdefault(field.name, []).append(_scalar(field.type, value))
        else:
            out[field.name] = _scalar(field.type, value)
    for field in schema.values():
        if not field.keep and out.get(field.name) in (None, "", 0, False, [], {}):
            out.pop(field.name, None)
    return out


def _unwrap_fields_v1(obj: dict[str, Any]) -> dict[str, Any]:
    """``fieldsV1`` is written in JSON as the raw object itself, not ``{"Raw": ...}``."""
    for entry in obj.get("metadata", {}).get("managedFields", []) or []:
        raw = entry.get("fieldsV1")
        if isinstance(raw, dict) and "Raw" in raw:
            entry["fieldsV1"] = raw["Raw"]
    return obj


def decode_protobuf(body: bytes) -> dict[str, Any]:
    """The JSON object a Kubernetes protobuf body carries (``apiVersion`` and ``kind`` from its
    envelope); :class:`ProtobufError` for anything else or a kind not in :data:`TOP_LEVEL`."""
    if not body.startswith(MAGIC):
        raise ProtobufError("provided data does not appear to be a protobuf message")
    envelope: dict[str, Any] = {}
    for number, value in _fields(body[len(MAGIC) :]):
        field = _UNKNOWN.get(number)
        if field is None or not isinstance(value, bytes):
            continue
        if field.name == "typeMeta":
            envelope["typeMeta"] = _message(value, _TYPE_META)
        else:
            envelope[field.name] = value
    type_meta = envelope.get("typeMeta", {})
    api_version, kind = type_meta.get("apiVersion", ""), type_meta.get("kind", "")
    message = TOP_LEVEL.get((api_version, kind))
    if message is None:
        raise ProtobufError(f"no protobuf decoding for {kind} in version {api_version!r}")
    obj = _message(envelope.get("raw", b""), MESSAGES[message])
    return _unwrap_fields_v1({"apiVersion": api_version, "kind": kind, **obj})
