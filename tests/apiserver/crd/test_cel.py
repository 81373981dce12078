"""x-kubernetes-validations: rule semantics, messages and the Kubernetes CEL libraries."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest
from celpy import celtypes

from numaplane.apiserver.crd import cel, celvalues
from numaplane.apiserver.crd.schema import parse

STRING = {"type": "string"}


def schema(rules: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A root schema whose ``spec`` carries ``rules``."""
    properties: dict[str, Any] = {
        "name": STRING,
        "x-y": STRING,
        "ratio": {"type": "number"},
        "count": {"type": "integer"},
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": STRING},
        "items": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "properties": {"name": STRING, "value": STRING},
                "x-kubernetes-validations": extra.pop("item_rules", []),
            },
        },
        "labels": {
            "type": "object",
            "additionalProperties": {
                "type": "string",
                "x-kubernetes-validations": extra.pop("labels_rules", []),
            },
        },
        "data": {"type": "string", "format": "byte"},
        "words": {
            "type": "array",
            "items": {"type": "string", "x-kubernetes-validations": extra.pop("word_rules", [])},
        },
        "since": {"type": "string", "format": "date-time"},
    }
    return {
        "type": "object",
        "x-kubernetes-validations": extra.pop("root_rules", []),
        "properties": {
            "metadata": {"type": "object"},
            "spec": {"type": "object", "properties": properties, "x-kubernetes-validations": rules},
        },
    }


def run(raw: dict[str, Any], new: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    compiled = cel.compile_schema(parse(raw))
    return [str(e) for e in cel.validate(compiled, new, old)]


def obj(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "o", "labels": {"a": "b"}}, "spec": spec}


@dataclass(frozen=True)
class Case:
    name: str
    raw: dict[str, Any]
    new: dict[str, Any]
    old: dict[str, Any] | None = None
    errors: tuple[str, ...] = ()


