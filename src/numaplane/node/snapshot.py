"""A node's allocations as one value: ``snapshot_of(node)`` and ``restore_node(snapshot, pods)``.

(Over 400 lines: the snapshot and the checkpoint documents inside it are one format.)

The node agent publishes the snapshot; the scheduler restores it into a ``Node`` of its own and
asks that node whether it would admit a pod, so a restored node must decide exactly as the
original: every later admission answers the same (``Admission.to_json()``, explanation
included). What that takes:

- the machine and the kubelet configuration (``topology.serialize``, ``to_dict``);
- the three managers' states, as the kubelet checkpoints them (``cpu_manager_state``,
  ``memory_manager_state``, ``kubelet_internal_checkpoint``), written and read with the same
  codecs the agent restarts from (``node.statedir``);
- the admitted pods in admission order, each with its container names and its requests in the
  scheduler's units: the stale-state cleanups keep what an active container holds, and the
  predicate admit handler counts what admitted pods request. A pod the caller passes is adopted
  as itself; one it does not know is held by a placeholder with those names and requests;
- the device plugins' devices (id, NUMA nodes, health) per resource, re-registered as
  in-memory sources: a plugin's own preferred-allocation logic does not travel, so a node
  whose plugins prefer devices may choose other device ids than the restored one;
- the Topology Manager's stored affinity of each container (the kubelet's re-admission after a
  restart recomputes them; only the placements of adopted pods show them).

Transient state that only lives during one pod's admission (the CPU, memory and device managers'
init-container reuse sets) is not carried: it belongs to the pod under admission and is reset
by the next one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from numaplane.api.kubeletconfig import KubeletConfiguration, kubelet_config_from_dict
from numaplane.api.pod import Container, Pod
from numaplane.api.quantity import Quantity
from numaplane.errors import InputError, NumaplaneError
from numaplane.node.admission import Node, NodeStates
from numaplane.node.cpumanager import state as cpu_state
from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.source import InMemoryDeviceSource
from numaplane.node.memorymanager import state as memory_state
from numaplane.node.requests import CPU, scheduler_requests
from numaplane.node.statedir import (
    CPU_FILE,
    DEVICE_FILE,
    MEMORY_FILE,
    StateFiles,
    device_checkpoint_of,
)
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.topology.cpuset import CPUSet
from numaplane.topology.model import Machine
from numaplane.topology.serialize import machine_from_dict, machine_to_dict

__all__ = [
    "SNAPSHOT_FORMAT",
    "STATE_NAMES",
    "HeldPod",
    "NodeSnapshot",
    "SnapshotError",
    "restore_node",
    "snapshot_of",
    "state_documents",
    "states_from_documents",
]

SNAPSHOT_FORMAT: Final = "numaplane.io/node-snapshot/v1"
"""The ``format`` field of ``NodeSnapshot.to_json()``."""

STATE_NAMES: Final = (CPU_FILE, MEMORY_FILE, DEVICE_FILE)
"""The keys of ``NodeSnapshot.states``: the kubelet's checkpoint file names."""


class SnapshotError(InputError):
    """A snapshot cannot be read or restored; ``source`` names where it came from."""


@dataclass(frozen=True)
class HeldPod:
    """What the node must know of an admitted pod it may not have: its key, its containers'
    names and its requests in scheduler units (millicores for cpu, else ``Value()``)."""

    namespace: str
    name: str
    containers: tuple[str, ...]
    requests: Mapping[str, int]

    def placeholder(self, uid: str) -> Pod:
        """A pod with these containers whose requests add up to ``requests`` (all carried by
        its first container), standing for a pod the caller does not know."""
        # Quantities built directly (millicores for cpu): parsing text costs more than the
        # rest of a restore.
        amounts: dict[str, str | int | Quantity] = {
            name: Quantity(Fraction(amount, 1000) if name == CPU else Fraction(amount))
            for name, amount in sorted(self.requests.items())
        }
        containers = [
            Container.of(name, requests=amounts if i == 0 else None)
            for i, name in enumerate(self.containers)
        ]
        return Pod.of(uid, containers, name=self.name, namespace=self.namespace)


