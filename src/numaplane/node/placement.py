"""What an admission answers: the kubelet's verdict on a pod and where its containers run.

Immutable views built by ``Node`` (``numaplane.node.admission``) from the managers' state; they
render to the JSON of ``numaplane admit -o json``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from numaplane.cpuset import CPUSet
from numaplane.node.memorymanager import state as memory_state
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.node.topologymanager.scope import TopologyAdmission

__all__ = ["Admission", "ContainerPlacement", "MemoryBlockView", "memory_views"]


@dataclass(frozen=True, slots=True)
class MemoryBlockView:
    """One memory block of a container: NUMA nodes, resource and size in bytes."""

    numa_nodes: tuple[int, ...]
    resource: str
    size: int

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"numa_nodes": list(self.numa_nodes), "type": self.resource, "size": self.size}


@dataclass(frozen=True, slots=True)
class ContainerPlacement:
    """Where one container of an admitted pod runs and what it holds."""

    name: str
    init: bool
    restartable: bool
    affinity: TopologyHint | None
    exclusive_cpus: CPUSet
    cpus: CPUSet
    memory: tuple[MemoryBlockView, ...]
    memory_numa_nodes: tuple[int, ...] | None
    devices: Mapping[str, tuple[str, ...]]

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (CPU sets in the kernel's list syntax)."""
        return {
            "name": self.name,
            "init": self.init,
            "restartable": self.restartable,
            "numa_affinity": None if self.affinity is None else self.affinity.to_json(),
            "exclusive_cpus": str(self.exclusive_cpus),
            "cpus": str(self.cpus),
            "memory": [b.to_json() for b in self.memory],
            "memory_numa_nodes": (
                None if self.memory_numa_nodes is None else list(self.memory_numa_nodes)
            ),
            "devices": {k: list(v) for k, v in self.devices.items()},
        }


@dataclass(frozen=True, slots=True)
class Admission:
    """The kubelet's decision on one pod, with every container's placement and the reasons."""

    pod_name: str
    pod_namespace: str
    pod_uid: str
    admitted: bool
    reason: str | None
    message: str | None
    topology: TopologyAdmission
    containers: tuple[ContainerPlacement, ...] = ()

    def to_json(self, *, explain: bool = True) -> dict[str, Any]:
        """JSON-ready dict; ``explain`` adds the hints and merges."""
        doc: dict[str, Any] = {
            "pod": {"name": self.pod_name, "namespace": self.pod_namespace, "uid": self.pod_uid},
            "admitted": self.admitted,
            "reason": self.reason,
            "message": self.message,
            "containers": [c.to_json() for c in self.containers],
        }
        if explain:
            doc["explanation"] = self.topology.explanation.to_json()
        return doc


# Blocks are immutable values and a few shapes repeat across containers (one block per
# requested resource on one node): their views are shared.
def memory_views(
    blocks: tuple[memory_state.Block, ...],
) -> tuple[tuple[MemoryBlockView, ...], tuple[int, ...] | None]:
    """The views of a container's memory blocks, and the NUMA nodes they span (``None``
    without blocks)."""
    memory = tuple(MemoryBlockView(tuple(b.numa_affinity), b.type, b.size) for b in blocks)
    numa = sorted({n for b in memory for n in b.numa_nodes}) if memory else None
    return memory, None if numa is None else tuple(numa)
