"""Tests of the Go value model: FNV-32a and go-spew ``%#v`` rendering."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.node.gocodec import fnv32a, ptr_to, spew_sharp_v
from tests.node.go_types import HOLDER, POINT


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
