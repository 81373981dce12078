"""The Prometheus exposition of the managers' metrics."""

from __future__ import annotations

import threading

from prometheus_client.parser import text_string_to_metric_families

from numaplane.agent.metrics import exposition, node_registry
from numaplane.api.manifest import pod_from_dict
from numaplane.node.admission import Node
from numaplane.node.devicemanager import Device, InMemoryDeviceSource
from numaplane.topology.discover import load_machine
from tests.agent.agent_fixtures import kubelet_config, pod_manifest

MACHINE = "sockets=1,numa-per-socket=2,cores-per-numa=2,threads-per-core=1"


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def test_exposition_follows_admissions() -> None:
    source = InMemoryDeviceSource(
        "example.com/dev", [Device("d0", (0,)), Device("d1", (1,), False)]
    )
    node = Node(load_machine(MACHINE), kubelet_config(), device_sources=[source])
    registry = node_registry(node, threading.RLock(), lambda: 1)
    before = _samples(exposition(registry).decode())
    assert before[("kubelet_topology_manager_admission_requests_total", ())] == 0
    assert before[("kubelet_cpu_manager_shared_pool_size_millicores", ())] == 3000

    node.admit(pod_from_dict(pod_manifest("a", cpu="1"), "<t>"))
    node.admit(pod_from_dict(pod_manifest("b", cpu="9"), "<t>"))
    after = _samples(exposition(registry).decode())
    assert after[("kubelet_topology_manager_admission_requests_total", ())] == 2
    assert after[("kubelet_topology_manager_admission_errors_total", ())] == 1
    assert after[("kubelet_topology_manager_admission_duration_ms_count", ())] == 2
    assert after[("kubelet_topology_manager_admission_duration_ms_bucket", (("le", "+Inf"),))] == 2
    assert ("kubelet_topology_manager_admission_duration_ms_bucket", (("le", "0.05"),)) in after
    assert after[("kubelet_cpu_manager_pinning_requests_total", ())] >= 1
    assert after[("kubelet_cpu_manager_exclusive_cpu_allocation_count", ())] == 1
    assert after[("kubelet_cpu_manager_shared_pool_size_millicores", ())] == 2000
    per_numa = {
        labels: v
        for (name, labels), v in after.items()
        if name == "kubelet_cpu_manager_allocation_per_numa"
    }
    assert sum(per_numa.values()) == 1
    aligned = (("boundary", "numa_node"), ("scope", "container"))
    # prometheus_client names every counter sample "<name>_total".
    assert after[("kubelet_container_aligned_compute_resources_count_total", aligned)] == 1
    assert after[("kubelet_container_aligned_compute_resources_failure_count_total", aligned)] == 1
    physical = (("boundary", "physical_cpu"), ("scope", "container"))
    assert after[("kubelet_container_aligned_compute_resources_count_total", physical)] == 0
    assert after[("kubelet_memory_manager_pinning_requests_total", ())] == 0
    dev = "example.com/dev"
    assert (
        after[("numaplane_device_manager_devices", (("resource_name", dev), ("state", "capacity")))]
        == 2
    )
    assert (
        after[
            ("numaplane_device_manager_devices", (("resource_name", dev), ("state", "allocatable")))
        ]
        == 1
    )
    assert after[("numaplane_device_manager_registered_plugins", ())] == 1


def test_exposition_is_prometheus_clients_own_without_created_series() -> None:
    """Counters and the histogram come as generate_latest writes them, with the kubelet's
    metric names and no ``_created`` series (the kubelet has none)."""
    node = Node(load_machine(MACHINE), kubelet_config())
    text = exposition(node_registry(node)).decode()
    assert "# TYPE kubelet_topology_manager_admission_requests_total counter" in text
    assert "\nkubelet_topology_manager_admission_requests_total 0.0\n" in text
    assert "# TYPE kubelet_topology_manager_admission_duration_ms histogram" in text
    assert 'kubelet_topology_manager_admission_duration_ms_bucket{le="819.2"} 0.0' in text
    assert "# TYPE kubelet_container_aligned_compute_resources_count_total counter" in text
    assert "_created" not in text


def test_two_nodes_in_one_process_keep_their_own_series() -> None:
    """Each node's managers count on the node's own registry."""
    first = Node(load_machine(MACHINE), kubelet_config())
    second = Node(load_machine(MACHINE), kubelet_config())
    first.admit(pod_from_dict(pod_manifest("a", cpu="1"), "<t>"))
    name = "kubelet_topology_manager_admission_requests_total"
    assert _samples(exposition(node_registry(first)).decode())[(name, ())] == 1
    assert _samples(exposition(node_registry(second)).decode())[(name, ())] == 0
