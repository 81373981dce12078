"""The static CPU policy as a Topology Manager hint provider, and its CPU counts.

A container (or, in pod scope, a pod) asks for exclusive CPUs only when the pod is Guaranteed
and the CPU request is a whole number. Hints name every NUMA-node combination that could hold
the request from the available (and reusable) CPUs, given as a rule (``cpu_hint_sets``); the
narrowest combinations that could hold it on an *empty* machine are preferred, so a preference
reflects capacity, not current load.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from numaplane.api.pod import Container, Pod, QOSClass
from numaplane.node.cpumanager.cpu_hint_sets import cpu_hint_set
from numaplane.node.cpumanager.state import StateReader
from numaplane.node.cpumanager.topology import CPUTopology
from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.topology.cpuset import CPUSet

CPU = "cpu"


def uses_pod_level_resources(pod: Pod) -> bool:
    """Whether the pod sets pod-level cpu or memory (``spec.resources``)."""
    res = pod.resources
    if res is None:
        return False
    return any(name in ("cpu", "memory") for name in (*res.requests, *res.limits))


def guaranteed_cpus(pod: Pod, container: Container) -> int:
    """Exclusive CPUs the container gets: its whole CPU request in a Guaranteed pod, else 0.

    Pods with pod-level resources stay on the shared pool: upstream's static policy skips them
    unless the (alpha) PodLevelResourceManagers gate is on, which numaplane does not model.
    """
    if pod.qos_class != QOSClass.GUARANTEED or uses_pod_level_resources(pod):
        return 0
    quantity = container.resources.requests.get(CPU)
    if quantity is None:
        return 0
    # "1500m" rounds up to 2 whole CPUs but is 1500 milli-CPUs: not integral, so shared.
    if quantity.value() * 1000 != quantity.milli_value():
        return 0
    return quantity.value()


def pod_guaranteed_cpus(pod: Pod) -> int:
    """Exclusive CPUs the whole pod needs at its peak (upstream ``podGuaranteedCPUs``).

    Sidecars (restartable init containers) keep running, so they add up with everything after
    them; a regular init container runs next to the sidecars started before it only.
    """
    init_peak = 0
    sidecars = 0
    for container in pod.init_containers:
        if CPU not in container.resources.requests:
            continue
        cpus = guaranteed_cpus(pod, container)
        if container.is_restartable:
            sidecars += cpus
        else:
            init_peak = max(init_peak, sidecars + cpus)
    apps = sum(guaranteed_cpus(pod, c) for c in pod.containers if CPU in c.resources.requests)
    return max(init_peak, apps + sidecars)


def container_topology_hints(
    topology: CPUTopology,
    state: StateReader,
    pod: Pod,
    container: Container,
    available: CPUSet,
    reusable: CPUSet,
    align_by_socket: bool = False,
) -> ProviderHints:
    """Container-scope hints (upstream ``GetTopologyHints``) given the policy's pools."""
    requested = guaranteed_cpus(pod, container)
    if requested == 0:
        return None
    allocated = state.get_cpu_set(pod.uid, container.name)
    if allocated is not None:
        if len(allocated) != requested:
            return {CPU: []}
        return _hints(topology, allocated, CPUSet(), requested, align_by_socket)
    return _hints(topology, available, reusable, requested, align_by_socket)


def pod_topology_hints(
    topology: CPUTopology,
    state: StateReader,
    pod: Pod,
    available: CPUSet,
    reusable: CPUSet,
    align_by_socket: bool = False,
) -> ProviderHints:
    """Pod-scope hints (upstream ``GetPodTopologyHints``) given the policy's pools."""
    requested = pod_guaranteed_cpus(pod)
    if requested == 0:
        return None
    assigned = CPUSet()
    for container in pod.all_containers():
        allocated = state.get_cpu_set(pod.uid, container.name)
        if allocated is None:
            continue
        if len(allocated) != guaranteed_cpus(pod, container):
            return {CPU: []}
        assigned = assigned | allocated
    if len(assigned) == requested:
        return _hints(topology, assigned, CPUSet(), requested, align_by_socket)
    return _hints(topology, available, reusable | assigned, requested, align_by_socket)


def _hints(
    topology: CPUTopology, available: CPUSet, reusable: CPUSet, request: int, by_socket: bool
) -> Mapping[str, Sequence[TopologyHint]]:
    # The rule lists every qualifying mask without enumerating them.
    hints = cpu_hint_set(topology, available, reusable, request, by_socket)
    return {CPU: hints if hints else []}
