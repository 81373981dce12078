"""Namespace, Node, Secret, ConfigMap, ServiceAccount and Lease: defaults, messages, tables,
field sets."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest

from numaplane.apiserver.errors import StatusError, invalid
from numaplane.apiserver.kinds.cluster import (
    NAMESPACE_PRINTER,
    NAMESPACE_STATUS_STRATEGY,
    NAMESPACE_STRATEGY,
    NODE_PRINTER,
    NODE_STRATEGY,
    namespace_fields,
    node_fields,
)
from numaplane.apiserver.kinds.config import (
    CONFIG_MAP_PRINTER,
    CONFIG_MAP_STRATEGY,
    SECRET_PRINTER,
    SECRET_STRATEGY,
    secret_fields,
)
from numaplane.apiserver.kinds.coordination import LEASE_PRINTER, LEASE_STRATEGY
from numaplane.apiserver.kinds.strategy import KindStrategy

NOW = 1_700_000_000.0
CREATED = "2023-11-14T22:10:00Z"


def meta(name: str, namespace: str | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "creationTimestamp": CREATED, **extra}
    if namespace is not None:
        out["namespace"] = namespace
    return out


def test_namespace_create() -> None:
    ns = {"metadata": meta("team-a")}
    NAMESPACE_STRATEGY.default(ns)
    NAMESPACE_STRATEGY.prepare_for_create(ns)
    assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team-a"}
    assert ns["spec"] == {"finalizers": ["kubernetes"]}
    assert ns["status"] == {"phase": "Active"}
    assert NAMESPACE_STRATEGY.validate(ns) == []
    assert NAMESPACE_PRINTER.row(ns, NOW) == ["team-a", "Active", "3m20s"]
    assert namespace_fields(ns) == {
        "metadata.name": "team-a",
        "status.phase": "Active",
        "name": "team-a",
    }


def test_generated_namespace_name_gets_its_label() -> None:
    ns: dict[str, Any] = {"metadata": {"generateName": "team-"}}
    NAMESPACE_STRATEGY.default(ns)
    ns["metadata"]["name"] = "team-x7k2p"  # what the REST layer generates before preparing
    NAMESPACE_STRATEGY.prepare_for_create(ns)
    assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team-x7k2p"}


def test_namespace_update_keeps_finalizers_and_status() -> None:
    old = {
        "metadata": meta("a", resourceVersion="1"),
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }
    new = copy.deepcopy(old)
    new["spec"]["finalizers"] = []
    new["status"]["phase"] = "Terminating"
    NAMESPACE_STRATEGY.prepare_for_update(new, old)
    assert new["spec"] == old["spec"]
    assert new["status"] == old["status"]
    status_write = copy.deepcopy(old)
    status_write["status"]["phase"] = "Terminating"
    assert [str(e) for e in NAMESPACE_STATUS_STRATEGY.validate_update(status_write, old)] == [
        "status.Phase: Invalid value: \"Terminating\": may only be 'Active' if "
        "`deletionTimestamp` is empty"
    ]


@dataclass(frozen=True)
class InvalidCase:
    name: str
    strategy: KindStrategy
    kind: str
    obj: dict[str, Any]
    message: str
    group: str = ""


INVALID = [
    InvalidCase(
        "namespace name with dots",
        NAMESPACE_STRATEGY,
        "Namespace",
        {"metadata": meta("a.b")},
        'Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": a lowercase RFC 1123 '
        "label must consist of lower case alphanumeric characters or '-', and must start and "
        "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ),
    InvalidCase(
        "namespace with an unqualified spec finalizer",
        NAMESPACE_STRATEGY,
        "Namespace",
        {"metadata": meta("a"), "spec": {"finalizers": ["kubernetes", "mine"]}},
        'Namespace "a" is invalid: spec.finalizers: Invalid value: "mine": name is neither a '
        "standard finalizer name nor is it fully qualified",
    ),
    InvalidCase(
        "node taint effect",
        NODE_STRATEGY,
        "Node",
        {"metadata": meta("n1"), "spec": {"taints": [{"key": "k", "effect": "Sometimes"}]}},
        'Node "n1" is invalid: spec.taints[0].effect: Unsupported value: "Sometimes": supported '
        'values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
    ),
    InvalidCase(
        "service account token secret without its account",
        SECRET_STRATEGY,
        "Secret",
        {"metadata": meta("s", "ns"), "type": "kubernetes.io/service-account-token"},
        'Secret "s" is invalid: metadata.annotations[kubernetes.io/service-account.name]: '
        "Required value",
    ),
    InvalidCase(
        "tls secret without its keys",
        SECRET_STRATEGY,
        "Secret",
        {"metadata": meta("s", "ns"), "type": "kubernetes.io/tls", "data": {"tls.crt": "eA=="}},
        'Secret "s" is invalid: data[tls.key]: Required value',
    ),
    InvalidCase(
        "secret key",
        SECRET_STRATEGY,
        "Secret",
        {"metadata": meta("s", "ns"), "data": {"a b": "eA=="}},
        'Secret "s" is invalid: data[a b]: Invalid value: "a b": a valid config key must '
        "consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
        "'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
    ),
    InvalidCase(
        "config map key in both bags",
        CONFIG_MAP_STRATEGY,
        "ConfigMap",
        {"metadata": meta("c", "ns"), "data": {"k": "v"}, "binaryData": {"k": "eA=="}},
        'ConfigMap "c" is invalid: data[k]: Invalid value: "k": duplicate of key present in '
        "binaryData",
    ),
    InvalidCase(
        "config map over 1 MiB",
        CONFIG_MAP_STRATEGY,
        "ConfigMap",
        {"metadata": meta("c", "ns"), "data": {"a": "x" * (1024 * 1024), "b": "y"}},
        'ConfigMap "c" is invalid: []: Too long: may not be more than 1048576 bytes',
    ),
    InvalidCase(
        "lease duration",
        LEASE_STRATEGY,
        "Lease",
        {"metadata": meta("l", "ns"), "spec": {"leaseDurationSeconds": 0}},
        'Lease.coordination.k8s.io "l" is invalid: spec.leaseDurationSeconds: Invalid value: 0: '
        "must be greater than 0",
        "coordination.k8s.io",
    ),
]


@pytest.mark.parametrize("case", INVALID, ids=lambda c: c.name)
def test_invalid_objects(case: InvalidCase) -> None:
    obj = copy.deepcopy(case.obj)
    case.strategy.default(obj)
    errors = case.strategy.validate(obj)
    name = obj["metadata"]["name"]
    assert invalid(case.group, case.kind, name, errors).message == case.message


def test_secret_string_data_and_type_default() -> None:
    secret = {"metadata": meta("s", "ns"), "stringData": {"user": "admin"}, "data": {"x": "eQ=="}}
    SECRET_STRATEGY.default(secret)
    assert secret == {
        "metadata": meta("s", "ns"),
        "type": "Opaque",
        "data": {"x": "eQ==", "user": "YWRtaW4="},
    }
    assert SECRET_PRINTER.row(secret, NOW) == ["s", "Opaque", 2, "3m20s"]
    assert secret_fields(secret)["type"] == "Opaque"


def test_secret_data_must_be_base64() -> None:
    secret = {"metadata": meta("s", "ns"), "data": {"x": "no!"}}
    with pytest.raises(StatusError) as caught:
        SECRET_STRATEGY.validate(secret)
    assert caught.value.code == 400
    assert caught.value.message == (
        'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 2'
    )


@dataclass(frozen=True)
class UpdateCase:
    name: str
    strategy: KindStrategy
    old: dict[str, Any]
    new: dict[str, Any]
    errors: tuple[str, ...] = field(default=())


UPDATES = [
    UpdateCase(
        "secret type immutable",
        SECRET_STRATEGY,
        {"metadata": meta("s", "ns", resourceVersion="1"), "type": "Opaque"},
        {
            "metadata": meta("s", "ns", resourceVersion="1"),
            "type": "kubernetes.io/basic-auth",
            "data": {"username": "eA=="},
        },
        ('type: Invalid value: "kubernetes.io/basic-auth": field is immutable',),
    ),
    UpdateCase(
        "immutable config map keeps its data",
        CONFIG_MAP_STRATEGY,
        {"metadata": meta("c", "ns", resourceVersion="1"), "immutable": True, "data": {"a": "1"}},
        {"metadata": meta("c", "ns", resourceVersion="1"), "immutable": True, "data": {"a": "2"}},
        ("data: Forbidden: field is immutable when `immutable` is set",),
    ),
    UpdateCase(
        "node podCIDR set once",
        NODE_STRATEGY,
        {"metadata": meta("n", resourceVersion="1"), "spec": {"podCIDR": "10.0.0.0/24"}},
        {"metadata": meta("n", resourceVersion="1"), "spec": {"podCIDR": "10.0.1.0/24"}},
        ('spec.podCIDR: Invalid value: "10.0.1.0/24": field is immutable',),
    ),
]


@pytest.mark.parametrize("case", UPDATES, ids=lambda c: c.name)
def test_updates(case: UpdateCase) -> None:
    assert tuple(str(e) for e in case.strategy.validate_update(case.new, case.old)) == case.errors


NODE = {
    "metadata": meta(
        "n1", labels={"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "gpu"}
    ),
    "spec": {"unschedulable": True},
    "status": {
        "conditions": [
            {"type": "MemoryPressure", "status": "False"},
            {"type": "Ready", "status": "True"},
        ],
        "addresses": [{"type": "InternalIP", "address": "192.168.1.5"}],
        "nodeInfo": {"kubeletVersion": "v1.32.0", "osImage": "Ubuntu 24.04"},
    },
}


def test_node_row_and_fields() -> None:
    assert NODE_PRINTER.row(NODE, NOW) == [
        "n1",
        "Ready,SchedulingDisabled",
        "control-plane,gpu",
        "3m20s",
        "v1.32.0",
        "192.168.1.5",
        "<none>",
        "Ubuntu 24.04",
        "<unknown>",
        "<unknown>",
    ]
    assert node_fields(NODE) == {"metadata.name": "n1", "spec.unschedulable": "true"}
    bare = {"metadata": meta("n2")}
    assert NODE_PRINTER.row(bare, NOW)[1:3] == ["Unknown", "<none>"]


def test_node_allocatable_defaults_to_capacity() -> None:
    node = {"metadata": meta("n"), "status": {"capacity": {"cpu": "4"}}}
    NODE_STRATEGY.default(node)
    assert node["status"]["allocatable"] == {"cpu": "4"}


def test_config_map_and_lease_rows() -> None:
    cm = {"metadata": meta("c", "ns"), "data": {"a": "1"}, "binaryData": {"b": "eA=="}}
    assert CONFIG_MAP_PRINTER.row(cm, NOW) == ["c", 2, "3m20s"]
    lease = {"metadata": meta("l", "ns"), "spec": {"holderIdentity": "node-1"}}
    assert LEASE_PRINTER.row(lease, NOW) == ["l", "node-1", "3m20s"]
