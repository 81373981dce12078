# Over 400 lines: one table per behaviour (decode, special types, bad bodies), kept together.
"""The protobuf body codec: bodies built with the generated messages decode to the JSON Go's
encoding/json would write for the same Go object (omitempty, pointers, structs, times,
quantities, bytes), and bad bodies get 400 or 415, never a crash."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from google.protobuf import descriptor_pool
from google.protobuf.message import Message

from numaplane.apiserver import errors
from numaplane.apiserver.protobuf import (
    authentication_v1_pb2,
    authorization_v1_pb2,
    batch_v1_pb2,
    codec,
    core_v1_pb2,
    gojson,
    intstr_pb2,
    meta_v1_pb2,
    rbac_v1_pb2,
    resource_pb2,
    runtime_pb2,
)

NULL_META = {"creationTimestamp": None}


def body(api_version: str, kind: str, obj: Message | bytes) -> bytes:
    """A body as Kubernetes clients send it: magic, then the Unknown envelope."""
    envelope = runtime_pb2.Unknown()
    envelope.typeMeta.apiVersion = api_version
    envelope.typeMeta.kind = kind
    envelope.raw = obj if isinstance(obj, bytes) else obj.SerializeToString()
    encoded: bytes = envelope.SerializeToString()
    return codec.MAGIC + encoded


def go_meta(name: str) -> meta_v1_pb2.ObjectMeta:
    """ObjectMeta as Go's marshaller writes a fresh one: every non-pointer field, zero or not."""
    meta = meta_v1_pb2.ObjectMeta(
        name=name, generateName="", namespace="", selfLink="", uid="", resourceVersion=""
    )
    meta.generation = 0
    meta.creationTimestamp.SetInParent()
    return meta


def configmap_with_everything() -> core_v1_pb2.ConfigMap:
    meta = go_meta("cm")
    meta.namespace = "team"
    meta.labels["b"] = "2"
    meta.labels["a"] = "1"
    meta.annotations["note"] = "x"
    meta.finalizers.append("example.com/keep")
    meta.deletionGracePeriodSeconds = 0
    meta.deletionTimestamp.SetInParent()
    meta.ownerReferences.add(
        apiVersion="batch/v1", kind="Job", name="j", uid="u1", controller=False
    )
    entry = meta.managedFields.add(manager="kubectl", operation="Update", apiVersion="v1")
    entry.time.seconds = 1700000000
    entry.time.nanos = 999
    entry.fieldsType = "FieldsV1"
    entry.fieldsV1.Raw = b'{"f:data":{".":{}}}'
    cm = core_v1_pb2.ConfigMap(metadata=meta, immutable=False)
    cm.data["k"] = "v"
    cm.binaryData["bin"] = b"\x00\xff"
    return cm


def job() -> batch_v1_pb2.Job:
    spec = batch_v1_pb2.JobSpec(parallelism=0, suspend=False)
    spec.template.metadata.CopyFrom(go_meta(""))
    container = spec.template.spec.containers.add(name="c", image="busybox", workingDir="")
    container.resources.limits["cpu"].string = "500m"
    container.resources.requests["memory"].string = "1Gi"
    spec.template.spec.restartPolicy = "Never"
    spec.template.spec.hostPID = False
    return batch_v1_pb2.Job(metadata=go_meta("j"), spec=spec)


def access_review() -> authorization_v1_pb2.SelfSubjectAccessReview:
    review = authorization_v1_pb2.SelfSubjectAccessReview(metadata=go_meta(""))
    attrs = review.spec.resourceAttributes
    attrs.verb = "list"
    attrs.resource = "pods"
    attrs.fieldSelector.requirements.add(key="spec.nodeName", operator="In", values=["n1"])
    attrs.labelSelector.rawSelector = "app=x"
    review.status.allowed = False
    return review


def aggregated_clusterrole() -> rbac_v1_pb2.ClusterRole:
    role = rbac_v1_pb2.ClusterRole(metadata=go_meta("agg"))
    role.aggregationRule.clusterRoleSelectors.add().matchLabels["team"] = "a"
    return role


@dataclass(frozen=True)
class DecodeCase:
    name: str
    body: bytes
    expected: dict[str, Any]
    expect_kind: tuple[str, str] | None = None


