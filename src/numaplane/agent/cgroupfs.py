"""Cgroup drivers that write the kernel's cgroup file systems: v2 (unified) and v1.

Layout: ``<hierarchy>/<parent>/pod<uid>/<container>``; v2 has one hierarchy holding every
controller, v1 one hierarchy per controller (``cpuset``, and ``memory`` and ``cpu`` when
mounted). Pod-level cgroups get every CPU and memory node: containers are confined one by
one, as the kubelet leaves ``cpuset`` to the container runtime, and a pod-level set would make
every change of a container's CPUs a two-step dance (v1 requires a child's CPUs to be a subset
of its parent's).

Every level above a container is prepared before anything joins below it: v1 ``cpuset`` needs
``cpuset.cpus`` and ``cpuset.mems`` written on each level before a task may join; v2 needs the
controllers enabled in ``cgroup.subtree_control`` of each parent. Creation rolls back what it
made when a step fails, so no half-built directory is left behind.

File access goes through ``os`` calls only: ``attach`` runs in a forked child before ``exec``.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from numaplane.agent.cgroupapi import ContainerLimits, check_component
from numaplane.agent.errors import CgroupBusyError, CgroupError
from numaplane.cpuset import CPUSet, CPUSetParseError

#: The controllers the agent uses.
CONTROLLERS: tuple[str, ...] = ("cpuset", "memory", "cpu")

#: How long removal retries a cgroup the kernel still calls busy (exiting tasks linger briefly).
_RMDIR_RETRY_SECONDS = 1.0


@dataclass(frozen=True)
class Hierarchy:
    """A mounted cgroup hierarchy and which of ``CONTROLLERS`` it carries."""

    root: Path
    controllers: frozenset[str]


def write_file(path: Path, value: str) -> None:
    """Write ``value`` to a cgroup interface file; ``CgroupError`` naming the file on failure."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    except OSError as err:
        raise CgroupError(f"cannot open for writing: {err.strerror}", str(path)) from err
    try:
        os.write(fd, value.encode())
    except OSError as err:
        raise CgroupError(f"cannot write {value!r}: {err.strerror}", str(path)) from err
    finally:
        os.close(fd)


def read_file(path: Path) -> str | None:
    """The content of an interface file, ``None`` if it does not exist."""
    try:
        return path.read_text()
    except FileNotFoundError:
        return None
    except OSError as err:
        raise CgroupError(f"cannot read: {err.strerror}", str(path)) from err


def _procs(directory: Path) -> list[int]:
    text = read_file(directory / "cgroup.procs")
    return sorted({int(line) for line in (text or "").split()})


