"""kube's JSONPath subset and duration.HumanDuration for printer columns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.apiserver.crd.printer import find, parse_jsonpath
from numaplane.gofmt import human_duration

DOC: dict[str, Any] = {
    "a": {"b": [{"n": "x", "v": 1}, {"n": "y", "v": 2}], "dotted.key": "d"},
    "conds": [{"type": "Ready", "status": "True"}, {"type": "Done", "status": "False"}],
}


@dataclass(frozen=True)
class PathCase:
    name: str
    path: str
    found: tuple[Any, ...]


PATH_CASES = [
    PathCase("field", ".a.dotted\\.key", ()),
    PathCase("quoted key", ".a['dotted.key']", ("d",)),
    PathCase("index", ".a.b[1].n", ("y",)),
    PathCase("negative index", ".a.b[-1].v", (2,)),
    PathCase("wildcard", ".a.b[*].n", ("x", "y")),
    PathCase("filter", ".conds[?(@.type=='Done')].status", ("False",)),
    PathCase("filter double quotes", '.conds[?(@.type=="Ready")].status', ("True",)),
    PathCase("filter exists", ".a.b[?(@.v)].n", ("x", "y")),
    PathCase("missing", ".nothing.here", ()),
    PathCase("braces", "{.a.b[0].v}", (1,)),
    PathCase("slice", ".a.b[0:1].n", ("x",)),
]


@pytest.mark.parametrize("case", PATH_CASES, ids=lambda c: c.name)
def test_jsonpath(case: PathCase) -> None:
    assert tuple(find(parse_jsonpath(case.path), DOC)) == case.found


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "<invalid>"),
        (-1, "0s"),
        (59, "59s"),
        (119, "119s"),
        (120, "2m"),
        (185, "3m5s"),
        (600, "10m"),
        (179 * 60, "179m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 600, "3h10m"),
        (8 * 3600, "8h"),
        (47 * 3600, "47h"),
        (50 * 3600, "2d2h"),
        (8 * 86400, "8d"),
        (800 * 86400, "2y70d"),
        (9 * 365 * 86400, "9y"),
    ],
)
def test_human_duration(seconds: int, text: str) -> None:
    assert human_duration(seconds) == text
