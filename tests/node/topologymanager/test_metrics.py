"""Metric records: names, zero series and histogram buckets."""

from __future__ import annotations

import pytest

from numaplane.node.topologymanager.metrics import (
    ALIGNED_COMPUTE_RESOURCES,
    DURATION_BUCKETS_MS,
    Counter,
    TopologyManagerMetrics,
)


def test_buckets_are_exponential_from_50_microseconds() -> None:
    """ExponentialBuckets(0.05, 2, 15)."""
    assert len(DURATION_BUCKETS_MS) == 15
    assert DURATION_BUCKETS_MS[0] == 0.05
    assert DURATION_BUCKETS_MS[-1] == pytest.approx(819.2)


def test_histogram_buckets_are_cumulative_and_inclusive() -> None:
    """An observation equal to a bound falls in that bucket and every later one."""
    metrics = TopologyManagerMetrics()
    metrics.admission_duration_ms.observe(0.1)
    metrics.admission_duration_ms.observe(1000.0)
    counts = metrics.admission_duration_ms.bucket_counts
    assert counts[0] == 0
    assert counts[1] == 1
    assert counts[-1] == 1
    assert metrics.admission_duration_ms.count == 2


def test_histogram_counts_every_observation_at_or_below_each_bound() -> None:
    """Each bucket counts the observations <= its bound, whatever their order."""
    metrics = TopologyManagerMetrics()
    values = [0.0, 0.05, 0.051, 3.2, 3.3, 819.2, 900.0, 0.2, 12.8, 0.01]
    for value in values:
        metrics.admission_duration_ms.observe(value)
    expected = [sum(v <= bound for v in values) for bound in DURATION_BUCKETS_MS]
    assert metrics.admission_duration_ms.bucket_counts == expected
    assert metrics.admission_duration_ms.sum == pytest.approx(sum(values))


def test_initialize_creates_numa_node_series_at_zero() -> None:
    """Both scopes, both counters, boundary numa_node."""
    metrics = TopologyManagerMetrics()
    metrics.initialize()
    snap = metrics.snapshot()
    assert snap[ALIGNED_COMPUTE_RESOURCES] == {
        ("container", "numa_node"): 0,
        ("pod", "numa_node"): 0,
    }


def test_counters_only_go_up_and_check_labels() -> None:
    """Negative increments and wrong label counts are refused."""
    with pytest.raises(ValueError, match="only goes up"):
        Counter("x", "x").inc(-1)
    with pytest.raises(ValueError, match="takes labels"):
        TopologyManagerMetrics().aligned_compute_resources.inc("container")
