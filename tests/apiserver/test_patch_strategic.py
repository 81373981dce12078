"""Strategic merge patch: the merge semantics and directives of apimachinery's strategicpatch, on
the built-in kinds' patch metadata (cases after upstream's documentation and patch_test.go)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.apiserver.patch_go import StrategicPatchError
from numaplane.apiserver.patch_strategic import strategic_merge_patch
from numaplane.apiserver.patchmeta import Schema, custom_resource_schema

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "p",
        "labels": {"app": "web", "tier": "fe"},
        "finalizers": ["a.io/x", "a.io/y"],
    },
    "spec": {
        "containers": [
            {
                "name": "web",
                "image": "nginx:1",
                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                "ports": [{"containerPort": 80}],
            },
            {"name": "side", "image": "busybox"},
        ],
        "tolerations": [{"key": "k", "operator": "Exists"}],
        "volumes": [{"name": "v", "emptyDir": {}}],
    },
    "status": {"conditions": [{"type": "Ready", "status": "False"}]},
}


@dataclass(frozen=True)
class Case:
    name: str
    patch: dict[str, Any]
    path: tuple[str, ...]
    expected: Any


CASES = [
    Case(
        "containers merge by name",
        {"spec": {"containers": [{"name": "side", "image": "busybox:2"}]}},
        ("spec", "containers"),
        [
            POD["spec"]["containers"][0],
            {"name": "side", "image": "busybox:2"},
        ],
    ),
    Case(
        "a new container goes first without an order directive",
        {"spec": {"containers": [{"name": "new", "image": "x"}]}},
        ("spec", "containers"),
        [{"name": "new", "image": "x"}, *POD["spec"]["containers"]],
    ),
    Case(
        "env merges by name inside a merged container",
        {"spec": {"containers": [{"name": "web", "env": [{"name": "B", "value": "3"}]}]}},
        ("spec", "containers", "0", "env"),
        [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}],
    ),
    Case(
        "tolerations have no strategy and are replaced",
        {"spec": {"tolerations": [{"key": "other", "operator": "Exists"}]}},
        ("spec", "tolerations"),
        [{"key": "other", "operator": "Exists"}],
    ),
    Case(
        "null deletes a label and others merge",
        {"metadata": {"labels": {"tier": None, "new": "1"}}},
        ("metadata", "labels"),
        {"app": "web", "new": "1"},
    ),
    Case(
        "delete directive removes an item by merge key",
        {"spec": {"containers": [{"name": "web", "$patch": "delete"}]}},
        ("spec", "containers"),
        [{"name": "side", "image": "busybox"}],
    ),
    Case(
        "replace directive in a list replaces the list",
        {"spec": {"containers": [{"name": "only", "image": "i"}, {"$patch": "replace"}]}},
        ("spec", "containers"),
        [{"name": "only", "image": "i"}],
    ),
    Case(
        "replace directive in a map replaces the map",
        {"metadata": {"labels": {"x": "1", "$patch": "replace"}}},
        ("metadata", "labels"),
        {"x": "1"},
    ),
    Case(
        "delete directive in a map empties it",
        {"metadata": {"labels": {"$patch": "delete"}}},
        ("metadata", "labels"),
        {},
    ),
    Case(
        "finalizers merge as a set, patch order first",
        {"metadata": {"finalizers": ["a.io/z", "a.io/x"]}},
        ("metadata", "finalizers"),
        ["a.io/z", "a.io/x", "a.io/y"],
    ),
    Case(
        "deleteFromPrimitiveList removes finalizers",
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a.io/x"]}},
        ("metadata", "finalizers"),
        ["a.io/y"],
    ),
    Case(
        "setElementOrder orders the merged list",
        {
            "spec": {
                "$setElementOrder/containers": [{"name": "side"}, {"name": "web"}],
                "containers": [{"name": "web", "image": "nginx:2"}],
            }
        },
        ("spec", "containers"),
        [
            {"name": "side", "image": "busybox"},
            {**POD["spec"]["containers"][0], "image": "nginx:2"},
        ],
    ),
    Case(
        "setElementOrder alone reorders",
        {"metadata": {"$setElementOrder/finalizers": ["a.io/y", "a.io/x"]}},
        ("metadata", "finalizers"),
        ["a.io/y", "a.io/x"],
    ),
    Case(
        "retainKeys drops the other volume source",
        {
            "spec": {
                "volumes": [
                    {"name": "v", "hostPath": {"path": "/x"}, "$retainKeys": ["hostPath", "name"]}
                ]
            }
        },
        ("spec", "volumes"),
        [{"name": "v", "hostPath": {"path": "/x"}}],
    ),
    Case(
        "status conditions merge by type",
        {"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
        ("status", "conditions"),
        [{"type": "Ready", "status": "True"}],
    ),
    Case(
        "directives do not reach a new field",
        {"spec": {"hostAliases": [{"ip": "1.2.3.4", "$retainKeys": ["ip"]}]}},
        ("spec", "hostAliases"),
        [{"ip": "1.2.3.4"}],
    ),
    Case(
        "a new item appended keeps no directive",
        {"spec": {"volumes": [{"name": "w", "secret": {"secretName": "s"}, "$retainKeys": []}]}},
        ("spec", "volumes"),
        [{"name": "w", "secret": {"secretName": "s"}}, {"name": "v", "emptyDir": {}}],
    ),
]


def _resolve(obj: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        obj = obj[int(part)] if isinstance(obj, list) else obj[part]
    return obj


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_strategic_merge_patch(case: Case) -> None:
    before = copy.deepcopy(POD)
    patch = copy.deepcopy(case.patch)
    result = strategic_merge_patch(POD, patch, ("", "Pod"))
    assert _resolve(result, case.path) == case.expected
    assert before == POD
    assert patch == case.patch


@dataclass(frozen=True)
class ErrorCase:
    name: str
    patch: dict[str, Any]
    code: int
    message: str


ERRORS = [
    ErrorCase(
        "list item without its merge key",
        {"spec": {"containers": [{"image": "x"}]}},
        500,
        "map: map[image:x] does not contain declared merge key: name",
    ),
    ErrorCase(
        "merge directive in a list",
        {"spec": {"containers": [{"name": "web", "$patch": "merge"}]}},
        500,
        "merging lists cannot yet be specified in the patch",
    ),
    ErrorCase(
        "unknown directive in a map",
        {"metadata": {"labels": {"$patch": "frob"}}},
        500,
        "unknown patch type: frob in map: map[$patch:frob]",
    ),
    ErrorCase(
        "retainKeys not a list",
        {"spec": {"$retainKeys": "x"}},
        400,
        "invalid patch format of retainKeys",
    ),
    ErrorCase(
        "retainKeys missing a patched key",
        {"spec": {"$retainKeys": ["volumes"], "tolerations": []}},
        400,
        "invalid patch format of retainKeys",
    ),
    ErrorCase(
        "setElementOrder not a list",
        {"metadata": {"$setElementOrder/finalizers": "x"}},
        500,
        "expected a []interface {}, but received a string",
    ),
    ErrorCase(
        "setElementOrder without a list name",
        {"metadata": {"$setElementOrder": []}},
        400,
        "invalid patch format of setElementOrder list",
    ),
    ErrorCase(
        "deleteFromPrimitiveList without a list name",
        {"metadata": {"$deleteFromPrimitiveList": ["a"]}},
        400,
        "invalid patch format of primitive list",
    ),
    ErrorCase(
        "patch list out of the directive's order",
        {
            "spec": {
                "$setElementOrder/containers": [{"name": "web"}],
                "containers": [{"name": "side", "image": "x"}],
            }
        },
        500,
        "The order in patch list:\n[map[image:x name:side]]\n doesn't match $setElementOrder "
        "list:\n[map[name:web]]\n",
    ),
]


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c.name)
def test_strategic_merge_patch_errors(case: ErrorCase) -> None:
    with pytest.raises(StrategicPatchError) as caught:
        strategic_merge_patch(POD, case.patch, ("", "Pod"))
    assert (caught.value.code, caught.value.message) == (case.code, case.message)


def test_lists_of_lists_are_refused_with_422() -> None:
    schema = Schema(fields={"m": Schema(patch_strategy="merge")})
    with pytest.raises(StrategicPatchError) as caught:
        strategic_merge_patch({"m": [[1]]}, {"m": [[2]]}, schema=schema)
    assert caught.value.code == 422
    assert caught.value.details == {
        "causes": [
            {"reason": "UnexpectedServerResponse", "message": "lists of lists are not supported"}
        ]
    }


def test_patch_that_is_not_an_object_is_a_bad_request() -> None:
    with pytest.raises(StrategicPatchError) as caught:
        strategic_merge_patch(POD, b"[]", ("", "Pod"))
    assert caught.value.code == 400


def test_crd_schema_markers_drive_the_merge() -> None:
    schema = custom_resource_schema(
        {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "items": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["id"],
                            "x-kubernetes-patch-strategy": "merge",
                            "x-kubernetes-patch-merge-key": "id",
                            "items": {"type": "object"},
                        }
                    },
                }
            },
        }
    )
    live = {"spec": {"items": [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]}}
    result = strategic_merge_patch(live, {"spec": {"items": [{"id": 2, "v": "c"}]}}, schema=schema)
    assert result["spec"]["items"] == [{"id": 1, "v": "a"}, {"id": 2, "v": "c"}]
    assert schema.child("spec").child("items").map_keys == ("id",)
