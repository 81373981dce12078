"""The ``None`` memory policy: no placement, no hints, no state (upstream ``policy_none.go``)."""

from __future__ import annotations

from typing import Final

from numaplane.api.pod import Container, Pod
from numaplane.node.memorymanager.metrics import MemoryManagerMetrics
from numaplane.node.memorymanager.state import Block, State, StateReader
from numaplane.node.topologymanager.hint import ProviderHints

POLICY_NONE: Final = "None"
"""The configuration name of this policy."""


class NonePolicy:
    """Does nothing: containers get memory from anywhere, as without a memory manager."""

    def __init__(self, *, metrics: MemoryManagerMetrics | None = None) -> None:
        # Never updated, but exported at zero as the kubelet exports them under any policy.
        self._metrics = metrics if metrics is not None else MemoryManagerMetrics()

    @property
    def name(self) -> str:
        """``None``."""
        return POLICY_NONE

    @property
    def metrics(self) -> MemoryManagerMetrics:
        """Always zero: this policy pins nothing."""
        return self._metrics

    def start(self, state: State) -> None:
        """Nothing to validate."""

    def allocate(self, state: State, pod: Pod, container: Container) -> None:
        """Nothing to allocate."""

    def remove_container(self, state: State, pod_uid: str, container_name: str) -> None:
        """Nothing to release."""

    def get_topology_hints(
        self, state: StateReader, pod: Pod, container: Container
    ) -> ProviderHints:
        """No preference (``None``)."""
        return None

    def get_pod_topology_hints(self, state: StateReader, pod: Pod) -> ProviderHints:
        """No preference (``None``)."""
        return None

    def get_allocatable_memory(self, state: StateReader) -> tuple[Block, ...]:
        """Nothing is managed, so nothing is listed."""
        return ()
