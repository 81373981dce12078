"""Build small fake sysfs trees for tests."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path


def write_tree(root: Path, files: Mapping[str, str], links: Mapping[str, str] = {}) -> Path:
    """Write ``files`` (path -> text) and ``links`` (path -> target) under ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    for rel, target in links.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path)
    return root


def cpu_files(
    cpus: Iterable[tuple[int, int, int]], *, l3: Mapping[int, int] | None = None
) -> dict[str, str]:
    """Topology files for ``(cpu, core_id, package)`` triples (and optional L3 ids)."""
    out: dict[str, str] = {}
    for cpu, core, package in cpus:
        base = f"sys/devices/system/cpu/cpu{cpu}"
        out[f"{base}/topology/core_id"] = str(core)
        out[f"{base}/topology/physical_package_id"] = str(package)
        if l3 is not None and cpu in l3:
            out[f"{base}/cache/index3/level"] = "3"
            out[f"{base}/cache/index3/type"] = "Unified"
            out[f"{base}/cache/index3/id"] = str(l3[cpu])
    return out


def node_files(node: int, cpulist: str, mem_kib: int, distance: str) -> dict[str, str]:
    """One NUMA node directory."""
    base = f"sys/devices/system/node/node{node}"
    return {
        f"{base}/cpulist": cpulist,
        f"{base}/meminfo": f"Node {node} MemTotal:       {mem_kib} kB\nNode {node} MemFree: 1 kB",
        f"{base}/distance": distance,
    }
