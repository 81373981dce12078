"""Field sets and the value walks of server-side apply: structured merge order, path printing,
the fieldsV1 encoding and the laws compare and merge keep."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.apiserver.fieldmerge import merge
from numaplane.apiserver.fieldpath import (
    compare,
    from_fields_v1,
    path_string,
    to_field_set,
    to_fields_v1,
)
from numaplane.apiserver.patchmeta import Schema


@dataclass(frozen=True)
class MergeCase:
    name: str
    live: Any
    config: Any
    expected: Any


SET_AND_MAP = Schema(
    fields={
        "s": Schema(list_type="set"),
        "m": Schema(list_type="map", map_keys=("k",)),
        "a": Schema(list_type="atomic"),
    }
)
MERGES = [
    MergeCase("atomic list replaced", {"a": [1, 2]}, {"a": [3]}, {"a": [3]}),
    MergeCase(
        "set union keeps live-only items", {"s": ["a", "b"]}, {"s": ["c"]}, {"s": ["a", "b", "c"]}
    ),
    MergeCase(
        "keyed items merge",
        {"m": [{"k": 1, "x": 1}, {"k": 2, "x": 2}]},
        {"m": [{"k": 2, "y": 3}]},
        {"m": [{"k": 1, "x": 1}, {"k": 2, "x": 2, "y": 3}]},
    ),
    MergeCase(
        "config order for shared items",
        {"s": ["a", "b", "c"]},
        {"s": ["c", "a"]},
        {"s": ["b", "c", "a"]},
    ),
    MergeCase("null clears", {"x": 1, "y": 2}, {"x": None}, {"y": 2}),
]


@pytest.mark.parametrize("case", MERGES, ids=lambda c: c.name)
def test_structured_merge(case: MergeCase) -> None:
    assert merge(case.live, case.config, SET_AND_MAP) == case.expected


def test_path_strings_as_conflicts_print_them() -> None:
    schema = Schema(
        fields={
            "m": Schema(list_type="map", map_keys=("name", "port")),
            "s": Schema(list_type="set"),
        }
    )
    fields = to_field_set({"m": [{"name": "a", "port": 80}], "s": ["x"]}, schema)
    assert sorted(path_string(p) for p in fields) == [
        '.m[name="a",port=80]',
        '.m[name="a",port=80].name',
        '.m[name="a",port=80].port',
        '.s[="x"]',
    ]


_JSON = st.recursive(
    st.one_of(st.integers(-3, 3), st.text(max_size=2), st.booleans()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text("ab", max_size=2), inner, max_size=3)
    ),
    max_leaves=12,
)
_OBJECTS = st.fixed_dictionaries(
    {"s": st.lists(st.text("xyz", max_size=2), max_size=4, unique=True)},
    optional={"o": st.dictionaries(st.text("ab", max_size=2), _JSON, max_size=3)},
)


@given(_OBJECTS)
def test_fields_v1_round_trips(obj: dict[str, Any]) -> None:
    fields = to_field_set(obj, SET_AND_MAP)
    assert from_fields_v1(to_fields_v1(fields)) == fields


@given(_OBJECTS, _OBJECTS)
def test_compare_and_merge_laws(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert compare(a, a, SET_AND_MAP) == (frozenset(), frozenset(), frozenset())
    assert merge(a, a, SET_AND_MAP) == a
    added, _, removed = compare(a, b, SET_AND_MAP)
    assert not (added & removed)
    assert added <= to_field_set(b, SET_AND_MAP) | {p[:i] for p in added for i in range(1, len(p))}
