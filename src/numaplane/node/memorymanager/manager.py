"""``MemoryManager``: the memory hint provider the Topology Manager consults (upstream
``memory_manager.go``).

It wraps a policy and its state. Like upstream it drops the state of containers that are no
longer active before answering for hints or allocating, when it is given a way to list the
active pods (``active_pods``); the agent passes one, the ``admit`` command and the simulator
call ``remove_container`` themselves. Container IDs stay outside: removal is by pod UID and
container name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import is_
from typing import Final

from numaplane.api.pod import Container, Pod
from numaplane.api.quantity import Quantity
from numaplane.node.memorymanager.errors import MemoryConfigurationError
from numaplane.node.memorymanager.metrics import MemoryManagerMetrics
from numaplane.node.memorymanager.policy import Policy
from numaplane.node.memorymanager.policy_none import POLICY_NONE, NonePolicy
from numaplane.node.memorymanager.policy_static import POLICY_STATIC, StaticPolicy
from numaplane.node.memorymanager.reserved import MemoryReservation, system_reserved_memory
from numaplane.node.memorymanager.state import (
    Block,
    ContainerMemoryAssignments,
    InMemoryState,
    State,
    StateReader,
)
from numaplane.node.topologymanager.hint import ProviderHints
from numaplane.node.topologymanager.provider import AffinityReader
from numaplane.topology.model import Machine

STATE_FILE_NAME: Final = "memory_manager_state"
"""The checkpoint file name of the memory manager (upstream ``memoryManagerStateFileName``)."""

_NO_NAMES: Final[frozenset[str]] = frozenset()

ActivePods = Callable[[], Iterable[Pod]]
"""Lists the pods whose containers keep their memory (upstream ``ActivePodsFunc``)."""


def new_policy(
    policy_name: str,
    machine: Machine,
    node_allocatable_reservation: Mapping[str, Quantity],
    reserved_memory: Sequence[MemoryReservation],
    affinity: AffinityReader,
) -> Policy:
    """The policy named ``policy_name`` (``None`` or ``Static``), as upstream ``NewManager``
    builds it; raises ``MemoryConfigurationError`` for an unknown name or a bad reservation."""
    if policy_name == POLICY_NONE:
        return NonePolicy()
    if policy_name == POLICY_STATIC:
        reserved = system_reserved_memory(machine, node_allocatable_reservation, reserved_memory)
        return StaticPolicy(machine, reserved, affinity)
    raise MemoryConfigurationError(f'unknown policy: "{policy_name}"')


class MemoryManager:
    """A memory manager: a policy, its state and (optionally) the active-pods source."""

    def __init__(
        self,
        policy: Policy,
        state: State | None = None,
        *,
        active_pods: ActivePods | None = None,
    ) -> None:
        self._policy = policy
        self._state: State = state if state is not None else InMemoryState()
        self._active_pods = active_pods
        self._allocatable: tuple[Block, ...] = ()
        # (state generation, active pods) of the last check that found nothing stale
        self._verified: tuple[int, tuple[Pod, ...]] | None = None

    @classmethod
    def new(
        cls,
        policy_name: str,
        machine: Machine,
        affinity: AffinityReader,
        *,
        node_allocatable_reservation: Mapping[str, Quantity] | None = None,
        reserved_memory: Sequence[MemoryReservation] = (),
        state: State | None = None,
        active_pods: ActivePods | None = None,
    ) -> MemoryManager:
        """Upstream ``NewManager``; call ``start`` before use."""
        policy = new_policy(
            policy_name, machine, node_allocatable_reservation or {}, reserved_memory, affinity
        )
        return cls(policy, state, active_pods=active_pods)

    def start(self) -> None:
        """Validate the state with the policy (``MemoryStateError`` on a mismatch) and record
        the allocatable memory."""
        self._policy.start(self._state)
        self._verified = None
        self._allocatable = self._policy.get_allocatable_memory(self._state)

    # -- HintProvider ----------------------------------------------------------------------

    def get_topology_hints(self, pod: Pod, container: Container) -> ProviderHints:
        """The policy's hints for one container."""
        self._remove_stale_state()
        return self._policy.get_topology_hints(self._state, pod, container)

    def get_pod_topology_hints(self, pod: Pod) -> ProviderHints:
        """The policy's hints for the whole pod."""
        self._remove_stale_state()
        return self._policy.get_pod_topology_hints(self._state, pod)

    def allocate(self, pod: Pod, container: Container) -> None:
        """Reserve the container's memory; raises ``MemoryManagerError`` when impossible."""
        self._remove_stale_state()
        self._policy.allocate(self._state, pod, container)

    # -- lifecycle -------------------------------------------------------------------------

    def remove_container(self, pod_uid: str, container_name: str) -> None:
        """Release a container's memory (a no-op when it has none)."""
        self._policy.remove_container(self._state, pod_uid, container_name)

    def remove_stale_state(self, active_pods: Iterable[Pod]) -> None:
        """Release the memory of every container not in ``active_pods``."""
        held = self._state.memory_assignments_view()
        if not held:
            return
        pods = active_pods if isinstance(active_pods, (list, tuple)) else list(active_pods)
        generation = self._state.generation
        verified = self._verified
        if (
            verified is not None
            and verified[0] == generation
            and len(verified[1]) == len(pods)
            and all(map(is_, verified[1], pods))
        ):
            # Neither the assignments nor the pods changed since a check found nothing stale
            # (an allocation right after its hints): the same answer, without the loop.
            return
        by_uid = {pod.uid: pod for pod in pods}
        if len(by_uid) == len(pods) and _none_stale(held, by_uid):
            # The usual case: nothing to release, nothing copied.
            self._verified = (generation, tuple(pods))
            return
        self._verified = None
        assignments = self._state.get_memory_assignments()
        if len(by_uid) != len(pods):
            self._remove_stale_merging(assignments, pods)
            return
        for pod_uid, containers in assignments.items():
            pod = by_uid.get(pod_uid)
            names = pod.container_names if pod is not None else _NO_NAMES
            for container_name in containers:
                if container_name not in names:
                    self.remove_container(pod_uid, container_name)

    def _remove_stale_merging(
        self, assignments: Mapping[str, Mapping[str, object]], pods: Iterable[Pod]
    ) -> None:
        # Pods sharing a UID: a container survives when any of them has it.
        active: dict[str, frozenset[str]] = {}
        for pod in pods:
            uid = pod.uid
            if uid in assignments:
                names = active.get(uid)
                active[uid] = pod.container_names if names is None else names | pod.container_names
        for pod_uid, containers in assignments.items():
            names = active.get(pod_uid, _NO_NAMES)
            for container_name in containers:
                if container_name not in names:
                    self.remove_container(pod_uid, container_name)

    def _remove_stale_state(self) -> None:
        if self._active_pods is not None:
            self.remove_stale_state(self._active_pods())

    # -- read-only accessors ---------------------------------------------------------------

    @property
    def policy_name(self) -> str:
        """The policy's configuration name."""
        return self._policy.name

    @property
    def state(self) -> StateReader:
        """Read access to the state."""
        return self._state

    @property
    def metrics(self) -> MemoryManagerMetrics:
        """The pinning counters."""
        return self._policy.metrics

    def get_memory_numa_nodes(self, pod: Pod, container: Container) -> frozenset[int] | None:
        """NUMA nodes the container's memory may come from (its ``cpuset.mems``), or ``None``
        when it has no blocks."""
        blocks = self._state.get_memory_blocks(pod.uid, container.name) or ()
        nodes = frozenset(node for block in blocks for node in block.numa_affinity)
        return nodes or None

    def get_allocatable_memory(self) -> tuple[Block, ...]:
        """Allocatable memory per node and resource, as recorded by ``start``."""
        return self._allocatable

    def get_memory(self, pod_uid: str, container_name: str) -> tuple[Block, ...] | None:
        """The container's blocks, or ``None``."""
        return self._state.get_memory_blocks(pod_uid, container_name)


def _none_stale(held: ContainerMemoryAssignments, by_uid: Mapping[str, Pod]) -> bool:
    """Whether every container holding memory belongs to an active pod."""
    for pod_uid, containers in held.items():
        pod = by_uid.get(pod_uid)
        if pod is None or not pod.container_names.issuperset(containers):
            return False
    return True
