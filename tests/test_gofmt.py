"""Go's formatting and parsing of plain values (``numaplane.gofmt``), byte for byte."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.cpuset import CPUSet
from numaplane.gofmt import (
    go_atoi,
    go_json_string,
    go_map,
    go_parse_bool,
    go_parse_cpuset,
    go_quote,
)


@dataclass(frozen=True)
class QuoteCase:
    name: str
    text: str
    percent_q: str
    json: str


QUOTE_CASES = (
    QuoteCase("plain", "static", '"static"', '"static"'),
    QuoteCase("quote and newline", 'a"\n', '"a\\"\\n"', '"a\\"\\n"'),
    QuoteCase("control character", "a\x01", '"a\\x01"', '"a\\u0001"'),
    QuoteCase("bell and vertical tab", "\a\v", '"\\a\\v"', '"\\u0007\\u000b"'),
    QuoteCase("delete", "\x7f", '"\\x7f"', '"\x7f"'),
    QuoteCase("html characters", "<&>", '"<&>"', '"\\u003c\\u0026\\u003e"'),
    QuoteCase("line separator", "a\u2028", '"a\\u2028"', '"a\\u2028"'),
    QuoteCase("printable non-ASCII", "é", '"é"', '"é"'),
)


@pytest.mark.parametrize("case", QUOTE_CASES, ids=lambda c: c.name)
def test_quoting(case: QuoteCase) -> None:
    """``%q`` escapes like strconv.Quote; JSON strings are HTML-safe like encoding/json."""
    assert go_quote(case.text) == case.percent_q
    assert go_json_string(case.text) == case.json


@given(st.text())
def test_json_string_is_valid_json_for_any_text(text: str) -> None:
    """Whatever the text, the quoted form parses back (lone surrogates become U+FFFD)."""
    cleaned = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
    assert json.loads(go_json_string(text)) == cleaned


@pytest.mark.parametrize(
    ("text", "value"),
    [("1", True), ("t", True), ("TRUE", True), ("True", True), ("0", False), ("F", False)],
)
def test_parse_bool_accepts_what_go_accepts(text: str, value: bool) -> None:
    """``strconv.ParseBool``'s spellings."""
    assert go_parse_bool(text) is value


@pytest.mark.parametrize("text", ["yes", "tRUE", "", " true"])
def test_parse_bool_rejects_others_with_gos_message(text: str) -> None:
    """Anything else is invalid syntax, the input quoted as %q."""
    with pytest.raises(ValueError, match="invalid syntax") as info:
        go_parse_bool(text)
    assert str(info.value) == f"strconv.ParseBool: parsing {go_quote(text)}: invalid syntax"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("1_000", 'strconv.Atoi: parsing "1_000": invalid syntax'),
        ("+", 'strconv.Atoi: parsing "+": invalid syntax'),
        ("٣", 'strconv.Atoi: parsing "٣": invalid syntax'),
        ("9223372036854775808", 'strconv.Atoi: parsing "9223372036854775808": value out of range'),
    ],
)
def test_atoi_errors(text: str, error: str) -> None:
    """``strconv.Atoi``: optional sign, ASCII decimal digits, 64-bit range."""
    with pytest.raises(ValueError, match="strconv") as info:
        go_atoi(text)
    assert str(info.value) == error


def test_atoi_signs_and_limits() -> None:
    """Signs are read; both ends of the 64-bit range are accepted."""
    assert go_atoi("+12") == 12
    assert go_atoi("-3") == -3
    assert go_atoi("-9223372036854775808") == -(1 << 63)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("1.3", 'strconv.Atoi: parsing "1.3": invalid syntax'),
        ("3-1", 'invalid range "3-1" (3 > 1)'),
        ("-1", 'strconv.Atoi: parsing "": invalid syntax'),
    ],
)
def test_parse_cpuset_errors(text: str, error: str) -> None:
    """cpuset.Parse's errors, worded as upstream."""
    with pytest.raises(ValueError, match=r"\S") as info:
        go_parse_cpuset(text)
    assert str(info.value) == error


def test_parse_cpuset_reads_the_list_format() -> None:
    """Ranges and single ids; the empty string is the empty set."""
    assert go_parse_cpuset("0-2,5,7-8") == CPUSet([0, 1, 2, 5, 7, 8])
    assert go_parse_cpuset("") == CPUSet()


def test_map_is_printed_as_go_prints_it() -> None:
    """``%v`` of a map[string]string: sorted keys."""
    assert go_map({"b": "2", "a": "1"}) == "map[a:1 b:2]"
    assert go_map({}) == "map[]"
