"""Test helpers for the captured machines in ``../shared/topologies``.

``machine_fixture(name)`` loads a capture (``linux/NAME.tar.bz2``) or export (``xml/NAME.xml``);
``hwloc_reference(name)`` reads hwloc's own reading of a capture (``linux/NAME.console`` or
``linux/NAME.xml``) into a ``Reference`` with a parser independent of numaplane's readers, so
tests can compare the two.
"""

from __future__ import annotations

import functools
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from numaplane.topology.discover import load_path
from numaplane.topology.model import Machine

_ENV = "NUMAPLANE_SHARED_TOPOLOGIES"


def shared_topologies_dir() -> Path | None:
    """``$NUMAPLANE_SHARED_TOPOLOGIES``, else ``shared/topologies`` beside the repository.

    ``None`` when the directory does not exist (a fresh clone has none): the tests that need it
    form the ``shared_captures`` group, skipped as one.
    """
    if env := os.environ.get(_ENV):
        return Path(env) if Path(env).is_dir() else None
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "topologies"
        if candidate.is_dir():
            return candidate
    return None


def shared_kueue_dir() -> Path | None:
    """``$NUMAPLANE_SHARED_KUEUE``, else ``shared/kueue`` beside the repository (upstream's Kueue
    CRDs and examples), else ``None``: the tests that need it form the ``shared_kueue`` group."""
    if env := os.environ.get("NUMAPLANE_SHARED_KUEUE"):
        return Path(env) if (Path(env) / "crds").is_dir() else None
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "kueue"
        if (candidate / "crds").is_dir():
            return candidate
    return None


def linux_fixture_names() -> list[str]:
    """Names of the gathered captures (``linux/NAME.tar.bz2``), sorted."""
    base = shared_topologies_dir()
    if base is None:
        return []
    return sorted(p.name.removesuffix(".tar.bz2") for p in (base / "linux").glob("*.tar.bz2"))


def xml_fixture_names() -> list[str]:
    """Names of the hwloc XML exports (``xml/NAME.xml``), sorted."""
    base = shared_topologies_dir()
    if base is None:
        return []
    return sorted(p.stem for p in (base / "xml").glob("*.xml"))


def fixture_path(name: str) -> Path:
    """The capture or export named ``name`` (``FileNotFoundError`` if absent)."""
    base = shared_topologies_dir()
    if base is None:
        raise FileNotFoundError("shared topologies directory not found")
    for candidate in (base / "linux" / f"{name}.tar.bz2", base / "xml" / f"{name}.xml"):
        if candidate.exists():
            return candidate
    raise FileNotFoundError(name)


@functools.cache
def machine_fixture(name: str) -> Machine:
    """Load a shared capture or export with numaplane's own discovery (cached: immutable)."""
    return load_path(fixture_path(name))


# -- hwloc's reading, parsed independently -----------------------------------------------------


@dataclass
class Reference:
    """What hwloc reports for a machine (online PUs only)."""

    packages: set[int] = field(default_factory=set)
    pus: set[int] = field(default_factory=set)
    cores: set[frozenset[int]] = field(default_factory=set)
    numa_pus: dict[int, frozenset[int]] = field(default_factory=dict)
    numa_memory: dict[int, int] = field(default_factory=dict)
    pci_numa: dict[str, int | None] = field(default_factory=dict)
    memory_exact: bool = True  # False: console sizes are rounded by lstopo


def hwloc_reference(name: str) -> Reference:
    """hwloc's reading stored beside capture ``name`` (``.console`` preferred, else ``.xml``)."""
    base = shared_topologies_dir()
    if base is None:
        raise FileNotFoundError("shared topologies directory not found")
    console = base / "linux" / f"{name}.console"
    if console.exists():
        return parse_console(console.read_text(encoding="utf-8"))
    return parse_reference_xml((base / "linux" / f"{name}.xml").read_text(encoding="utf-8"))


