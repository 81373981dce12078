"""The registry: Kubernetes version priority, preferred versions, CRDs served only once
Established, lookups by resource and kind."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.apiserver.crd import crd_resource_infos
from numaplane.apiserver.registry import Registry, version_priority
from tests.apiserver.rest_support import BUILTINS, JOBS


@dataclass(frozen=True)
class PriorityCase:
    name: str
    versions: tuple[str, ...]
    ordered: tuple[str, ...]


PRIORITY = [
    PriorityCase("ga-beta-alpha", ("v1alpha1", "v1beta1", "v1"), ("v1", "v1beta1", "v1alpha1")),
    PriorityCase("higher-major-first", ("v1", "v2", "v10"), ("v10", "v2", "v1")),
    PriorityCase("beta-numbers", ("v2beta1", "v2beta3", "v1"), ("v1", "v2beta3", "v2beta1")),
    PriorityCase("others-last-by-name", ("foo", "v1alpha1", "bar"), ("v1alpha1", "bar", "foo")),
]


@pytest.mark.parametrize("case", PRIORITY, ids=[c.name for c in PRIORITY])
def test_version_priority(case: PriorityCase) -> None:
    assert tuple(sorted(case.versions, key=version_priority)) == case.ordered


def crd(established: bool, versions: tuple[str, ...] = ("v1beta1", "v1")) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com", "uid": "u1", "generation": 1},
        "spec": {
            "group": "example.com",
            "scope": "Cluster",
            "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
            "versions": [
                {
                    "name": v,
                    "served": True,
                    "storage": v == versions[-1],
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                }
                for v in versions
            ],
        },
        "status": {
            "conditions": [{"type": "Established", "status": "True" if established else "False"}]
        },
    }


def test_only_established_crds_are_served() -> None:
    registry = Registry(BUILTINS, crd_resource_infos)
    registry.set_crd(crd(established=False))
    assert registry.lookup("example.com", "v1", "things") is None
    registry.set_crd(crd(established=True))
    thing = registry.lookup("example.com", "v1", "things")
    assert thing is not None
    assert not thing.namespaced
    assert registry.by_kind("example.com", "v1beta1", "Thing") is not None
    assert registry.preferred_version("example.com") == "v1"
    assert not registry.is_builtin(thing)
    assert registry.crd_for("things.example.com") is not None
    registry.remove_crd("things.example.com")
    assert registry.lookup("example.com", "v1", "things") is None
    assert registry.crd_for("things.example.com") is None


def test_builtin_lookups() -> None:
    registry = Registry(BUILTINS)
    assert registry.lookup("batch", "v1", "jobs") is JOBS
    assert registry.by_kind("batch", "v1", "Job") is JOBS
    assert registry.kind_in_group("batch", "Job") is JOBS
    assert registry.is_builtin(JOBS)
    assert registry.preferred_version("batch") == "v1"
    assert registry.preferred_version("nope.example.com") == ""
    assert [i.group_resource for i in registry.storage_resources()].count("jobs.batch") == 1
