"""Field selectors: upstream's parsing, escaping, printing, matching and error messages
(cases after apimachinery's ``fields/selector_test.go``)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.api.fieldselectors import (
    escape_field_value,
    parse_field_selector,
    unescape_field_value,
)
from numaplane.api.selectors import Operator, SelectorError


@dataclass(frozen=True)
class FieldCase:
    name: str
    text: str
    printed: str
    fields: dict[str, str]
    matches: bool


FIELD_CASES = [
    FieldCase("empty", "", "", {"a": "b"}, True),
    FieldCase("equality", "metadata.name=x", "metadata.name=x", {"metadata.name": "x"}, True),
    FieldCase("double equals reads as one", "a==b", "a=b", {"a": "b"}, True),
    FieldCase(
        "not equals",
        "status.phase!=Running",
        "status.phase!=Running",
        {"status.phase": "Running"},
        False,
    ),
    FieldCase("absent field reads empty", "spec.nodeName=", "spec.nodeName=", {}, True),
    FieldCase("absent field not equals", "spec.nodeName!=", "spec.nodeName!=", {}, False),
    FieldCase("sorted terms", "b=2,a=1", "a=1,b=2", {"a": "1", "b": "2"}, True),
    FieldCase("escaped comma", "a=x\\,y", "a=x\\,y", {"a": "x,y"}, True),
    FieldCase("escaped equals and slash", "a=\\=\\\\", "a=\\=\\\\", {"a": "=\\"}, True),
    FieldCase("empty terms skipped", "a=1,,", "a=1", {"a": "1"}, True),
]


@pytest.mark.parametrize("case", FIELD_CASES, ids=lambda c: c.name)
def test_field_selectors_parse_print_and_match(case: FieldCase) -> None:
    selector = parse_field_selector(case.text)
    assert str(selector) == case.printed
    assert selector.matches(case.fields) is case.matches


@dataclass(frozen=True)
class BadFieldCase:
    name: str
    text: str
    message: str


BAD_FIELDS = [
    BadFieldCase("no operator", "a", "invalid selector: 'a'; can't understand 'a'"),
    BadFieldCase("bare comma in value", "a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'"),
    BadFieldCase(
        "bare equals in value", "a=b=c", "invalid field selector: unescaped character in value: ="
    ),
    BadFieldCase("unknown escape", "a=\\q", "invalid field selector: invalid escape sequence: \\q"),
    BadFieldCase(
        "trailing backslash", "a=b\\", "invalid field selector: invalid escape sequence: \\"
    ),
]


@pytest.mark.parametrize("case", BAD_FIELDS, ids=lambda c: c.name)
def test_bad_field_selectors_fail_with_upstream_messages(case: BadFieldCase) -> None:
    with pytest.raises(SelectorError) as caught:
        parse_field_selector(case.text)
    assert str(caught.value) == case.message


def test_field_selector_requirements_and_exact_match() -> None:
    selector = parse_field_selector("metadata.namespace=ns,spec.nodeName!=n1")
    assert [(r.field, r.operator, r.value) for r in selector.requirements] == [
        ("metadata.namespace", Operator.EQUALS, "ns"),
        ("spec.nodeName", Operator.NOT_EQUALS, "n1"),
    ]
    assert selector.requires_exact_match("metadata.namespace") == "ns"
    assert selector.requires_exact_match("spec.nodeName") is None


@given(st.text(max_size=20))
def test_field_value_escaping_round_trips(value: str) -> None:
    assert unescape_field_value(escape_field_value(value)) == value
    selector = parse_field_selector("f=" + escape_field_value(value))
    assert selector.matches({"f": value})
    assert str(parse_field_selector(str(selector))) == str(selector)
