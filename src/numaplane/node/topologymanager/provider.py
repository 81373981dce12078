"""The roles around the Topology Manager, as small Protocols.

- ``HintProvider``: a resource manager (CPU, memory, devices) that offers topology hints and
  allocates once the Topology Manager has chosen an affinity.
- ``AffinityReader``: the read-only half of the affinity store that providers consult during
  ``allocate`` (upstream ``Store.GetAffinity``).
"""

from __future__ import annotations

from typing import Protocol

from numaplane.api.pod import Container, Pod
from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint


class HintProvider(Protocol):
    """A resource manager the Topology Manager consults (upstream ``HintProvider``)."""

    def get_topology_hints(self, pod: Pod, container: Container) -> ProviderHints:
        """Hints per resource for one container (container scope)."""
        ...

    def get_pod_topology_hints(self, pod: Pod) -> ProviderHints:
        """Hints per resource for the whole pod (pod scope)."""
        ...

    def allocate(self, pod: Pod, container: Container) -> None:
        """Allocate the container's resources using the stored affinity; raise on failure."""
        ...


class AffinityReader(Protocol):
    """Read-only access to the merged hint stored per (pod, container)."""

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        """The stored hint; ``TopologyHint(None, False)``-like empty hint when none is stored."""
        ...
