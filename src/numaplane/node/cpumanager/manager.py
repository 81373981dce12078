"""``CPUManager``: a policy, its state and the Topology Manager's affinities, as a hint provider.

This is the pure part of upstream ``cpu_manager.go``: admission-time hints and allocation, and
removal. Writing cpusets into cgroups (the reconcile loop) is the agent's job; it reads the
pools through the accessors here.
"""

from __future__ import annotations

from collections.abc import Mapping

from prometheus_client import CollectorRegistry

from numaplane.api.pod import Container, Pod
from numaplane.node.cpumanager.metrics import CPUManagerMetrics
from numaplane.node.cpumanager.policy import Policy
from numaplane.node.cpumanager.policy_none import POLICY_NONE, NonePolicy
from numaplane.node.cpumanager.policy_options import GateReader
from numaplane.node.cpumanager.policy_static import POLICY_STATIC, StaticPolicy
from numaplane.node.cpumanager.state import InMemoryState, State, StateReader
from numaplane.node.cpumanager.topology import CPUTopology
from numaplane.node.errors import ConfigurationError
from numaplane.node.stale_state import ActiveContainers, ActivePods, stale_containers
from numaplane.node.topologymanager.hint import ProviderHints
from numaplane.node.topologymanager.metrics import AlignedComputeResources
from numaplane.node.topologymanager.provider import AffinityReader
from numaplane.topology.cpuset import CPUSet

__all__ = ["CPUManager", "new_policy"]


def new_policy(
    name: str,
    topology: CPUTopology,
    *,
    num_reserved_cpus: int = 0,
    reserved_cpus: CPUSet | None = None,
    affinity: AffinityReader | None = None,
    options: Mapping[str, str] | None = None,
    gates: GateReader | None = None,
    topology_manager_policy: str = "none",
    metrics: CPUManagerMetrics | None = None,
) -> Policy:
    """The policy called ``name`` (``cpuManagerPolicy``); ``ConfigurationError`` if unknown."""
    if name == POLICY_NONE:
        return NonePolicy(options, metrics=metrics)
    if name == POLICY_STATIC:
        return StaticPolicy(
            topology,
            num_reserved_cpus,
            reserved_cpus,
            affinity,
            options,
            gates=gates,
            topology_manager_policy=topology_manager_policy,
            metrics=metrics,
        )
    raise ConfigurationError(f'unknown policy: "{name}"')


class CPUManager:
    """A CPU manager: implements the Topology Manager's ``HintProvider`` Protocol.

    Built like the other managers: the policy (its metrics with it), then the state, which
    defaults to an empty in-memory one; ``active_pods``, when given, lists the active pods so
    the CPUs of other containers are released before hints and allocation. ``start()``
    validates (or initialises) the state; ``create`` builds the policy from its name.
    """

    def __init__(
        self,
        policy: Policy,
        topology: CPUTopology,
        state: State | None = None,
        *,
        active_pods: ActivePods | None = None,
    ) -> None:
        self._policy = policy
        self._topology = topology
        self._state: State = state if state is not None else InMemoryState()
        self._active_pods = active_pods

    @classmethod
    def create(
        cls,
        policy_name: str,
        topology: CPUTopology,
        *,
        num_reserved_cpus: int = 0,
        reserved_cpus: CPUSet | None = None,
        affinity: AffinityReader | None = None,
        options: Mapping[str, str] | None = None,
        gates: GateReader | None = None,
        topology_manager_policy: str = "none",
        state: State | None = None,
        active_pods: ActivePods | None = None,
        registry: CollectorRegistry | None = None,
        aligned: AlignedComputeResources | None = None,
    ) -> CPUManager:
        """Build the policy and the manager around it (not started); the metrics go to
        ``registry`` (``aligned``: the Topology Manager's aligned-resources counters)."""
        policy = new_policy(
            policy_name,
            topology,
            num_reserved_cpus=num_reserved_cpus,
            reserved_cpus=reserved_cpus,
            affinity=affinity,
            options=options,
            gates=gates,
            topology_manager_policy=topology_manager_policy,
            metrics=CPUManagerMetrics(registry, aligned),
        )
        return cls(policy, topology, state, active_pods=active_pods)

    def start(self) -> None:
        """Validate (or initialise) the state for the policy."""
        self._policy.start(self._state)

    # -- HintProvider ----------------------------------------------------------------------

    def get_topology_hints(self, pod: Pod, container: Container) -> ProviderHints:
        """Container-scope CPU hints."""
        self._remove_stale_state()
        return self._policy.get_topology_hints(self._state, pod, container)

    def get_pod_topology_hints(self, pod: Pod) -> ProviderHints:
        """Pod-scope CPU hints."""
        self._remove_stale_state()
        return self._policy.get_pod_topology_hints(self._state, pod)

    def allocate(self, pod: Pod, container: Container) -> None:
        """Give the container its CPUs (raises ``NodeError``/``AdmissionError`` on failure)."""
        self._remove_stale_state()
        self._policy.allocate(self._state, pod, container)

    def remove_container(self, pod_uid: str, container_name: str) -> None:
        """Release the container's exclusive CPUs, if any."""
        self._policy.remove_container(self._state, pod_uid, container_name)

    def remove_stale_state(self, active: ActiveContainers) -> None:
        """Release the CPUs of every container not in ``active`` (upstream
        ``removeStaleState``)."""
        for pod_uid, container_name in stale_containers(self._state.get_cpu_assignments(), active):
            self.remove_container(pod_uid, container_name)

    def _remove_stale_state(self) -> None:
        if self._active_pods is not None:
            self.remove_stale_state(self._active_pods())

    # -- read-only views -------------------------------------------------------------------

    @property
    def policy(self) -> Policy:
        """The policy in force."""
        return self._policy

    @property
    def policy_name(self) -> str:
        """The policy's configuration name (``cpuManagerPolicy``)."""
        return self._policy.name

    @property
    def state(self) -> StateReader:
        """Read access to the state (the policy alone writes it)."""
        return self._state

    @property
    def metrics(self) -> CPUManagerMetrics:
        """The policy's series."""
        return self._policy.metrics

    @property
    def topology(self) -> CPUTopology:
        """The machine's CPU topology."""
        return self._topology

    def shared_pool(self) -> CPUSet:
        """The shared (default) CPU set, where non-exclusive containers run."""
        return self._state.get_default_cpu_set()

    def reserved_cpus(self) -> CPUSet:
        """CPUs reserved for the system (empty under the ``none`` policy)."""
        policy = self._policy
        if isinstance(policy, StaticPolicy):
            return policy.reserved_cpus
        return CPUSet()

    def exclusive_cpus(self, pod_uid: str, container_name: str) -> CPUSet:
        """The container's exclusive CPUs (empty when it runs on the shared pool)."""
        return self._state.get_cpu_set(pod_uid, container_name) or CPUSet()

    def exclusive_assignments(self) -> dict[str, dict[str, CPUSet]]:
        """A copy of every exclusive assignment (pod UID -> container -> CPUs)."""
        return self._state.get_cpu_assignments()

    def cpu_affinity(self, pod_uid: str, container_name: str) -> CPUSet:
        """Where the container may run: its exclusive CPUs, else the shared pool."""
        return self._state.get_cpu_set_or_default(pod_uid, container_name)

    def allocatable_cpus(self) -> CPUSet:
        """CPUs that may ever be given exclusively."""
        return self._policy.get_allocatable_cpus(self._state)
