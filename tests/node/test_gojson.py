"""Tests of Go's ``encoding/json`` over the type model: marshal, unmarshal, error wording."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.errors import NumaplaneError
from numaplane.node.gojson import GoJSONError, go_marshal, go_unmarshal
from tests.node.go_types import HOLDER


def test_marshal_sorts_int_keys_as_strings_and_omits_empty() -> None:
    """encoding/json sorts map keys by their text; omitempty drops empty maps."""
    value = {"Name": "<&>", "ByNode": {10: ["x"], 2: ["y"], -1: None}, "Points": {}, "Raw": b"hi"}
    assert go_marshal(value, HOLDER) == (
        b'{"name":"\\u003c\\u0026\\u003e","byNode":{"-1":null,"10":["x"],"2":["y"]},'
        b'"points":{},"raw":"aGk="}'
    )
    empty: dict[str, object] = {"Name": "", "ByNode": {}, "Points": None, "Raw": None}
    assert go_marshal(empty, HOLDER) == b'{"name":"","points":null,"raw":null}'


def test_unmarshal_is_case_insensitive_and_ignores_unknown_keys() -> None:
    """Keys match fields case-insensitively; unknown keys are skipped."""
    value = go_unmarshal(b'{"NAME":"x","other":1,"RAW":"aGk=","points":{"p":{"x":3}}}', HOLDER)
    assert value["Name"] == "x"
    assert value["Raw"] == b"hi"
    assert value["Points"] == {"p": {"X": 3, "Tags": None}}


@dataclass(frozen=True)
class ErrorCase:
    name: str
    data: str
    message: str


ERROR_CASES = (
    ErrorCase("truncated", "{", "unexpected end of JSON input"),
    ErrorCase("empty", "", "unexpected end of JSON input"),
    ErrorCase("unterminated string", '{"name":"ab', "unexpected end of JSON input"),
    ErrorCase("trailing data", "{} x", "invalid character 'x' after top-level value"),
    ErrorCase("bad value", '{"name":]}', "invalid character ']' looking for beginning of value"),
    # encoding/json quotes the offending byte with strconv.Quote.
    ErrorCase(
        "control character",
        '{"name":\x01}',
        "invalid character '\\x01' looking for beginning of value",
    ),
    ErrorCase(
        "missing comma in array",
        '{"raw":[1 2]}',
        "invalid character '2' after array element",
    ),
    ErrorCase(
        "string into int",
        '{"points":{"p":{"x":"1"}}}',
        "json: cannot unmarshal string into Go struct field Point.points.x of type int",
    ),
    ErrorCase(
        "fraction into int",
        '{"points":{"p":{"x":1.5}}}',
        "json: cannot unmarshal number 1.5 into Go struct field Point.points.x of type int",
    ),
    ErrorCase(
        "array into struct", "[]", "json: cannot unmarshal array into Go value of type pkg.Holder"
    ),
)


@pytest.mark.parametrize("case", ERROR_CASES, ids=lambda c: c.name)
def test_unmarshal_errors_use_go_wording(case: ErrorCase) -> None:
    """Syntax and type errors read as Go's encoding/json writes them."""
    with pytest.raises(GoJSONError) as info:
        go_unmarshal(case.data, HOLDER)
    assert str(info.value) == case.message


def test_json_errors_are_numaplane_errors() -> None:
    """Callers can catch decoding errors as NumaplaneError."""
    assert issubclass(GoJSONError, NumaplaneError)
