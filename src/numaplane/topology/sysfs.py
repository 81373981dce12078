"""Read a machine from a Linux sysfs/procfs tree, seeing what the kubelet (through cAdvisor) sees.

``read_sysfs(root)`` takes the root of a filesystem holding ``sys/`` (and optionally ``proc/``):
``/`` for this host, or an unpacked ``hwloc-gather-topology`` capture. Everything is read
through the kernel's documented interfaces under that root, never from absolute paths.

Where the kubelet's view differs from the hardware, numaplane keeps the kubelet's view:

- A CPU is visible only while online and listed by some ``node*/cpulist`` (cAdvisor walks the
  node directories); a CPU listed by several nodes (broken firmware) ends in the last node in
  directory-name order, because the kubelet's ``Discover`` overwrites earlier entries.
- Without any ``node*`` directory (kernels built without NUMA), cAdvisor reports one node per
  physical package, with the package id as the node id; numaplane does the same.
- The uncore cache is the CPU's cache of level 3 or more (the kubelet ignores lower levels);
  its id is the kernel's ``id`` or, where absent, the lowest CPU sharing it; with no such cache
  the socket id stands in, as in the kubelet.

Every file is read through ``capture_io``: bounded per file and in all, CPU ids bounded.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from numaplane.topology.capture_io import (
    check_cpu_id,
    cpu_file,
    entries,
    parse_cpu_mask,
    read_budget,
    read_cpu_list,
    read_int,
    read_text,
)
from numaplane.topology.cpuset import CPUSet
from numaplane.topology.errors import CaptureLimitError, SysfsError
from numaplane.topology.model import CPU, HugePages, Machine, NUMANode, PCIDevice

__all__ = ["parse_cpu_mask", "read_pci_devices", "read_sysfs"]

# ASCII digits, and few enough that int() takes them (a longer name is no kernel's).
_CPU_DIR = re.compile(r"cpu([0-9]{1,9})")
_NODE_DIR = re.compile(r"node([0-9]{1,9})")
_INDEX_DIR = re.compile(r"index([0-9]{1,9})")
_HUGEPAGES_DIR = re.compile(r"hugepages-([0-9]{1,18})kB")
_VIRTFN = re.compile(r"virtfn([0-9]{1,9})")
_MEMTOTAL = re.compile(r"MemTotal:\s*([0-9]{1,18})\s*kB")
_UNCORE_MIN_LEVEL = 3


def read_sysfs(root: Path, *, name: str | None = None, source: str | None = None) -> Machine:
    """Discover the machine whose ``sys/`` (and ``proc/``) lie under ``root``.

    Raises ``SysfsError`` when ``root`` has no ``sys/devices/system/cpu`` or no usable CPU, and
    ``CaptureLimitError`` (naming the file inside the capture) when a limit of ``capture_io``
    is hit.
    """
    label = source if source is not None else str(root)
    try:
        with read_budget():
            return _read_machine(root, name, label)
    except CaptureLimitError as err:
        raise CaptureLimitError(label, f"{_inside_name(root, err.source)}: {err.reason}") from None


def _inside_name(root: Path, path: str) -> str:
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return path


def _read_machine(root: Path, name: str | None, label: str) -> Machine:
    cpu_root = root / "sys" / "devices" / "system" / "cpu"
    if not cpu_root.is_dir():
        raise SysfsError(label, "not a sysfs root (no sys/devices/system/cpu)")
    raw = _read_cpus(cpu_root)
    if not any(c.online for c in raw):
        raise SysfsError(label, "no online CPU with topology information")
    node_root = root / "sys" / "devices" / "system" / "node"
    numa_of, nodes = _read_nodes(root, node_root, raw)
    cpus = _finish_cpus(raw, numa_of)
    by_node: dict[int, list[int]] = {n.id: [] for n in nodes}
    for cpu in cpus:
        if cpu.online and cpu.numa in by_node:
            by_node[cpu.numa].append(cpu.id)
    numa_nodes = tuple(
        NUMANode(n.id, CPUSet(by_node[n.id]), n.memory_bytes, n.hugepages, n.distances)
        for n in nodes
    )
    return Machine(
        name=name if name is not None else (root.name or "localhost"),
        cpus=cpus,
        numa_nodes=numa_nodes,
        devices=read_pci_devices(root),
        source=label,
    )


# -- CPUs -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _RawCPU:
    id: int
    online: bool
    core: int | None
    socket: int | None
    die: int
    uncore: int | None
    node_link: int | None


def _read_cpus(cpu_root: Path) -> list[_RawCPU]:
    ids = sorted(
        int(m.group(1))
        for entry in entries(cpu_root)
        if (m := _CPU_DIR.fullmatch(entry.name)) and entry.is_dir()
    )
    if ids:
        check_cpu_id(ids[-1], str(cpu_root / f"cpu{ids[-1]}"))
    online_list = read_cpu_list(cpu_root / "online")
    out: list[_RawCPU] = []
    for cpu_id in ids:
        cpu_dir = cpu_root / f"cpu{cpu_id}"
        if online_list is not None:
            online = cpu_id in online_list
        else:
            # Old kernels lack the global list; a CPU without an ``online`` file (often cpu0)
            # cannot be taken offline, so it is online.
            online = read_text(cpu_dir / "online") != "0"
        topo = cpu_dir / "topology"
        core = read_int(topo / "core_id")
        socket = read_int(topo / "physical_package_id")
        # cAdvisor skips an online CPU whose core or package id cannot be read.
        if online and (core is None or socket is None):
            online = False
        out.append(
            _RawCPU(
                id=cpu_id,
                online=online,
                core=core,
                socket=socket,
                die=read_int(topo / "die_id") or 0,
                uncore=_uncore_cache_id(cpu_dir / "cache"),
                node_link=_node_link(cpu_dir),
            )
        )
    return out


def _uncore_cache_id(cache_dir: Path) -> int | None:
    best: tuple[int, int] | None = None
    for entry in entries(cache_dir):
        if not _INDEX_DIR.fullmatch(entry.name):
            continue
        level = read_int(entry / "level")
        if level is None or level < _UNCORE_MIN_LEVEL or read_text(entry / "type") == "Instruction":
            continue
        cache_id = read_int(entry / "id")
        if cache_id is None:
            shared = cpu_file(entry, "shared_cpu_list", "shared_cpu_map")
            if not shared:
                continue
            cache_id = shared.min()
        if best is None or level > best[0]:
            best = (level, cache_id)
    return None if best is None else best[1]


def _node_link(cpu_dir: Path) -> int | None:
    for entry in entries(cpu_dir):
        if m := _NODE_DIR.fullmatch(entry.name):
            return int(m.group(1))
    return None


def _finish_cpus(raw: list[_RawCPU], numa_of: dict[int, int]) -> tuple[CPU, ...]:
    visible = CPUSet(c.id for c in raw if c.online and c.id in numa_of)
    # A physical core is what cAdvisor groups: the CPUs of one node with the same package and
    # core_id (not thread_siblings: on AMD Bulldozer those pair two cores of a compute unit).
    # Its id is the lowest of those CPUs, like the kubelet's getUniqueCoreID.
    groups: dict[tuple[int, int, int], list[int]] = {}
    for c in raw:
        if c.id in visible and c.core is not None and c.socket is not None:
            groups.setdefault((numa_of[c.id], c.socket, c.core), []).append(c.id)
    cpus: list[CPU] = []
    for c in raw:
        if c.id in visible and c.core is not None and c.socket is not None:
            threads = groups[(numa_of[c.id], c.socket, c.core)]
            cpus.append(
                CPU(
                    id=c.id,
                    core=c.core,
                    socket=c.socket,
                    numa=numa_of[c.id],
                    die=c.die,
                    uncore_cache=c.uncore if c.uncore is not None else c.socket,
                    online=True,
                    physical_core=min(threads),
                )
            )
        else:
            # Offline (or invisible to the kubelet): keep what the kernel still says, -1 when
            # it says nothing.
            numa = numa_of.get(c.id, c.node_link if c.node_link is not None else -1)
            cpus.append(
                CPU(
                    id=c.id,
                    core=c.core if c.core is not None else -1,
                    socket=c.socket if c.socket is not None else -1,
                    numa=numa,
                    die=c.die,
                    uncore_cache=c.uncore if c.uncore is not None else 0,
                    online=False,
                )
            )
    return tuple(cpus)


# -- NUMA nodes -----------------------------------------------------------------------------


def _read_nodes(
    root: Path, node_root: Path, raw: list[_RawCPU]
) -> tuple[dict[int, int], list[NUMANode]]:
    node_dirs = [
        (int(m.group(1)), entry)
        for entry in sorted(entries(node_root), key=lambda e: e.name)
        if (m := _NODE_DIR.fullmatch(entry.name)) and entry.is_dir()
    ]
    usable = {c.id for c in raw if c.online}
    numa_of: dict[int, int] = {}
    for node_id, node_dir in node_dirs:  # directory-name order, as Go's filepath.Glob
        members = cpu_file(node_dir, "cpulist", "cpumap")
        if members is None:
            members = CPUSet(
                int(m.group(1)) for e in entries(node_dir) if (m := _CPU_DIR.fullmatch(e.name))
            )
        for cpu_id in members:
            numa_of[cpu_id] = node_id
    if not usable & set(numa_of):
        return _nodes_per_package(root, raw)
    ids = sorted(node_id for node_id, _ in node_dirs)
    orders = _distance_orders(node_root, ids)
    nodes = [
        NUMANode(
            id=node_id,
            cpus=CPUSet(),
            memory_bytes=_node_memory(node_dir / "meminfo"),
            hugepages=_hugepages(node_dir / "hugepages"),
            distances=_distances(node_dir / "distance", orders),
        )
        for node_id, node_dir in node_dirs
    ]
    return numa_of, nodes


def _nodes_per_package(root: Path, raw: list[_RawCPU]) -> tuple[dict[int, int], list[NUMANode]]:
    numa_of = {c.id: c.socket for c in raw if c.online and c.socket is not None}
    packages = sorted(set(numa_of.values()))
    single = len(packages) == 1
    # cAdvisor has no per-node memory here; a single node plainly holds all of it.
    memory = _node_memory(root / "proc" / "meminfo") if single else 0
    hugepages = _hugepages(root / "sys" / "kernel" / "mm" / "hugepages") if single else ()
    nodes = [NUMANode(p, CPUSet(), memory, hugepages) for p in packages]
    return numa_of, nodes


def _distance_orders(node_root: Path, ids: list[int]) -> list[list[int]]:
    # The kernel prints one distance per online node in ascending id order; hand-edited
    # captures may list the possible nodes instead. Node lists use the CPU-list syntax.
    orders = [read_cpu_list(node_root / f) for f in ("online", "possible")]
    return [o.to_list() for o in orders if o is not None] + [ids]


def _distances(path: Path, orders: list[list[int]]) -> tuple[tuple[int, int], ...]:
    text = read_text(path)
    if text is None:
        return ()
    try:
        row = [int(v) for v in text.split()]
    except ValueError:
        return ()
    for candidate in orders:
        if len(candidate) == len(row):
            return tuple(zip(candidate, row, strict=True))
    return ()


def _node_memory(path: Path) -> int:
    text = read_text(path)
    if text is None:
        return 0
    m = _MEMTOTAL.search(text)
    return int(m.group(1)) * 1024 if m else 0


def _hugepages(path: Path) -> tuple[HugePages, ...]:
    found: list[HugePages] = []
    for entry in entries(path):
        if m := _HUGEPAGES_DIR.fullmatch(entry.name):
            total = read_int(entry / "nr_hugepages") or 0
            free = read_int(entry / "free_hugepages")
            found.append(HugePages(int(m.group(1)), total, total if free is None else free))
    return tuple(sorted(found, key=lambda h: h.size_kib))


# -- PCI devices ----------------------------------------------------------------------------


def read_pci_devices(root: Path) -> tuple[PCIDevice, ...]:
    """PCI functions under ``root/sys/bus/pci/devices`` with their NUMA locality.

    Captured trees may hold broken or absolute links: an absolute link is taken relative to
    ``root``, and nothing outside ``root`` is ever read.
    """
    bus = root / "sys" / "bus" / "pci" / "devices"
    devices: list[PCIDevice] = []
    base = root.resolve()
    for entry in sorted(entries(bus), key=lambda e: e.name):
        d = _inside(base, entry)
        numa = read_int(d / "numa_node") if d else None
        devices.append(
            PCIDevice(
                address=entry.name,
                vendor=(read_text(d / "vendor") if d else None) or "0x0000",
                device=(read_text(d / "device") if d else None) or "0x0000",
                class_id=(read_text(d / "class") if d else None) or "0x000000",
                driver=_link_name(d / "driver") if d else None,
                numa=numa if numa is not None and numa >= 0 else None,
                physfn=_link_name(d / "physfn") if d else None,
                virtfns=_virtfns(d) if d else (),
            )
        )
    return tuple(devices)


def _inside(base: Path, path: Path) -> Path | None:
    """``path`` with links resolved, or ``None`` when it leaves ``base`` or does not exist."""
    try:
        if path.is_symlink():
            target = os.readlink(path)
            path = base / target.lstrip("/") if target.startswith("/") else path.parent / target
        resolved = path.resolve()
    except (OSError, RuntimeError):
        return None
    if not resolved.is_relative_to(base) or not resolved.is_dir():
        return None
    return resolved


def _link_name(path: Path) -> str | None:
    try:
        return os.path.basename(os.readlink(path).rstrip("/")) or None
    except OSError:
        return None


def _virtfns(device_dir: Path) -> tuple[str, ...]:
    found: list[tuple[int, str]] = []
    for entry in entries(device_dir):
        if (m := _VIRTFN.fullmatch(entry.name)) and (name := _link_name(entry)):
            found.append((int(m.group(1)), name))
    return tuple(name for _, name in sorted(found))
