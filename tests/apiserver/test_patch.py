"""JSON patch and JSON merge patch: results, and kube-apiserver's answers to patches that do not
decode or apply."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.apiserver.errors import StatusError
from numaplane.apiserver.patch import (
    MAX_JSON_PATCH_OPERATIONS,
    create_merge_patch,
    json_patch,
    merge_patch,
    strategic_merge_patch,
)
from numaplane.apiserver.patchmeta import UNKNOWN

CM: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "c", "labels": {"a": "1"}},
    "data": {"k": "v"},
    "list": [1, 2, 3],
}


@dataclass(frozen=True)
class JsonPatchCase:
    name: str
    patch: str
    expected: dict[str, Any]


JSON_PATCH_CASES = [
    JsonPatchCase(
        "add a key",
        '[{"op":"add","path":"/data/n","value":"x"}]',
        {**CM, "data": {"k": "v", "n": "x"}},
    ),
    JsonPatchCase(
        "remove a label",
        '[{"op":"remove","path":"/metadata/labels/a"}]',
        {**CM, "metadata": {"name": "c", "labels": {}}},
    ),
    JsonPatchCase(
        "replace then test",
        '[{"op":"replace","path":"/data/k","value":"w"},{"op":"test","path":"/data/k","value":"w"}]',
        {**CM, "data": {"k": "w"}},
    ),
    JsonPatchCase(
        "append to a list",
        '[{"op":"add","path":"/list/-","value":4}]',
        {**CM, "list": [1, 2, 3, 4]},
    ),
    JsonPatchCase(
        "move and copy",
        '[{"op":"copy","from":"/data/k","path":"/data/c"},{"op":"move","from":"/data/k","path":"/data/m"}]',
        {**CM, "data": {"c": "v", "m": "v"}},
    ),
    JsonPatchCase("empty patch", "[]", CM),
    JsonPatchCase(
        "a missing value reads as null",
        '[{"op":"add","path":"/data/n"}]',
        {**CM, "data": {"k": "v", "n": None}},
    ),
]


@pytest.mark.parametrize("case", JSON_PATCH_CASES, ids=lambda c: c.name)
def test_json_patch_applies(case: JsonPatchCase) -> None:
    before = repr(CM)
    assert json_patch(CM, case.patch) == case.expected
    assert repr(CM) == before


@dataclass(frozen=True)
class JsonPatchErrorCase:
    name: str
    patch: str
    code: int
    message: str
    cause: str = ""


REJECTED = "the server rejected our request due to an error in our request"
JSON_PATCH_ERRORS = [
    JsonPatchErrorCase(
        "failed test",
        '[{"op":"test","path":"/data/k","value":"x"}]',
        422,
        REJECTED,
        "testing value /data/k failed: test failed",
    ),
    JsonPatchErrorCase(
        "add under a missing parent",
        '[{"op":"add","path":"/spec/x","value":1}]',
        422,
        REJECTED,
        'add operation does not apply: doc is missing path: "/spec/x": missing value',
    ),
    JsonPatchErrorCase(
        "remove a missing key",
        '[{"op":"remove","path":"/data/zz"}]',
        422,
        REJECTED,
        'remove operation does not apply: doc is missing path: "/data/zz": missing value',
    ),
    JsonPatchErrorCase(
        "replace a missing key",
        '[{"op":"replace","path":"/data/zz","value":1}]',
        422,
        REJECTED,
        "replace operation does not apply: doc is missing key: /data/zz: missing value",
    ),
    JsonPatchErrorCase(
        "unknown operation", '[{"op":"frob","path":"/a"}]', 422, REJECTED, "Unexpected kind: frob"
    ),
    JsonPatchErrorCase(
        "move from a number",
        '[{"op":"move","from":5,"path":"/data/k"}]',
        422,
        REJECTED,
        "move operation does not apply: doc is missing from path: : missing value",
    ),
    JsonPatchErrorCase(
        "an object, not a list",
        '{"op":"add"}',
        400,
        "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
    ),
]


@pytest.mark.parametrize("case", JSON_PATCH_ERRORS, ids=lambda c: c.name)
def test_json_patch_errors_answer_as_kube_apiserver(case: JsonPatchErrorCase) -> None:
    with pytest.raises(StatusError) as caught:
        json_patch(CM, case.patch)
    assert caught.value.code == case.code
    assert caught.value.message == case.message
    if case.cause:
        assert caught.value.status()["reason"] == "Invalid"
        assert caught.value.details == {
            "causes": [{"reason": "UnexpectedServerResponse", "message": case.cause}]
        }


def test_json_patch_refuses_too_many_operations() -> None:
    ops = [{"op": "test", "path": "/data/k", "value": "v"}] * (MAX_JSON_PATCH_OPERATIONS + 1)
    with pytest.raises(StatusError) as caught:
        json_patch(CM, ops)
    assert caught.value.code == 413
    assert caught.value.message == (
        "The allowed maximum operations in a JSON patch is 10000, got 10001"
    )


def test_json_patch_that_fails_midway_leaves_the_object_alone() -> None:
    before = repr(CM)
    with pytest.raises(StatusError):
        json_patch(CM, '[{"op":"add","path":"/data/n","value":1},{"op":"remove","path":"/q"}]')
    assert repr(CM) == before


@dataclass(frozen=True)
class MergeCase:
    name: str
    target: Any
    patch: Any
    expected: Any


# RFC 7386 appendix A (the cases whose target is an object).
RFC7386_CASES = [
    MergeCase("replace a value", {"a": "b"}, {"a": "c"}, {"a": "c"}),
    MergeCase("add a key", {"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    MergeCase("null removes", {"a": "b"}, {"a": None}, {}),
    MergeCase("null removes one", {"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    MergeCase("array replaced by string", {"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    MergeCase("string replaced by array", {"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    MergeCase(
        "nested",
        {"a": {"b": "c"}},
        {"a": {"b": "d", "c": None}},
        {"a": {"b": "d"}},
    ),
    MergeCase("arrays replaced whole", {"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    MergeCase("nulls inside arrays kept", {"e": None}, {"a": 1}, {"e": None, "a": 1}),
    MergeCase(
        "object into a scalar", {"a": "foo"}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}
    ),
    MergeCase("empty patch", {"a": 1}, {}, {"a": 1}),
]


@pytest.mark.parametrize("case", RFC7386_CASES, ids=lambda c: c.name)
def test_merge_patch_follows_rfc7386(case: MergeCase) -> None:
    assert merge_patch(case.target, case.patch) == case.expected


def test_undecodable_patches_are_worded_as_the_patch_handler_does() -> None:
    strict_message = (
        "error decoding patch: invalid character 'x' looking for beginning of object key string"
    )
    with pytest.raises(StatusError) as caught:
        merge_patch(CM, b"{x}")
    assert (caught.value.code, caught.value.message) == (400, strict_message)
    with pytest.raises(StatusError) as caught:
        merge_patch(CM, b"{x}", field_validation="Ignore")
    assert (caught.value.code, caught.value.message) == (400, "Invalid JSON Patch")
    with pytest.raises(StatusError) as caught:
        json_patch(CM, b"[{x}]")
    assert (caught.value.code, caught.value.message) == (400, strict_message)
    with pytest.raises(StatusError) as caught:
        json_patch(CM, b"[1,", field_validation="Ignore")
    assert (caught.value.code, caught.value.message) == (400, "unexpected end of JSON input")


def test_merge_patch_errors() -> None:
    with pytest.raises(StatusError) as caught:
        merge_patch(CM, b"[1]")
    assert caught.value.code == 400


_SCALARS = st.one_of(st.booleans(), st.integers(-5, 5), st.text(max_size=3))
_NO_NULL = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=10,
)
_DOCS = st.dictionaries(st.text(max_size=2), _NO_NULL, max_size=4)


@given(_DOCS, _DOCS)
def test_merge_patch_of_a_diff_reproduces_the_target(original: Any, modified: Any) -> None:
    assert merge_patch(original, create_merge_patch(original, modified)) == modified


_KEYS = st.text(alphabet="abc", min_size=1, max_size=2)
# Nulls only inside objects: a list is taken whole by both, but strategic merge patch drops the
# nulls of objects inside a list it takes from the patch (as upstream does), RFC 7386 keeps them.
_WITH_NULL = st.recursive(
    st.one_of(st.none(), _SCALARS, st.lists(_NO_NULL, max_size=3)),
    lambda inner: st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=10,
)


@given(
    st.dictionaries(_KEYS, _NO_NULL, max_size=4),
    st.dictionaries(_KEYS, _WITH_NULL, max_size=4),
)
def test_strategic_patch_without_metadata_is_a_merge_patch(doc: Any, patch: Any) -> None:
    # With no patch metadata and no directives, strategic merge patch is RFC 7386.
    assert strategic_merge_patch(doc, patch, schema=UNKNOWN) == merge_patch(doc, patch)
