"""Label and field selectors: upstream's grammar, printing, matching and error messages
(cases from apimachinery's ``labels/selector_test.go`` and ``fields/selector_test.go``)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.api.labelparser import parse_label_selector
from numaplane.api.selectors import (
    EVERYTHING,
    NOTHING,
    Operator,
    SelectorError,
    label_selector_from_dict,
)
from numaplane.errors import NumaplaneError


@dataclass(frozen=True)
class GoodLabelCase:
    name: str
    text: str
    printed: str


GOOD_LABELS = [
    GoodLabelCase("three equalities", "x=a,y=b,z=c", "x=a,y=b,z=c"),
    GoodLabelCase("empty", "", ""),
    GoodLabelCase("not equals", "x!=a,y=b", "x!=a,y=b"),
    GoodLabelCase("empty value", "x=", "x="),
    GoodLabelCase("empty value then space", "x= ", "x="),
    GoodLabelCase("two empty values", "x=,z= ", "x=,z="),
    GoodLabelCase("does not exist", "!x", "!x"),
    GoodLabelCase("greater than", "x>1", "x>1"),
    GoodLabelCase("greater and less", "x>1,z<5", "x>1,z<5"),
    GoodLabelCase("double equals kept", "x==a", "x==a"),
    GoodLabelCase("sorted by key", "z=c,x=a", "x=a,z=c"),
    GoodLabelCase("spaces around", "  x  =  a ,  y in ( b , c ) ", "x=a,y in (b,c)"),
    GoodLabelCase("set values sorted and unique", "x in (c,a,b,a)", "x in (a,b,c)"),
    GoodLabelCase(
        "upstream grammar example", "x in (foo,,baz),y,z notin ()", "x in (,baz,foo),y,z notin ()"
    ),
    GoodLabelCase("keyword as a value", "x in (in,notin)", "x in (in,notin)"),
    GoodLabelCase("prefixed key", "example.com/app=web", "example.com/app=web"),
    GoodLabelCase("exists then not exists", "a,!b", "a,!b"),
    GoodLabelCase("leading comma in set", "x in (,a)", "x in (,a)"),
]


@pytest.mark.parametrize("case", GOOD_LABELS, ids=lambda c: c.name)
def test_label_selectors_parse_and_print_as_upstream(case: GoodLabelCase) -> None:
    selector = parse_label_selector(case.text)
    assert str(selector) == case.printed
    assert str(parse_label_selector(str(selector))) == case.printed


QNAME_REGEX_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
VALUE_REGEX_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?"
    "[A-Za-z0-9])?')"
)


@dataclass(frozen=True)
class BadLabelCase:
    name: str
    text: str
    message: str


BAD_LABELS = [
    BadLabelCase(
        "or is not an operator",
        "x=a||y=b",
        'unable to parse requirement: values[0][x]: Invalid value: "a||y": ' + VALUE_REGEX_MSG,
    ),
    BadLabelCase("two double equals", "x==a==b", "found '==', expected: ',' or 'end of string'"),
    BadLabelCase("not with a value", "!x=a", "found '=', expected: ',' or 'end of string'"),
    BadLabelCase(
        "less than a word",
        "x<a",
        'unable to parse requirement: values[0]: Invalid value: "a": '
        "for 'Gt', 'Lt' operators, the value must be an integer",
    ),
    BadLabelCase(
        "missing operator",
        "a b",
        "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
    ),
    BadLabelCase(
        "in without parenthesis",
        "a in b",
        "unable to parse requirement: found 'b' expected: '('",
    ),
    BadLabelCase(
        "unclosed set",
        "a in (b",
        "unable to parse requirement: found '', expected: ',' or ')'",
    ),
    BadLabelCase("trailing comma", "a,", "found '', expected: identifier after ','"),
    BadLabelCase("extra word", "a=b c", "found 'c', expected: ',' or 'end of string'"),
    BadLabelCase(
        "starts with operator", "=a", "found '=', expected: !, identifier, or 'end of string'"
    ),
    BadLabelCase(
        "invalid key",
        "a_=b",
        'unable to parse requirement: <nil>: Invalid value: "a_": ' + QNAME_REGEX_MSG,
    ),
    BadLabelCase(
        "key too long",
        "k" * 64,
        f'unable to parse requirement: <nil>: Invalid value: "{"k" * 64}": '
        "name part must be no more than 63 characters",
    ),
    BadLabelCase(
        "empty prefix",
        "/a",
        'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty',
    ),
    BadLabelCase(
        "value too long",
        "a=" + "v" * 64,
        f'unable to parse requirement: values[0][a]: Invalid value: "{"v" * 64}": '
        "must be no more than 63 characters",
    ),
    BadLabelCase(
        "operator inside a set",
        "a in (b,=)",
        "unable to parse requirement: found '=', expected: ',', or identifier",
    ),
    BadLabelCase(
        "not then nothing", "!", "unable to parse requirement: found '', expected: identifier"
    ),
]


@pytest.mark.parametrize("case", BAD_LABELS, ids=lambda c: c.name)
def test_bad_label_selectors_fail_with_upstream_messages(case: BadLabelCase) -> None:
    with pytest.raises(SelectorError) as caught:
        parse_label_selector(case.text)
    assert str(caught.value) == case.message
    assert isinstance(caught.value, NumaplaneError)


@dataclass(frozen=True)
class MatchCase:
    name: str
    selector: str
    labels: dict[str, str]
    matches: bool


MATCH_CASES = [
    MatchCase("empty selects everything", "", {"x": "y"}, True),
    MatchCase("equality", "x=y", {"x": "y"}, True),
    MatchCase("equality other value", "x=y", {"x": "z"}, False),
    MatchCase("equality absent", "x=y", {}, False),
    MatchCase("not equals absent", "x!=y", {}, True),
    MatchCase("not equals same", "x!=y", {"x": "y"}, False),
    MatchCase("in", "x in (a,b)", {"x": "b"}, True),
    MatchCase("in absent", "x in (a,b)", {}, False),
    MatchCase("notin absent", "x notin (a,b)", {}, True),
    MatchCase("notin member", "x notin (a,b)", {"x": "a"}, False),
    MatchCase("exists", "x", {"x": ""}, True),
    MatchCase("exists absent", "x", {"y": "x"}, False),
    MatchCase("does not exist", "!x", {"y": "1"}, True),
    MatchCase("does not exist present", "!x", {"x": "1"}, False),
    MatchCase("greater than", "x>1", {"x": "2"}, True),
    MatchCase("greater than equal", "x>1", {"x": "1"}, False),
    MatchCase("greater than not a number", "x>1", {"x": "a"}, False),
    MatchCase("less than negative", "x<0", {"x": "-3"}, True),
    MatchCase("empty value matches empty", "x=", {"x": ""}, True),
    MatchCase("all requirements", "x=a,y", {"x": "a"}, False),
]


@pytest.mark.parametrize("case", MATCH_CASES, ids=lambda c: c.name)
def test_label_selectors_match_as_upstream(case: MatchCase) -> None:
    assert parse_label_selector(case.selector).matches(case.labels) is case.matches


def test_nothing_matches_nothing_and_everything_everything() -> None:
    assert not NOTHING.matches({})
    assert EVERYTHING.matches({"a": "b"})
    assert EVERYTHING.empty()
    assert not NOTHING.empty()


@dataclass(frozen=True)
class DictCase:
    name: str
    selector: dict[str, object] | None
    printed: str
    matching: dict[str, str]


DICT_CASES = [
    DictCase("none selects nothing", None, "", {}),
    DictCase("empty selects everything", {}, "", {}),
    DictCase(
        "match labels", {"matchLabels": {"b": "2", "a": "1"}}, "a=1,b=2", {"a": "1", "b": "2"}
    ),
    DictCase(
        "expressions",
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["b", "a"]},
                {"key": "env", "operator": "DoesNotExist"},
            ],
        },
        "app=web,!env,tier in (a,b)",
        {"app": "web", "tier": "a"},
    ),
]


@pytest.mark.parametrize("case", DICT_CASES, ids=lambda c: c.name)
def test_label_selector_from_dict(case: DictCase) -> None:
    selector = label_selector_from_dict(case.selector)
    assert str(selector) == case.printed
    assert selector.matches(case.matching) is (case.selector is not None)


def test_label_selector_from_dict_refuses_bad_operator_and_empty_in() -> None:
    with pytest.raises(SelectorError, match=r'^"Gt" is not a valid label selector operator$'):
        label_selector_from_dict({"matchExpressions": [{"key": "a", "operator": "Gt"}]})
    with pytest.raises(SelectorError) as caught:
        label_selector_from_dict({"matchExpressions": [{"key": "a", "operator": "In"}]})
    assert str(caught.value) == (
        "values: Invalid value: []string(nil): "
        "for 'in', 'notin' operators, values set can't be empty"
    )


def test_requires_exact_match() -> None:
    selector = parse_label_selector("a=1,b in (x),c in (x,y),d!=2")
    assert selector.requires_exact_match("a") == "1"
    assert selector.requires_exact_match("b") == "x"
    assert selector.requires_exact_match("c") is None
    assert selector.requires_exact_match("d") is None
    assert selector.requirements[0].operator is Operator.EQUALS


_KEYS = st.from_regex(
    r"([a-z]{1,5}\.)?[a-z]{1,3}/?[A-Za-z][A-Za-z0-9_.-]{0,5}[a-z]", fullmatch=True
)
_VALUES = st.one_of(
    st.just(""), st.from_regex(r"[A-Za-z0-9]([A-Za-z0-9_.-]{0,6}[A-Za-z0-9])?", fullmatch=True)
)
_REQUIREMENT_TEXT = st.one_of(
    st.tuples(_KEYS, st.sampled_from(["=", "==", "!="]), _VALUES).map("".join),
    st.tuples(
        _KEYS, st.sampled_from([" in ", " notin "]), st.lists(_VALUES, min_size=1, max_size=4)
    ).map(lambda t: f"{t[0]}{t[1]}({','.join(t[2])})"),
    _KEYS,
    _KEYS.map(lambda k: "!" + k),
    st.tuples(_KEYS, st.sampled_from([">", "<"]), st.integers(0, 99)).map(
        lambda t: f"{t[0]}{t[1]}{t[2]}"
    ),
)


@given(st.lists(_REQUIREMENT_TEXT, max_size=5), st.dictionaries(_KEYS, _VALUES, max_size=4))
def test_label_selector_printing_round_trips(parts: list[str], labels: dict[str, str]) -> None:
    selector = parse_label_selector(",".join(parts))
    again = parse_label_selector(str(selector))
    assert str(again) == str(selector)
    assert again.matches(labels) == selector.matches(labels)


# apimachinery's TestSetSelectorParser inputs: which parse and which do not.
UPSTREAM_VALID = [
    "\rx",
    "this-is-a-dns.domain.com/key-with-dash",
    "this-is-another-dns.domain.com/key-with-dash in (so,what)",
    "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
    "foo  in\t (abc)",
    "x notin\n (abc)",
    "x  notin\t\t\t(abc,def)",
    "x in (abc,)",
    "x in ()",
    "x notin (abc,,def),bar,z in (),w",
    "x,y in (a)",
    "x<7",
    "x=a,y!=b,z in (h,i,j)",
    "x notin ( )",
    "x notin (, a)",
    "a ",
    "a in (x,y,notin, z,in)",
]
UPSTREAM_INVALID = [
    "x=a||y=b",
    "x,,y",
    ",x,y",
    "x nott in (y)",
    "a in (xyz),",
    "a in (xyz)b notin ()",
    "a in (xyz abc)",
    "a notin(",
    "a (",
    "(",
]


@pytest.mark.parametrize("text", UPSTREAM_VALID, ids=repr)
def test_upstream_valid_selectors_parse(text: str) -> None:
    selector = parse_label_selector(text)
    assert selector.requirements
    assert str(parse_label_selector(str(selector))) == str(selector)


@pytest.mark.parametrize("text", UPSTREAM_INVALID, ids=repr)
def test_upstream_invalid_selectors_fail(text: str) -> None:
    with pytest.raises(SelectorError):
        parse_label_selector(text)


def test_upstream_grammar_example_sorts_and_reads_keywords_as_values() -> None:
    assert str(parse_label_selector("x notin (abc,,def),bar,z in (),w")) == (
        "bar,w,x notin (,abc,def),z in ()"
    )
    assert str(parse_label_selector("a in (x,y,notin, z,in)")) == "a in (in,notin,x,y,z)"
