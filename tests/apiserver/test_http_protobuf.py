"""Kubernetes protobuf bodies (what kubectl's typed clients post) decoded to the JSON objects
they stand for: field names and JSON encodings as Go writes them, empty values dropped, fields
the server does not know refused rather than dropped."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.apiserver.http_protobuf import MAGIC, ProtobufError, decode_protobuf


def varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number: int, value: int | bytes | str) -> bytes:
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    data = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(data)) + data


def entry(number: int, key: str, value: bytes | str) -> bytes:
    return field(number, field(1, key) + field(2, value))


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = field(1, api_version) + field(2, kind)
    return MAGIC + field(1, type_meta) + field(2, raw) + field(3, "") + field(4, "")


# ObjectMeta as gogo writes it: every non-pointer field, empty or not.
META = (
    field(1, "cm")
    + field(2, "")
    + field(3, "default")
    + field(4, "")
    + field(5, "")
    + field(6, "")
    + field(7, 0)
    + field(8, b"")
    + entry(11, "app", "x")
)


@dataclass(frozen=True)
class Case:
    name: str
    body: bytes
    want: dict[str, Any]


CASES = (
    Case(
        "configmap",
        envelope(
            "v1",
            "ConfigMap",
            field(1, META) + entry(2, "k", "v") + entry(3, "bin", b"\x00\x01"),
        ),
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cm", "namespace": "default", "labels": {"app": "x"}},
            "data": {"k": "v"},
            "binaryData": {"bin": "AAE="},
        },
    ),
    Case(
        "secret bytes are base64",
        envelope("v1", "Secret", field(1, field(1, "s")) + entry(2, "a", b"b") + field(3, "")),
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"a": "Yg=="}},
    ),
    Case(
        "token request",
        envelope(
            "authentication.k8s.io/v1",
            "TokenRequest",
            field(1, b"") + field(2, field(1, "api") + field(4, 3600)) + field(3, b""),
        ),
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"audiences": ["api"], "expirationSeconds": 3600},
        },
    ),
    Case(
        "priority class keeps a zero value",
        envelope(
            "scheduling.k8s.io/v1",
            "PriorityClass",
            field(1, field(1, "p")) + field(2, 0) + field(3, 0) + field(4, ""),
        ),
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "p"},
            "value": 0,
        },
    ),
    Case(
        "negative numbers",
        envelope("scheduling.k8s.io/v1", "PriorityClass", field(1, field(1, "p")) + field(2, -5)),
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "p"},
            "value": -5,
        },
    ),
    Case(
        "creation timestamp",
        envelope("v1", "Namespace", field(1, field(1, "n") + field(8, field(1, 86400)))),
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "n", "creationTimestamp": "1970-01-02T00:00:00Z"},
        },
    ),
)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_decode(case: Case) -> None:
    assert decode_protobuf(case.body) == case.want


@dataclass(frozen=True)
class BadCase:
    name: str
    body: bytes
    message: str


BAD_CASES = (
    BadCase("no magic", b'{"kind": "ConfigMap"}', "does not appear to be a protobuf message"),
    BadCase(
        "kind not decoded",
        envelope("apps/v1", "Deployment", b""),
        "no protobuf decoding for Deployment in version 'apps/v1'",
    ),
    BadCase(
        "unknown field",
        envelope("v1", "ConfigMap", field(9, "x")),
        "protobuf field 9 is not decoded by this server",
    ),
    BadCase("truncated", MAGIC + b"\x0a\x10ab", "truncated field"),
)


@pytest.mark.parametrize("case", BAD_CASES, ids=[c.name for c in BAD_CASES])
def test_refused(case: BadCase) -> None:
    with pytest.raises(ProtobufError, match=case.message):
        decode_protobuf(case.body)
