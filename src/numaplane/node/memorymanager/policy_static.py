"""The ``Static`` memory policy (upstream ``policy_static.go``, §9).

Guaranteed containers get their ``memory`` and ``hugepages-*`` requests reserved on the NUMA
nodes of the Topology Manager's merged hint (or, when that hint has no affinity, on the best
mask the policy would have offered). A node serves either single-node blocks or blocks of one
fixed group of nodes, never both. Memory a regular init container held is reused by the
containers started after it on the same mask, so a pod reserves its peak, not its sum.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Final

from numaplane.api.pod import Container, Pod, QOSClass
from numaplane.node.memorymanager.accounting import (
    expected_machine_state,
    release_blocks,
    reserve_blocks,
)
from numaplane.node.memorymanager.errors import (
    MemoryAllocationError,
    MemoryManagerError,
    MemoryStateError,
    ReservedMemoryError,
)
from numaplane.node.memorymanager.machine_state import SystemReserved, default_machine_state
from numaplane.node.memorymanager.memory_hint_sets import memory_hint_sets
from numaplane.node.memorymanager.metrics import MemoryManagerMetrics
from numaplane.node.memorymanager.state import (
    MEMORY,
    Block,
    NUMANodeMap,
    NUMANodeState,
    State,
    StateReader,
    machine_states_equal,
)
from numaplane.node.memorymanager.topology_hints import (
    best_hint_containing,
    find_best_hint,
    nodes_satisfy_request,
    nodes_violate_numa_allocation,
    regenerate_hints,
)
from numaplane.node.requests import MemoryRequestError, memory_requests, pod_memory_requests
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import ProviderHints
from numaplane.node.topologymanager.hint_sets import StructuredHints
from numaplane.node.topologymanager.provider import AffinityReader
from numaplane.topology.model import Machine

POLICY_STATIC: Final = "Static"
"""The configuration name of this policy."""

ReusableMemory = dict[str, dict[BitMask, dict[str, int]]]
"""pod UID -> mask -> resource -> bytes of init-container memory later containers may reuse."""


class StaticPolicy:
    """Upstream ``staticPolicy``; construction is ``NewPolicyStatic``.

    ``system_reserved`` must reserve some regular memory on at least one node.
    ``pod_level_resources`` mirrors the PodLevelResources feature gate: when on, pods with
    pod-level resources are left alone (no hints, no allocation).
    """

    def __init__(
        self,
        machine: Machine,
        system_reserved: SystemReserved,
        affinity: AffinityReader,
        *,
        pod_level_resources: bool = True,
        init_containers_reusable_memory: ReusableMemory | None = None,
        metrics: MemoryManagerMetrics | None = None,
    ) -> None:
        if sum(node.get(MEMORY, 0) for node in system_reserved.values()) <= 0:
            raise ReservedMemoryError(
                "[memorymanager] you should specify the system reserved memory"
            )
        self._machine = machine
        self._system_reserved = system_reserved
        self._affinity = affinity
        self._pod_level_resources = pod_level_resources
        self._reusable: ReusableMemory = {
            pod: {mask: dict(sizes) for mask, sizes in masks.items()}
            for pod, masks in (init_containers_reusable_memory or {}).items()
        }
        self._metrics = metrics if metrics is not None else MemoryManagerMetrics()

    @property
    def name(self) -> str:
        """``Static``."""
        return POLICY_STATIC

    @property
    def metrics(self) -> MemoryManagerMetrics:
        """Pinning requests and errors counted so far."""
        return self._metrics

    @property
    def reusable_memory(self) -> Mapping[str, Mapping[BitMask, Mapping[str, int]]]:
        """A copy of the init-container memory bookkeeping (upstream
        ``initContainersReusableMemory``)."""
        return {
            pod: {mask: dict(sizes) for mask, sizes in masks.items()}
            for pod, masks in self._reusable.items()
        }

    def default_machine_state(self) -> dict[int, NUMANodeState]:
        """The machine state of this machine with nothing allocated (§9.2)."""
        return default_machine_state(self._machine, self._system_reserved)

    # -- start -----------------------------------------------------------------------------

    def start(self, state: State) -> None:
        """Upstream ``Start`` / ``validateState``.

        An empty machine state becomes the default one (unless assignments exist). Otherwise
        the default state with every stored block replayed onto it must equal the stored state.
        """
        machine_state = state.get_machine_state()
        assignments = state.get_memory_assignments()
        if not machine_state:
            if assignments:
                raise MemoryStateError(
                    "[memorymanager] machine state can not be empty when it has memory assignments"
                )
            state.set_machine_state(self.default_machine_state())
            return
        expected = expected_machine_state(self.default_machine_state(), assignments)
        if not machine_states_equal(machine_state, expected):
            raise MemoryStateError(
                "[memorymanager] the expected machine state is different from the real one"
            )

    # -- hints -----------------------------------------------------------------------------

    def _skips(self, pod: Pod) -> bool:
        if pod.qos_class != QOSClass.GUARANTEED:
            return True
        return self._pod_level_resources and pod.has_pod_level_resources

    def get_topology_hints(
        self, state: StateReader, pod: Pod, container: Container
    ) -> ProviderHints:
        """Upstream ``GetTopologyHints``: ``None`` for non-Guaranteed pods; the stored blocks
        as hints when the container has some; otherwise every mask that fits."""
        if self._skips(pod):
            return None
        try:
            requests = self._requests(container)
        except MemoryManagerError:
            return None
        blocks = state.get_memory_blocks(pod.uid, container.name)
        if blocks is not None:
            return regenerate_hints(blocks, requests)
        return self._calculate_hints(state.get_machine_state(), pod, requests)

    def get_pod_topology_hints(self, state: StateReader, pod: Pod) -> ProviderHints:
        """Upstream ``GetPodTopologyHints``: as for a container, with the pod's peak requests;
        the first container (init ones first) with stored blocks answers for the pod."""
        if self._skips(pod):
            return None
        try:
            requests = pod_memory_requests(pod)
        except MemoryRequestError:
            return None
        for container in pod.all_containers():
            blocks = state.get_memory_blocks(pod.uid, container.name)
            if blocks is not None:
                return regenerate_hints(blocks, requests)
        return self._calculate_hints(state.get_machine_state(), pod, requests)

    def _calculate_hints(
        self, machine_state: NUMANodeMap, pod: Pod, requests: Mapping[str, int]
    ) -> Mapping[str, StructuredHints]:
        reusable = self._reusable.get(pod.uid)
        if not reusable:
            # Nothing to reuse counts as zero everywhere: the lookup would only add zeros.
            return memory_hint_sets(machine_state, requests)
        return memory_hint_sets(
            machine_state,
            requests,
            lambda mask, resource: self._pod_reusable(pod.uid, mask, resource),
            tuple(reusable),
        )

    def _requests(self, container: Container) -> Mapping[str, int]:
        """``memory_requests`` of ``container``, failing as the policy's allocation error."""
        try:
            return memory_requests(container)
        except MemoryRequestError as err:
            raise MemoryAllocationError(str(err)) from None

    # -- allocate --------------------------------------------------------------------------

    def allocate(self, state: State, pod: Pod, container: Container) -> None:
        """Upstream ``Allocate`` (idempotent); raises ``MemoryAllocationError``."""
        if self._skips(pod):
            return
        self._metrics.pinning_requests_total.inc()
        try:
            self._allocate(state, pod, container)
        except MemoryManagerError:
            self._metrics.pinning_errors_total.inc()
            raise

    def _allocate(self, state: State, pod: Pod, container: Container) -> None:
        existing = state.get_memory_blocks(pod.uid, container.name)
        if existing is not None:
            self._update_reusable(pod, container, existing)
            return
        hint = self._affinity.get_affinity(pod.uid, container.name)
        requests = self._requests(container)
        machine_state = state.get_machine_state()
        mask, preferred = hint.numa_affinity, hint.preferred
        if mask is None:
            mask, default_preferred = self._default_hint(machine_state, pod, requests)
            if not default_preferred and preferred:
                raise MemoryAllocationError(
                    "[memorymanager] failed to find the default preferred hint"
                )
            preferred = default_preferred
        nodes = mask.bits
        if not nodes_satisfy_request(machine_state, nodes, requests):
            mask, extended_preferred = self._extend_hint(machine_state, pod, requests, mask)
            if not extended_preferred and preferred:
                raise MemoryAllocationError(
                    "[memorymanager] failed to find the extended preferred hint"
                )
            nodes = mask.bits
        if nodes_violate_numa_allocation(machine_state, nodes):
            raise MemoryAllocationError(
                "[memorymanager] preferred hint violates NUMA node allocation"
            )

        blocks = [Block(numa_affinity=nodes, type=r, size=size) for r, size in requests.items()]
        reusable = self._reusable.get(pod.uid, {}).get(mask, {})
        to_take = [(r, max(size - reusable.get(r, 0), 0)) for r, size in requests.items()]
        updated = reserve_blocks(machine_state, nodes, to_take)
        self._update_reusable(pod, container, blocks)
        state.set_machine_state(updated)
        state.set_memory_blocks(pod.uid, container.name, blocks)
        self._shrink_init_container_blocks(state, pod, container, blocks)

    def _default_hint(
        self, machine_state: NUMANodeMap, pod: Pod, requests: Mapping[str, int]
    ) -> tuple[BitMask, bool]:
        hints = self._calculate_hints(machine_state, pod, requests)
        # Every resource gets the same masks, so regular memory's hints speak for all.
        best = find_best_hint(hints.get(MEMORY))
        if best is None or best.numa_affinity is None:
            raise MemoryAllocationError(
                "[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with "
                "enough memory is available"
            )
        return best.numa_affinity, best.preferred

    def _extend_hint(
        self, machine_state: NUMANodeMap, pod: Pod, requests: Mapping[str, int], mask: BitMask
    ) -> tuple[BitMask, bool]:
        # The Topology Manager ANDs the providers' hints, so under the restricted policy it may
        # hand back a subset of a mask we offered: widen it to the best offered superset.
        hints = self._calculate_hints(machine_state, pod, requests)
        best = best_hint_containing(hints.get(MEMORY), mask)
        if best is None or best.numa_affinity is None:
            raise MemoryAllocationError(
                "[memorymanager] failed to find NUMA nodes to extend the current topology hint"
            )
        return best.numa_affinity, best.preferred

    # -- init-container memory reuse -------------------------------------------------------

    def _pod_reusable(self, pod_uid: str, mask: BitMask, resource: str) -> int:
        return self._reusable.get(pod_uid, {}).get(mask, {}).get(resource, 0)

    def _update_reusable(self, pod: Pod, container: Container, blocks: Sequence[Block]) -> None:
        """Upstream ``updatePodReusableMemory``: only the current pod's entry is kept; a regular
        init container offers its blocks for reuse, any other container consumes them."""
        for uid in [uid for uid in self._reusable if uid != pod.uid]:
            del self._reusable[uid]
        if _is_regular_init_container(pod, container):
            masks = self._reusable.setdefault(pod.uid, {})
            for block in blocks:
                sizes = masks.setdefault(BitMask.from_bits(block.numa_affinity), {})
                sizes[block.type] = max(sizes.get(block.type, 0), block.size)
            return
        if not self._reusable.get(pod.uid):
            return  # nothing to consume
        for block in blocks:
            mask = BitMask.from_bits(block.numa_affinity)
            available = self._pod_reusable(pod.uid, mask, block.type)
            if available != 0:
                self._reusable[pod.uid][mask][block.type] = max(available - block.size, 0)

    def _shrink_init_container_blocks(
        self, state: State, pod: Pod, container: Container, blocks: Sequence[Block]
    ) -> None:
        """Upstream ``updateInitContainersMemoryBlocks``: take the memory this container
        reused out of the earlier regular init containers' blocks, so that the blocks of a pod
        add up to what it really reserved (init blocks may shrink to size 0)."""
        for block in blocks:
            remaining = block.size
            for init in pod.init_containers:
                if init.name == container.name or remaining == 0:
                    break
                if init.is_restartable:
                    continue
                init_blocks = state.get_memory_blocks(pod.uid, init.name)
                if not init_blocks:
                    continue
                shrunk: list[Block] = []
                for candidate in init_blocks:
                    if (
                        candidate.size > 0
                        and candidate.type == block.type
                        and BitMask.from_bits(candidate.numa_affinity)
                        == BitMask.from_bits(block.numa_affinity)
                    ):
                        cut = min(candidate.size, remaining)
                        remaining -= cut
                        candidate = replace(candidate, size=candidate.size - cut)
                    shrunk.append(candidate)
                state.set_memory_blocks(pod.uid, init.name, shrunk)

    # -- removal and queries ---------------------------------------------------------------

    def remove_container(self, state: State, pod_uid: str, container_name: str) -> None:
        """Upstream ``RemoveContainer``: forget the blocks and give their memory back."""
        blocks = state.get_memory_blocks(pod_uid, container_name)
        if blocks is None:
            return
        state.delete(pod_uid, container_name)
        state.set_machine_state(release_blocks(state.get_machine_state(), blocks))

    def get_allocatable_memory(self, state: StateReader) -> tuple[Block, ...]:
        """Upstream ``GetAllocatableMemory``: a block per (node, resource) with allocatable
        memory, nodes ascending."""
        machine_state = state.get_machine_state()
        return tuple(
            Block(numa_affinity=(node_id,), type=resource, size=table.allocatable)
            for node_id in sorted(machine_state)
            for resource, table in machine_state[node_id].memory_map.items()
            if table.allocatable > 0
        )


def _is_regular_init_container(pod: Pod, container: Container) -> bool:
    for init in pod.init_containers:
        if init.name == container.name:
            return not init.is_restartable
    return False