DECODE_CASES = (
    DecodeCase(
        "configmap: pointers kept at zero, omitempty zeros dropped, bytes as base64",
        body("v1", "ConfigMap", configmap_with_everything()),
        {
            "kind": "ConfigMap",
            "apiVersion": "v1",
            "metadata": {
                "name": "cm",
                "namespace": "team",
                "creationTimestamp": None,
                "deletionTimestamp": None,
                "deletionGracePeriodSeconds": 0,
                "labels": {"a": "1", "b": "2"},
                "annotations": {"note": "x"},
                "ownerReferences": [
                    {
                        "apiVersion": "batch/v1",
                        "kind": "Job",
                        "name": "j",
                        "uid": "u1",
                        "controller": False,
                    }
                ],
                "finalizers": ["example.com/keep"],
                "managedFields": [
                    {
                        "manager": "kubectl",
                        "operation": "Update",
                        "apiVersion": "v1",
                        "time": "2023-11-14T22:13:20Z",
                        "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:data": {".": {}}},
                    }
                ],
            },
            "immutable": False,
            "data": {"k": "v"},
            "binaryData": {"bin": "AP8="},
        },
    ),
    DecodeCase(
        "secret: data base64, stringData and type as strings",
        body(
            "v1",
            "Secret",
            core_v1_pb2.Secret(
                metadata=go_meta("s"),
                data={"pw": "h\u00e9".encode()},
                stringData={"plain": "x"},
                type="Opaque",
            ),
        ),
        {
            "kind": "Secret",
            "apiVersion": "v1",
            "metadata": {"name": "s", "creationTimestamp": None},
            "data": {"pw": "aMOp"},
            "stringData": {"plain": "x"},
            "type": "Opaque",
        },
    ),
    DecodeCase(
        "namespace sent bare: Go structs (metadata, spec, status) written empty",
        body("v1", "Namespace", core_v1_pb2.Namespace()),
        {
            "kind": "Namespace",
            "apiVersion": "v1",
            "metadata": {"creationTimestamp": None},
            "spec": {},
            "status": {},
        },
    ),
    DecodeCase(
        "job: quantities as strings, pointer ints and bools at zero kept",
        body("batch/v1", "Job", job()),
        {
            "kind": "Job",
            "apiVersion": "batch/v1",
            "metadata": {"name": "j", "creationTimestamp": None},
            "spec": {
                "parallelism": 0,
                "suspend": False,
                "template": {
                    "metadata": {"creationTimestamp": None},
                    "spec": {
                        "containers": [
                            {
                                "name": "c",
                                "image": "busybox",
                                "resources": {
                                    "limits": {"cpu": "500m"},
                                    "requests": {"memory": "1Gi"},
                                },
                            }
                        ],
                        "restartPolicy": "Never",
                    },
                },
            },
            "status": {},
        },
    ),
    DecodeCase(
        "token request: fields without omitempty written as null",
        body(
            "authentication.k8s.io/v1",
            "TokenRequest",
            authentication_v1_pb2.TokenRequest(metadata=go_meta("")),
        ),
        {
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": NULL_META,
            "spec": {"audiences": None, "expirationSeconds": None},
            "status": {"token": "", "expirationTimestamp": None},
        },
    ),
    DecodeCase(
        "access review with 1.32 field and label selector attributes",
        body("authorization.k8s.io/v1", "SelfSubjectAccessReview", access_review()),
        {
            "kind": "SelfSubjectAccessReview",
            "apiVersion": "authorization.k8s.io/v1",
            "metadata": NULL_META,
            "spec": {
                "resourceAttributes": {
                    "verb": "list",
                    "resource": "pods",
                    "fieldSelector": {
                        "requirements": [
                            {"key": "spec.nodeName", "operator": "In", "values": ["n1"]}
                        ]
                    },
                    "labelSelector": {"rawSelector": "app=x"},
                }
            },
            "status": {"allowed": False},
        },
    ),
    DecodeCase(
        "cluster role: aggregation rule, rules null as Go writes a nil slice without omitempty",
        body("rbac.authorization.k8s.io/v1", "ClusterRole", aggregated_clusterrole()),
        {
            "kind": "ClusterRole",
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "metadata": {"name": "agg", "creationTimestamp": None},
            "rules": None,
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"team": "a"}}]},
        },
    ),
    DecodeCase(
        "delete options in a group version, grace period zero kept",
        body(
            "batch/v1",
            "DeleteOptions",
            meta_v1_pb2.DeleteOptions(
                gracePeriodSeconds=0,
                propagationPolicy="Foreground",
                preconditions=meta_v1_pb2.Preconditions(uid="u1"),
                dryRun=["All"],
            ),
        ),
        {
            "kind": "DeleteOptions",
            "apiVersion": "batch/v1",
            "gracePeriodSeconds": 0,
            "preconditions": {"uid": "u1"},
            "propagationPolicy": "Foreground",
            "dryRun": ["All"],
        },
    ),
    DecodeCase(
        "an envelope without type meta takes the endpoint's",
        body("", "", core_v1_pb2.ServiceAccount(automountServiceAccountToken=False)),
        {
            "kind": "ServiceAccount",
            "apiVersion": "v1",
            "metadata": NULL_META,
            "automountServiceAccountToken": False,
        },
        expect_kind=("v1", "ServiceAccount"),
    ),
    DecodeCase(
        "a string that is not UTF-8 gets U+FFFD per bad byte, as Go's JSON",
        body("v1", "ConfigMap", b"\n\x05\n\x03\xff\xfeA"),
        {
            "kind": "ConfigMap",
            "apiVersion": "v1",
            "metadata": {"name": "\ufffd\ufffdA", "creationTimestamp": None},
        },
    ),
)


