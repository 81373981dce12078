"""Write a Linux sysfs tree, laid out like the kernel's, from a declarative machine description.

The repository's own discovery tests build their machines with this instead of reading
third-party captures: a ``TreeSpec`` lists the CPUs (with core, package, die, NUMA node, L3 id
and whether online), the NUMA nodes (memory, huge pages, distance row) and the PCI functions
(with ``numa_node``), and ``write_sysfs_tree`` writes every file and link the kernel shows for
them, not only the ones numaplane reads: ``cpu/online``, ``cpuN/online``,
``cpuN/topology/{core_id,physical_package_id,die_id,thread_siblings_list,core_cpus_list,...}``,
``cpuN/cache/indexK/{level,type,id,shared_cpu_list,shared_cpu_map}``, the ``cpuN/nodeM`` links,
``node/{online,possible,has_cpu,has_memory}``, ``nodeN/{cpulist,cpumap,meminfo,distance}``,
``nodeN/hugepages/hugepages-<size>kB/{nr_hugepages,free_hugepages}``, the ``nodeN/cpuM``
links, and ``bus/pci/devices/ADDR`` links into ``devices/pci0000:00`` with ``vendor``,
``device``, ``class``, ``numa_node``, ``local_cpulist`` and a ``driver`` link.

As on Linux (x86): an offline CPU keeps its directory and ``online`` file (``0``) but loses its
``topology`` and ``cache`` directories and leaves its node's ``cpulist``; a memory-only node
has an empty ``cpulist``; ``distance`` lists one value per online node in ascending id order.

``write_capture_tarball`` packs such a tree the way ``hwloc-gather-topology`` does: one top
directory named after the capture holding ``sys/`` and ``proc/``, in a ``.tar.bz2``.
"""

from __future__ import annotations

import os
import shutil
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from numaplane.cpuset import CPUSet, format_cpu_list

__all__ = [
    "CPUSpec",
    "NodeSpec",
    "PCISpec",
    "TreeSpec",
    "cpu_mask",
    "write_capture_tarball",
    "write_sysfs_tree",
]


@dataclass(frozen=True)
class CPUSpec:
    """One logical CPU: the kernel's ``core_id``, ``physical_package_id`` and ``die_id``, its
    NUMA node (``None``: listed by no node), its L3 cache id (``None``: no L3 directory) and
    whether it is online."""

    id: int
    core: int
    socket: int
    node: int | None
    die: int = 0
    l3: int | None = None
    online: bool = True


@dataclass(frozen=True)
class NodeSpec:
    """One NUMA node: ``MemTotal`` in KiB, huge pages as ``(size KiB, total, free)``, and the
    distance row (one value per node of the tree, ascending id); ``None`` writes the usual
    10 to itself and 20 to the others."""

    id: int
    memory_kib: int
    hugepages: tuple[tuple[int, int, int], ...] = ()
    distances: tuple[int, ...] | None = None


@dataclass(frozen=True)
class PCISpec:
    """One PCI function; ``numa`` ``None`` is written as the kernel's ``-1``."""

    address: str
    vendor: str
    device: str
    class_id: str
    numa: int | None
    driver: str | None = None


@dataclass(frozen=True)
class TreeSpec:
    """A machine to write: CPUs, NUMA nodes, PCI functions.

    ``global_online`` writes ``cpu/online`` (old kernels lack it: each CPU's ``online`` file
    then decides); ``proc_meminfo_kib`` writes ``proc/meminfo`` (read when there are no nodes).
    """

    cpus: tuple[CPUSpec, ...]
    nodes: tuple[NodeSpec, ...] = ()
    devices: tuple[PCISpec, ...] = ()
    global_online: bool = True
    proc_meminfo_kib: int | None = None

    def online_ids(self) -> CPUSet:
        """The online CPUs."""
        return CPUSet(c.id for c in self.cpus if c.online)

    def node_cpus(self, node: int) -> CPUSet:
        """The online CPUs the kernel lists for ``node``."""
        return CPUSet(c.id for c in self.cpus if c.online and c.node == node)


