"""The static CPU policy as a Topology Manager hint provider, and its CPU counts.

A container (or, in pod scope, a pod) asks for exclusive CPUs only when the pod is Guaranteed
and the CPU request is a whole number. Hints name every NUMA-node combination that could hold
the request from the available (and reusable) CPUs, given as a rule (``cpu_hint_sets``); the
narrowest combinations that could hold it on an *empty* machine are preferred, so a preference
reflects capacity, not current load.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from numaplane.api.pod import Container, Pod
from numaplane.node.cpumanager.cpu_hint_sets import cpu_hint_set
from numaplane.node.cpumanager.state import StateReader
from numaplane.node.cpumanager.topology import CPUTopology
from numaplane.node.requests import guaranteed_cpus, pod_guaranteed_cpus
from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.topology.cpuset import CPUSet

CPU = "cpu"


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