@dataclass(frozen=True)
class NodeSnapshot:
    """A node's machine, configuration and allocations (see the module doc).

    ``states`` holds the three checkpoints as decoded JSON documents, keyed by file name;
    ``pod_uids`` the admitted pods in admission order; ``pods`` what a placeholder needs of
    each; ``devices`` each device resource's devices; ``affinities`` the stored merged hint of
    each container (``TopologyHint.to_json()``'s shape) by pod uid and container name.
    """

    machine: Machine
    config: KubeletConfiguration
    states: Mapping[str, Any]
    pod_uids: tuple[str, ...]
    pods: Mapping[str, HeldPod] = field(default_factory=lambda: MappingProxyType({}))
    devices: Mapping[str, tuple[Device, ...]] = field(default_factory=lambda: MappingProxyType({}))
    affinities: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(
        default_factory=lambda: MappingProxyType({})
    )

    def to_dict(self) -> dict[str, Any]:
        """The snapshot as JSON values."""
        return {
            "format": SNAPSHOT_FORMAT,
            "machine": machine_to_dict(self.machine),
            "config": self.config.to_dict(),
            "states": {name: self.states[name] for name in STATE_NAMES},
            "pods": [_held_to_dict(uid, self.pods.get(uid)) for uid in self.pod_uids],
            "devices": {
                resource: [[d.id, None if d.numa is None else list(d.numa), d.healthy] for d in ds]
                for resource, ds in self.devices.items()
            },
            "affinities": {uid: dict(by_name) for uid, by_name in self.affinities.items()},
        }

    def to_json(self) -> str:
        """The snapshot as compact JSON text (the NRT annotation's value)."""
        return json.dumps(self.to_dict(), separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_dict(cls, obj: object, *, source: str = "<snapshot>") -> NodeSnapshot:
        """Read what ``to_dict`` wrote; ``SnapshotError`` (one line) on anything else."""
        try:
            return _from_dict(obj, source)
        except InputError as err:
            if isinstance(err, SnapshotError):
                raise
            raise SnapshotError(source, err.reason, err.field) from None
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as err:
            reason = f"missing key {err}" if isinstance(err, KeyError) else str(err)
            raise SnapshotError(source, f"not a node snapshot: {reason}") from None

    @classmethod
    def from_json(cls, text: str, *, source: str = "<snapshot>") -> NodeSnapshot:
        """Read what ``to_json`` wrote."""
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError) as err:
            raise SnapshotError(source, f"not JSON: {err}") from None
        return cls.from_dict(obj, source=source)


def _held_to_dict(uid: str, held: HeldPod | None) -> dict[str, Any]:
    if held is None:
        return {"uid": uid}
    return {
        "uid": uid,
        "namespace": held.namespace,
        "name": held.name,
        "containers": list(held.containers),
        "requests": dict(held.requests),
    }


def _from_dict(obj: object, source: str) -> NodeSnapshot:
    if not isinstance(obj, Mapping) or obj.get("format") != SNAPSHOT_FORMAT:
        raise SnapshotError(source, f"not a node snapshot (format {SNAPSHOT_FORMAT!r} expected)")
    machine = machine_from_dict(obj["machine"], source=source)
    config = kubelet_config_from_dict(obj["config"], source)
    states = obj["states"]
    if not isinstance(states, Mapping) or set(states) != set(STATE_NAMES):
        raise SnapshotError(source, f"expected the checkpoints {list(STATE_NAMES)}", "states")
    uids: list[str] = []
    pods: dict[str, HeldPod] = {}
    for item in obj["pods"]:
        uid = str(item["uid"])
        uids.append(uid)
        if "containers" in item:
            requests = {str(k): int(v) for k, v in dict(item["requests"]).items()}
            containers = tuple(str(c) for c in item["containers"])
            pods[uid] = HeldPod(str(item["namespace"]), str(item["name"]), containers, requests)
    if len(set(uids)) != len(uids):
        raise SnapshotError(source, "a pod uid repeats", "pods")
    devices = {
        str(resource): tuple(
            Device(str(d[0]), None if d[1] is None else tuple(int(n) for n in d[1]), bool(d[2]))
            for d in items
        )
        for resource, items in dict(obj.get("devices", {})).items()
    }
    affinities = {
        str(uid): {str(name): dict(hint) for name, hint in dict(by_name).items()}
        for uid, by_name in dict(obj.get("affinities", {})).items()
    }
    return NodeSnapshot(
        machine,
        config,
        MappingProxyType({name: states[name] for name in STATE_NAMES}),
        tuple(uids),
        MappingProxyType(pods),
        MappingProxyType(devices),
        MappingProxyType(affinities),
    )