_LINE = re.compile(r"^(?P<indent> *)(?P<type>[A-Za-z0-9]+) (?:L#\d+ )?\((?P<attrs>.*)\)\s*$")
_UNITS = {"KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}


@dataclass
class _Obj:
    type: str
    attrs: str
    indent: int
    children: list[_Obj] = field(default_factory=list)

    def os_index(self) -> int | None:
        m = re.search(r"(?:^|\s)P#(\d+)", self.attrs)
        return int(m.group(1)) if m else None

    def pus(self) -> set[int]:
        found: set[int] = set()
        if self.type == "PU" and (i := self.os_index()) is not None:
            found.add(i)
        for child in self.children:
            found |= child.pus()
        return found


def parse_console(text: str) -> Reference:
    """Parse ``lstopo --of console`` output (the tree part) into a ``Reference``."""
    root = _Obj("root", "", -1)
    stack = [root]
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m or line.startswith(("depth", "Special", " depth")):
            continue
        obj = _Obj(m.group("type"), m.group("attrs"), len(m.group("indent")))
        while stack[-1].indent >= obj.indent:
            stack.pop()
        stack[-1].children.append(obj)
        stack.append(obj)
    ref = Reference(memory_exact=False)
    pending: dict[str, set[int]] = {}
    _collect(root, ref, [root], pending)
    for busid, local in pending.items():
        nodes = [n for n, pus in ref.numa_pus.items() if pus & local]
        ref.pci_numa[busid] = nodes[0] if len(nodes) == 1 else None
    return ref


_IO = ("HostBridge", "PCIBridge", "PCI", "Bridge", "Misc")


def _collect(
    obj: _Obj, ref: Reference, ancestors: list[_Obj], pending: dict[str, set[int]]
) -> None:
    parent = ancestors[-1]
    if obj.type == "Package" and (i := obj.os_index()) is not None:
        ref.packages.add(i)
    elif obj.type == "PU" and (i := obj.os_index()) is not None:
        ref.pus.add(i)
    elif obj.type == "Core":
        ref.cores.add(frozenset(obj.pus()))
    elif obj.type == "NUMANode" and (i := obj.os_index()) is not None:
        # A memory child serves the CPUs of the object it hangs from.
        ref.numa_pus[i] = frozenset(parent.pus())
        m = re.search(r"local=(\d+)([KMGT])iB", obj.attrs)
        ref.numa_memory[i] = int(m.group(1)) * _UNITS[m.group(2) + "B"] if m else 0
    elif obj.type == "PCI":
        m = re.search(r"busid=([0-9a-f:.]+)", obj.attrs)
        normal = next(a for a in reversed(ancestors) if a.type not in _IO)
        if m:
            pending[m.group(1)] = normal.pus()
    for child in obj.children:
        _collect(child, ref, [*ancestors, obj], pending)


def console_size(n: int) -> str:
    """A byte count as lstopo prints it (rounded, in KiB under 10MiB, MiB under 10GiB, ...)."""
    for unit, shift in (("KiB", 10), ("MiB", 20), ("GiB", 30)):
        if n < 10 << (shift + 10):
            return f"{(n + (1 << (shift - 1))) >> shift}{unit}"
    return f"{(n + (1 << 39)) >> 40}TiB"


def parse_reference_xml(text: str) -> Reference:
    """Read an hwloc XML export with ElementTree directly into a ``Reference``."""
    root = ET.fromstring(text)
    ref = Reference()
    top = root.find("object")
    assert top is not None, "no top object"
    _walk_xml(top, ref, nodeset_of_parent=None)
    return ref


def xml_bitmap(text: str) -> set[int]:
    """hwloc's bitmap text (``0x00ff,,0x1``) as a set of indexes."""
    value = 0
    for word in text.split(","):
        value = (value << 32) | (int(word, 16) if word else 0)
    return {i for i in range(value.bit_length()) if value >> i & 1}


def _walk_xml(obj: ET.Element, ref: Reference, nodeset_of_parent: set[int] | None) -> None:
    kind = obj.get("type")
    cpuset = xml_bitmap(obj.get("cpuset", "0x0"))
    nodeset = nodeset_of_parent
    if kind not in ("Bridge", "PCIDev", "OSDev", "Misc") and obj.get("nodeset") is not None:
        nodeset = xml_bitmap(obj.get("nodeset", "0x0"))
    if kind == "Package":
        ref.packages.add(int(obj.get("os_index", "0")))
    elif kind == "PU":
        ref.pus.add(int(obj.get("os_index", "-1")))
    elif kind == "Core":
        ref.cores.add(frozenset(cpuset))
    elif kind == "NUMANode":
        node = int(obj.get("os_index", "0"))
        ref.numa_pus[node] = frozenset(cpuset)
        ref.numa_memory[node] = int(obj.get("local_memory", "0"))
    elif kind == "PCIDev" and (busid := obj.get("pci_busid")):
        ref.pci_numa[busid] = min(nodeset) if nodeset and len(nodeset) == 1 else None
    for child in obj.findall("object"):
        _walk_xml(child, ref, nodeset)
