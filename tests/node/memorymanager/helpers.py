"""Builders shared by the memory manager tests."""

from __future__ import annotations

from dataclasses import dataclass, field

from numaplane.api.pod import Container, Pod
from numaplane.node.memorymanager.policy_static import StaticPolicy
from numaplane.node.memorymanager.state import InMemoryState
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.testing.upstream_fixtures import machine_from_cadvisor
from numaplane.topology.model import Machine

MB = 1 << 20
GB = 1 << 30


@dataclass
class SettableAffinity:
    """A fake affinity store whose hint tests may change between calls."""

    hint: TopologyHint = field(default_factory=lambda: TopologyHint(None, False))

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        """The current hint, for every container."""
        return self.hint


def hint(*nodes: int, preferred: bool = False) -> TopologyHint:
    """A hint over ``nodes`` (none: the empty affinity)."""
    return TopologyHint(BitMask(*nodes) if nodes else None, preferred)


def machine(nodes: int, memory: int, hugepages_1g: int = 0) -> Machine:
    """``nodes`` NUMA nodes with ``memory`` bytes and ``hugepages_1g`` 1Gi pages each."""
    pages = [{"page_size_kb": 1 << 20, "num_pages": hugepages_1g}] if hugepages_1g else []
    return machine_from_cadvisor(
        {"topology": [{"id": i, "memory": memory, "hugepages": pages} for i in range(nodes)]}
    )


def guaranteed(
    name: str, memory: int, hugepages: int = 0, restart_policy: str | None = None
) -> Container:
    """A container whose requests equal its limits."""
    res: dict[str, str | int] = {"cpu": "1", "memory": memory}
    if hugepages:
        res["hugepages-1Gi"] = hugepages
    return Container.of(name, requests=res, limits=res, restart_policy=restart_policy)


def pod(uid: str, *containers: Container, init: tuple[Container, ...] = ()) -> Pod:
    """A Guaranteed pod."""
    return Pod.of(uid, containers=containers, init_containers=init, qos="Guaranteed")


def started_policy(
    m: Machine, reserved_per_node: int = 512 * MB, affinity: SettableAffinity | None = None
) -> tuple[StaticPolicy, InMemoryState, SettableAffinity]:
    """A started static policy on ``m`` reserving ``reserved_per_node`` of memory per node."""
    aff = affinity or SettableAffinity()
    policy = StaticPolicy(m, {n: {"memory": reserved_per_node} for n in m.numa_ids}, aff)
    state = InMemoryState()
    policy.start(state)
    return policy, state, aff
