"""The ``Policy`` Protocol every CPU manager policy implements (upstream ``cpumanager.Policy``).

Policies hold only their configuration; the state they act on is passed in on every call.
"""

from __future__ import annotations

from typing import Protocol

from numaplane.api.pod import Container, Pod
from numaplane.node.cpumanager.metrics import CPUManagerMetrics
from numaplane.node.cpumanager.state import State, StateReader
from numaplane.node.topologymanager.hint import ProviderHints
from numaplane.topology.cpuset import CPUSet


class Policy(Protocol):
    """A CPU manager policy (``none`` or ``static``)."""

    @property
    def name(self) -> str:
        """The configuration name (``cpuManagerPolicy``)."""
        ...

    @property
    def metrics(self) -> CPUManagerMetrics:
        """The series the policy updates."""
        ...

    def start(self, state: State) -> None:
        """Validate (and initialise) the state; raise ``NodeError`` when it is unusable."""
        ...

    def allocate(self, state: State, pod: Pod, container: Container) -> None:
        """Give the container its CPUs; raise ``NodeError`` (or ``AdmissionError``) on failure."""
        ...

    def remove_container(self, state: State, pod_uid: str, container_name: str) -> None:
        """Release the container's CPUs."""
        ...

    def get_topology_hints(
        self, state: StateReader, pod: Pod, container: Container
    ) -> ProviderHints:
        """Container-scope hints."""
        ...

    def get_pod_topology_hints(self, state: StateReader, pod: Pod) -> ProviderHints:
        """Pod-scope hints."""
        ...

    def get_allocatable_cpus(self, state: StateReader) -> CPUSet:
        """CPUs that may ever be given exclusively."""
        ...
