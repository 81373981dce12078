"""The ``Policy`` Protocol every memory manager policy implements (upstream ``Policy``)."""

from __future__ import annotations

from typing import Protocol

from numaplane.api.pod import Container, Pod
from numaplane.node.memorymanager.metrics import MemoryManagerMetrics
from numaplane.node.memorymanager.state import Block, State, StateReader
from numaplane.node.topologymanager.hint import ProviderHints


class Policy(Protocol):
    """A memory placement policy; state is passed in, the policy keeps none of it."""

    @property
    def name(self) -> str:
        """The policy's configuration name (``None`` or ``Static``)."""
        ...

    @property
    def metrics(self) -> MemoryManagerMetrics:
        """The policy's pinning counters."""
        ...

    def start(self, state: State) -> None:
        """Validate (and, when empty, initialise) the state; raise on a mismatch."""
        ...

    def allocate(self, state: State, pod: Pod, container: Container) -> None:
        """Assign the container's memory; raise ``MemoryManagerError`` when impossible."""
        ...

    def remove_container(self, state: State, pod_uid: str, container_name: str) -> None:
        """Release the container's memory (a no-op for an unknown container)."""
        ...

    def get_topology_hints(
        self, state: StateReader, pod: Pod, container: Container
    ) -> ProviderHints:
        """Hints for one container (container scope)."""
        ...

    def get_pod_topology_hints(self, state: StateReader, pod: Pod) -> ProviderHints:
        """Hints for the whole pod (pod scope)."""
        ...

    def get_allocatable_memory(self, state: StateReader) -> tuple[Block, ...]:
        """One single-node block per (node, resource) with allocatable memory."""
        ...
