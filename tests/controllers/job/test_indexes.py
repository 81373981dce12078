"""Completion-index intervals as upstream's ``indexed_job_utils_test.go`` exercises them."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.controllers.job.indexes import (
    UNKNOWN_INDEX,
    Intervals,
    completion_index,
    first_pending_indexes,
    parse_intervals,
)


@dataclass(frozen=True)
class MergeCase:
    name: str
    start: tuple[tuple[int, int], ...]
    new: tuple[int, ...]
    want: str


MERGE_CASES = (
    MergeCase("empty", (), (), ""),
    MergeCase("singles become interval", (), (0, 1, 2, 3), "0-3"),
    MergeCase("two neighbours print with a comma", (), (3, 4), "3,4"),
    MergeCase("gaps kept", (), (0, 2, 4), "0,2,4"),
    MergeCase("new index joins on the left", ((3, 5),), (2,), "2-5"),
    MergeCase("new index bridges two intervals", ((0, 1), (3, 4)), (2,), "0-4"),
    MergeCase("duplicates ignored", ((0, 2),), (1, 2), "0-2"),
    MergeCase("unsorted input", ((5, 5),), (9, 1, 0), "0,1,5,9"),
)


@pytest.mark.parametrize("case", MERGE_CASES, ids=lambda c: c.name)
def test_with_indexes_merges_and_prints(case: MergeCase) -> None:
    merged = Intervals(case.start).with_indexes(case.new)
    assert str(merged) == case.want
    assert merged.total() == len(set(Intervals(case.start).indexes()) | set(case.new))


@dataclass(frozen=True)
class ParseCase:
    name: str
    text: str
    completions: int
    want: tuple[tuple[int, int], ...]


PARSE_CASES = (
    ParseCase("empty", "", 5, ()),
    ParseCase("single", "3", 5, ((3, 3),)),
    ParseCase("intervals", "0-2,4", 5, ((0, 2), (4, 4))),
    ParseCase("adjacent parts merged", "1,2-3", 5, ((1, 3),)),
    ParseCase("last cut at completions", "2-9", 5, ((2, 4),)),
    ParseCase("beyond completions dropped", "1,7-8", 5, ((1, 1),)),
    ParseCase("corrupt part skipped", "x,2", 5, ((2, 2),)),
)


@pytest.mark.parametrize("case", PARSE_CASES, ids=lambda c: c.name)
def test_parse_intervals(case: ParseCase) -> None:
    assert parse_intervals(case.text, case.completions).items == case.want


@pytest.mark.parametrize("text", ["0", "0-4", "1,3-5,7", "2,3", "0,2,4-6"])
def test_printed_intervals_read_back(text: str) -> None:
    assert str(parse_intervals(text, 100)) == text


def test_has_finds_exactly_the_members() -> None:
    intervals = parse_intervals("1,3-5,9", 20)
    assert [ix for ix in range(12) if intervals.has(ix)] == [1, 3, 4, 5, 9]


@dataclass(frozen=True)
class PendingCase:
    name: str
    active: tuple[int, ...]
    done: str
    count: int
    completions: int
    want: list[int]


PENDING_CASES = (
    PendingCase("nothing to do", (), "", 0, 5, []),
    PendingCase("from zero", (), "", 3, 5, [0, 1, 2]),
    PendingCase("skips active and done", (0, 3), "1", 3, 6, [2, 4, 5]),
    PendingCase("limited by completions", (), "0-1", 5, 4, [2, 3]),
    PendingCase("unknown index ignored", (UNKNOWN_INDEX,), "", 2, 5, [0, 1]),
    PendingCase("all busy", (2, 3), "0-1", 2, 4, []),
)


@pytest.mark.parametrize("case", PENDING_CASES, ids=lambda c: c.name)
def test_first_pending_indexes(case: PendingCase) -> None:
    done = parse_intervals(case.done, case.completions)
    got = first_pending_indexes(case.active, done, case.count, case.completions)
    assert got == case.want


@dataclass(frozen=True)
class IndexCase:
    name: str
    annotations: dict[str, str] | None
    want: int


KEY = "batch.kubernetes.io/job-completion-index"
INDEX_CASES = (
    IndexCase("none", None, UNKNOWN_INDEX),
    IndexCase("absent", {"other": "1"}, UNKNOWN_INDEX),
    IndexCase("number", {KEY: "7"}, 7),
    IndexCase("plus sign as strconv.Atoi", {KEY: "+3"}, 3),
    IndexCase("negative", {KEY: "-1"}, UNKNOWN_INDEX),
    IndexCase("not a number", {KEY: "a"}, UNKNOWN_INDEX),
    IndexCase("spaces", {KEY: " 1"}, UNKNOWN_INDEX),
)


@pytest.mark.parametrize("case", INDEX_CASES, ids=lambda c: c.name)
def test_completion_index(case: IndexCase) -> None:
    assert completion_index(case.annotations) == case.want
