"""A stand-in for a worker cluster's connection as the MultiKueue workload controller reads it
(``RemoteCluster``: connected, lost_since, caches of our Workloads and Jobs)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]


@dataclass
class FakeStore:
    """An informer's cache: objects by ``namespace/name``."""

    objects: dict[str, Obj] = field(default_factory=dict)

    def get_by_key(self, key: str) -> Obj | None:
        """The cached object, or None."""
        return self.objects.get(key)


@dataclass
class FakeRemoteCluster:
    """A worker connection: state and caches set by the test."""

    connected: bool = True
    lost_since: float | None = None
    workloads: FakeStore | None = field(default_factory=FakeStore)
    jobs: FakeStore | None = field(default_factory=FakeStore)
    client: Any = None
