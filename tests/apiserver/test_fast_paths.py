"""The shortcuts of the write path decide exactly as the full walks: JSON equality decided in
C (managed fields, CRD ratcheting), unchanged subtrees skipped, ``fieldsV1`` encodings reused,
merge patches copying only what they must."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.apiserver.crd.correlation import json_equal
from numaplane.apiserver.fieldpath import (
    FieldPathError,
    compare,
    same_value,
    to_fields_v1,
)
from numaplane.apiserver.patch import merge_patch
from numaplane.apiserver.patchmeta import Schema

NAN = float("nan")
INF = float("inf")


@dataclass(frozen=True)
class EqualityCase:
    name: str
    a: Any
    b: Any
    same: bool


EQUALITIES = [
    EqualityCase("one is one point zero", [1], [1.0], True),
    EqualityCase("true is not one", [True], [1], False),
    EqualityCase("false is not zero inside a map", {"x": False}, {"x": 0}, False),
    EqualityCase("key order does not matter", {"a": 1, "b": 2}, {"b": 2, "a": 1}, True),
    EqualityCase("list order matters", [1, 2], [2, 1], False),
    EqualityCase("NaN equals NaN as JSON text", [NAN], [NAN], True),
    EqualityCase("NaN is not null", [NAN], [None], False),
    EqualityCase("infinity equals infinity", {"x": INF}, {"x": INF}, True),
    EqualityCase("integers past 64 bits", [2**70], [2**70], True),
    EqualityCase("integers past 64 bits differ", [2**70], [2**70 + 1], False),
    EqualityCase("a changed nested string", {"a": [{"b": "x"}]}, {"a": [{"b": "y"}]}, False),
    EqualityCase("negative zero is zero", [-0.0], [0], True),
]


@pytest.mark.parametrize("case", EQUALITIES, ids=lambda c: c.name)
def test_same_value_is_json_equality(case: EqualityCase) -> None:
    assert same_value(case.a, case.b) is case.same
    assert same_value(case.b, case.a) is case.same


KEYED = Schema(fields={"spec": Schema(fields={"items": Schema(list_type="map", map_keys=("k",))})})


@dataclass(frozen=True)
class CompareCase:
    name: str
    old: Any
    new: Any
    modified: frozenset[Any]


COMPARES = [
    CompareCase(
        "an equal subtree beside a changed one",
        {"spec": {"items": [{"k": "a", "v": 1}]}, "status": {"phase": "A"}},
        {"spec": {"items": [{"k": "a", "v": 1}]}, "status": {"phase": "B"}},
        frozenset({(("f", "status"), ("f", "phase"))}),
    ),
    CompareCase(
        "true replacing one is a change",
        {"spec": {"flag": 1}},
        {"spec": {"flag": True}},
        frozenset({(("f", "spec"), ("f", "flag"))}),
    ),
    CompareCase(
        "one point zero replacing one is none",
        {"spec": {"n": 1}},
        {"spec": {"n": 1.0}},
        frozenset(),
    ),
]


@pytest.mark.parametrize("case", COMPARES, ids=lambda c: c.name)
def test_compare_of_partly_equal_objects(case: CompareCase) -> None:
    added, modified, removed = compare(case.old, case.new, KEYED)
    assert (added, modified, removed) == (frozenset(), case.modified, frozenset())


def test_an_unchanged_keyed_item_without_its_key_still_fails_the_comparison() -> None:
    old = {"spec": {"items": [{"v": 1}]}, "status": {"phase": "A"}}
    new = {"spec": {"items": [{"v": 1}]}, "status": {"phase": "B"}}
    with pytest.raises(FieldPathError, match='omits key field "k"'):
        compare(old, new, KEYED)


def test_fields_v1_is_a_fresh_object_each_time() -> None:
    fields = frozenset({(("f", "spec"),), (("f", "spec"), ("f", "replicas"))})
    first = to_fields_v1(fields)
    first["f:spec"]["f:changed"] = {}
    assert to_fields_v1(fields) == {"f:spec": {".": {}, "f:replicas": {}}}


@dataclass(frozen=True)
class RatchetCase:
    name: str
    a: Any
    b: Any
    equal: bool


SHARED_NAN = [NAN]
RATCHETS = [
    RatchetCase("one is one point zero", {"x": [1]}, {"x": [1.0]}, True),
    RatchetCase("true is not one", {"x": True}, {"x": 1}, False),
    RatchetCase("key order does not matter", {"a": 1, "b": [2]}, {"b": [2], "a": 1}, True),
    RatchetCase("NaN is never equal, even to itself", SHARED_NAN, SHARED_NAN, False),
    RatchetCase("NaN is not null", [NAN], [None], False),
    RatchetCase("integers past 64 bits", [2**70], [2**70], True),
    RatchetCase("a longer list", [1, 2], [1, 2, 3], False),
]


@pytest.mark.parametrize("case", RATCHETS, ids=lambda c: c.name)
def test_ratcheting_equality(case: RatchetCase) -> None:
    assert json_equal(case.a, case.b) is case.equal
    assert json_equal(case.b, case.a) is case.equal


def test_merge_patch_from_a_mapping_does_not_share_its_values() -> None:
    patch = {"spec": {"list": [1, 2], "nested": {"v": "x"}}}
    result = merge_patch({"spec": {}}, patch)
    result["spec"]["list"].append(3)
    assert patch == {"spec": {"list": [1, 2], "nested": {"v": "x"}}}


def test_merge_patch_leaves_the_object_alone() -> None:
    obj = {"metadata": {"labels": {"a": "1"}}, "spec": {"list": [1]}}
    result = merge_patch(obj, b'{"metadata": {"labels": {"b": "2"}}, "spec": {"list": [2]}}')
    result["metadata"]["labels"]["c"] = "3"
    assert obj == {"metadata": {"labels": {"a": "1"}}, "spec": {"list": [1]}}
    assert result["spec"] == {"list": [2]}
