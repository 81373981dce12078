"""Object metadata and name rules with apimachinery's exact messages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from numaplane.apiserver.errors import invalid
from numaplane.apiserver.kinds.meta import (
    is_config_map_key,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    name_is_dns_label,
    name_is_dns_subdomain,
    validate_object_meta,
    validate_object_meta_update,
    validate_path_segment_name,
)

LABEL_RULE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
SUBDOMAIN_RULE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
NAME_PART_RULE = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE_RULE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


@dataclass(frozen=True)
class NameCase:
    name: str
    check: Any
    value: str
    messages: tuple[str, ...]


NAME_CASES = [
    NameCase("label ok", is_dns1123_label, "my-name", ()),
    NameCase("label with capitals", is_dns1123_label, "My", (LABEL_RULE,)),
    NameCase("label too long", is_dns1123_label, "a" * 64, ("must be no more than 63 characters",)),
    NameCase("subdomain ok", is_dns1123_subdomain, "a.b-c.d", ()),
    NameCase("subdomain underscore", is_dns1123_subdomain, "a_b", (SUBDOMAIN_RULE,)),
    NameCase(
        "subdomain too long and bad",
        is_dns1123_subdomain,
        "-" * 254,
        ("must be no more than 253 characters", SUBDOMAIN_RULE),
    ),
    NameCase("qualified with prefix", is_qualified_name, "example.com/My_Name.1", ()),
    NameCase("qualified empty prefix", is_qualified_name, "/x", ("prefix part must be non-empty",)),
    NameCase("qualified bad prefix", is_qualified_name, "Ex/x", ("prefix part " + SUBDOMAIN_RULE,)),
    NameCase(
        "qualified empty name",
        is_qualified_name,
        "a/",
        ("name part must be non-empty", NAME_PART_RULE),
    ),
    NameCase("qualified bad name", is_qualified_name, "-x", (NAME_PART_RULE,)),
    NameCase(
        "qualified two slashes",
        is_qualified_name,
        "a/b/c",
        (
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
            "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') "
            "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        ),
    ),
    NameCase("label value empty ok", is_valid_label_value, "", ()),
    NameCase("label value bad", is_valid_label_value, "a b", (LABEL_VALUE_RULE,)),
    NameCase(
        "config key dots",
        is_config_map_key,
        "..x",
        ("must not start with '..'",),
    ),
    NameCase(
        "path segment slash",
        lambda v: validate_path_segment_name(v, False),
        "a/b",
        ("may not contain '/'",),
    ),
    NameCase(
        "path segment dotdot",
        lambda v: validate_path_segment_name(v, False),
        "..",
        ("may not be '..'",),
    ),
    NameCase("generateName trailing dash", lambda v: name_is_dns_subdomain(v, True), "web-", ()),
    NameCase("generateName namespace", lambda v: name_is_dns_label(v, True), "team-", ()),
]


@pytest.mark.parametrize("case", NAME_CASES, ids=lambda c: c.name)
def test_name_rules(case: NameCase) -> None:
    assert tuple(case.check(case.value)) == case.messages


def _obj(**meta: Any) -> dict[str, Any]:
    return {"metadata": meta}


@dataclass(frozen=True)
class MetaCase:
    name: str
    obj: dict[str, Any]
    namespaced: bool
    message: str


META_CASES = [
    MetaCase("valid", _obj(name="a", namespace="ns", labels={"app": "x"}), True, ""),
    MetaCase(
        "no name",
        _obj(namespace="ns"),
        True,
        'Pod "" is invalid: metadata.name: Required value: name or generateName is required',
    ),
    MetaCase(
        "bad name and generateName",
        _obj(name="A", generateName="B-", namespace="ns"),
        True,
        f'Pod "" is invalid: [metadata.generateName: Invalid value: "B-": {SUBDOMAIN_RULE}, '
        f'metadata.name: Invalid value: "A": {SUBDOMAIN_RULE}]',
    ),
    MetaCase(
        "namespace required",
        _obj(name="a"),
        True,
        'Pod "" is invalid: metadata.namespace: Required value',
    ),
    MetaCase(
        "namespace forbidden on cluster kinds",
        _obj(name="a", namespace="ns"),
        False,
        'Pod "" is invalid: metadata.namespace: Forbidden: not allowed on this type',
    ),
    MetaCase(
        "bad label key and value",
        _obj(name="a", namespace="ns", labels={"-k": "v v"}),
        True,
        f'Pod "" is invalid: [metadata.labels: Invalid value: "-k": {NAME_PART_RULE}, '
        f'metadata.labels: Invalid value: "v v": {LABEL_VALUE_RULE}]',
    ),
    MetaCase(
        "annotations over 256KiB",
        _obj(name="a", namespace="ns", annotations={"k": "x" * (256 * 1024)}),
        True,
        'Pod "" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes',
    ),
    MetaCase(
        "unqualified finalizer",
        _obj(name="a", namespace="ns", finalizers=["custom"]),
        True,
        'Pod "" is invalid: metadata.finalizers[0]: Invalid value: "custom": name is neither a '
        "standard finalizer name nor is it fully qualified",
    ),
    MetaCase(
        "two controllers",
        _obj(
            name="a",
            namespace="ns",
            ownerReferences=[
                {"apiVersion": "v1", "kind": "A", "name": "x", "uid": "1", "controller": True},
                {"apiVersion": "v1", "kind": "B", "name": "y", "uid": "2", "controller": True},
            ],
        ),
        True,
        'Pod "" is invalid: metadata.ownerReferences: Invalid value: '
        '[{"apiVersion":"v1","controller":true,"kind":"A","name":"x","uid":"1"},'
        '{"apiVersion":"v1","controller":true,"kind":"B","name":"y","uid":"2"}]: Only one '
        'reference can have Controller set to true. Found "true" in references for A/x and B/y',
    ),
]


@pytest.mark.parametrize("case", META_CASES, ids=lambda c: c.name)
def test_validate_object_meta(case: MetaCase) -> None:
    errors = validate_object_meta(case.obj, case.namespaced, name_is_dns_subdomain)
    message = invalid("", "Pod", "", errors).message if errors else ""
    assert message == case.message


@dataclass(frozen=True)
class MetaUpdateCase:
    name: str
    new: dict[str, Any]
    old: dict[str, Any]
    messages: tuple[str, ...] = field(default=())


UPDATE_CASES = [
    MetaUpdateCase(
        "unchanged",
        _obj(name="a", namespace="n", uid="u", resourceVersion="5"),
        _obj(name="a", namespace="n", uid="u", resourceVersion="5"),
    ),
    MetaUpdateCase(
        "no resourceVersion",
        _obj(name="a"),
        _obj(name="a"),
        ('metadata.resourceVersion: Invalid value: "": must be specified for an update',),
    ),
    MetaUpdateCase(
        "uid changed",
        _obj(name="a", uid="v", resourceVersion="1"),
        _obj(name="a", uid="u"),
        ('metadata.uid: Invalid value: "v": field is immutable',),
    ),
    MetaUpdateCase(
        "new finalizer while deleting",
        _obj(name="a", resourceVersion="1", deletionTimestamp="t", finalizers=["x.io/f"]),
        _obj(name="a", deletionTimestamp="t"),
        (
            "metadata.finalizers: Forbidden: no new finalizers can be added if the object is "
            'being deleted, found new finalizers []string{"x.io/f"}',
        ),
    ),
    MetaUpdateCase(
        "generation decremented",
        _obj(name="a", resourceVersion="1", generation=1),
        _obj(name="a", generation=2),
        ("metadata.generation: Invalid value: 1: must not be decremented",),
    ),
]


@pytest.mark.parametrize("case", UPDATE_CASES, ids=lambda c: c.name)
def test_validate_object_meta_update(case: MetaUpdateCase) -> None:
    errors = validate_object_meta_update(case.new, case.old)
    assert tuple(str(e) for e in errors) == case.messages