# -- taking and restoring ----------------------------------------------------------------------


def snapshot_of(node: Node) -> NodeSnapshot:
    """The node's allocations now (the node is only read)."""
    config = node.config
    states = state_documents(node.states, config)
    gate = config.feature_gates.enabled("PodLevelResources")
    pods = {
        pod.uid: HeldPod(
            pod.namespace,
            pod.name,
            tuple(c.name for c in pod.all_containers()),
            scheduler_requests(pod, pod_level_resources=gate),
        )
        for pod in node.pods
    }
    devices = node.device_manager
    affinities = {
        uid: {name: hint.to_json() for name, hint in by_name.items()}
        for uid, by_name in node.topology_manager.state.snapshot().items()
        if by_name
    }
    return NodeSnapshot(
        node.machine,
        config,
        MappingProxyType(states),
        tuple(pods),
        MappingProxyType(pods),
        MappingProxyType({r: devices.devices(r) for r in devices.resources()}),
        MappingProxyType(affinities),
    )


def restore_node(
    snapshot: NodeSnapshot, pods: Mapping[str, Pod], *, source: str = "<snapshot>"
) -> Node:
    """A node holding exactly the snapshot's allocations: the managers' states restored from
    the checkpoints, each admitted pod adopted (itself when ``pods`` has it, else a
    placeholder), devices registered, affinities put back. ``SnapshotError`` when the states
    do not fit the machine or configuration."""
    config = snapshot.config
    try:
        states = states_from_documents(snapshot.states, config, source=source)
        node = Node(
            snapshot.machine,
            config,
            device_sources=[
                InMemoryDeviceSource(resource, devices)
                for resource, devices in snapshot.devices.items()
            ],
            states=states,
        )
    except NumaplaneError as err:
        # A checkpoint's refusal, or the managers' validation of the restored state against
        # the machine and configuration (as the kubelet refuses to start).
        if isinstance(err, SnapshotError):
            raise
        raise SnapshotError(source, str(err)) from None
    for uid in snapshot.pod_uids:
        pod = pods.get(uid)
        if pod is None:
            held = snapshot.pods.get(uid)
            pod = held.placeholder(uid) if held is not None else Pod.of(uid)
        node.adopt(pod)
    known = set(snapshot.machine.numa_ids)
    for uid, by_name in snapshot.affinities.items():
        for name, doc in by_name.items():
            node.topology_manager.restore_affinity(uid, name, _hint(doc, known, source))
    return node


def _hint(doc: Mapping[str, Any], known: set[int], source: str) -> TopologyHint:
    numa = doc.get("numa")
    preferred = doc.get("preferred")
    if not isinstance(preferred, bool) or not (numa is None or isinstance(numa, list)):
        raise SnapshotError(source, f"not a topology hint: {doc!r}", "affinities")
    if numa is None:
        return TopologyHint(None, preferred)
    if not numa or any(not isinstance(n, int) or n not in known for n in numa):
        raise SnapshotError(source, f"not NUMA nodes of the machine: {numa!r}", "affinities")
    return TopologyHint(BitMask(*numa), preferred)


# -- the checkpoint documents --------------------------------------------------------------------
#
# The kubelet's codecs (``node.statedir``) render and parse checkpoints exactly as Go does,
# checksums included, which costs milliseconds per node: too much for a document published after
# every admission and read back by the scheduler. These write the same JSON documents directly
# (the CPU and V1 memory layouts with checksum 0, which the kubelet accepts unverified; the
# device checkpoint, small, through its codec) and read them straight into in-memory states.
# tests/node/test_snapshot.py checks both against the codecs.


