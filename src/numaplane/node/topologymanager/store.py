"""The affinity store: the merged hint per (pod, container) that providers read in ``allocate``.

Upstream keeps it in the scope (``podTopologyHints``). ``remove_container_id`` follows
``RemoveContainer``: a hint is forgotten only if the (pod, container) is not by then mapped to a
different container id (a restart), and a pod entry goes when its last container does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from numaplane.node.topologymanager.hint import TopologyHint

_EMPTY_HINT = TopologyHint(None, False)


class AffinityStateReader(Protocol):
    """The read-only half of the store: what the Topology Manager shows outsiders."""

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        """The stored hint, or the empty hint when none is stored."""
        ...

    def find_affinity(self, pod_uid: str, container_name: str) -> TopologyHint | None:
        """The stored hint, or ``None``."""
        ...

    def snapshot(self) -> Mapping[str, Mapping[str, TopologyHint]]:
        """Every stored hint by pod uid and container name."""
        ...


class AffinityStore:
    """Mutable map ``pod uid -> container name -> TopologyHint`` (implements ``AffinityReader``)."""

    def __init__(self) -> None:
        self._hints: dict[str, dict[str, TopologyHint]] = {}
        self._container_ids: dict[str, tuple[str, str]] = {}

    def set_affinity(self, pod_uid: str, container_name: str, hint: TopologyHint) -> None:
        """Store the merged hint of one container."""
        self._hints.setdefault(pod_uid, {})[container_name] = hint

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        """The stored hint, or the empty hint ``{any, not preferred}`` when none is stored."""
        return self._hints.get(pod_uid, {}).get(container_name, _EMPTY_HINT)

    def find_affinity(self, pod_uid: str, container_name: str) -> TopologyHint | None:
        """The stored hint, or ``None`` when none is stored."""
        containers = self._hints.get(pod_uid)
        return None if containers is None else containers.get(container_name)

    def has_affinity(self, pod_uid: str, container_name: str) -> bool:
        """Whether a hint is stored for the container."""
        return container_name in self._hints.get(pod_uid, {})

    def remove_container(self, pod_uid: str, container_name: str) -> None:
        """Forget one container's hint (and the pod entry once it is empty)."""
        containers = self._hints.get(pod_uid)
        if containers is None:
            return
        containers.pop(container_name, None)
        if not containers:
            del self._hints[pod_uid]

    def remove_pod(self, pod_uid: str) -> None:
        """Forget every hint and container id of a pod."""
        self._hints.pop(pod_uid, None)
        for container_id in [k for k, (uid, _) in self._container_ids.items() if uid == pod_uid]:
            del self._container_ids[container_id]

    def add_container(self, pod_uid: str, container_name: str, container_id: str) -> None:
        """Record which runtime container id runs (pod, container) (upstream ``AddContainer``)."""
        self._container_ids[container_id] = (pod_uid, container_name)

    def remove_container_id(self, container_id: str) -> None:
        """Upstream ``RemoveContainer(containerID)``; unknown ids are ignored."""
        ref = self._container_ids.pop(container_id, None)
        if ref is None:
            return
        if ref in self._container_ids.values():
            return  # restarted under a new id: the hint still belongs to the live container
        self.remove_container(*ref)

    def snapshot(self) -> Mapping[str, Mapping[str, TopologyHint]]:
        """A copy of every stored hint."""
        return {uid: dict(containers) for uid, containers in self._hints.items()}
