"""The fallback driver where no cpuset cgroup is writable: CPU affinity with ``sched_setaffinity``.

It confines CPUs only: memory nodes, memory limits and CPU quotas are not enforced (the agent
warns when it falls back to it). A process's children inherit its affinity, so pinning the
main process before it ``exec``s covers what it starts later; ``update_cpus`` re-pins every
thread of every attached process and of their descendants found in ``/proc``.

Without a kernel object to ask, the driver remembers what it attached as ``(pid, start_time)``
pairs; ``pids`` lists those still alive.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field

from numaplane.agent.cgroupapi import ContainerLimits, check_component
from numaplane.agent.errors import CgroupBusyError, CgroupError
from numaplane.agent.process import (
    descendants_of,
    process_alive,
    process_start_time,
    threads_of,
)
from numaplane.cpuset import CPUSet


@dataclass
class _Container:
    cpus: CPUSet
    attached: dict[int, int] = field(default_factory=dict)  # pid -> start time


class AffinityDriver:
    """Pins processes to their container's CPUs; keeps pods and containers in memory."""

    name = "affinity"

    def __init__(self) -> None:
        # pod uid -> container name -> state. No lock: ``attach`` also runs in a forked child,
        # where a lock some other thread held at fork time would never be released. Each
        # mutation below is a single dictionary operation, atomic under the GIL.
        self._pods: dict[str, dict[str, _Container]] = {}

    def ensure_pod(self, pod_uid: str) -> None:
        """Remember the pod."""
        self._pods.setdefault(check_component("pod uid", pod_uid), {})

    def ensure_container(self, pod_uid: str, container: str, limits: ContainerLimits) -> None:
        """Remember the container's CPUs (and re-pin its processes if it exists)."""
        check_component("container name", container)
        self.ensure_pod(pod_uid)
        existing = self._pods[pod_uid].get(container)
        if existing is None:
            self._pods[pod_uid][container] = _Container(limits.cpus)
        else:
            self.update_cpus(pod_uid, container, limits.cpus)

    def update_cpus(self, pod_uid: str, container: str, cpus: CPUSet) -> None:
        """Re-pin every thread of the container's processes and their descendants."""
        state = self._container(pod_uid, container)
        state.cpus = cpus
        alive = self.pids(pod_uid, container)
        for pid in sorted({*alive, *descendants_of(alive)}):
            for tid in threads_of(pid):
                # A thread may exit between the listing and the call.
                with contextlib.suppress(ProcessLookupError):
                    _pin(tid, cpus)

    def attach(self, pod_uid: str, container: str, pid: int) -> None:
        """Pin ``pid`` (in a child before ``exec``: itself) and remember it."""
        state = self._container(pod_uid, container)
        try:
            _pin(pid, state.cpus)
        except ProcessLookupError as err:
            raise CgroupError(f"no process {pid} to attach to {pod_uid}/{container}") from err
        start = process_start_time(pid)
        if start is not None:
            state.attached[pid] = start

    def pids(self, pod_uid: str, container: str) -> list[int]:
        """The attached processes that are still alive."""
        state = self._pods.get(pod_uid, {}).get(container)
        if state is None:
            return []
        return sorted(pid for pid, start in state.attached.items() if process_alive(pid, start))

    def remove_container(self, pod_uid: str, container: str) -> None:
        """Forget the container; refuses while an attached process lives."""
        if container not in self._pods.get(pod_uid, {}):
            return
        busy = self.pids(pod_uid, container)
        if busy:
            raise CgroupBusyError(f"affinity:{pod_uid}/{container}", busy)
        del self._pods[pod_uid][container]

    def remove_pod(self, pod_uid: str) -> None:
        """Forget the pod and its containers; refuses while an attached process lives."""
        containers = self._pods.get(pod_uid)
        if containers is None:
            return
        for name in containers:
            busy = self.pids(pod_uid, name)
            if busy:
                raise CgroupBusyError(f"affinity:{pod_uid}/{name}", busy)
        del self._pods[pod_uid]

    def cpus_of(self, pod_uid: str, container: str) -> CPUSet | None:
        """The CPUs the container's processes are pinned to; ``None`` if unknown."""
        state = self._pods.get(pod_uid, {}).get(container)
        return state.cpus if state is not None else None

    def _container(self, pod_uid: str, container: str) -> _Container:
        state = self._pods.get(pod_uid, {}).get(container)
        if state is None:
            raise CgroupError(f"unknown container {pod_uid}/{container} (ensure_container first)")
        return state


def _pin(pid: int, cpus: CPUSet) -> None:
    try:
        os.sched_setaffinity(pid, cpus.sorted())
    except PermissionError as err:
        raise CgroupError(f"cannot set the CPU affinity of {pid}: {err.strerror}") from err
    except OSError as err:
        if isinstance(err, ProcessLookupError):
            raise
        raise CgroupError(f"cannot pin {pid} to CPUs {cpus}: {err.strerror}") from err
