"""Tests of the generic checkpoint machinery: FNV-32a, spew, Go JSON, the atomic store."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.errors import NumaplaneError
from numaplane.node.checkpoint import (
    INT,
    INT64,
    STRING,
    UINT8,
    CheckpointDecodeError,
    CheckpointError,
    CheckpointStore,
    CheckpointStoreError,
    GoField,
    fnv32a,
    go_marshal,
    go_percent_q,
    go_quote,
    go_unmarshal,
    map_of,
    ptr_to,
    slice_of,
    spew_sharp_v,
    struct,
)

POINT = struct("pkg.Point", GoField("X", INT, "x"), GoField("Tags", slice_of(STRING), "tags"))
HOLDER = struct(
    "pkg.Holder",
    GoField("Name", STRING, "name"),
    GoField("ByNode", map_of(INT64, slice_of(STRING)), "byNode", omitempty=True),
    GoField("Points", map_of(STRING, ptr_to(POINT)), "points"),
    GoField("Raw", slice_of(UINT8), "raw"),
)


def test_fnv32a_known_values() -> None:
    """FNV-1a 32 of "" is the offset basis; "a" is the published test vector."""
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a("a") == 0xE40C292C


@dataclass(frozen=True)
class SpewCase:
    name: str
    value: object
    expected: str


SPEW_CASES = (
    SpewCase(
        "nil map, slice and bytes",
        {"Name": "n", "ByNode": None, "Points": None, "Raw": None},
        "(pkg.Holder){Name:(string)n ByNode:(map[int64][]string)<nil> "
        "Points:(map[string]*pkg.Point)<nil> Raw:([]uint8)<nil>}",
    ),
    SpewCase(
        "int keys numeric order, pointers in maps, decimal bytes",
        {
            "Name": "a b",
            "ByNode": {10: ["x"], -1: [], 2: None},
            "Points": {"b": {"X": 1, "Tags": ["t"]}, "a": None},
            "Raw": b"\x00\xff",
        },
        "(pkg.Holder){Name:(string)a b ByNode:(map[int64][]string)map[-1:[] 2:<nil> 10:[x]] "
        "Points:(map[string]*pkg.Point)map[a:<nil> b:<*>{X:(int)1 Tags:([]string)[t]}] "
        "Raw:([]uint8)[0 255]}",
    ),
)


@pytest.mark.parametrize("case", SPEW_CASES, ids=lambda c: c.name)
def test_spew_rendering(case: SpewCase) -> None:
    """The rendering follows go-spew's %#v with sorted keys."""
    assert spew_sharp_v(case.value, HOLDER) == case.expected


def test_top_level_pointer_shows_star_type() -> None:
    """A pointer at the top shows (*T); a nil one (*T)<nil>."""
    point = {"X": 0, "Tags": []}
    assert spew_sharp_v(point, ptr_to(POINT)) == "(*pkg.Point){X:(int)0 Tags:([]string)[]}"
    assert spew_sharp_v(None, ptr_to(POINT)) == "(*pkg.Point)<nil>"


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
    with pytest.raises(CheckpointDecodeError) as info:
        go_unmarshal(case.data, HOLDER)
    assert str(info.value) == case.message


def test_errors_are_numaplane_errors() -> None:
    """Callers can catch the whole tree as NumaplaneError."""
    assert issubclass(CheckpointError, NumaplaneError)
    assert issubclass(CheckpointDecodeError, CheckpointError)


def test_quote_functions() -> None:
    """JSON quoting is HTML-safe; %q escapes like strconv.Quote."""
    assert go_quote("a\u2028\x01") == '"a\\u2028\\u0001"'
    assert go_percent_q('a"\n') == '"a\\"\\n"'


@given(st.text())
def test_go_quote_is_valid_json_for_any_text(text: str) -> None:
    """Whatever the text, the quoted form parses back (lone surrogates become U+FFFD)."""
    cleaned = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
    assert json.loads(go_quote(text)) == cleaned


# -- store -----------------------------------------------------------------------------------


def test_store_round_trip_and_remove(tmp_path: Path) -> None:
    """What is written is read back; removal is idempotent; missing reads give None."""
    store = CheckpointStore(tmp_path / "state")
    assert store.read("cpu_manager_state") is None
    store.write("cpu_manager_state", b"one")
    store.write("cpu_manager_state", b"two")
    assert store.read("cpu_manager_state") == b"two"
    assert store.names() == ["cpu_manager_state"]
    store.remove("cpu_manager_state")
    store.remove("cpu_manager_state")
    assert store.read("cpu_manager_state") is None


def test_interrupted_write_keeps_old_file(tmp_path: Path) -> None:
    """A write that fails before the rename leaves the previous file and no temporary."""
    CheckpointStore(tmp_path).write("memory_manager_state", b"old")

    def failing_fsync(fd: int) -> None:
        raise OSError("disk on fire")

    store = CheckpointStore(tmp_path, _fsync=failing_fsync)
    with pytest.raises(CheckpointStoreError, match="disk on fire"):
        store.write("memory_manager_state", b"new")
    assert store.read("memory_manager_state") == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory_manager_state"]


@pytest.mark.parametrize("name", ["../x", "a/b", "", ".hidden"])
def test_store_rejects_path_like_names(tmp_path: Path, name: str) -> None:
    """Names are plain file names: no traversal out of the state directory."""
    with pytest.raises(CheckpointStoreError):
        CheckpointStore(tmp_path).write(name, b"x")
