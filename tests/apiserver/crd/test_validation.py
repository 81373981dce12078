"""Schema validation of custom resources: kube-openapi's checks with upstream's messages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.apiserver.crd.listtype import list_errors
from numaplane.apiserver.crd.schema import parse
from numaplane.apiserver.crd.validation import go_number, validate

from .helpers import widget, widget_info


@dataclass(frozen=True)
class Case:
    name: str
    spec: dict[str, Any]
    errors: tuple[str, ...]


CASES = [
    Case("valid", {"replicas": 3, "name": "abc"}, ()),
    Case(
        "wrong type",
        {"replicas": "three"},
        (
            'spec.replicas: Invalid value: "string": spec.replicas in body must be of type '
            'integer: "string"',
        ),
    ),
    Case("integral float is an integer", {"replicas": 2.0}, ()),
    Case(
        "fraction is not an integer",
        {"replicas": 2.5},
        (
            'spec.replicas: Invalid value: "number": spec.replicas in body must be of type '
            'integer: "number"',
        ),
    ),
    Case(
        "enum",
        {"color": "pink"},
        ('spec.color: Unsupported value: "pink": supported values: "red", "green", "blue"',),
    ),
    Case(
        "minimum",
        {"replicas": -1},
        (
            "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or "
            "equal to 0",
        ),
    ),
    Case(
        "maximum",
        {"replicas": 11},
        (
            "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or "
            "equal to 10",
        ),
    ),
    Case(
        "exclusive minimum",
        {"ratio": 0},
        ("spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0",),
    ),
    Case("max length", {"name": "abcdef"}, ("spec.name: Too long: may not be longer than 5",)),
    Case(
        "min length",
        {"name": "a"},
        ('spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long',),
    ),
    Case(
        "pattern",
        {"name": "ab1"},
        ("spec.name: Invalid value: \"ab1\": spec.name in body should match '^[a-z]+$'",),
    ),
    Case(
        "max items",
        {"tags": ["a", "b", "c", "d"]},
        ("spec.tags: Too many: 4: must have at most 3 items",),
    ),
    Case(
        "max properties",
        {"labels": {"a": "1", "b": "2", "c": "3"}},
        ("spec.labels: Too many: 3: must have at most 2 items",),
    ),
    Case(
        "additionalProperties schema",
        {"labels": {"a": 1}},
        (
            'spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type '
            'string: "integer"',
        ),
    ),
    Case(
        "format date-time",
        {"since": "yesterday"},
        (
            'spec.since: Invalid value: "yesterday": spec.since in body must be of type '
            'date-time: "yesterday"',
        ),
    ),
    Case("format date-time ok", {"since": "2024-01-02T03:04:05Z"}, ()),
    Case("int-or-string int", {"size": 3}, ()),
    Case("int-or-string string", {"size": "50%"}, ()),
    Case(
        "int-or-string other",
        {"size": True},
        (
            'spec.size: Invalid value: "boolean": spec.size in body must be of type '
            'integer,string: "boolean"',
        ),
    ),
    Case(
        "null not nullable",
        {"name": None},
        ('spec.name: Invalid value: "null": spec.name in body must be of type string: "null"',),
    ),
    Case("null nullable", {"nullableField": None}, ()),
    Case(
        "nested required with index",
        {"ports": [{"port": 1}]},
        ("spec.ports[0].name: Required value",),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_schema_messages(case: Case) -> None:
    schema = widget_info().strategy.schema  # type: ignore[attr-defined]
    obj = widget(**case.spec)
    assert [str(e) for e in validate(schema, obj)] == list(case.errors)


def test_missing_required_field() -> None:
    schema = widget_info().strategy.schema  # type: ignore[attr-defined]
    obj = widget()
    del obj["spec"]["color"]
    assert [str(e) for e in validate(schema, obj)] == ["spec.color: Required value"]


@dataclass(frozen=True)
class ListCase:
    name: str
    spec: dict[str, Any]
    errors: tuple[str, ...]


LIST_CASES = [
    ListCase("set unique", {"tags": ["a", "b"]}, ()),
    ListCase("set duplicate", {"tags": ["a", "b", "a"]}, ('spec.tags[2]: Duplicate value: "a"',)),
    ListCase(
        "map duplicate key",
        {"ports": [{"name": "http", "port": 80}, {"name": "http", "port": 81}]},
        ('spec.ports[1]: Duplicate value: {"name":"http"}',),
    ),
    ListCase(
        "map distinct keys", {"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 1}]}, ()
    ),
]


@pytest.mark.parametrize("case", LIST_CASES, ids=lambda c: c.name)
def test_list_types(case: ListCase) -> None:
    schema = widget_info().strategy.schema  # type: ignore[attr-defined]
    assert [str(e) for e in list_errors(schema, widget(**case.spec))] == list(case.errors)


@dataclass(frozen=True)
class JunctorCase:
    name: str
    schema: dict[str, Any]
    value: Any
    errors: tuple[str, ...]


JUNCTOR_CASES = [
    JunctorCase(
        "anyOf passes", {"type": "integer", "anyOf": [{"minimum": 5}, {"maximum": 1}]}, 7, ()
    ),
    JunctorCase(
        "anyOf fails with its closest branch",
        {"type": "integer", "anyOf": [{"minimum": 5}, {"maximum": 1}]},
        3,
        (
            '<nil>: Invalid value: "": "x" must validate at least one schema (anyOf)',
            "x: Invalid value: 3: x in body should be greater than or equal to 5",
        ),
    ),
    JunctorCase(
        "int-or-string given a fraction",
        {
            "x-kubernetes-int-or-string": True,
            "anyOf": [{"type": "integer"}, {"type": "string"}],
        },
        1.5,
        (
            'x: Invalid value: "number": x in body must be of type integer,string: "number"',
            '<nil>: Invalid value: "": "x" must validate at least one schema (anyOf)',
            'x: Invalid value: "number": x in body must be of type integer: "number"',
        ),
    ),
    JunctorCase(
        "oneOf with two matches",
        {"type": "integer", "oneOf": [{"minimum": 1}, {"maximum": 10}]},
        5,
        (
            '<nil>: Invalid value: "": "x" must validate one and only one schema (oneOf). '
            "Found 2 valid alternatives",
        ),
    ),
    JunctorCase(
        "allOf",
        {"type": "integer", "allOf": [{"minimum": 1}, {"maximum": 3}]},
        5,
        (
            "x: Invalid value: 5: x in body should be less than or equal to 3",
            '<nil>: Invalid value: "": "x" must validate all the schemas (allOf)',
        ),
    ),
    JunctorCase(
        "not",
        {"type": "string", "not": {"enum": ["no"]}},
        "no",
        ('<nil>: Invalid value: "": "x" must not validate the schema (not)',),
    ),
]


@pytest.mark.parametrize("case", JUNCTOR_CASES, ids=lambda c: c.name)
def test_junctors(case: JunctorCase) -> None:
    assert [str(e) for e in validate(parse(case.schema), case.value, "x")] == list(case.errors)


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (0, "0"),
        (1.5, "1.5"),
        (10.0, "10"),
        (100000, "100000"),
        (1e6, "1e+06"),
        (1234567.0, "1.234567e+06"),
        (0.00001, "1e-05"),
    ],
)
def test_go_number_prints_as_go(number: float, text: str) -> None:
    assert go_number(number) == text
