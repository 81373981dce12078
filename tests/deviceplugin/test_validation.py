"""Registration request checks (upstream ``IsExtendedResourceName`` and messages)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.deviceplugin.validation import (
    endpoint_error,
    is_extended_resource_name,
    version_error,
)


@dataclass(frozen=True)
class NameCase:
    name: str
    resource: str
    extended: bool


NAME_CASES = [
    NameCase("vendor domain", "nvidia.com/gpu", True),
    NameCase("subdomain and dashes", "a-b.example.io/my_dev.1", True),
    NameCase("no domain", "gpu", False),
    NameCase("kubernetes.io domain", "kubernetes.io/gpu", False),
    NameCase("kubernetes.io subdomain", "foo.kubernetes.io/gpu", False),
    NameCase("quota prefix", "requests.example.com/gpu", False),
    NameCase("upper-case domain", "Example.com/gpu", False),
    NameCase("two slashes", "example.com/a/b", False),
    NameCase("empty name", "example.com/", False),
    NameCase("name starts with dash", "example.com/-gpu", False),
    NameCase("name of 63 characters", "example.com/" + "a" * 63, True),
    NameCase("name of 64 characters", "example.com/" + "a" * 64, False),
    NameCase("empty domain", "/gpu", False),
]


@pytest.mark.parametrize("case", NAME_CASES, ids=lambda c: c.name)
def test_extended_resource_names(case: NameCase) -> None:
    assert is_extended_resource_name(case.resource) is case.extended


def test_supported_version_passes() -> None:
    assert version_error("v1beta1") is None
    assert version_error("v1") == (
        'requested API version "v1" is not supported by kubelet. Supported version is ["v1beta1"]'
    )


@pytest.mark.parametrize(
    ("endpoint", "ok"),
    [("dev.sock", True), ("a/b.sock", False), ("..", False), ("", False)],
    ids=["plain", "nested", "parent", "empty"],
)
def test_endpoint_must_be_a_file_name(endpoint: str, ok: bool) -> None:
    assert (endpoint_error(endpoint) is None) is ok
