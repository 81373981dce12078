"""``MemoryManager``: the memory hint provider the Topology Manager consults (upstream
``memory_manager.go``).

It wraps a policy and its state. Like upstream it drops the state of containers that are no
longer active before answering for hints or allocating, when it is given a way to list the
active pods (``active_pods``); the agent passes one, the ``admit`` command and the simulator
call ``remove_container`` themselves. Container IDs stay outside: removal is by pod UID and
container name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prometheus_client import CollectorRegistry

from numaplane.api.pod import Container, Pod
from numaplane.api.quantity import Quantity
from numaplane.node.memorymanager.errors import MemoryConfigurationError
from numaplane.node.memorymanager.metrics import MemoryManagerMetrics
from numaplane.node.memorymanager.policy import Policy
from numaplane.node.memorymanager.policy_none import POLICY_NONE, NonePolicy
from numaplane.node.memorymanager.policy_static import POLICY_STATIC, StaticPolicy
from numaplane.node.memorymanager.reserved import MemoryReservation, system_reserved_memory
from numaplane.node.memorymanager.state import Block, InMemoryState, State, StateReader
from numaplane.node.stale_state import ActiveContainers, ActivePods, stale_containers
from numaplane.node.topologymanager.hint import ProviderHints
from numaplane.node.topologymanager.provider import AffinityReader
from numaplane.topology.model import Machine


def new_policy(
    policy_name: str,
    machine: Machine,
    node_allocatable_reservation: Mapping[str, Quantity],
    reserved_memory: Sequence[MemoryReservation],
    affinity: AffinityReader,
    metrics: MemoryManagerMetrics | None = None,
) -> Policy:
    """The policy named ``policy_name`` (``None`` or ``Static``), as upstream ``NewManager``
    builds it; raises ``MemoryConfigurationError`` for an unknown name or a bad reservation."""
    if policy_name == POLICY_NONE:
        return NonePolicy(metrics=metrics)
    if policy_name == POLICY_STATIC:
        reserved = system_reserved_memory(machine, node_allocatable_reservation, reserved_memory)
        return StaticPolicy(machine, reserved, affinity, metrics=metrics)
    raise MemoryConfigurationError(f'unknown policy: "{policy_name}"')


class MemoryManager:
    """A memory manager: a policy (its metrics with it), its state (an empty in-memory one by
    default) and, optionally, the active-pods source; ``create`` builds the policy from its
    configuration name."""

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

    @classmethod
    def create(
        cls,
        policy_name: str,
        machine: Machine,
        affinity: AffinityReader,
        *,
        node_allocatable_reservation: Mapping[str, Quantity] | None = None,
        reserved_memory: Sequence[MemoryReservation] = (),
        state: State | None = None,
        active_pods: ActivePods | None = None,
        registry: CollectorRegistry | None = None,
    ) -> MemoryManager:
        """Upstream ``NewManager`` (not started); the metrics go to ``registry``."""
        policy = new_policy(
            policy_name,
            machine,
            node_allocatable_reservation or {},
            reserved_memory,
            affinity,
            MemoryManagerMetrics(registry),
        )
        return cls(policy, state, active_pods=active_pods)

    def start(self) -> None:
        """Validate the state with the policy (``MemoryStateError`` on a mismatch) and record
        the allocatable memory."""
        self._policy.start(self._state)
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

    def remove_stale_state(self, active: ActiveContainers) -> None:
        """Release the memory of every container not in ``active`` (upstream
        ``removeStaleState``)."""
        for pod_uid, container_name in stale_containers(
            self._state.memory_assignments_view(), active
        ):
            self.remove_container(pod_uid, container_name)

    def _remove_stale_state(self) -> None:
        if self._active_pods is not None and self._state.memory_assignments_view():
            self.remove_stale_state(self._active_pods())

    # -- read-only accessors ---------------------------------------------------------------

    @property
    def policy(self) -> Policy:
        """The policy in force."""
        return self._policy

    @property
    def policy_name(self) -> str:
        """The policy's configuration name (``memoryManagerPolicy``)."""
        return self._policy.name

    @property
    def state(self) -> StateReader:
        """Read access to the state (the policy alone writes it)."""
        return self._state

    @property
    def metrics(self) -> MemoryManagerMetrics:
        """The policy's series."""
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
