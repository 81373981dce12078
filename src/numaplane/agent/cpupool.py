"""Keeping every container's cgroup on the CPUs the CPU manager gives it now.

A container with exclusive CPUs keeps them; every other container runs on the shared pool, which
shrinks and grows with each admission and release of an exclusive container (upstream's
``reconcileState``). ``CPUWriter`` remembers what it last wrote per container: the pass after
an admission or release touches only the containers whose CPUs changed, and the periodic pass
(every ``cpuManagerReconcilePeriod``, ``force``) reads each cgroup back and fixes what drifted.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from numaplane.agent.cgroups import CgroupDriver
from numaplane.api.pod import Pod
from numaplane.cpuset import CPUSet
from numaplane.errors import NumaplaneError
from numaplane.node.admission import Node

_log = logging.getLogger(__name__)

CPUTarget = tuple[str, str, CPUSet]
"""(pod uid, container name, the CPUs it should run on)."""


def cpu_targets(node: Node, pods: Mapping[str, Pod], all_cpus: CPUSet) -> list[CPUTarget]:
    """Where each container of ``pods`` should run: its exclusive CPUs, else the shared pool
    (every online CPU when the CPU manager keeps none). Call under the node's lock."""
    shared = node.cpu_manager.shared_pool() or all_cpus
    targets: list[CPUTarget] = []
    for uid, pod in pods.items():
        for container in pod.all_containers():
            exclusive = node.cpu_manager.exclusive_cpus(uid, container.name)
            targets.append((uid, container.name, exclusive or shared))
    return targets


class CPUWriter:
    """Writes containers' CPUs through a cgroup driver, remembering what it wrote."""

    def __init__(self, driver: CgroupDriver) -> None:
        self._driver = driver
        self._applied: dict[tuple[str, str], CPUSet] = {}

    def applied(self, pod_uid: str, container: str, cpus: CPUSet) -> None:
        """Note CPUs written by other means (the container's cgroup set-up)."""
        self._applied[(pod_uid, container)] = cpus

    def forget(self, pod_uid: str) -> None:
        """Drop what was written for a released pod."""
        for key in [k for k in self._applied if k[0] == pod_uid]:
            del self._applied[key]

    def write(self, targets: Iterable[CPUTarget], *, force: bool = False) -> None:
        """Bring each container to its CPUs; a failure is logged and retried next pass."""
        for uid, name, want in targets:
            applied = self._applied.get((uid, name))
            try:
                if force:
                    current = self._driver.cpus_of(uid, name)
                    if current is not None and current == want and applied == want:
                        continue
                elif applied == want:
                    continue
                self._driver.update_cpus(uid, name, want)
                self._applied[(uid, name)] = want
            except (NumaplaneError, OSError) as err:
                _log.warning("cannot set the CPUs of %s/%s to %s: %s", uid, name, want, err)
