"""Show a machine: a readable tree (rich) and a stable JSON/YAML document.

The document's shape is a contract (scripts read it); add keys, never rename or remove them:

- ``name``, ``source``;
- ``cpus``: ``[{id, core, socket, die, numa, uncore_cache, online, physical_core}]`` by id;
- ``numa_nodes``: ``[{id, cpus, memory_bytes, hugepages, distances}]`` by id, ``cpus`` in the
  kernel's list syntax, ``hugepages`` as ``[{size_kib, resource, total, free}]``, ``distances``
  as ``{"<node id>": distance}``;
- ``devices``: ``[{address, vendor, device, class, driver, numa, physfn, virtfns, name}]``.
"""

from __future__ import annotations

import json
from typing import Any

import yaml
from rich.text import Text
from rich.tree import Tree

from numaplane.topology.cpuset import CPUSet
from numaplane.topology.model import Machine, NUMANode, PCIDevice


def machine_document(machine: Machine) -> dict[str, Any]:
    """The machine as plain data (see the module doc for the stable shape)."""
    return {
        "name": machine.name,
        "source": machine.source,
        "cpus": [
            {
                "id": c.id,
                "core": c.core,
                "socket": c.socket,
                "die": c.die,
                "numa": c.numa,
                "uncore_cache": c.uncore_cache,
                "online": c.online,
                "physical_core": c.physical_core,
            }
            for c in machine.cpus
        ],
        "numa_nodes": [
            {
                "id": n.id,
                "cpus": str(n.cpus),
                "memory_bytes": n.memory_bytes,
                "hugepages": [
                    {
                        "size_kib": h.size_kib,
                        "resource": h.resource_name,
                        "total": h.total,
                        "free": h.free,
                    }
                    for h in n.hugepages
                ],
                "distances": {str(k): v for k, v in n.distances},
            }
            for n in machine.numa_nodes
        ],
        "devices": [
            {
                "address": d.address,
                "vendor": d.vendor,
                "device": d.device,
                "class": d.class_id,
                "driver": d.driver,
                "numa": d.numa,
                "physfn": d.physfn,
                "virtfns": list(d.virtfns),
                "name": d.name,
            }
            for d in machine.devices
        ],
    }


def render_json(machine: Machine) -> str:
    """The document as indented JSON (keys in the documented order)."""
    return json.dumps(machine_document(machine), indent=2)


def render_yaml(machine: Machine) -> str:
    """The document as YAML (keys in the documented order)."""
    return yaml.safe_dump(machine_document(machine), sort_keys=False)


def format_bytes(n: int) -> str:
    """A byte count in the largest binary unit that keeps one decimal (``64.0 GiB``)."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover - the loop always returns


def machine_tree(machine: Machine) -> Tree:
    """A rich tree: sockets, their NUMA nodes, cores with threads, and local devices."""
    cores = len(machine.physical_core_ids)
    # Styled through Text, not markup: names and paths print as they are.
    root = Tree(
        Text.assemble(
            (machine.name, "bold"),
            f" ({machine.source}): {len(machine.online_cpus)} CPUs, "
            f"{cores} cores, {len(machine.socket_ids)} sockets, {len(machine.numa_nodes)} NUMA "
            f"nodes, {format_bytes(machine.memory_bytes)}",
        )
    )
    shown: set[int] = set()
    for socket in machine.socket_ids:
        branch = root.add(f"socket {socket}")
        for node_id in machine.numa_nodes_in_sockets(socket):
            node = machine.numa_node(node_id)
            shown.add(node_id)
            leaf = branch.add(_node_label(node))
            _add_cores(
                leaf, machine, machine.cpus_in_numa_nodes(node_id) & machine.cpus_in_sockets(socket)
            )
            _add_devices(leaf, machine.devices_on_numa(node_id))
    for node in machine.numa_nodes:
        if node.id not in shown:
            leaf = root.add(_node_label(node) + " (no CPUs)")
            _add_devices(leaf, machine.devices_on_numa(node.id))
    unplaced = [d for d in machine.devices if d.numa is None or d.numa not in machine.numa_ids]
    if unplaced:
        _add_devices(root.add("devices without NUMA locality"), tuple(unplaced))
    if machine.offline_cpu_ids:
        root.add(f"offline CPUs: {machine.offline_cpu_ids}")
    return root


def _node_label(node: NUMANode) -> str:
    parts = [f"NUMA node {node.id}", format_bytes(node.memory_bytes)]
    pages = [f"{h.resource_name} {h.free}/{h.total} free" for h in node.hugepages if h.total]
    parts.extend(pages)
    if node.distances:
        parts.append("distances " + " ".join(f"{k}:{v}" for k, v in node.distances))
    return ", ".join(parts)


def _add_cores(parent: Tree, machine: Machine, cpus: CPUSet) -> None:
    parent.add(f"CPUs {cpus}" if cpus else "no CPUs")
    by_core: dict[int, list[int]] = {}
    for cpu_id in cpus:
        by_core.setdefault(machine.cpu(cpu_id).physical_core, []).append(cpu_id)
    for core_id, threads in sorted(by_core.items()):
        first = machine.cpu(threads[0])
        parent.add(
            f"core {core_id} (core_id {first.core}, L3 {first.uncore_cache}): "
            f"CPUs {CPUSet(threads)}"
        )


def _add_devices(parent: Tree, devices: tuple[PCIDevice, ...]) -> None:
    for d in devices:
        extra = f" driver {d.driver}" if d.driver else ""
        label = f" {d.name}" if d.name else ""
        vf = f" VF of {d.physfn}" if d.physfn else ""
        parent.add(f"PCI {d.address} [{d.vendor}:{d.device}] class {d.class_id}{extra}{vf}{label}")