class FsDriver:
    """What v1 and v2 share: paths, creation with rollback, joining, removal."""

    name = "fs"

    def __init__(
        self,
        hierarchies: Sequence[Hierarchy],
        parent: str,
        *,
        all_cpus: CPUSet,
        all_mems: CPUSet,
    ) -> None:
        self.hierarchies = tuple(hierarchies)
        self.parent_parts = tuple(check_component("parent", p) for p in parent.split("/"))
        self.all_cpus = all_cpus
        self.all_mems = all_mems
        self._cpuset = next(h for h in self.hierarchies if "cpuset" in h.controllers)

    @property
    def controllers(self) -> frozenset[str]:
        """The controllers this driver can set."""
        return frozenset().union(*(h.controllers for h in self.hierarchies))

    def parent_dir(self, hierarchy: Hierarchy) -> Path:
        """``<hierarchy>/<parent>``."""
        return hierarchy.root.joinpath(*self.parent_parts)

    def pod_dir(self, hierarchy: Hierarchy, pod_uid: str) -> Path:
        """The pod's cgroup in ``hierarchy``."""
        return self.parent_dir(hierarchy) / f"pod{check_component('pod uid', pod_uid)}"

    def container_dir(self, hierarchy: Hierarchy, pod_uid: str, container: str) -> Path:
        """The container's cgroup in ``hierarchy``."""
        return self.pod_dir(hierarchy, pod_uid) / check_component("container name", container)

    # Levels ---------------------------------------------------------------------------------

    def prepare_level(self, hierarchy: Hierarchy, directory: Path) -> None:
        """Make ``directory`` ready to hold child cgroups (a driver's own rule)."""
        raise NotImplementedError

    def write_limits(self, hierarchy: Hierarchy, directory: Path, limits: ContainerLimits) -> None:
        """Write a container's limits into its cgroup in ``hierarchy``."""
        raise NotImplementedError

    def _make_levels(self, steps: Iterable[tuple[Hierarchy, Path]], created: list[Path]) -> None:
        for hierarchy, directory in steps:
            if not directory.is_dir():
                try:
                    directory.mkdir()
                except FileExistsError:
                    pass
                except OSError as err:
                    raise CgroupError(f"cannot create: {err.strerror}", str(directory)) from err
                else:
                    created.append(directory)
            self.prepare_level(hierarchy, directory)

    def _rollback(self, created: list[Path]) -> None:
        for directory in reversed(created):
            try:
                directory.rmdir()
            except OSError:
                # Best effort: the error being raised matters more than this one.
                continue

    def prepare(self) -> None:
        """Create ``<parent>`` in every hierarchy, preparing every level from the root down."""
        created: list[Path] = []
        try:
            for hierarchy in self.hierarchies:
                self.prepare_level(hierarchy, hierarchy.root)
                levels = [
                    hierarchy.root.joinpath(*self.parent_parts[: i + 1])
                    for i in range(len(self.parent_parts))
                ]
                self._make_levels(((hierarchy, d) for d in levels), created)
        except CgroupError:
            self._rollback(created)
            raise

    # CgroupDriver ---------------------------------------------------------------------------

    def ensure_pod(self, pod_uid: str) -> None:
        """Create the pod's cgroup in every hierarchy (every CPU and memory node)."""
        created: list[Path] = []
        try:
            self._make_levels(((h, self.pod_dir(h, pod_uid)) for h in self.hierarchies), created)
        except CgroupError:
            self._rollback(created)
            raise

    def ensure_container(self, pod_uid: str, container: str, limits: ContainerLimits) -> None:
        """Create the container's cgroup (and the pod's) and write ``limits``."""
        check_component("container name", container)  # before anything is created
        created: list[Path] = []
        try:
            self._make_levels(((h, self.pod_dir(h, pod_uid)) for h in self.hierarchies), created)
            for hierarchy in self.hierarchies:
                directory = self.container_dir(hierarchy, pod_uid, container)
                if not directory.is_dir():
                    try:
                        directory.mkdir()
                    except OSError as err:
                        raise CgroupError(f"cannot create: {err.strerror}", str(directory)) from err
                    created.append(directory)
                self.write_limits(hierarchy, directory, limits)
        except CgroupError:
            self._rollback(created)
            raise

    def update_cpus(self, pod_uid: str, container: str, cpus: CPUSet) -> None:
        """Rewrite the container's ``cpuset.cpus``."""
        directory = self._existing(pod_uid, container)
        write_file(directory / "cpuset.cpus", str(cpus))

    def attach(self, pod_uid: str, container: str, pid: int) -> None:
        """Move ``pid`` into the container's cgroup in every hierarchy."""
        for hierarchy in self.hierarchies:
            directory = self.container_dir(hierarchy, pod_uid, container)
            if not os.path.isdir(directory):
                raise CgroupError("no such cgroup (ensure_container first)", str(directory))
            write_file(directory / "cgroup.procs", str(pid))

    def pids(self, pod_uid: str, container: str) -> list[int]:
        """Processes in the container's cgroup in any hierarchy."""
        found: set[int] = set()
        for hierarchy in self.hierarchies:
            found.update(_procs(self.container_dir(hierarchy, pod_uid, container)))
        return sorted(found)

    def cpus_of(self, pod_uid: str, container: str) -> CPUSet | None:
        """The container's ``cpuset.cpus``; ``None`` without a cgroup."""
        path = self.container_dir(self._cpuset, pod_uid, container) / "cpuset.cpus"
        text = read_file(path)
        if text is None:
            return None
        try:
            return CPUSet.parse(text.strip())
        except CPUSetParseError as err:
            raise CgroupError(f"unreadable CPU list {text.strip()!r}", str(path)) from err

    def remove_container(self, pod_uid: str, container: str) -> None:
        """Remove the container's cgroup from every hierarchy; refuses while processes remain."""
        dirs = [self.container_dir(h, pod_uid, container) for h in self.hierarchies]
        self._remove(dirs)

    def remove_pod(self, pod_uid: str) -> None:
        """Remove the pod's cgroup and its containers'; refuses while processes remain."""
        pods = [self.pod_dir(h, pod_uid) for h in self.hierarchies]
        children = [c for p in pods if p.is_dir() for c in sorted(p.iterdir()) if c.is_dir()]
        self._remove([*children, *pods])

    def remove_parent(self) -> None:
        """Remove every pod's cgroup and then ``<parent>`` itself (refuses while in use)."""
        for hierarchy in self.hierarchies:
            parent = self.parent_dir(hierarchy)
            if parent.is_dir():
                for pod in sorted(parent.iterdir()):
                    if pod.is_dir() and pod.name.startswith("pod"):
                        self.remove_pod(pod.name.removeprefix("pod"))
        self._remove([self.parent_dir(h) for h in self.hierarchies])

    def _existing(self, pod_uid: str, container: str) -> Path:
        directory = self.container_dir(self._cpuset, pod_uid, container)
        if not directory.is_dir():
            raise CgroupError("no such cgroup", str(directory))
        return directory

    def _remove(self, dirs: Sequence[Path]) -> None:
        # Check everything first, so a refusal leaves the tree as it was.
        for directory in dirs:
            busy = _procs(directory)
            if busy:
                raise CgroupBusyError(str(directory), busy)
        for directory in dirs:
            self._rmdir(directory)

    def _rmdir(self, directory: Path) -> None:
        deadline = time.monotonic() + _RMDIR_RETRY_SECONDS
        while True:
            try:
                directory.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError as err:
                if err.errno != errno.EBUSY or time.monotonic() >= deadline:
                    busy = _procs(directory)
                    if busy:
                        raise CgroupBusyError(str(directory), busy) from err
                    raise CgroupError(f"cannot remove: {err.strerror}", str(directory)) from err
            time.sleep(0.02)