def cpu_mask(cpus: Iterable[int]) -> str:
    """The kernel's hex mask of a CPU set: 32-bit words, most significant first."""
    value = 0
    for cpu in cpus:
        value |= 1 << cpu
    words = max(1, (value.bit_length() + 31) // 32)
    return ",".join(f"{(value >> (32 * i)) & 0xFFFFFFFF:08x}" for i in reversed(range(words)))


def write_sysfs_tree(root: Path, spec: TreeSpec) -> Path:
    """Write ``spec`` under ``root`` (``root/sys/...``, ``root/proc/...``); return ``root``."""
    writer = _Writer(root)
    _write_cpus(writer, spec)
    _write_nodes(writer, spec)
    _write_pci(writer, spec)
    if spec.proc_meminfo_kib is not None:
        writer.file("proc/meminfo", _meminfo(None, spec.proc_meminfo_kib))
    return root


def write_capture_tarball(path: Path, spec: TreeSpec, name: str | None = None) -> Path:
    """Write ``spec`` as an ``hwloc-gather-topology`` ``.tar.bz2`` (``NAME/sys``, ``NAME/proc``).

    ``NAME`` defaults to the file name without its suffixes, as the tool names both.
    """
    top = name if name is not None else path.name.split(".")[0]
    staging = path.parent / f".{path.name}.staging"
    write_sysfs_tree(staging / top, spec)
    with tarfile.open(path, "w:bz2") as archive:
        archive.add(staging / top, arcname=top)
    shutil.rmtree(staging)
    return path


class _Writer:
    def __init__(self, root: Path) -> None:
        self.root = root

    def file(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")

    def link(self, rel: str, target: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path)


_CPU = "sys/devices/system/cpu"
_NODE = "sys/devices/system/node"


def _write_cpus(w: _Writer, spec: TreeSpec) -> None:
    online = [c for c in spec.cpus if c.online]
    ids = CPUSet(c.id for c in spec.cpus)
    if spec.global_online:
        w.file(f"{_CPU}/online", format_cpu_list(CPUSet(c.id for c in online)))
        w.file(f"{_CPU}/possible", format_cpu_list(ids))
        w.file(f"{_CPU}/present", format_cpu_list(ids))
        w.file(f"{_CPU}/offline", format_cpu_list(ids - CPUSet(c.id for c in online)))
    for cpu in spec.cpus:
        base = f"{_CPU}/cpu{cpu.id}"
        w.file(f"{base}/online", "1" if cpu.online else "0")
        if cpu.node is not None:
            w.link(f"{base}/node{cpu.node}", f"../../node/node{cpu.node}")
        if not cpu.online:
            continue
        threads = [
            c.id
            for c in online
            if (c.socket, c.die, c.core, c.node) == (cpu.socket, cpu.die, cpu.core, cpu.node)
        ]
        package = [c.id for c in online if c.socket == cpu.socket]
        die = [c.id for c in online if (c.socket, c.die) == (cpu.socket, cpu.die)]
        topo = f"{base}/topology"
        for name, value in (
            ("core_id", str(cpu.core)),
            ("physical_package_id", str(cpu.socket)),
            ("die_id", str(cpu.die)),
            ("thread_siblings_list", format_cpu_list(CPUSet(threads))),
            ("thread_siblings", cpu_mask(threads)),
            ("core_cpus_list", format_cpu_list(CPUSet(threads))),
            ("core_siblings_list", format_cpu_list(CPUSet(package))),
            ("package_cpus_list", format_cpu_list(CPUSet(package))),
            ("die_cpus_list", format_cpu_list(CPUSet(die))),
        ):
            w.file(f"{topo}/{name}", value)
        _write_caches(w, spec, cpu, threads)


def _write_caches(w: _Writer, spec: TreeSpec, cpu: CPUSpec, threads: list[int]) -> None:
    # L1d, L1i and L2 are private to the core; L3 is shared by the CPUs with the same id.
    levels: list[tuple[int, str, list[int], int]] = [
        (1, "Data", threads, min(threads)),
        (1, "Instruction", threads, min(threads)),
        (2, "Unified", threads, min(threads)),
    ]
    if cpu.l3 is not None:
        sharing = [c.id for c in spec.cpus if c.online and c.l3 == cpu.l3]
        levels.append((3, "Unified", sharing, cpu.l3))
    for index, (level, kind, sharing, cache_id) in enumerate(levels):
        base = f"{_CPU}/cpu{cpu.id}/cache/index{index}"
        w.file(f"{base}/level", str(level))
        w.file(f"{base}/type", kind)
        w.file(f"{base}/id", str(cache_id))
        w.file(f"{base}/shared_cpu_list", format_cpu_list(CPUSet(sharing)))
        w.file(f"{base}/shared_cpu_map", cpu_mask(sharing))


def _write_nodes(w: _Writer, spec: TreeSpec) -> None:
    if not spec.nodes:
        return
    ids = sorted(n.id for n in spec.nodes)
    w.file(f"{_NODE}/online", format_cpu_list(CPUSet(ids)))
    w.file(f"{_NODE}/possible", format_cpu_list(CPUSet(ids)))
    w.file(f"{_NODE}/has_cpu", format_cpu_list(CPUSet(n for n in ids if len(spec.node_cpus(n)))))
    w.file(
        f"{_NODE}/has_memory",
        format_cpu_list(CPUSet(n.id for n in spec.nodes if n.memory_kib)),
    )
    for node in spec.nodes:
        base = f"{_NODE}/node{node.id}"
        cpus = spec.node_cpus(node.id)
        w.file(f"{base}/cpulist", format_cpu_list(cpus))
        w.file(f"{base}/cpumap", cpu_mask(cpus))
        w.file(f"{base}/meminfo", _meminfo(node.id, node.memory_kib))
        row = node.distances or tuple(10 if other == node.id else 20 for other in ids)
        w.file(f"{base}/distance", " ".join(str(d) for d in row))
        for size_kib, total, free in node.hugepages:
            pages = f"{base}/hugepages/hugepages-{size_kib}kB"
            w.file(f"{pages}/nr_hugepages", str(total))
            w.file(f"{pages}/free_hugepages", str(free))
            w.file(f"{pages}/surplus_hugepages", "0")
        for cpu in cpus:
            w.link(f"{base}/cpu{cpu}", f"../../cpu/cpu{cpu}")


def _meminfo(node: int | None, kib: int) -> str:
    prefix = f"Node {node} " if node is not None else ""
    return "\n".join(
        f"{prefix}{key}:{value:>16} kB"
        for key, value in (("MemTotal", kib), ("MemFree", kib // 2), ("MemUsed", kib - kib // 2))
    )


def _write_pci(w: _Writer, spec: TreeSpec) -> None:
    for dev in spec.devices:
        real = f"sys/devices/pci0000:00/{dev.address}"
        w.file(f"{real}/vendor", dev.vendor)
        w.file(f"{real}/device", dev.device)
        w.file(f"{real}/class", dev.class_id)
        w.file(f"{real}/numa_node", str(dev.numa if dev.numa is not None else -1))
        local = spec.node_cpus(dev.numa) if dev.numa is not None else spec.online_ids()
        w.file(f"{real}/local_cpulist", format_cpu_list(local))
        if dev.driver is not None:
            w.link(f"{real}/driver", f"../../../bus/pci/drivers/{dev.driver}")
            (w.root / "sys/bus/pci/drivers" / dev.driver).mkdir(parents=True, exist_ok=True)
        w.link(f"sys/bus/pci/devices/{dev.address}", f"../../../devices/pci0000:00/{dev.address}")
