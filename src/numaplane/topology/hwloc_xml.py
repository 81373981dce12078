"""Read a machine from an hwloc XML export (``lstopo foo.xml``): v2 format, and v1 where cheap.

hwloc names logical CPUs ``PU`` (``os_index`` = the kernel's CPU number), sockets ``Package``
(``Socket`` in v1), and places ``NUMANode`` objects as memory children of the object whose
CPUs they serve (v2) or in the main tree (v1). PCI functions sit under the normal object they
are local to.

Mapping choices where XML and the kernel's interfaces differ:

- hwloc gives a CPU-less memory node (HBM, MCDRAM) the cpuset of its locality; the kernel gives
  it no CPUs. A CPU inside several NUMA nodes' cpusets belongs to the lowest node id; the other
  nodes become CPU-less, as the kernel reports them.
- CPUs in the machine's ``complete_cpuset`` but not its ``cpuset`` are offline, and so are
  PUs in no NUMA node's cpuset (the kubelet cannot see a CPU outside every node).
- ``class_id`` of a PCI device is hwloc's 16-bit class (``0x0200``): XML drops the prog-if
  byte the kernel's 24-bit ``class`` file holds. Drivers and SR-IOV links are not exported.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, replace
from pathlib import Path

from numaplane.topology.capture_io import MAX_XML_BYTES, parse_cpu_mask
from numaplane.topology.cpuset import CPUSet
from numaplane.topology.errors import CaptureLimitError, HwlocXMLError
from numaplane.topology.model import CPU, HugePages, Machine, NUMANode, PCIDevice

_IO_TYPES = frozenset({"Bridge", "PCIDev", "OSDev", "Misc"})
_UNCORE_MIN_LEVEL = 3


def parse_hwloc_bitmap(text: str) -> CPUSet:
    """An hwloc bitmap (``0x000000ff,,0x00000001``: 32-bit words, most significant first).

    Raises ``ValueError`` for an infinite set (``0xf...f``) or anything malformed.
    """
    return parse_cpu_mask(text)


def read_hwloc_xml(path: Path, *, name: str | None = None, source: str | None = None) -> Machine:
    """Load the machine an hwloc XML export describes; ``HwlocXMLError`` when it is unusable."""
    label = source if source is not None else str(path)
    try:
        with open(path, "rb") as handle:
            text = handle.read(MAX_XML_BYTES + 1)
    except OSError as exc:
        raise HwlocXMLError(label, f"cannot read: {exc.strerror or exc}") from None
    if len(text) > MAX_XML_BYTES:
        raise CaptureLimitError(
            label, f"larger than the limit of {MAX_XML_BYTES >> 20} MiB for an hwloc XML export"
        )
    return parse_hwloc_xml(text, name=name or path.stem, source=label)


def parse_hwloc_xml(data: bytes | str, *, name: str, source: str) -> Machine:
    """Like ``read_hwloc_xml`` for XML text already in memory."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise HwlocXMLError(source, f"malformed XML: {exc}") from None
    if root.tag != "topology":
        raise HwlocXMLError(source, f"not an hwloc topology (root element <{root.tag}>)")
    top = root.find("object")
    if top is None:
        raise HwlocXMLError(source, "no <object> in the topology")
    walk = _Walk(source)
    try:
        walk.visit(top, _Context(), depth=0)
        distances = _distances(root, walk)
        if not walk.pus:
            raise HwlocXMLError(source, "no PU (logical CPU) objects")
        return walk.machine(top, distances, name=name, source=source)
    except ValueError as exc:
        raise HwlocXMLError(source, f"bad attribute value: {exc}") from None


@dataclass(frozen=True, slots=True)
class _Context:
    package: int | None = None
    die: int = 0
    core: int | None = None
    core_cpus: CPUSet | None = None
    uncore: tuple[int, int] | None = None  # (level, id) of the outermost cache of level >= 3
    nodeset: CPUSet | None = None  # NUMA nodes of the nearest normal object


@dataclass(frozen=True, slots=True)
class _PU:
    id: int
    package: int
    die: int
    core: int
    core_cpus: CPUSet
    uncore: int | None


