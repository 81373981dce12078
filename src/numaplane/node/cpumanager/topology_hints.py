"""The static CPU policy as a Topology Manager hint provider, and its CPU counts.

A container (or, in pod scope, a pod) asks for exclusive CPUs only when the pod is Guaranteed
and the CPU request is a whole number. Hints list every NUMA-node combination that could hold
the request from the available (and reusable) CPUs; the narrowest combinations that could hold
it on an *empty* machine are preferred, so a preference reflects capacity, not current load.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from numaplane.api.pod import Container, Pod
from numaplane.node.cpumanager.state import StateReader
from numaplane.node.cpumanager.topology import CPUTopology
from numaplane.node.requests import guaranteed_cpus, pod_guaranteed_cpus
from numaplane.node.topologymanager.bitmask import BitMask, bit_mask_subsets
from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.topology.cpuset import CPUSet

CPU = "cpu"


def is_hint_socket_aligned(topology: CPUTopology, hint: TopologyHint, min_affinity: int) -> bool:
    """Whether the hint's NUMA nodes span exactly the fewest sockets the request needs."""
    if hint.numa_affinity is None or topology.num_sockets == 0:
        return False
    numa_per_socket = topology.num_numa_nodes // topology.num_sockets
    if numa_per_socket == 0:
        return False
    min_sockets = -(-min_affinity // numa_per_socket)
    sockets = topology.details.sockets_in_numa_nodes(*hint.numa_affinity.bits)
    return len(sockets) == min_sockets


def generate_cpu_topology_hints(
    topology: CPUTopology,
    available: CPUSet,
    reusable: CPUSet,
    request: int,
    align_by_socket: bool = False,
) -> list[TopologyHint]:
    """One hint per NUMA-node mask that can hold ``request`` CPUs (upstream order of masks).

    Every reusable CPU must lie inside the mask. Preferred: masks as narrow as the narrowest
    one whose *total* CPUs could hold the request, and (``align_by_socket``) socket-aligned ones.
    """
    details = topology.details
    numa_nodes = details.numa_nodes()
    min_affinity = len(numa_nodes)
    numa_of = {cpu: details[cpu].numa for cpu in details}
    reusable_numas = [numa_of.get(c, 0) for c in reusable]
    available_numas = [numa_of.get(c, 0) for c in available]
    masks: list[BitMask] = []
    for mask in bit_mask_subsets(numa_nodes):
        bits = set(mask.bits)
        if len(details.cpus_in_numa_nodes(*bits)) >= request and mask.count() < min_affinity:
            min_affinity = mask.count()
        if any(n not in bits for n in reusable_numas):
            continue
        matching = len(reusable_numas) + sum(1 for n in available_numas if n in bits)
        if matching >= request:
            masks.append(mask)
    hints: list[TopologyHint] = []
    for mask in masks:
        hint = TopologyHint(mask, False)
        preferred = mask.count() == min_affinity or (
            align_by_socket and is_hint_socket_aligned(topology, hint, min_affinity)
        )
        hints.append(TopologyHint(mask, preferred))
    return hints


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
    # The rule lists what generate_cpu_topology_hints lists, without enumerating every mask.
    from numaplane.node.cpumanager.cpu_hint_sets import cpu_hint_set

    hints = cpu_hint_set(topology, available, reusable, request, by_socket)
    return {CPU: hints if hints else []}
