"""KubeletConfigurations that tests and benchmarks share."""

from __future__ import annotations

from typing import Any

from numaplane.api.kubeletconfig import KubeletConfiguration, kubelet_config_from_dict
from numaplane.topology.model import Machine

__all__ = ["static_single_numa_config"]


def static_single_numa_config(machine: Machine, **overrides: Any) -> KubeletConfiguration:
    """Static CPU and memory managers, CPU 0 and 1124Mi (1Gi system-reserved plus the 100Mi
    hard eviction threshold) reserved on the first NUMA node, ``single-numa-node`` with
    ``container`` scope: every resource a Guaranteed pod asks for is NUMA-aligned. An override
    of ``None`` removes the field."""
    doc: dict[str, Any] = {
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": "0",
        "systemReserved": {"memory": "1Gi"},
        "evictionHard": {"memory.available": "100Mi"},
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": machine.numa_ids[0], "limits": {"memory": "1124Mi"}}],
        "topologyManagerPolicy": "single-numa-node",
        "topologyManagerScope": "container",
    }
    doc.update(overrides)
    return kubelet_config_from_dict({k: v for k, v in doc.items() if v is not None})