CASES = [
    Case("passes", schema([{"rule": "self.count > 0"}]), obj(count=1)),
    Case(
        "default message",
        schema([{"rule": "self.count > 0"}]),
        obj(count=0),
        errors=('spec: Invalid value: "object": failed rule: self.count > 0',),
    ),
    Case(
        "message",
        schema([{"rule": "self.count > 0", "message": "count must be positive"}]),
        obj(count=0),
        errors=('spec: Invalid value: "object": count must be positive',),
    ),
    Case(
        "messageExpression",
        schema(
            [
                {
                    "rule": "self.count > 0",
                    "message": "static",
                    "messageExpression": "'count is ' + string(self.count)",
                }
            ]
        ),
        obj(count=-2),
        errors=('spec: Invalid value: "object": count is -2',),
    ),
    Case(
        "messageExpression failing falls back to message",
        schema([{"rule": "self.count > 0", "message": "static", "messageExpression": "self.nope"}]),
        obj(count=-2),
        errors=('spec: Invalid value: "object": static',),
    ),
    Case(
        "reason Forbidden and fieldPath",
        schema(
            [
                {
                    "rule": "!has(self.name)",
                    "message": "name is set elsewhere",
                    "reason": "FieldValueForbidden",
                    "fieldPath": ".name",
                }
            ]
        ),
        obj(name="n"),
        errors=("spec.name: Forbidden: name is set elsewhere",),
    ),
    Case(
        "reason Required",
        schema(
            [{"rule": "has(self.name)", "message": "give a name", "reason": "FieldValueRequired"}]
        ),
        obj(),
        errors=("spec: Required value: give a name",),
    ),
    Case(
        "reason Duplicate and a map-key fieldPath",
        schema(
            [
                {
                    "rule": "size(self.labels) < 2",
                    "reason": "FieldValueDuplicate",
                    "fieldPath": ".labels['a.b']",
                }
            ]
        ),
        obj(labels={"a.b": "1", "c": "2"}),
        errors=('spec.labels[a.b]: Duplicate value: "object"',),
    ),
    Case(
        "evaluation error",
        schema([{"rule": "self.name == 'x'", "message": "name must be x"}]),
        obj(),
        errors=(
            'spec: Invalid value: "object": no such key: name evaluating rule: name must be x',
        ),
    ),
    Case(
        "escaped property name",
        schema([{"rule": "self.x__dash__y == 'v'"}]),
        obj(**{"x-y": "v"}),
    ),
    Case(
        "number field is a double",
        schema([{"rule": "type(self.ratio) == double && self.ratio == 2"}]),
        obj(ratio=2),
    ),
    Case(
        "a map entry is named by key",
        schema(
            [],
            **{
                "labels_rules": [{"rule": "self != 'bad'", "message": "no bad values"}],
            },
        ),
        obj(labels={"x": "ok", "y": "bad"}),
        errors=('spec.labels[y]: Invalid value: "string": no bad values',),
    ),
    Case(
        "byte and date-time formats are bytes and timestamps",
        schema(
            [{"rule": "size(self.data) == 3 && self.since < timestamp('2025-01-01T00:00:00Z')"}]
        ),
        obj(data="YWJj", since="2024-06-01T00:00:00Z"),
    ),
    Case(
        "additionalProperties as a map",
        schema([{"rule": "'k' in self.labels && self.labels.k == 'v' && !has(self.labels.z)"}]),
        obj(labels={"k": "v"}),
    ),
    Case(
        "root rule reports at <nil>, metadata shows name only",
        schema(
            [],
            root_rules=[
                {
                    "rule": "self.metadata.name == 'o' && !has(self.metadata.labels)",
                    "message": "root",
                }
            ],
        ),
        obj(),
    ),
    Case(
        "root rule failure",
        schema([], root_rules=[{"rule": "self.metadata.name == 'p'", "message": "name must be p"}]),
        obj(),
        errors=('<nil>: Invalid value: "object": name must be p',),
    ),
    Case(
        "transition rule skipped on create",
        schema([{"rule": "self.name == oldSelf.name", "message": "immutable"}]),
        obj(name="a"),
    ),
    Case(
        "transition rule on update",
        schema([{"rule": "self.name == oldSelf.name", "message": "immutable"}]),
        obj(name="b"),
        obj(name="a"),
        errors=('spec: Invalid value: "object": immutable',),
    ),
    Case(
        "set lists compare without order",
        schema([{"rule": "self.tags == oldSelf.tags", "message": "immutable"}]),
        obj(tags=["b", "a"]),
        obj(tags=["a", "b"]),
    ),
    Case(
        "map list items correlate by key",
        schema([], item_rules=[{"rule": "self.value == oldSelf.value", "message": "fixed"}]),
        obj(items=[{"name": "new", "value": "1"}, {"name": "a", "value": "2"}]),
        obj(items=[{"name": "a", "value": "1"}]),
        errors=('spec.items[1]: Invalid value: "object": fixed',),
    ),
    Case(
        "optionalOldSelf runs on create",
        schema(
            [
                {
                    "rule": "oldSelf.hasValue() || self.count == 1",
                    "message": "start at 1",
                    "optionalOldSelf": True,
                }
            ]
        ),
        obj(count=2),
        errors=('spec: Invalid value: "object": start at 1',),
    ),
    Case(
        "optionalOldSelf on update",
        schema(
            [
                {
                    "rule": "!oldSelf.hasValue() || self.count >= oldSelf.value().count",
                    "message": "no decrease",
                    "optionalOldSelf": True,
                }
            ]
        ),
        obj(count=2),
        obj(count=3),
        errors=('spec: Invalid value: "object": no decrease',),
    ),
    Case(
        "unchanged value is ratcheted",
        schema([{"rule": "self.count > 5", "message": "too small"}]),
        obj(count=1),
        obj(count=1),
    ),
    Case(
        "an evaluation error is not ratcheted",
        schema([{"rule": "self.name == 'x'", "message": "m"}]),
        obj(count=1),
        obj(count=1),
        errors=('spec: Invalid value: "object": no such key: name evaluating rule: m',),
    ),
    Case(
        "an atomic list's items ratchet with the list",
        schema([], word_rules=[{"rule": "self != 'bad'", "message": "no bad words"}]),
        obj(words=["bad"], count=2),
        obj(words=["bad"], count=1),
    ),
    Case(
        "a changed atomic list checks every item",
        schema([], word_rules=[{"rule": "self != 'bad'", "message": "no bad words"}]),
        obj(words=["bad", "good"]),
        obj(words=["bad"]),
        errors=('spec.words[0]: Invalid value: "string": no bad words',),
    ),
    Case(
        "changed value is checked",
        schema([{"rule": "self.count > 5", "message": "too small"}]),
        obj(count=2),
        obj(count=1),
        errors=('spec: Invalid value: "object": too small',),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_rules(case: Case) -> None:
    new = copy.deepcopy(case.new)
    old = copy.deepcopy(case.old) if case.old is not None else None
    assert run(case.raw, new, old) == list(case.errors)


@dataclass(frozen=True)
class ExprCase:
    expr: str
    result: Any
    bindings: dict[str, Any] = field(default_factory=dict)


EXPR_CASES = [
    ExprCase("1 == 1.0", True),
    ExprCase("'a' == 1", False),
    ExprCase("1 < 1.5 && 2u > 1", True),
    ExprCase("[1, 2, 3].isSorted() && ![2, 1].isSorted()", True),
    ExprCase("[1, 2, 3].sum()", 6),
    ExprCase("[3, 7, 5].max() - [3, 7, 5].min()", 4),
    ExprCase("[1, 2, 1].indexOf(1) + [1, 2, 1].lastIndexOf(1)", 2),
    ExprCase("'Hello'.lowerAscii() + 'x'.upperAscii()", "helloX"),
    ExprCase("'a,b,c'.split(',').join('-')", "a-b-c"),
    ExprCase("'hello'.substring(1, 3) + 'hello'.charAt(4)", "elo"),
    ExprCase("'  x  '.trim()", "x"),
    ExprCase("'abc'.replace('b', 'B')", "aBc"),
    ExprCase("'%s has %d items'.format(['list', 3])", "list has 3 items"),
    ExprCase("'abc123def45'.find('[0-9]+')", "123"),
    ExprCase("'abc123def45'.findAll('[0-9]+')", ["123", "45"]),
    ExprCase("'abc'.matches('^a.c$')", True),
    ExprCase("quantity('1Gi').isGreaterThan(quantity('1G'))", True),
    ExprCase("quantity('500m').add(quantity('500m')).asInteger()", 1),
    ExprCase("isQuantity('1.5Ki') && !isQuantity('1.5Kix')", True),
    ExprCase("quantity('1.5').isInteger()", False),
    ExprCase("url('https://example.com:8443/a/b?x=1').getHostname()", "example.com"),
    ExprCase("url('https://example.com:8443/a').getPort()", "8443"),
    ExprCase("isURL('https://example.com') && !isURL('example')", True),
    ExprCase("ip('10.0.0.1').family() == 4 && ip('::1').isLoopback()", True),
    ExprCase("cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))", True),
    ExprCase(
        "cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && cidr('10.0.0.0/8').prefixLength() == 8",
        True,
    ),
    ExprCase("isIP('1.2.3') || isCIDR('1.2.3.4')", False),
    ExprCase("format.dns1123Label().validate('ok-name').hasValue()", False),
    ExprCase("format.named('dns1123Subdomain').value().validate('a.b').hasValue()", False),
    ExprCase("format.dns1035Label().validate('9x').value().size()", 1),
    ExprCase("format.named('nope').hasValue()", False),
    ExprCase("{'a': 1} == {'a': 1.0} && [1, [2]] == [1, [2]]", True),
    ExprCase("1 in [1.0, 2]", True),
    ExprCase(
        "self.exists(x, x > 2) && self.all(x, x > 0) && self.exists_one(x, x == 3)",
        True,
        {"self": [1, 2, 3]},
    ),
    ExprCase("self.map(x, x * 2).filter(x, x > 2)", [4, 6], {"self": [1, 2, 3]}),
]


@pytest.mark.parametrize("case", EXPR_CASES, ids=lambda c: c.expr)
def test_library(case: ExprCase) -> None:
    rule = cel.compile_rule({"rule": case.expr})
    assert rule.program is not None, rule.error
    bindings = {k: celvalues.to_cel(None, v) for k, v in case.bindings.items()}
    result = rule.program.evaluate(bindings)
    if isinstance(case.result, list):
        assert isinstance(result, list)
        assert list(result) == case.result
    else:
        assert result == case.result
        assert isinstance(result, celtypes.BoolType) == isinstance(case.result, bool)


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("'abc'.charAt(5)", "index out of range: 5"),
        ("quantity('x')", "quantities must match the regular expression"),
    ],
)
def test_library_errors(expr: str, message: str) -> None:
    raw = schema([{"rule": f"{expr} == {expr}", "message": "m"}])
    errors = run(raw, obj())
    assert len(errors) == 1
    assert errors[0].startswith(f'spec: Invalid value: "object": {message}')
    assert errors[0].endswith("evaluating rule: m")


def test_runtime_overload_error() -> None:
    raw = schema([{"rule": "'x' < 1", "message": "m"}])
    assert run(raw, obj()) == [
        "spec: Invalid value: \"object\": 'no such overload': call arguments did not match a "
        "supported operator, function or macro signature for rule: m"
    ]


def test_escape_names() -> None:
    assert [celvalues.escape_name(n) for n in ("a-b", "a.b", "a/b", "a__b", "namespace", "ok")] == [
        "a__dash__b",
        "a__dot__b",
        "a__slash__b",
        "a__underscores__b",
        "__namespace__",
        "ok",
    ]
