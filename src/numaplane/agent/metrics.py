"""Prometheus exposition of the node's resource-manager metrics, under the kubelet's names.

The managers keep plain metric records (``numaplane.node.*.metrics``); ``NodeCollector`` reads
them at scrape time, under the agent's lock, and yields metric families into a private
``CollectorRegistry`` (the process-wide default registry is left alone so that several agents,
or tests, can live in one process).

Series:

- Topology Manager: ``kubelet_topology_manager_admission_requests_total``,
  ``kubelet_topology_manager_admission_errors_total``,
  ``kubelet_topology_manager_admission_duration_ms`` (histogram, buckets ``0.05 * 2**k`` ms);
- shared by the Topology and CPU managers: ``kubelet_container_aligned_compute_resources_count``
  and ``kubelet_container_aligned_compute_resources_failure_count`` {scope, boundary};
- CPU Manager: ``kubelet_cpu_manager_pinning_requests_total``, ``..._pinning_errors_total``,
  ``kubelet_cpu_manager_shared_pool_size_millicores``,
  ``kubelet_cpu_manager_exclusive_cpu_allocation_count``,
  ``kubelet_cpu_manager_allocation_per_numa`` {numa_node};
- Memory Manager: ``kubelet_memory_manager_pinning_requests_total``, ``..._errors_total``;
- Device Manager (numaplane's own, upstream has no per-resource device gauges):
  ``numaplane_device_manager_devices`` {resource_name, state} with state ``capacity`` (known
  devices), ``allocatable`` (healthy) and ``allocated`` (held by a container), and
  ``numaplane_device_manager_registered_plugins`` (plugins connected now).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from numaplane.node.admission import Node
from numaplane.node.cpumanager import metrics as cpu_metrics
from numaplane.node.memorymanager import metrics as memory_metrics
from numaplane.node.topologymanager import metrics as tm_metrics

DEVICES: str = "numaplane_device_manager_devices"
REGISTERED_PLUGINS: str = "numaplane_device_manager_registered_plugins"

#: The exposition format's content type, for the HTTP server.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_ALIGNED_HELP = (
    "Cumulative number of aligned compute resources allocated to containers by alignment type."
)
_ALIGNED_FAILURE_HELP = (
    "Cumulative number of failures to allocate aligned compute resources to containers by "
    "alignment type."
)


class NodeCollector(Collector):
    """Reads one ``Node``'s manager metrics at every scrape.

    ``lock`` is held while reading (the agent's admission lock); ``plugins`` counts the
    connected device plugins (the registration server's view).
    """

    def __init__(
        self,
        node: Node,
        lock: threading.Lock | threading.RLock | None = None,
        plugins: Callable[[], int] | None = None,
    ) -> None:
        self._node = node
        self._lock = lock
        self._plugins = plugins

    def collect(self) -> Iterator[Metric]:
        """Every family, read consistently under the lock."""
        guard: AbstractContextManager[object] = (
            self._lock if self._lock is not None else nullcontext()
        )
        with guard:
            families = list(self._families())
        yield from families

    def _families(self) -> Iterator[Metric]:
        node = self._node
        tm = node.topology_manager.metrics
        yield _counter(
            tm_metrics.ADMISSION_REQUESTS_TOTAL,
            tm.admission_requests_total.help,
            tm.admission_requests_total.value,
        )
        yield _counter(
            tm_metrics.ADMISSION_ERRORS_TOTAL,
            tm.admission_errors_total.help,
            tm.admission_errors_total.value,
        )
        hist = tm.admission_duration_ms
        buckets = [
            (_bound(b), float(c)) for b, c in zip(hist.buckets, hist.bucket_counts, strict=True)
        ]
        buckets.append(("+Inf", float(hist.count)))
        histogram = HistogramMetricFamily(hist.name, hist.help)
        histogram.add_metric([], buckets, hist.sum)
        yield histogram

        cpu = node.cpu_manager.metrics
        aligned: dict[tuple[str, str], int] = {}
        failures: dict[tuple[str, str], int] = {}
        for (scope, boundary), value in tm.aligned_compute_resources.values.items():
            aligned[(scope, boundary)] = aligned.get((scope, boundary), 0) + value
        for (scope, boundary), value in tm.aligned_compute_resources_failure.values.items():
            failures[(scope, boundary)] = failures.get((scope, boundary), 0) + value
        for key, value in cpu.aligned.items():
            aligned[key] = aligned.get(key, 0) + value
        for key, value in cpu.aligned_failures.items():
            failures[key] = failures.get(key, 0) + value
        yield _labelled_counter(cpu_metrics.ALIGNED_COMPUTE_RESOURCES, _ALIGNED_HELP, aligned)
        yield _labelled_counter(
            cpu_metrics.ALIGNED_COMPUTE_RESOURCES_FAILURE, _ALIGNED_FAILURE_HELP, failures
        )

        yield _counter(
            cpu_metrics.PINNING_REQUESTS_TOTAL,
            "The number of cpu core allocations which required pinning.",
            cpu.pinning_requests_total,
        )
        yield _counter(
            cpu_metrics.PINNING_ERRORS_TOTAL,
            "The number of cpu core allocations which required pinning failed.",
            cpu.pinning_errors_total,
        )
        yield _gauge(
            cpu_metrics.SHARED_POOL_SIZE_MILLICORES,
            "The size of the shared CPU pool for non-guaranteed QoS pods, in millicores.",
            cpu.shared_pool_size_millicores,
        )
        yield _gauge(
            cpu_metrics.EXCLUSIVE_CPU_ALLOCATION_COUNT,
            "The total number of CPUs exclusively allocated to containers running on this node",
            cpu.exclusive_cpu_allocation_count,
        )
        per_numa = GaugeMetricFamily(
            cpu_metrics.ALLOCATION_PER_NUMA,
            "Number of CPUs allocated per NUMA node",
            labels=["numa_node"],
        )
        for numa, count in sorted(cpu.allocation_per_numa.items()):
            per_numa.add_metric([str(numa)], count)
        yield per_numa

        memory = node.memory_manager.metrics
        yield _counter(
            memory_metrics.PINNING_REQUESTS_TOTAL,
            "The number of memory pages allocations which required pinning.",
            memory.pinning_requests_total,
        )
        yield _counter(
            memory_metrics.PINNING_ERRORS_TOTAL,
            "The number of memory pages allocations which required pinning that failed.",
            memory.pinning_errors_total,
        )

        devices = GaugeMetricFamily(
            DEVICES,
            "Devices of each device-plugin resource: capacity (known), allocatable (healthy), "
            "allocated (held by containers).",
            labels=["resource_name", "state"],
        )
        manager = node.device_manager
        for resource in manager.resources():
            devices.add_metric([resource, "capacity"], manager.capacity(resource))
            devices.add_metric([resource, "allocatable"], len(manager.allocatable(resource)))
            devices.add_metric([resource, "allocated"], len(manager.allocated(resource)))
        yield devices
        if self._plugins is not None:
            yield _gauge(
                REGISTERED_PLUGINS, "Device plugins connected to the agent.", self._plugins()
            )


def _bound(value: float) -> str:
    # prometheus_client's own float formatting, so "0.05" rather than "0.05000000000000001".
    return repr(float(f"{value:.12g}"))


def _counter(name: str, help_text: str, value: int) -> CounterMetricFamily:
    return CounterMetricFamily(name, help_text, value=value)


def _gauge(name: str, help_text: str, value: int) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, help_text, value=value)


def _labelled_counter(name: str, help_text: str, values: dict[tuple[str, str], int]) -> Metric:
    # These kubelet counters do not end in "_total"; CounterMetricFamily would append it, so
    # the family is built by hand to keep the kubelet's exact series name.
    family = Metric(name, help_text, "counter")
    for (scope, boundary), value in sorted(values.items()):
        family.add_sample(name, {"scope": scope, "boundary": boundary}, float(value))
    return family


def node_registry(
    node: Node,
    lock: threading.Lock | threading.RLock | None = None,
    plugins: Callable[[], int] | None = None,
) -> CollectorRegistry:
    """A private registry exporting ``node``'s metrics."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(NodeCollector(node, lock, plugins))
    return registry


#: Kubelet counters whose names do not end in ``_total``.
_UNSUFFIXED_COUNTERS = (
    cpu_metrics.ALIGNED_COMPUTE_RESOURCES,
    cpu_metrics.ALIGNED_COMPUTE_RESOURCES_FAILURE,
)


def exposition(registry: CollectorRegistry) -> bytes:
    """The registry in the Prometheus text format."""
    text = generate_latest(registry)
    # prometheus_client names every counter family "<name>_total" in its HELP and TYPE lines;
    # the kubelet's two unsuffixed counters keep their names there, as the Go client writes.
    for name in _UNSUFFIXED_COUNTERS:
        for kind in (b"# HELP ", b"# TYPE "):
            text = text.replace(kind + name.encode() + b"_total ", kind + name.encode() + b" ")
    return text
