"""What the agent's HTTP endpoints show: ``/pods`` and ``/topology`` documents.

``pods_view`` lists every pod the manifests name: admitted pods with their phase, container
states, CPUs (exclusive or the shared pool), memory NUMA nodes and devices, and the admission
explanation; rejected pods with the kubelet's reason and message; and manifest files that are
not pods. Every pod, whatever its kind, has the same keys, and so has every container (``None``
where a value is unknown or does not apply: ``POD_KEYS``, ``CONTAINER_KEYS``).
``topology_view`` describes each NUMA node like a NodeResourceTopology zone:
capacity, allocatable and available CPUs, memory, hugepages and devices.
"""

from __future__ import annotations

from typing import Any

from numaplane.agent.agent import Agent, PodEntry
from numaplane.agent.rejections import Rejection
from numaplane.agent.runtime import ContainerStatus, PodStatus
from numaplane.node.admission import Node

#: The keys of every pod of ``/pods``, in order.
POD_KEYS = (
    "name",
    "namespace",
    "uid",
    "manifest",
    "qosClass",
    "phase",
    "reason",
    "message",
    "containers",
    "admission",
)

#: The keys of every container of ``/pods``, in order.
CONTAINER_KEYS = (
    "name",
    "init",
    "restartable",
    "image",
    "state",
    "reason",
    "message",
    "exitCode",
    "restartCount",
    "pid",
    "cpus",
    "cpuKind",
    "memoryNumaNodes",
    "numaAffinity",
    "devices",
    "deviceEnv",
    "mounts",
    "deviceNodes",
)

#: The container reason of a pod whose containers could not be set up (the kubelet's).
CREATE_CONTAINER_ERROR = "CreateContainerError"


