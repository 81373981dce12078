"""The ``static`` CPU policy: exclusive CPUs for whole-CPU requests of Guaranteed pods.

CPU pools (upstream vocabulary):

- SHARED (the state's default set): where every non-exclusive container runs; it shrinks and
  grows as exclusive CPUs are handed out and returned;
- RESERVED: CPUs kept for the system (``--reserved-cpus`` or chosen topologically); never
  exclusive; part of SHARED unless ``strict-cpu-reservation``;
- ASSIGNABLE = SHARED - RESERVED: where exclusive CPUs come from;
- EXCLUSIVE: the per-container assignments in the state.

The policy holds configuration plus one piece of in-memory bookkeeping that upstream keeps
outside the state too: CPUs a pod's finished init containers leave for its later containers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from numaplane.api.pod import Container, Pod
from numaplane.node.cpumanager import topology_hints as hints
from numaplane.node.cpumanager.cpu_assignment import (
    CPUSortingStrategy,
    take_by_topology_numa_packed,
)
from numaplane.node.cpumanager.errors import SMTAlignmentError
from numaplane.node.cpumanager.metrics import CPUManagerMetrics
from numaplane.node.cpumanager.numa_distributed import take_by_topology_numa_distributed
from numaplane.node.cpumanager.policy_options import GateReader, StaticPolicyOptions
from numaplane.node.cpumanager.state import State, StateReader
from numaplane.node.cpumanager.topology import CPUTopology
from numaplane.node.errors import ConfigurationError, NodeError
from numaplane.node.requests import guaranteed_cpus
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.node.topologymanager.metrics import BOUNDARY_PHYSICAL_CPU, BOUNDARY_UNCORE_CACHE
from numaplane.node.topologymanager.provider import AffinityReader
from numaplane.topology.cpuset import CPUSet

POLICY_STATIC = "static"


class NoAffinity:
    """An ``AffinityReader`` that has no stored hints (every container may go anywhere)."""

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        """The empty hint."""
        return TopologyHint(None, False)


class StaticPolicy:
    """Upstream ``staticPolicy`` (``NewStaticPolicy`` is the constructor).

    Raises ``ConfigurationError`` for bad options, options the machine or the Topology Manager
    policy rule out, or a reserved set whose size is not ``num_reserved_cpus``.
    """

    def __init__(
        self,
        topology: CPUTopology,
        num_reserved_cpus: int,
        reserved_cpus: CPUSet | None = None,
        affinity: AffinityReader | None = None,
        options: Mapping[str, str] | StaticPolicyOptions | None = None,
        *,
        gates: GateReader | None = None,
        topology_manager_policy: str = "none",
        metrics: CPUManagerMetrics | None = None,
    ) -> None:
        if isinstance(options, StaticPolicyOptions):
            self.options = options
        else:
            self.options = StaticPolicyOptions.parse(options, gates)
        self.options.validate(topology, topology_manager_policy)
        self.topology = topology
        self.affinity: AffinityReader = affinity if affinity is not None else NoAffinity()
        self.metrics = metrics if metrics is not None else CPUManagerMetrics()
        self.cpu_group_size = topology.cpus_per_core()
        self.cpus_to_reuse: dict[str, CPUSet] = {}
        if reserved_cpus:
            reserved = reserved_cpus
        else:
            # Reserved CPUs are picked like an allocation: low-numbered, topology-packed.
            try:
                reserved = self.take_by_topology(topology.all_cpus, num_reserved_cpus)
            except NodeError:
                reserved = CPUSet()
        if len(reserved) != num_reserved_cpus:
            raise ConfigurationError(
                "[cpumanager] unable to reserve the required amount of CPUs "
                f"(size of {reserved} did not equal {num_reserved_cpus})"
            )
        self.reserved_cpus = reserved
        # Whole cores of the reserved CPUs: with full-pcpus-only a reserved thread spoils its
        # core for exclusive use.
        cores = {topology.cpu_core_id(cpu) for cpu in reserved}
        self.reserved_physical_cpus = topology.details.cpus_in_cores(*cores)

    @property
    def name(self) -> str:
        """``"static"``."""
        return POLICY_STATIC

    # -- pools -----------------------------------------------------------------------------

    def get_allocatable_cpus(self, state: StateReader) -> CPUSet:
        """Every CPU that is not reserved."""
        return self.topology.all_cpus - self.reserved_cpus

    def get_available_cpus(self, state: StateReader) -> CPUSet:
        """The shared pool minus the reserved CPUs: where exclusive CPUs come from."""
        return state.get_default_cpu_set() - self.reserved_cpus

    def get_available_physical_cpus(self, state: StateReader) -> CPUSet:
        """The shared pool minus every core holding a reserved CPU."""
        return state.get_default_cpu_set() - self.reserved_physical_cpus

    # -- start -----------------------------------------------------------------------------

    def start(self, state: State) -> None:
        """Check the state against the topology (initialising an empty one), set the gauges."""
        self.validate_state(state)
        self._init_metrics(state)

    def validate_state(self, state: State) -> None:
        """Upstream ``validateState``; raises ``NodeError`` with upstream's messages."""
        assignments = state.get_cpu_assignments()
        default = state.get_default_cpu_set()
        all_cpus = self.topology.all_cpus
        if self.options.strict_cpu_reservation:
            all_cpus = all_cpus - self.reserved_cpus
        if not default:
            if assignments:
                raise NodeError("default cpuset cannot be empty")
            state.set_default_cpu_set(all_cpus)
            return
        if self.options.strict_cpu_reservation:
            overlap = self.reserved_cpus & default
            if overlap:
                raise NodeError(
                    f'some of strictly reserved cpus: "{overlap}" are present in '
                    f'defaultCpuSet: "{default}"'
                )
        elif not self.reserved_cpus <= default:
            raise NodeError(
                f'not all reserved cpus: "{self.reserved_cpus}" are present in '
                f'defaultCpuSet: "{default}"'
            )
        for pod_uid, containers in assignments.items():
            for name, cpus in containers.items():
                if not cpus.is_disjoint(default):
                    raise NodeError(
                        f'pod: {pod_uid}, container: {name} cpuset: "{cpus}" overlaps with '
                        f'default cpuset "{default}"'
                    )
        known = default.union(*(c for cs in assignments.values() for c in cs.values()))
        if known != all_cpus:
            raise NodeError(
                f'current set of available CPUs "{all_cpus}" doesn\'t match with CPUs in '
                f'state "{known}"'
            )

    # -- allocation ------------------------------------------------------------------------

    def allocate(self, state: State, pod: Pod, container: Container) -> None:
        """Pin the container to exclusive CPUs if it qualifies (upstream ``Allocate``)."""
        num_cpus = guaranteed_cpus(pod, container)
        if num_cpus == 0:
            return
        self.metrics.pinning_requests_total.inc()
        try:
            self._allocate(state, pod, container, num_cpus)
        except NodeError:
            self.metrics.pinning_errors_total.inc()
            if self.options.full_physical_cpus_only:
                self.metrics.count_aligned_failure(BOUNDARY_PHYSICAL_CPU)
            raise
        if self.options.full_physical_cpus_only:
            self.metrics.count_aligned(BOUNDARY_PHYSICAL_CPU)

    def _allocate(self, state: State, pod: Pod, container: Container, num_cpus: int) -> None:
        if self.options.full_physical_cpus_only:
            if num_cpus % self.cpu_group_size != 0:
                raise SMTAlignmentError(num_cpus, self.cpu_group_size)
            available_physical = len(self.get_available_physical_cpus(state))
            if num_cpus > available_physical:
                raise SMTAlignmentError(num_cpus, self.cpu_group_size, available_physical, True)
        existing = state.get_cpu_set(pod.uid, container.name)
        if existing is not None:
            self._update_cpus_to_reuse(pod, container, existing)
            return
        hint = self.affinity.get_affinity(pod.uid, container.name)
        reusable = self.cpus_to_reuse.get(pod.uid, CPUSet())
        cpus = self.allocate_cpus(state, num_cpus, hint.numa_affinity, reusable)
        state.set_cpu_set(pod.uid, container.name, cpus)
        self._update_cpus_to_reuse(pod, container, cpus)
        self._on_allocate(cpus)

    def allocate_cpus(
        self, state: State, num_cpus: int, numa_affinity: BitMask | None, reusable: CPUSet
    ) -> CPUSet:
        """Take ``num_cpus`` CPUs, from the affinity's NUMA nodes first, out of the shared pool."""
        allocatable = self.get_available_cpus(state) | reusable
        result = CPUSet()
        if numa_affinity is not None:
            aligned = self._aligned_cpus(numa_affinity, allocatable)
            result = self.take_by_topology(aligned, min(num_cpus, len(aligned)))
        result = result | self.take_by_topology(allocatable - result, num_cpus - len(result))
        state.set_default_cpu_set(state.get_default_cpu_set() - result)
        return result

    def _aligned_cpus(self, numa_affinity: BitMask, allocatable: CPUSet) -> CPUSet:
        details = self.topology.details
        numas = numa_affinity.bits
        if self.options.align_by_socket:
            return allocatable & details.cpus_in_sockets(*details.sockets_in_numa_nodes(*numas))
        return allocatable & details.cpus_in_numa_nodes(*numas)

    def take_by_topology(self, available: CPUSet, num_cpus: int) -> CPUSet:
        """The allocator the options select (distributed, packed or spread, uncore-aware)."""
        strategy = (
            CPUSortingStrategy.SPREAD
            if self.options.distribute_cpus_across_cores
            else CPUSortingStrategy.PACKED
        )
        if self.options.distribute_cpus_across_numa:
            group = self.cpu_group_size if self.options.full_physical_cpus_only else 1
            return take_by_topology_numa_distributed(
                self.topology, available, num_cpus, group, strategy
            )
        return take_by_topology_numa_packed(
            self.topology, available, num_cpus, strategy, self.options.prefer_align_by_uncore_cache
        )

    def _update_cpus_to_reuse(self, pod: Pod, container: Container, cpus: CPUSet) -> None:
        # Only the pod being admitted keeps reusable CPUs; older entries are stale.
        for uid in [u for u in self.cpus_to_reuse if u != pod.uid]:
            del self.cpus_to_reuse[uid]
        current = self.cpus_to_reuse.get(pod.uid, CPUSet())
        for init in pod.init_containers:
            if init.name == container.name:
                if not init.is_restartable:
                    # A finished init container's CPUs can serve the containers after it.
                    self.cpus_to_reuse[pod.uid] = current | cpus
                    return
                break
        # App containers and sidecars keep their CPUs for the pod's lifetime.
        self.cpus_to_reuse[pod.uid] = current - cpus

    def remove_container(self, state: State, pod_uid: str, container_name: str) -> None:
        """Return the container's CPUs to the shared pool, except those a sibling still holds."""
        cpus = state.get_cpu_set(pod_uid, container_name)
        if cpus is None:
            return
        # Read before the delete: the view follows the state.
        siblings = state.get_pod_cpu_sets(pod_uid)
        in_use = CPUSet().union(*(c for n, c in siblings.items() if n != container_name))
        state.delete(pod_uid, container_name)
        released = cpus - in_use
        state.set_default_cpu_set(state.get_default_cpu_set() | released)
        self._on_release(released)

    # -- hints -----------------------------------------------------------------------------

    def get_topology_hints(
        self, state: StateReader, pod: Pod, container: Container
    ) -> ProviderHints:
        """Container-scope hints for ``cpu``."""
        return hints.container_topology_hints(
            self.topology,
            state,
            pod,
            container,
            self.get_available_cpus(state),
            self.cpus_to_reuse.get(pod.uid, CPUSet()),
            self.options.align_by_socket,
        )

    def get_pod_topology_hints(self, state: StateReader, pod: Pod) -> ProviderHints:
        """Pod-scope hints for ``cpu``."""
        return hints.pod_topology_hints(
            self.topology,
            state,
            pod,
            self.get_available_cpus(state),
            self.cpus_to_reuse.get(pod.uid, CPUSet()),
            self.options.align_by_socket,
        )

    # -- metrics ---------------------------------------------------------------------------

    def _init_metrics(self, state: StateReader) -> None:
        self.metrics.shared_pool_size_millicores.set(len(self.get_available_cpus(state)) * 1000)
        # Read from the state as it is when collected (the agent's repair may edit it directly).
        self.metrics.track_exclusive(
            self.topology.cpus_per_numa_node, lambda: self._exclusive_metrics(state)
        )

    def _on_allocate(self, cpus: CPUSet) -> None:
        self.metrics.shared_pool_size_millicores.dec(len(cpus) * 1000)
        if self.topology.is_aligned_at_uncore_cache(cpus):
            self.metrics.count_aligned(BOUNDARY_UNCORE_CACHE)

    def _on_release(self, cpus: CPUSet) -> None:
        self.metrics.shared_pool_size_millicores.inc(len(cpus) * 1000)

    def _exclusive_metrics(self, state: StateReader) -> tuple[int, dict[int, int]]:
        exclusive = CPUSet().union(
            *(c for cs in state.get_cpu_assignments().values() for c in cs.values())
        )
        # Counted in one C-level pass (CPUs outside the topology count nowhere).
        counts = Counter(map(self.topology.numa_of_cpu.get, exclusive))
        per_numa = {numa: counts.get(numa, 0) for numa in self.topology.cpus_per_numa_node}
        return len(exclusive), per_numa
