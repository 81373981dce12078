"""Nodes the node-level tests share."""

from __future__ import annotations

from numaplane.api.kubeletconfig import kubelet_config_from_dict
from numaplane.node.admission import Node
from numaplane.topology.discover import load_machine


def static_node() -> Node:
    """``dual-socket-ht`` with the static CPU manager (CPU 0 reserved), the Static memory
    manager (1Gi system reserved plus 100Mi hard eviction, on NUMA node 0) and
    ``single-numa-node``."""
    config = kubelet_config_from_dict(
        {
            "kind": "KubeletConfiguration",
            "cpuManagerPolicy": "static",
            "reservedSystemCPUs": "0",
            "systemReserved": {"memory": "1Gi"},
            "evictionHard": {"memory.available": "100Mi"},
            "memoryManagerPolicy": "Static",
            "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1124Mi"}}],
            "topologyManagerPolicy": "single-numa-node",
        },
        "<test>",
    )
    return Node(load_machine("dual-socket-ht"), config)
