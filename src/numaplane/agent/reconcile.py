"""What the agent decides without doing it: the plan for a manifest scan, and each container's
limits.

``plan`` compares the pods the manifests describe with the pods the node runs and the pods it
rejected, and says which to stop and which to admit (a changed manifest is both). ``limits_of``
turns a container's placement into the cgroup limits the kubelet would give it:

- CPUs: the container's exclusive CPUs under the static policy; otherwise the CPU manager's
  default (shared) set, which holds the reserved CPUs unless ``strict-cpu-reservation``;
  every online CPU when the CPU manager keeps no set (policy ``none``);
- memory nodes: the memory manager's NUMA nodes for the container, else no constraint;
- ``memory.max``: the memory limit;
- CPU quota: from the CPU limit, for containers on the shared pool only (the kubelet drops the
  quota of containers with exclusive CPUs under the static policy); ``limit * period / 1000``
  millicores, at least 1 ms, as ``MilliCPUToQuota``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from numaplane.agent.cgroups import ContainerLimits
from numaplane.agent.images import ERR_IMAGE_PULL, ImageTable, pull_error
from numaplane.agent.runtime import ContainerSpec
from numaplane.api.pod import Pod
from numaplane.cpuset import CPUSet
from numaplane.node.admission import ContainerPlacement

#: The CFS period the kubelet uses (100 ms).
CPU_PERIOD_US = 100_000

#: The smallest quota the kernel accepts (upstream ``MinQuotaPeriod``, 1 ms).
MIN_QUOTA_US = 1_000


@dataclass(frozen=True)
class Plan:
    """What one scan asks for: pods to stop (and release), then pods to admit, in order."""

    stop: tuple[str, ...] = ()
    admit: tuple[Pod, ...] = ()

    @property
    def empty(self) -> bool:
        """Whether nothing changes."""
        return not self.stop and not self.admit


def plan(
    desired: Mapping[str, Pod],
    running: Mapping[str, Pod],
    rejected: Mapping[str, Pod],
) -> Plan:
    """Stop pods whose manifest is gone or changed; admit new and changed pods.

    A rejected pod is admitted again only when its manifest changed (``rejected`` holds the
    pod as it was when rejected). Order follows ``desired`` (the manifests' order) for
    admissions and ``running`` (admission order) for stops.
    """
    stop = tuple(uid for uid, pod in running.items() if desired.get(uid) != pod)
    admit: list[Pod] = []
    for uid, pod in desired.items():
        if uid in running and uid not in stop:
            continue
        if rejected.get(uid) == pod:
            continue
        admit.append(pod)
    return Plan(stop, tuple(admit))


def cpu_quota_us(milli_cpu: int, period_us: int = CPU_PERIOD_US) -> int | None:
    """The CFS quota for a CPU limit in millicores; ``None`` for no limit."""
    if milli_cpu <= 0:
        return None
    return max(milli_cpu * period_us // 1000, MIN_QUOTA_US)


def limits_of(
    pod: Pod,
    placement: ContainerPlacement,
    shared_pool: CPUSet,
    all_cpus: CPUSet,
) -> ContainerLimits:
    """The cgroup limits of one container of an admitted pod."""
    container = pod.container(placement.name)
    exclusive = bool(placement.exclusive_cpus)
    cpus = placement.exclusive_cpus if exclusive else (shared_pool or all_cpus)
    memory_limit = container.limits_of("memory")
    mems = CPUSet(placement.memory_numa_nodes) if placement.memory_numa_nodes is not None else None
    return ContainerLimits(
        cpus=cpus,
        mems=mems,
        memory_max=memory_limit.value() if not memory_limit.is_zero() else None,
        cpu_quota_us=None if exclusive else cpu_quota_us(container.limits_of("cpu").milli_value()),
        cpu_period_us=CPU_PERIOD_US,
    )


def container_specs(pod: Pod) -> tuple[ContainerSpec, ...]:
    """The runtime's view of the pod's containers: init containers first, in order."""
    init_names = {c.name for c in pod.init_containers}
    return tuple(
        ContainerSpec(
            name=c.name,
            command=c.command,
            args=c.args,
            env=c.env,
            working_dir=c.working_dir,
            init=c.name in init_names,
            restartable=c.is_restartable,
        )
        for c in pod.all_containers()
    )


def runnable_specs(
    pod: Pod, images: ImageTable
) -> tuple[tuple[ContainerSpec, ...], dict[str, tuple[str, str]]]:
    """The containers' specs with ``images`` applied (a container without a command runs what
    its image maps to), and the containers whose image is unknown, by name, with their
    waiting reason and message (``ErrImagePull``)."""
    specs: list[ContainerSpec] = []
    waiting: dict[str, tuple[str, str]] = {}
    for spec, container in zip(container_specs(pod), pod.all_containers(), strict=True):
        run = images.argv(container.image, spec.command, spec.args)
        if run is None:
            waiting[spec.name] = (ERR_IMAGE_PULL, pull_error(container.image))
            continue
        specs.append(dataclasses.replace(spec, command=run[0], args=run[1]))
    return tuple(specs), waiting