@pytest.mark.parametrize("case", DECODE_CASES, ids=lambda c: c.name)
def test_decode(case: DecodeCase) -> None:
    assert codec.decode(case.body, case.expect_kind) == case.expected


@dataclass(frozen=True)
class SpecialCase:
    name: str
    message: Message
    expected: Any


def _time(seconds: int, nanos: int = 0) -> meta_v1_pb2.Time:
    return meta_v1_pb2.Time(seconds=seconds, nanos=nanos)


SPECIAL_CASES = (
    SpecialCase("time: whole seconds, nanos dropped", _time(0, 5), "1970-01-01T00:00:00Z"),
    SpecialCase("time: empty is Go's zero time", meta_v1_pb2.Time(), None),
    SpecialCase(
        "time: a year under 1000 keeps 4 digits", _time(-30610224000), "1000-01-01T00:00:00Z"
    ),
    SpecialCase("time: year 999", _time(-30610224001), "0999-12-31T23:59:59Z"),
    SpecialCase("time: Go's zero time in seconds", _time(-62135596800), None),
    SpecialCase(
        "micro time keeps microseconds",
        meta_v1_pb2.MicroTime(seconds=1700000000, nanos=123456789),
        "2023-11-14T22:13:20.123456Z",
    ),
    SpecialCase("micro time empty", meta_v1_pb2.MicroTime(), None),
    SpecialCase("quantity", resource_pb2.Quantity(string="1.5Gi"), "1.5Gi"),
    SpecialCase("quantity zero", resource_pb2.Quantity(), "0"),
    SpecialCase("int-or-string int", intstr_pb2.IntOrString(type=0, intVal=8080), 8080),
    SpecialCase("int-or-string string", intstr_pb2.IntOrString(type=1, strVal="http"), "http"),
    SpecialCase("raw extension", runtime_pb2.RawExtension(raw=b'{"a":[1]}'), {"a": [1]}),
    SpecialCase("raw extension empty", runtime_pb2.RawExtension(), None),
)


@pytest.mark.parametrize("case", SPECIAL_CASES, ids=lambda c: c.name)
def test_special_types(case: SpecialCase) -> None:
    assert codec.to_json(case.message) == case.expected


@dataclass(frozen=True)
class ErrorCase:
    name: str
    body: bytes
    code: int
    message: str
    expected: tuple[str, str] | None = None


_UNDECLARED = core_v1_pb2.PodSpec(restartPolicy="Never").SerializeToString() + b"\xca\x02\x00"
_NOT_MARKED = (
    "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
)
_CM = ("v1", "ConfigMap")
_REFUSED = (
    "are not decoded from application/vnd.kubernetes.protobuf by this server; send the object "
    "as application/json"
)

