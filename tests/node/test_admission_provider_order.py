"""Hint providers in upstream's registration order on Linux: devices, CPU, memory (spec §3.1).

The order is the order ``allocate`` runs in, so it decides which error a pod gets when several
providers would fail and what the earlier providers already did when a later one fails.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.api.kubeletconfig import kubelet_config_from_dict
from numaplane.api.pod import Container, Pod
from numaplane.node.admission import Node
from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.source import InMemoryDeviceSource
from numaplane.topology.discover import load_machine

GPU = "example.com/gpu"


def _node(policy: str, source: InMemoryDeviceSource) -> Node:
    """dual-socket-ht (2 threads per core), static CPU policy with full-pcpus-only."""
    config = kubelet_config_from_dict(
        {
            "kind": "KubeletConfiguration",
            "cpuManagerPolicy": "static",
            "cpuManagerPolicyOptions": {"full-pcpus-only": "true"},
            "reservedSystemCPUs": "0",
            "topologyManagerPolicy": policy,
        },
        "<test>",
    )
    return Node(load_machine("dual-socket-ht"), config, device_sources=[source])


def _pod(cpus: int, gpus: int) -> Pod:
    values: dict[str, str | int] = {"cpu": cpus, "memory": "1Gi", GPU: gpus}
    return Pod.of("p", [Container.of("app", values, values)])


@dataclass(frozen=True)
class OrderCase:
    name: str
    policy: str
    cpus: int
    gpus: int
    reason: str
    failed_provider: str
    device_plugin_calls: int


CASES = (
    OrderCase(
        # Both would fail: the device manager allocates first, so its shortage is reported.
        "device shortage before SMT alignment",
        "best-effort",
        3,
        2,
        "UnexpectedAdmissionError",
        "devices",
        0,
    ),
    OrderCase(
        "device shortage before SMT alignment, none policy",
        "none",
        3,
        2,
        "UnexpectedAdmissionError",
        "devices",
        0,
    ),
    OrderCase(
        # Devices fit: the plugin was already asked to allocate when the CPU manager refuses.
        "devices allocated before the CPU manager fails",
        "best-effort",
        3,
        1,
        "SMTAlignmentError",
        "cpu",
        1,
    ),
)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_first_failing_provider_in_upstream_order(case: OrderCase) -> None:
    source = InMemoryDeviceSource(GPU, [Device("gpu0", (0,))])
    node = _node(case.policy, source)
    result = node.admit(_pod(case.cpus, case.gpus))
    assert not result.admitted
    assert result.reason == case.reason
    decision = result.topology.explanation.decisions[-1]
    assert decision.failed_provider == case.failed_provider
    assert len(source.allocations) == case.device_plugin_calls
    # Whatever was allocated before the failure is given back with the rejected pod.
    assert node.device_manager.container_devices("p", "app") == {}


def test_explanation_lists_providers_in_registration_order() -> None:
    node = _node("best-effort", InMemoryDeviceSource(GPU, [Device("gpu0", (0,))]))
    result = node.admit(_pod(2, 1))
    assert result.admitted
    providers = [p.provider for p in result.topology.explanation.decisions[0].providers]
    assert providers == ["devices", "cpu", "memory"]
