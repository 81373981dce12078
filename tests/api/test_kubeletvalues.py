"""Go durations and eviction thresholds, read as the kubelet reads them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.api.kubeletvalues import (
    EvictionThreshold,
    ValueSyntaxError,
    parse_go_duration,
    parse_threshold,
)
from numaplane.api.quantity import Quantity


@dataclass(frozen=True)
class DurationCase:
    name: str
    text: str
    expected: timedelta


DURATION_CASES = [
    DurationCase("seconds", "10s", timedelta(seconds=10)),
    DurationCase("compound", "1h2m3s", timedelta(hours=1, minutes=2, seconds=3)),
    DurationCase("fraction", "1.5s", timedelta(milliseconds=1500)),
    DurationCase("leading dot", ".5m", timedelta(seconds=30)),
    DurationCase("millis", "250ms", timedelta(milliseconds=250)),
    DurationCase("micros", "7us", timedelta(microseconds=7)),
    DurationCase("bare zero", "0", timedelta(0)),
    DurationCase("negative", "-2s", timedelta(seconds=-2)),
]


@pytest.mark.parametrize("case", DURATION_CASES, ids=lambda c: c.name)
def test_durations(case: DurationCase) -> None:
    assert parse_go_duration(case.text) == case.expected


@dataclass(frozen=True)
class DurationErrorCase:
    name: str
    text: str
    message: str


DURATION_ERROR_CASES = [
    DurationErrorCase("no unit", "10", 'time: missing unit in duration "10"'),
    DurationErrorCase("unknown unit", "10d", 'time: unknown unit "d" in duration "10d"'),
    DurationErrorCase("empty", "", 'time: invalid duration ""'),
    DurationErrorCase("no number", "s", 'time: invalid duration "s"'),
    DurationErrorCase("lone dot", ".s", 'time: invalid duration ".s"'),
]


@pytest.mark.parametrize("case", DURATION_ERROR_CASES, ids=lambda c: c.name)
def test_bad_durations(case: DurationErrorCase) -> None:
    with pytest.raises(ValueSyntaxError) as caught:
        parse_go_duration(case.text)
    assert str(caught.value) == case.message


@given(
    st.integers(min_value=0, max_value=10**6),
    st.sampled_from([("ms", 1_000), ("s", 1_000_000), ("m", 60_000_000)]),
)
def test_whole_durations_scale_by_their_unit(count: int, unit: tuple[str, int]) -> None:
    name, micros = unit
    assert parse_go_duration(f"{count}{name}") == timedelta(microseconds=count * micros)


@dataclass(frozen=True)
class ThresholdCase:
    name: str
    signal: str
    text: str
    expected: EvictionThreshold | None


THRESHOLD_CASES = [
    ThresholdCase(
        "quantity",
        "memory.available",
        "100Mi",
        EvictionThreshold("memory.available", quantity=Quantity.parse("100Mi")),
    ),
    ThresholdCase("zero percent ignored", "nodefs.available", "0%", None),
    ThresholdCase("all percent ignored", "nodefs.available", "100%", None),
    ThresholdCase(
        "percent as float32",
        "nodefs.available",
        "10%",
        EvictionThreshold("nodefs.available", percentage=0.10000000149011612),
    ),
]


@pytest.mark.parametrize("case", THRESHOLD_CASES, ids=lambda c: c.name)
def test_thresholds(case: ThresholdCase) -> None:
    assert parse_threshold(case.signal, case.text) == case.expected


@dataclass(frozen=True)
class ThresholdErrorCase:
    name: str
    signal: str
    text: str
    message: str


THRESHOLD_ERROR_CASES = [
    ThresholdErrorCase(
        "unknown signal", "swap.available", "1Gi", "unsupported eviction signal swap.available"
    ),
    ThresholdErrorCase(
        "zero", "memory.available", "0Mi", "eviction threshold memory.available must be positive: 0"
    ),
    ThresholdErrorCase(
        "negative",
        "memory.available",
        "-1Gi",
        "eviction threshold memory.available must be positive: -1Gi",
    ),
    ThresholdErrorCase(
        "negative percent",
        "memory.available",
        "-5%",
        "eviction percentage threshold memory.available must be >= 0%: -5%",
    ),
    ThresholdErrorCase(
        "bad percent", "memory.available", "x%", 'strconv.ParseFloat: parsing "x": invalid syntax'
    ),
]


@pytest.mark.parametrize("case", THRESHOLD_ERROR_CASES, ids=lambda c: c.name)
def test_bad_thresholds(case: ThresholdErrorCase) -> None:
    with pytest.raises(ValueSyntaxError) as caught:
        parse_threshold(case.signal, case.text)
    assert str(caught.value) == case.message


def test_a_percentage_truncates_against_capacity() -> None:
    threshold = parse_threshold("memory.available", "5%")
    assert threshold is not None
    assert threshold.resolve(Quantity.parse("1000")).value() == 50
    assert threshold.resolve(Quantity.parse("20Gi")) == Quantity.parse("1073741840")
