"""Cgroup drivers: which one the host allows, and the interface they share.

``detect_driver`` prefers, in order:

1. **v2** when ``<root>/cgroup.controllers`` lists ``cpuset`` and ``<root>/<parent>`` can be
   created with ``cpuset`` (and ``memory``, ``cpu`` where available) enabled along the path;
2. **v1** when ``<root>/cpuset`` is a writable cpuset hierarchy; ``<root>/memory`` and
   ``<root>/cpu`` (or ``cpu,cpuacct``) are used when mounted;
3. **affinity** (``sched_setaffinity`` only) otherwise, with a warning: CPUs are confined but
   memory nodes and limits are not.

A driver it cannot use is reported through ``warn`` before falling back to the next. Layout and
per-driver rules are in ``cgroupfs`` and ``affinity``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from numaplane.agent.affinity import AffinityDriver
from numaplane.agent.cgroupapi import CgroupDriver, ContainerLimits, check_component
from numaplane.agent.cgroupfs import CONTROLLERS, FsDriver, Hierarchy, V1Driver, V2Driver
from numaplane.agent.errors import CgroupError
from numaplane.cpuset import CPUSet

__all__ = [
    "AffinityDriver",
    "CgroupDriver",
    "ContainerLimits",
    "FsDriver",
    "Hierarchy",
    "V1Driver",
    "V2Driver",
    "check_component",
    "detect_driver",
    "v1_hierarchies",
    "v2_hierarchy",
]


def v2_hierarchy(cgroup_root: Path) -> Hierarchy | None:
    """The unified hierarchy at ``cgroup_root`` if it offers ``cpuset``."""
    try:
        listed = (cgroup_root / "cgroup.controllers").read_text().split()
    except OSError:
        return None
    if "cpuset" not in listed:
        return None
    return Hierarchy(cgroup_root, frozenset(c for c in CONTROLLERS if c in listed))


def v1_hierarchies(cgroup_root: Path) -> list[Hierarchy] | None:
    """The v1 ``cpuset`` hierarchy under ``cgroup_root`` (if writable), then memory and cpu."""
    cpuset = cgroup_root / "cpuset"
    if not (cpuset / "cpuset.cpus").is_file() or not os.access(cpuset, os.W_OK):
        return None
    found = [Hierarchy(cpuset, frozenset({"cpuset"}))]
    if (cgroup_root / "memory" / "memory.limit_in_bytes").is_file():
        found.append(Hierarchy(cgroup_root / "memory", frozenset({"memory"})))
    for name in ("cpu", "cpu,cpuacct"):
        if (cgroup_root / name / "cpu.cfs_quota_us").is_file():
            found.append(Hierarchy(cgroup_root / name, frozenset({"cpu"})))
            break
    return found


def detect_driver(
    cgroup_root: Path = Path("/sys/fs/cgroup"),
    parent: str = "numaplane",
    *,
    all_cpus: CPUSet,
    all_mems: CPUSet,
    warn: Callable[[str], None],
) -> CgroupDriver:
    """The best driver the host allows, with ``<parent>`` created and prepared.

    ``all_cpus``/``all_mems`` are what ``<parent>`` and pod-level cgroups get, and what a
    container with ``mems=None`` gets.
    """
    candidates: list[FsDriver] = []
    unified = v2_hierarchy(cgroup_root)
    if unified is not None:
        candidates.append(V2Driver([unified], parent, all_cpus=all_cpus, all_mems=all_mems))
    legacy = v1_hierarchies(cgroup_root)
    if legacy is not None:
        candidates.append(V1Driver(legacy, parent, all_cpus=all_cpus, all_mems=all_mems))
    for driver in candidates:
        try:
            driver.prepare()
        except CgroupError as err:
            warn(f"cgroup {driver.name} at {cgroup_root} is not usable: {err}")
            continue
        lacking = [c for c in CONTROLLERS if c not in driver.controllers]
        if lacking:
            warn(
                f"cgroup {driver.name} at {cgroup_root} lacks the {', '.join(lacking)} "
                "controller(s): those limits are not enforced"
            )
        return driver
    warn(
        f"no writable cgroup cpuset hierarchy under {cgroup_root}: pinning processes with "
        "sched_setaffinity only; memory nodes, memory limits and CPU quotas are not enforced"
    )
    return AffinityDriver()