def _shaped(keys: tuple[str, ...], values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with every one of ``keys`` (``None`` where missing), in that order."""
    unknown = set(values) - set(keys)
    if unknown:
        raise KeyError(f"not in the /pods schema: {sorted(unknown)}")
    return {key: values.get(key) for key in keys}


def pods_view(agent: Agent) -> list[dict[str, Any]]:
    """The ``/pods`` document: a JSON-ready list, admitted pods first in admission order."""
    statuses = agent.statuses()
    out: list[dict[str, Any]] = []
    with agent.lock:
        for uid, entry in agent.pods.items():
            out.append(_admitted(agent, entry, statuses.get(uid)))
        for rejection in agent.rejected.values():
            out.append(_rejected(rejection))
        for fault in agent.faults:
            out.append(
                _shaped(
                    POD_KEYS,
                    {
                        "name": fault.path.stem,
                        "manifest": str(fault.path),
                        "phase": "Failed",
                        "reason": fault.reason,
                        "message": fault.message,
                        "containers": [],
                    },
                )
            )
    return out


def _admitted(agent: Agent, entry: PodEntry, status: PodStatus | None) -> dict[str, Any]:
    node = agent.node
    pod = entry.pod
    shared = node.cpu_manager.shared_pool() or agent.all_cpus
    by_name: dict[str, ContainerStatus] = {}
    if status is not None:
        for item in status.init_containers + status.containers:
            by_name[item.name] = item
    containers: list[dict[str, Any]] = []
    for container in pod.all_containers():
        placement = node.placement(pod, container.name)
        exclusive = bool(placement.exclusive_cpus)
        cstatus = by_name.get(container.name)
        allocations = agent.devices.allocations(pod.uid, container.name)
        if cstatus is None:
            # No runtime yet, or none could be set up: then the error is the reason.
            reason = CREATE_CONTAINER_ERROR if entry.error else "ContainerCreating"
            waiting: dict[str, Any] = {"reason": reason, "message": entry.error}
        containers.append(
            _shaped(
                CONTAINER_KEYS,
                {
                    "name": container.name,
                    "init": placement.init,
                    "restartable": placement.restartable,
                    "image": container.image or None,
                    "state": cstatus.state if cstatus else "waiting",
                    "reason": cstatus.reason if cstatus else waiting["reason"],
                    "message": cstatus.message if cstatus else waiting["message"],
                    "exitCode": cstatus.exit_code if cstatus else None,
                    "restartCount": cstatus.restart_count if cstatus else 0,
                    "pid": cstatus.pid if cstatus else None,
                    "cpus": str(placement.exclusive_cpus if exclusive else shared),
                    "cpuKind": "exclusive" if exclusive else "shared",
                    "memoryNumaNodes": (
                        None
                        if placement.memory_numa_nodes is None
                        else list(placement.memory_numa_nodes)
                    ),
                    "numaAffinity": (
                        None if placement.affinity is None else placement.affinity.to_json()
                    ),
                    "devices": {r: list(ids) for r, ids in placement.devices.items()},
                    "deviceEnv": {k: v for a in allocations.values() for k, v in a.envs.items()},
                    "mounts": [
                        {
                            "containerPath": m.container_path,
                            "hostPath": m.host_path,
                            "readOnly": m.read_only,
                        }
                        for a in allocations.values()
                        for m in a.mounts
                    ],
                    "deviceNodes": [
                        {
                            "containerPath": d.container_path,
                            "hostPath": d.host_path,
                            "permissions": d.permissions,
                        }
                        for a in allocations.values()
                        for d in a.devices
                    ],
                },
            )
        )
    phase = status.phase if status is not None else ("Failed" if entry.error else "Pending")
    message = entry.error or (status.message if status is not None else None)
    return _shaped(
        POD_KEYS,
        {
            "name": pod.name,
            "namespace": pod.namespace,
            "uid": pod.uid,
            "manifest": None if entry.manifest is None else str(entry.manifest),
            "qosClass": pod.qos_class.value,
            "phase": phase,
            "reason": "StartError" if entry.error else None,
            "message": message,
            "containers": containers,
            "admission": None if entry.admission is None else dict(entry.admission),
        },
    )


def _rejected(rejection: Rejection) -> dict[str, Any]:
    pod = rejection.pod
    # A refused pod's containers never ran and hold nothing: its placement keys are None.
    containers = [
        _shaped(
            CONTAINER_KEYS,
            {
                "name": c.name,
                "init": c in pod.init_containers,
                "restartable": c.is_restartable,
                "image": c.image or None,
                "state": "waiting",
                "reason": rejection.reason,
                "restartCount": 0,
            },
        )
        for c in pod.all_containers()
    ]
    return _shaped(
        POD_KEYS,
        {
            "name": pod.name,
            "namespace": pod.namespace,
            "uid": pod.uid,
            "manifest": None if rejection.manifest is None else str(rejection.manifest),
            "qosClass": pod.qos_class.value,
            "phase": "Failed",
            "reason": rejection.reason,
            "message": rejection.message,
            "containers": containers,
            "admission": None if rejection.admission is None else dict(rejection.admission),
        },
    )


# -- /topology -------------------------------------------------------------------------------


def _resource(name: str, capacity: int, allocatable: int, available: int) -> dict[str, str]:
    return {
        "name": name,
        "capacity": str(capacity),
        "allocatable": str(allocatable),
        "available": str(available),
    }


def topology_view(agent: Agent) -> dict[str, Any]:
    """The ``/topology`` document: one zone per NUMA node."""
    with agent.lock:
        return topology_of(agent.node)


def topology_of(node: Node) -> dict[str, Any]:
    """NodeResourceTopology-shaped zones of ``node`` (call under the agent's lock)."""
    machine = node.machine
    cpu = node.cpu_manager
    allocatable_cpus = cpu.allocatable_cpus() if cpu.reserved_cpus() else machine.all_cpu_ids
    if not allocatable_cpus:
        allocatable_cpus = machine.all_cpu_ids
    exclusive: set[int] = set()
    for containers in cpu.exclusive_assignments().values():
        for cpus in containers.values():
            exclusive.update(cpus)
    memory_state = node.memory_manager.state.get_machine_state()
    devices = node.device_manager
    zones: list[dict[str, Any]] = []
    for numa in machine.numa_nodes:
        online = numa.cpus & machine.all_cpu_ids
        allocatable = online & allocatable_cpus
        resources = [
            _resource(
                "cpu",
                len(online),
                len(allocatable),
                len([c for c in allocatable if c not in exclusive]),
            )
        ]
        tables = memory_state.get(numa.id)
        if tables is not None and tables.memory_map:
            for name, table in sorted(tables.memory_map.items()):
                resources.append(_resource(name, table.total, table.allocatable, table.free))
        else:
            resources.append(
                _resource("memory", numa.memory_bytes, numa.memory_bytes, numa.memory_bytes)
            )
            for pages in numa.hugepages:
                size = pages.total * pages.size_bytes
                resources.append(_resource(pages.resource_name, size, size, size))
        device_list: list[dict[str, Any]] = []
        for resource in devices.resources():
            known = [d for d in devices.devices(resource) if numa.id in d.numa_nodes]
            if not known:
                continue
            healthy = {d.id for d in known if d.healthy}
            free = healthy & devices.available(resource)
            resources.append(_resource(resource, len(known), len(healthy), len(free)))
            held = devices.allocated(resource)
            device_list.extend(
                {
                    "resource": resource,
                    "id": d.id,
                    "healthy": d.healthy,
                    "allocated": d.id in held,
                }
                for d in known
            )
        zones.append(
            {
                "name": f"node-{numa.id}",
                "type": "Node",
                "resources": resources,
                "cpus": str(online),
                "devices": device_list,
                "costs": [
                    {"name": f"node-{other}", "value": dist} for other, dist in numa.distances
                ],
            }
        )
    return {
        "zones": zones,
        "sharedPool": str(cpu.shared_pool()),
        "reservedCPUs": str(cpu.reserved_cpus()),
    }
