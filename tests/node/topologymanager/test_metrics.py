"""The Topology Manager's series: names, zero series, histogram buckets, one registry."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from numaplane.node.cpumanager.metrics import CPUManagerMetrics
from numaplane.node.topologymanager.metrics import (
    ADMISSION_DURATION_MS,
    DURATION_BUCKETS_MS,
    TopologyManagerMetrics,
)

_ALIGNED = "kubelet_container_aligned_compute_resources_count_total"


def test_buckets_are_exponential_from_50_microseconds() -> None:
    """ExponentialBuckets(0.05, 2, 15)."""
    assert len(DURATION_BUCKETS_MS) == 15
    assert DURATION_BUCKETS_MS[0] == 0.05
    assert DURATION_BUCKETS_MS[-1] == pytest.approx(819.2)


def test_histogram_buckets_carry_the_kubelet_bounds() -> None:
    """Every bound is a bucket label, written as Go writes it, then +Inf."""
    metrics = TopologyManagerMetrics()
    metrics.admission_duration_ms.observe(0.1)
    bounds = [
        sample.labels["le"]
        for family in metrics.registry.collect()
        for sample in family.samples
        if sample.name == ADMISSION_DURATION_MS + "_bucket"
    ]
    assert bounds[:3] == ["0.05", "0.1", "0.2"]
    assert bounds[-2:] == ["819.2", "+Inf"]
    assert len(bounds) == 16


def test_initialize_creates_numa_node_series_at_zero() -> None:
    """Both scopes, both counters, boundary numa_node."""
    metrics = TopologyManagerMetrics()
    metrics.initialize()
    value = metrics.registry.get_sample_value
    for scope in ("container", "pod"):
        labels = {"scope": scope, "boundary": "numa_node"}
        assert value(_ALIGNED, labels) == 0
        assert value("kubelet_container_aligned_compute_resources_failure_count_total", labels) == 0


def test_cpu_and_topology_managers_share_the_aligned_counters() -> None:
    """On one registry the CPU manager counts into the Topology Manager's counters."""
    registry = CollectorRegistry(auto_describe=False)
    topology = TopologyManagerMetrics(registry)
    cpu = CPUManagerMetrics(registry, topology.aligned)
    cpu.count_aligned("physical_cpu")
    labels = {"scope": "container", "boundary": "physical_cpu"}
    assert registry.get_sample_value(_ALIGNED, labels) == 1
    assert registry.get_sample_value(_ALIGNED, {**labels, "boundary": "uncore_cache"}) == 0


def test_a_second_set_of_counters_on_one_registry_is_refused() -> None:
    """A registry holds each series once: the aligned counters must be shared, not repeated."""
    registry = CollectorRegistry(auto_describe=False)
    TopologyManagerMetrics(registry)
    with pytest.raises(ValueError, match="Duplicated timeseries"):
        CPUManagerMetrics(registry)
