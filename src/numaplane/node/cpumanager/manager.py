"""``CPUManager``: a policy, its state and the Topology Manager's affinities, as a hint provider.

This is the pure part of upstream ``cpu_manager.go``: admission-time hints and allocation, and
removal. Writing cpusets into cgroups (the reconcile loop) is the agent's job; it reads the
pools through the accessors here.
"""

from __future__ import annotations

from collections.abc import Mapping

from numaplane.api.pod import Container, Pod
from numaplane.node.cpumanager.metrics import CPUManagerMetrics
from numaplane.node.cpumanager.policy import Policy
from numaplane.node.cpumanager.policy_none import POLICY_NONE, NonePolicy
from numaplane.node.cpumanager.policy_options import GateReader
from numaplane.node.cpumanager.policy_static import POLICY_STATIC, StaticPolicy
from numaplane.node.cpumanager.state import InMemoryState, State, StateReader
from numaplane.node.cpumanager.topology import CPUTopology
from numaplane.node.errors import ConfigurationError
from numaplane.node.topologymanager.hint import ProviderHints
from numaplane.node.topologymanager.provider import AffinityReader
from numaplane.topology.cpuset import CPUSet

__all__ = ["CPUManager", "CPUManagerMetrics", "new_policy"]


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
        return NonePolicy(options)
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

    ``state`` defaults to an empty in-memory state; ``start()`` validates (or initialises) it.
    """

    def __init__(
        self,
        policy: Policy,
        topology: CPUTopology,
        state: State | None = None,
        metrics: CPUManagerMetrics | None = None,
    ) -> None:
        self.policy = policy
        self.topology = topology
        self.state: State = state if state is not None else InMemoryState()
        if metrics is None:
            metrics = policy.metrics if isinstance(policy, StaticPolicy) else CPUManagerMetrics()
        self.metrics = metrics

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
    ) -> CPUManager:
        """Build the policy and the manager around it (not started)."""
        metrics = CPUManagerMetrics()
        policy = new_policy(
            policy_name,
            topology,
            num_reserved_cpus=num_reserved_cpus,
            reserved_cpus=reserved_cpus,
            affinity=affinity,
            options=options,
            gates=gates,
            topology_manager_policy=topology_manager_policy,
            metrics=metrics,
        )
        return cls(policy, topology, state, metrics)

    def start(self) -> None:
        """Validate (or initialise) the state for the policy."""
        self.policy.start(self.state)

    # -- HintProvider ----------------------------------------------------------------------

    def get_topology_hints(self, pod: Pod, container: Container) -> ProviderHints:
        """Container-scope CPU hints."""
        return self.policy.get_topology_hints(self.state, pod, container)

    def get_pod_topology_hints(self, pod: Pod) -> ProviderHints:
        """Pod-scope CPU hints."""
        return self.policy.get_pod_topology_hints(self.state, pod)

    def allocate(self, pod: Pod, container: Container) -> None:
        """Give the container its CPUs (raises ``NodeError``/``AdmissionError`` on failure)."""
        self.policy.allocate(self.state, pod, container)

    def remove_container(self, pod_uid: str, container_name: str) -> None:
        """Release the container's exclusive CPUs, if any."""
        self.policy.remove_container(self.state, pod_uid, container_name)

    # -- read-only views -------------------------------------------------------------------

    @property
    def state_reader(self) -> StateReader:
        """The state, for readers."""
        return self.state

    def shared_pool(self) -> CPUSet:
        """The shared (default) CPU set, where non-exclusive containers run."""
        return self.state.get_default_cpu_set()

    def reserved_cpus(self) -> CPUSet:
        """CPUs reserved for the system (empty under the ``none`` policy)."""
        if isinstance(self.policy, StaticPolicy):
            return self.policy.reserved_cpus
        return CPUSet()

    def exclusive_cpus(self, pod_uid: str, container_name: str) -> CPUSet:
        """The container's exclusive CPUs (empty when it runs on the shared pool)."""
        return self.state.get_cpu_set(pod_uid, container_name) or CPUSet()

    def exclusive_assignments(self) -> dict[str, dict[str, CPUSet]]:
        """A copy of every exclusive assignment (pod UID -> container -> CPUs)."""
        return self.state.get_cpu_assignments()

    def cpu_affinity(self, pod_uid: str, container_name: str) -> CPUSet:
        """Where the container may run: its exclusive CPUs, else the shared pool."""
        return self.state.get_cpu_set_or_default(pod_uid, container_name)

    def allocatable_cpus(self) -> CPUSet:
        """CPUs that may ever be given exclusively."""
        return self.policy.get_allocatable_cpus(self.state)
