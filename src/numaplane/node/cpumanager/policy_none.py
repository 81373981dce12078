"""The ``none`` CPU policy: every container runs on the shared pool; nothing is pinned."""

from __future__ import annotations

from collections.abc import Mapping

from numaplane.api.pod import Container, Pod
from numaplane.gofmt import go_map
from numaplane.node.cpumanager.metrics import CPUManagerMetrics
from numaplane.node.cpumanager.state import State, StateReader
from numaplane.node.errors import ConfigurationError
from numaplane.node.topologymanager.hint import ProviderHints
from numaplane.topology.cpuset import CPUSet

POLICY_NONE = "none"


class NonePolicy:
    """Upstream ``nonePolicy``: accepts no options, never allocates, offers no hints."""

    def __init__(
        self, options: Mapping[str, str] | None = None, *, metrics: CPUManagerMetrics | None = None
    ) -> None:
        if options:
            raise ConfigurationError(f"None policy: received unsupported options={go_map(options)}")
        # Never updated, but exported at zero as the kubelet exports them under any policy.
        self.metrics = metrics if metrics is not None else CPUManagerMetrics()

    @property
    def name(self) -> str:
        """``"none"``."""
        return POLICY_NONE

    def start(self, state: State) -> None:
        """Nothing to validate."""

    def allocate(self, state: State, pod: Pod, container: Container) -> None:
        """Nothing to allocate: the container uses the shared pool."""

    def remove_container(self, state: State, pod_uid: str, container_name: str) -> None:
        """Nothing to release."""

    def get_topology_hints(
        self, state: StateReader, pod: Pod, container: Container
    ) -> ProviderHints:
        """No preference."""
        return None

    def get_pod_topology_hints(self, state: StateReader, pod: Pod) -> ProviderHints:
        """No preference."""
        return None

    def get_allocatable_cpus(self, state: StateReader) -> CPUSet:
        """Nothing is ever exclusive."""
        return CPUSet()