@dataclass
class _Walk:
    source: str
    pus: list[_PU] = field(default_factory=list)
    nodes: dict[int, tuple[CPUSet, int, tuple[HugePages, ...]]] = field(default_factory=dict)
    devices: list[PCIDevice] = field(default_factory=list)
    by_gp: dict[str, int] = field(default_factory=dict)  # gp_index of NUMANodes -> os_index
    by_depth: dict[int, list[ET.Element]] = field(default_factory=dict)

    def visit(self, obj: ET.Element, ctx: _Context, depth: int) -> None:
        kind = obj.get("type", "")
        self.by_depth.setdefault(depth, []).append(obj)
        cpuset = _bitmap(obj.get("cpuset"))
        if kind not in _IO_TYPES and obj.get("nodeset") is not None:
            ctx = replace(ctx, nodeset=_bitmap(obj.get("nodeset")))
        if kind in ("Package", "Socket"):
            ctx = replace(ctx, package=_int(obj.get("os_index"), 0))
        elif kind == "Die":
            ctx = replace(ctx, die=_int(obj.get("os_index"), 0))
        elif kind == "Core":
            ctx = replace(ctx, core=_int(obj.get("os_index"), 0), core_cpus=cpuset)
        elif kind.endswith("Cache") or kind == "Cache":
            ctx = self._cache(obj, kind, cpuset, ctx)
        elif kind == "NUMANode":
            self._numa(obj, cpuset)
        elif kind == "PU":
            self._pu(obj, ctx)
        elif kind == "PCIDev":
            self._pci(obj, ctx)
        for child in obj.findall("object"):
            self.visit(child, ctx, depth + 1)

    def _cache(self, obj: ET.Element, kind: str, cpuset: CPUSet | None, ctx: _Context) -> _Context:
        level = _int(obj.get("depth"), 0)
        if kind[:1] == "L" and kind[1:2].isdigit():
            level = int(kind[1])
        if level < _UNCORE_MIN_LEVEL or obj.get("cache_type") == "2":  # 2: instruction cache
            return ctx
        if ctx.uncore is not None and ctx.uncore[0] >= level:
            return ctx
        os_index = obj.get("os_index")
        if os_index is not None:
            cache_id = int(os_index)
        elif cpuset:
            cache_id = cpuset.min()
        else:
            return ctx
        return replace(ctx, uncore=(level, cache_id))

    def _numa(self, obj: ET.Element, cpuset: CPUSet | None) -> None:
        node_id = _int(obj.get("os_index"), len(self.nodes))
        pages = tuple(
            sorted(
                (
                    HugePages(_int(p.get("size"), 0) // 1024, n, n)
                    for p in obj.findall("page_type")
                    if (n := _int(p.get("count"), 0)) and _int(p.get("size"), 0) > 4096
                ),
                key=lambda h: h.size_kib,
            )
        )
        self.nodes[node_id] = (cpuset or CPUSet(), _int(obj.get("local_memory"), 0), pages)
        if (gp := obj.get("gp_index")) is not None:
            self.by_gp[gp] = node_id

    def _pu(self, obj: ET.Element, ctx: _Context) -> None:
        cpu_id = _int(obj.get("os_index"), -1)
        if cpu_id < 0:
            raise HwlocXMLError(self.source, "a PU has no os_index")
        package = ctx.package if ctx.package is not None else 0
        self.pus.append(
            _PU(
                id=cpu_id,
                package=package,
                die=ctx.die,
                core=ctx.core if ctx.core is not None else cpu_id,
                core_cpus=ctx.core_cpus if ctx.core_cpus is not None else CPUSet([cpu_id]),
                uncore=ctx.uncore[1] if ctx.uncore is not None else None,
            )
        )

    def _pci(self, obj: ET.Element, ctx: _Context) -> None:
        busid = obj.get("pci_busid")
        if not busid:
            return
        parts = (obj.get("pci_type") or "").split()
        pci_class = parts[0] if parts else "0000"
        ids = parts[1].strip("[]").split(":") if len(parts) > 1 else ["0000", "0000"]
        names = [i.get("value") for i in obj.findall("info") if i.get("name") == "PCIDevice"]
        numa = ctx.nodeset.min() if ctx.nodeset is not None and len(ctx.nodeset) == 1 else None
        self.devices.append(
            PCIDevice(
                address=busid,
                vendor=f"0x{ids[0].lower()}",
                device=f"0x{ids[-1].lower()}",
                class_id=f"0x{pci_class.lower()}",
                numa=numa,
                name=names[0] if names else None,
            )
        )

    def machine(
        self, top: ET.Element, distances: dict[int, dict[int, int]], *, name: str, source: str
    ) -> Machine:
        numa_of: dict[int, int] = {}
        for node_id in sorted(self.nodes, reverse=True):  # lowest id wins
            for cpu_id in self.nodes[node_id][0]:
                numa_of[cpu_id] = node_id
        if not self.nodes:
            self.nodes[0] = (CPUSet(p.id for p in self.pus), 0, ())
            numa_of = {p.id: 0 for p in self.pus}
        # A PU in no NUMA node is invisible to the kubelet (as in sysfs): kept as offline.
        online = CPUSet(p.id for p in self.pus if p.id in numa_of)
        cpus = [
            CPU(
                id=p.id,
                core=p.core,
                socket=p.package,
                numa=numa_of.get(p.id, -1),
                die=p.die,
                uncore_cache=p.uncore if p.uncore is not None else p.package,
                online=p.id in online,
                physical_core=(p.core_cpus & online or CPUSet([p.id])).min(),
            )
            for p in self.pus
        ]
        complete = _bitmap(top.get("complete_cpuset")) or CPUSet()
        listed = CPUSet(p.id for p in self.pus)
        cpus.extend(CPU(c, -1, -1, numa_of.get(c, -1), online=False) for c in complete - listed)
        nodes = [
            NUMANode(
                id=node_id,
                cpus=CPUSet(c.id for c in cpus if c.online and c.numa == node_id),
                memory_bytes=memory,
                hugepages=pages,
                distances=tuple(sorted(distances.get(node_id, {}).items())),
            )
            for node_id, (_, memory, pages) in self.nodes.items()
        ]
        return Machine(name, tuple(cpus), tuple(nodes), tuple(self.devices), source)


def _distances(root: ET.Element, walk: _Walk) -> dict[int, dict[int, int]]:
    for dist in root.iter("distances2"):
        if dist.get("type") != "NUMANode":
            continue
        count = _int(dist.get("nbobjs"), 0)
        raw_ids = " ".join(e.text or "" for e in dist.findall("indexes")).split()
        values = [int(v) for e in dist.findall("u64values") for v in (e.text or "").split()]
        if dist.get("indexing") == "gp":
            ids = [walk.by_gp.get(i, -1) for i in raw_ids]
        else:
            ids = [int(i) for i in raw_ids]
        if len(ids) == count and len(values) == count * count:
            return {
                a: {b: values[i * count + j] for j, b in enumerate(ids)} for i, a in enumerate(ids)
            }
    return _distances_v1(root, walk)


def _distances_v1(root: ET.Element, walk: _Walk) -> dict[int, dict[int, int]]:
    for dist in root.iter("distances"):
        objs = walk.by_depth.get(_int(dist.get("relative_depth"), -1), [])
        if not objs or any(o.get("type") != "NUMANode" for o in objs):
            continue
        base = float(dist.get("latency_base") or 1)
        values = [float(e.get("value") or 0) for e in dist.findall("latency")]
        ids = [_int(o.get("os_index"), i) for i, o in enumerate(objs)]
        n = len(ids)
        if len(values) == n * n:
            return {
                a: {b: round(values[i * n + j] * base) for j, b in enumerate(ids)}
                for i, a in enumerate(ids)
            }
    return {}


def _bitmap(text: str | None) -> CPUSet | None:
    return None if text is None else parse_hwloc_bitmap(text)


def _int(text: str | None, default: int) -> int:
    return default if text is None else int(text)