ERROR_CASES = (
    ErrorCase("JSON is not a protobuf body", b'{"kind":"ConfigMap"}', 400, _NOT_MARKED),
    ErrorCase(
        "JSON to an endpoint: upstream's wording, the body quoted",
        b'{"kind":"ConfigMap"}',
        400,
        f"the object provided is unrecognized (must be of type ConfigMap): {_NOT_MARKED} "
        '({"kind":"ConfigMap"})',
        _CM,
    ),
    ErrorCase(
        "binary to an endpoint: quoted in hex, cut at 30 bytes",
        bytes(range(40)),
        400,
        f"the object provided is unrecognized (must be of type ConfigMap): {_NOT_MARKED} "
        f"({bytes(range(30)).hex()} ...)",
        _CM,
    ),
    ErrorCase("empty data", b"", 400, "empty data"),
    ErrorCase(
        "empty data to an endpoint",
        b"",
        400,
        "the object provided is unrecognized (must be of type ConfigMap): empty data (<empty>)",
        _CM,
    ),
    ErrorCase("magic only", codec.MAGIC, 400, "empty body"),
    ErrorCase(
        "broken envelope",
        codec.MAGIC + b"\x0a\xff",
        400,
        "Error parsing message with type 'k8s.io.apimachinery.pkg.runtime.Unknown'",
    ),
    ErrorCase(
        "no kind, no endpoint default",
        body("v1", "", b""),
        400,
        "Object 'Kind' is missing in 'runtime.TypeMeta{APIVersion:\"v1\", Kind:\"\"}'",
    ),
    ErrorCase(
        "a kind not decoded here",
        body("apps/v1", "Deployment", b""),
        415,
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml (application/vnd.kubernetes.protobuf is not "
        'decoded for kind "Deployment" in version "apps/v1")',
    ),
    ErrorCase(
        "a kind in the wrong version",
        body("v1", "Job", b""),
        415,
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml (application/vnd.kubernetes.protobuf is not "
        'decoded for kind "Job" in version "v1")',
    ),
    ErrorCase(
        "truncated object",
        body("v1", "ConfigMap", b"\x0a\x10\x0a"),
        400,
        "Error parsing message with type 'k8s.io.api.core.v1.ConfigMap'",
    ),
    ErrorCase(
        "truncated object to an endpoint: named by the envelope's kind",
        body("v1", "ConfigMap", b"\x0a\x10\x0a"),
        400,
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: Error parsing message '
        "with type 'k8s.io.api.core.v1.ConfigMap'",
        _CM,
    ),
    ErrorCase(
        "a field this server does not decode is refused, not dropped",
        body("v1", "ServiceAccount", b"\x2a\x02\x0a\x00"),
        400,
        f"field number(s) 5 of k8s.io.api.core.v1.ServiceAccount {_REFUSED}",
    ),
    ErrorCase(
        "an undeclared field deep in a pod template",
        body(
            "batch/v1",
            "Job",
            b"\x12"
            + bytes([len(_UNDECLARED) + 4])
            + b"\x32"
            + bytes([len(_UNDECLARED) + 2])
            + b"\x12"
            + bytes([len(_UNDECLARED)])
            + _UNDECLARED,
        ),
        400,
        f'Job in version "v1" cannot be handled as a Job: field number(s) 41 of '
        f"k8s.io.api.core.v1.PodSpec {_REFUSED}",
        ("batch/v1", "Job"),
    ),
    ErrorCase(
        "a declared field with the wrong wire type",
        body("v1", "Namespace", b"\x08\x01"),
        400,
        f"field number(s) 1 of k8s.io.api.core.v1.Namespace {_REFUSED}",
    ),
    ErrorCase(
        "a time Go cannot write",
        body(
            "v1",
            "ConfigMap",
            core_v1_pb2.ConfigMap(
                metadata=meta_v1_pb2.ObjectMeta(creationTimestamp=meta_v1_pb2.Time(seconds=2**60))
            ),
        ),
        400,
        "Time.MarshalJSON: year outside of range [0,9999]",
    ),
    ErrorCase(
        "managed fields that are not JSON",
        body(
            "v1",
            "ConfigMap",
            core_v1_pb2.ConfigMap(
                metadata=meta_v1_pb2.ObjectMeta(
                    managedFields=[
                        meta_v1_pb2.ManagedFieldsEntry(fieldsV1=meta_v1_pb2.FieldsV1(Raw=b"{"))
                    ]
                )
            ),
        ),
        400,
        "invalid FieldsV1: Expecting property name enclosed in double quotes: line 1 column 2 "
        "(char 1)",
    ),
)


@pytest.mark.parametrize("case", ERROR_CASES, ids=lambda c: c.name)
def test_bad_bodies(case: ErrorCase) -> None:
    with pytest.raises(errors.StatusError) as caught:
        codec.decode(case.body, case.expected)
    status = caught.value.status()
    assert (status["code"], status["message"]) == (case.code, case.message)
    assert status["reason"] == ("BadRequest" if case.code == 400 else "UnsupportedMediaType")


@pytest.mark.parametrize(
    "key",
    sorted(f"{k[0]} {k[1]}" for k in codec.KINDS),
)
def test_every_kind_decodes_its_empty_message(key: str) -> None:
    api_version, kind = key.split(" ")
    decoded = codec.decode(body(api_version, kind, b""))
    assert (decoded["kind"], decoded["apiVersion"]) == (kind, api_version)
    assert decoded["metadata"] == NULL_META


@pytest.mark.parametrize("table", ["POINTERS", "ALWAYS"])
def test_go_json_tables_name_declared_fields(table: str) -> None:
    pool = descriptor_pool.Default()
    missing = []
    for name in sorted(getattr(gojson, table)):
        message, _, field = name.rpartition(".")
        if field not in pool.FindMessageTypeByName(message).fields_by_name:
            missing.append(name)
    assert missing == []


def test_absent_go_pointer_structs_are_left_out() -> None:
    """A message-typed field not listed as a pointer is written even when absent (a Go struct);
    absent Go pointers (a Job's selector and startTime, a review's attributes) stay out."""
    decoded = codec.decode(body("batch/v1", "Job", batch_v1_pb2.Job()))
    assert "selector" not in decoded["spec"]
    assert "startTime" not in decoded["status"]
    review = codec.decode(body("authorization.k8s.io/v1", "SelfSubjectAccessReview", b"\x12\x00"))
    assert review["spec"] == {}