class V2Driver(FsDriver):
    """cgroup v2: one hierarchy; controllers enabled through ``cgroup.subtree_control``."""

    name = "v2"

    def prepare_level(self, hierarchy: Hierarchy, directory: Path) -> None:
        """Enable the agent's controllers for the children of ``directory``."""
        listed = read_file(directory / "cgroup.controllers")
        available = set(listed.split()) if listed is not None else set(hierarchy.controllers)
        wanted = [c for c in CONTROLLERS if c in hierarchy.controllers and c in available]
        enabled = set((read_file(directory / "cgroup.subtree_control") or "").split())
        missing = [c for c in wanted if c not in enabled]
        if missing:
            write_file(directory / "cgroup.subtree_control", " ".join(f"+{c}" for c in missing))

    def write_limits(self, hierarchy: Hierarchy, directory: Path, limits: ContainerLimits) -> None:
        """``cpuset.cpus``/``mems``, ``memory.max`` and ``cpu.max``."""
        write_file(directory / "cpuset.cpus", str(limits.cpus))
        mems = limits.mems if limits.mems is not None else self.all_mems
        write_file(directory / "cpuset.mems", str(mems))
        if "memory" in hierarchy.controllers:
            memory = str(limits.memory_max) if limits.memory_max is not None else "max"
            write_file(directory / "memory.max", memory)
        if "cpu" in hierarchy.controllers:
            quota = str(limits.cpu_quota_us) if limits.cpu_quota_us is not None else "max"
            write_file(directory / "cpu.max", f"{quota} {limits.cpu_period_us}")


class V1Driver(FsDriver):
    """cgroup v1: a hierarchy per controller; cpuset levels need CPUs and nodes before tasks."""

    name = "v1"

    def prepare_level(self, hierarchy: Hierarchy, directory: Path) -> None:
        """Give a cpuset level every CPU and memory node (the root already has them)."""
        if "cpuset" in hierarchy.controllers and directory != hierarchy.root:
            write_file(directory / "cpuset.cpus", str(self.all_cpus))
            write_file(directory / "cpuset.mems", str(self.all_mems))

    def write_limits(self, hierarchy: Hierarchy, directory: Path, limits: ContainerLimits) -> None:
        """The limits this hierarchy's controller carries."""
        if "cpuset" in hierarchy.controllers:
            write_file(directory / "cpuset.cpus", str(limits.cpus))
            mems = limits.mems if limits.mems is not None else self.all_mems
            write_file(directory / "cpuset.mems", str(mems))
        if "memory" in hierarchy.controllers:
            memory = str(limits.memory_max) if limits.memory_max is not None else "-1"
            write_file(directory / "memory.limit_in_bytes", memory)
        if "cpu" in hierarchy.controllers:
            # Lift the quota first: a new period is refused if the old quota no longer fits.
            write_file(directory / "cpu.cfs_quota_us", "-1")
            write_file(directory / "cpu.cfs_period_us", str(limits.cpu_period_us))
            if limits.cpu_quota_us is not None:
                write_file(directory / "cpu.cfs_quota_us", str(limits.cpu_quota_us))
