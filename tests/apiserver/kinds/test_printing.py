"""Ages as ``duration.HumanDuration`` prints them, and the shared cell helpers."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.apiserver.kinds.printing import (
    DEFAULT_PRINTER,
    format_label_selector,
    human_duration,
    since,
)


@dataclass(frozen=True)
class DurationCase:
    name: str
    seconds: float
    text: str


DURATIONS = [
    DurationCase("just now in the future", -1.5, "0s"),
    DurationCase("clock skew beyond two seconds", -2.5, "<invalid>"),
    DurationCase("seconds", 45, "45s"),
    DurationCase("under two minutes stays seconds", 119, "119s"),
    DurationCase("whole minutes", 180, "3m"),
    DurationCase("minutes and seconds", 200, "3m20s"),
    DurationCase("ten minutes drops seconds", 605, "10m"),
    DurationCase("under three hours in minutes", 179 * 60, "179m"),
    DurationCase("hours and minutes", 5 * 3600 + 30 * 60, "5h30m"),
    DurationCase("whole hours", 3 * 3600, "3h"),
    DurationCase("over eight hours", 20 * 3600 + 59 * 60, "20h"),
    DurationCase("days and hours", 3 * 86400 + 4 * 3600, "3d4h"),
    DurationCase("whole days", 2 * 86400, "2d"),
    DurationCase("over eight days", 40 * 86400 + 5 * 3600, "40d"),
    DurationCase("years and days", (2 * 365 + 10) * 86400, "2y10d"),
    DurationCase("many years", 9 * 365 * 86400, "9y"),
]


@pytest.mark.parametrize("case", DURATIONS, ids=lambda c: c.name)
def test_human_duration(case: DurationCase) -> None:
    assert human_duration(case.seconds) == case.text


def test_since_reads_rfc3339_and_unset() -> None:
    now = 1_700_000_000.0  # 2023-11-14T22:13:20Z
    assert since("2023-11-14T22:10:00Z", now) == "3m20s"
    assert since("2023-11-14T22:13:19.500000Z", now) == "0s"
    assert since(None, now) == "<unknown>"


def test_default_table_prints_creation_time() -> None:
    row = DEFAULT_PRINTER.row(
        {"metadata": {"name": "x", "creationTimestamp": "2024-01-02T03:04:05Z"}}, 0.0
    )
    assert row == ["x", "2024-01-02T03:04:05Z"]


@dataclass(frozen=True)
class SelectorCase:
    name: str
    selector: object
    text: str


SELECTORS = [
    SelectorCase("none", None, "<none>"),
    SelectorCase("empty selects everything", {}, "<none>"),
    SelectorCase(
        "labels and expressions sorted",
        {
            "matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [
                {"key": "c", "operator": "In", "values": ["y", "x"]},
                {"key": "d", "operator": "DoesNotExist"},
            ],
        },
        "a=1,b=2,c in (x,y),!d",
    ),
]


@pytest.mark.parametrize("case", SELECTORS, ids=lambda c: c.name)
def test_format_label_selector(case: SelectorCase) -> None:
    assert format_label_selector(case.selector) == case.text
