"""The simulated nodes themselves: names, machines, node engines (fresh or restored from the
state directory) and their heartbeats.

Node ``i`` of ``--nodes N --node-name NAME`` is ``NAME-i`` and gets ``machines[i % len]``:
several ``--machine`` values cycle over the nodes (give one twice to weigh it double).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from numaplane.agent.cluster.heartbeat import NodeHeartbeat
from numaplane.agent.simulated.checkpoint import SnapshotFiles
from numaplane.api.kubeletconfig import KubeletConfiguration
from numaplane.kube import KubeClient
from numaplane.kube.events import EventRecorder
from numaplane.node.admission import Node
from numaplane.node.snapshot import SnapshotError, restore_node
from numaplane.topology.model import Machine

__all__ = ["SIMULATED_LABEL", "SimNode", "build_nodes", "node_names"]

SIMULATED_LABEL: Final = "numaplane.io/simulated"
"""The label (value ``"true"``) every simulated Node carries."""


def node_names(prefix: str, count: int) -> list[str]:
    """``prefix-0`` ... ``prefix-(count-1)``."""
    return [f"{prefix}-{i}" for i in range(count)]


@dataclass(eq=False)
class SimNode:
    """One simulated node: its engine, its heartbeat, and an event recorder made on first
    use (only rejections are reported as events)."""

    name: str
    engine: Node
    heartbeat: NodeHeartbeat
    client: KubeClient
    clock: Callable[[], float]
    recorder: EventRecorder | None = field(default=None)
    #: Pods the engine holds from the snapshot file, not yet matched with a live pod.
    restored: set[str] = field(default_factory=set)

    def events(self) -> EventRecorder:
        """The kubelet's event recorder of this node (``source.host`` its name)."""
        if self.recorder is None:
            self.recorder = EventRecorder(self.client, "kubelet", host=self.name, clock=self.clock)
        return self.recorder


def _same_shape(a: Machine, b: Machine) -> bool:
    # Names and sources may differ (a preset's name against a capture of it): the hardware
    # is what the checkpoint's allocations are about.
    return (a.cpus, a.numa_nodes, a.devices) == (b.cpus, b.numa_nodes, b.devices)


def _engine(
    name: str, machine: Machine, config: KubeletConfiguration, files: SnapshotFiles | None
) -> Node:
    snapshot = files.load(name) if files is not None else None
    if snapshot is None:
        return Node(machine, config)
    assert files is not None
    path = str(files.path(name))
    # As the kubelet refuses a CPU or memory manager checkpoint written under another policy
    # or machine: the allocations it records would not mean the same thing.
    if not _same_shape(snapshot.machine, machine) or snapshot.config != config:
        raise SnapshotError(
            path,
            "written for another machine or kubelet configuration than this node's; "
            "delete the file to start the node empty",
        )
    return restore_node(snapshot, {}, source=path)


def build_nodes(
    client: KubeClient,
    prefix: str,
    count: int,
    machines: Sequence[Machine],
    config: KubeletConfiguration,
    *,
    files: SnapshotFiles | None,
    clock: Callable[[], float],
    labels: Mapping[str, str],
    address: str,
    nrt_interval: float,
    nrt_quiet: float = 1.0,
    nrt_max_delay: float = 10.0,
) -> dict[str, SimNode]:
    """The nodes by name, each engine restored from its snapshot file when there is one."""
    nodes: dict[str, SimNode] = {}
    for i, name in enumerate(node_names(prefix, count)):
        engine = _engine(name, machines[i % len(machines)], config, files)
        heartbeat = NodeHeartbeat(
            client,
            name,
            engine,
            None,  # one thread: the event loop's
            labels={**labels, SIMULATED_LABEL: "true"},
            address=address,
            clock=clock,
            nrt_interval_s=nrt_interval,
            nrt_quiet_s=nrt_quiet,
            nrt_max_delay_s=nrt_max_delay,
        )
        restored = {pod.uid for pod in engine.pods}
        nodes[name] = SimNode(name, engine, heartbeat, client, clock, restored=restored)
    return nodes