def state_documents(states: NodeStates, config: KubeletConfiguration) -> dict[str, Any]:
    """The three managers' states as kubelet checkpoint documents, keyed by file name."""
    cpu: dict[str, Any] = {
        "policyName": config.cpu_manager_policy,
        "defaultCpuSet": str(states.cpu.get_default_cpu_set()),
    }
    cpu_entries = {
        pod: {name: str(cpus) for name, cpus in containers.items()}
        for pod, containers in states.cpu.get_cpu_assignments().items()
    }
    if cpu_entries:
        cpu["entries"] = cpu_entries
    cpu["checksum"] = 0
    memory: dict[str, Any] = {
        "policyName": config.memory_manager_policy,
        "machineState": {
            str(node_id): {
                "numberOfAssignments": node.number_of_assignments,
                "memoryMap": {
                    name: {
                        "total": t.total,
                        "systemReserved": t.system_reserved,
                        "allocatable": t.allocatable,
                        "reserved": t.reserved,
                        "free": t.free,
                    }
                    for name, t in node.memory_map.items()
                },
                "cells": list(node.cells),
            }
            for node_id, node in states.memory.get_machine_state().items()
        },
    }
    memory_entries = {
        pod: {
            name: [
                {"numaAffinity": list(b.numa_affinity), "type": b.type, "size": b.size}
                for b in blocks
            ]
            for name, blocks in containers.items()
        }
        for pod, containers in states.memory.get_memory_assignments().items()
    }
    if memory_entries:
        memory["entries"] = memory_entries
    memory["checksum"] = 0
    devices = device_checkpoint_of(states)
    return {CPU_FILE: cpu, MEMORY_FILE: memory, DEVICE_FILE: json.loads(devices.to_bytes())}


def states_from_documents(
    documents: Mapping[str, Any], config: KubeletConfiguration, *, source: str = "<snapshot>"
) -> NodeStates:
    """In-memory states from ``state_documents``' documents; ``SnapshotError`` when they are
    malformed or belong to other policies than ``config``'s."""
    try:
        cpu_doc, memory_doc = documents[CPU_FILE], documents[MEMORY_FILE]
        _check_policy(cpu_doc, config.cpu_manager_policy, "CPU manager", source)
        _check_policy(memory_doc, config.memory_manager_policy, "memory manager", source)
        cpu = cpu_state.InMemoryState(
            {
                pod: {name: CPUSet.parse(text) for name, text in containers.items()}
                for pod, containers in (cpu_doc.get("entries") or {}).items()
            },
            CPUSet.parse(cpu_doc["defaultCpuSet"]),
        )
        memory = memory_state.InMemoryState(
            {
                int(node_id): memory_state.NUMANodeState(
                    int(node["numberOfAssignments"]),
                    {
                        name: memory_state.MemoryTable(
                            int(t["total"]),
                            int(t["systemReserved"]),
                            int(t["allocatable"]),
                            int(t["reserved"]),
                            int(t["free"]),
                        )
                        for name, t in (node.get("memoryMap") or {}).items()
                    },
                    tuple(int(c) for c in node.get("cells") or ()),
                )
                for node_id, node in (memory_doc.get("machineState") or {}).items()
            },
            {
                pod: {
                    name: tuple(
                        memory_state.Block(
                            tuple(int(n) for n in b["numaAffinity"] or ()),
                            str(b["type"]),
                            int(b["size"]),
                        )
                        for b in blocks or ()
                    )
                    for name, blocks in containers.items()
                }
                for pod, containers in (memory_doc.get("entries") or {}).items()
            },
        )
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        reason = f"missing key {err}" if isinstance(err, KeyError) else str(err)
        raise SnapshotError(source, f"not a checkpoint document: {reason}", "states") from None
    # The device checkpoint goes through the kubelet's codec (its checksum is verified).
    files = StateFiles(Path(source), {DEVICE_FILE: json.dumps(documents[DEVICE_FILE]).encode()})
    devices = files.node_states(
        config.cpu_manager_policy, config.memory_manager_policy, only=DEVICE_FILE
    ).devices
    return NodeStates(cpu=cpu, memory=memory, devices=devices)


def _check_policy(doc: Mapping[str, Any], policy: str, manager: str, source: str) -> None:
    if doc.get("policyName") != policy:
        raise SnapshotError(
            source,
            f"the {manager} state is of policy {doc.get('policyName')!r}, the configuration's "
            f"is {policy!r}",
            "states",
        )
