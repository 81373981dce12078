"""Prometheus exposition of the node's resource-manager metrics.

The managers own their series: ``prometheus_client`` objects on the node's registry
(``Node.registry``; see ``numaplane.node.*.metrics`` for names, help strings and buckets, the
kubelet's). The agent adds what only it knows, the number of connected device plugins
(``numaplane_device_manager_registered_plugins``), and renders everything with
``prometheus_client.generate_latest``.

Two differences from the kubelet's own exposition come from ``prometheus_client``: every
counter sample ends in ``_total`` (the kubelet's
``kubelet_container_aligned_compute_resources_count`` and ``..._failure_count`` are scraped as
``..._count_total`` and ``..._failure_count_total``), and the ``_created`` series it adds to
counters and histograms are left out, as the kubelet has none.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from numaplane.node.admission import Node

REGISTERED_PLUGINS: str = "numaplane_device_manager_registered_plugins"

#: The exposition format's content type, for the HTTP server.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class NodeCollector(Collector):
    """Collects one ``Node``'s registry at every scrape, under the agent's lock.

    Some series are read from the managers' state when collected, so ``lock`` (the agent's
    admission lock) is held while collecting; ``plugins`` counts the connected device plugins
    (the registration server's view).
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
            families = [_without_created(family) for family in self._node.registry.collect()]
            if self._plugins is not None:
                families.append(
                    GaugeMetricFamily(
                        REGISTERED_PLUGINS,
                        "Device plugins connected to the agent.",
                        value=self._plugins(),
                    )
                )
        yield from families


def _without_created(family: Metric) -> Metric:
    # prometheus_client's "<name>_created" samples (counter and histogram creation times) are
    # not part of the kubelet's series.
    created = family.name + "_created"
    if not any(sample.name == created for sample in family.samples):
        return family
    kept = Metric(family.name, family.documentation, family.type, family.unit)
    kept.samples = [sample for sample in family.samples if sample.name != created]
    return kept


def node_registry(
    node: Node,
    lock: threading.Lock | threading.RLock | None = None,
    plugins: Callable[[], int] | None = None,
) -> CollectorRegistry:
    """A private registry exporting ``node``'s metrics (and the plugin count, if given)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(NodeCollector(node, lock, plugins))
    return registry


def exposition(registry: CollectorRegistry) -> bytes:
    """The registry in the Prometheus text format."""
    return generate_latest(registry)
