"""A test-only fake of the scheduling snapshot (``numaplane.kueue.cache``) for ONE flat cohort,
with exactly the queries flavor assignment makes, by quota.md §2's formulas for a cohort of
ClusterQueues without cohort quota (lending limits included). It stands in until kquota's real
snapshot lands; it is not a second quota tree: no hierarchy, no workloads, no propagation."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from numaplane.kueue.api.model import ClusterQueue, ResourceFlavor, ResourceQuota
from numaplane.kueue.resources import FlavorResource


@dataclass
class FakeFlatClusterQueue:
    """One ClusterQueue of a :class:`FakeFlatSnapshot`."""

    spec: ClusterQueue
    snapshot: FakeFlatSnapshot
    usage_of: dict[FlavorResource, int] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.spec.name

    def _quota(self, fr: FlavorResource) -> ResourceQuota | None:
        return self.spec.quotas().get(fr)

    def _peers(self) -> list[FakeFlatClusterQueue]:
        if not self.spec.cohort:
            return []
        return [
            cq for cq in self.snapshot.cluster_queues.values() if cq.spec.cohort == self.spec.cohort
        ]

    def nominal(self, fr: FlavorResource) -> int:
        q = self._quota(fr)
        return 0 if q is None else q.nominal

    def usage(self, fr: FlavorResource) -> int:
        return self.usage_of.get(fr, 0)

    def _local_quota(self, fr: FlavorResource) -> int:
        q = self._quota(fr)
        if q is None or q.lending_limit is None:
            return 0
        return max(0, q.nominal - q.lending_limit)

    def _cohort_quota(self, fr: FlavorResource) -> int:
        return sum(cq.nominal(fr) - cq._local_quota(fr) for cq in self._peers())

    def _cohort_usage(self, fr: FlavorResource) -> int:
        return sum(max(0, cq.usage(fr) - cq._local_quota(fr)) for cq in self._peers())

    def available(self, fr: FlavorResource) -> int:
        # Never below 0, as upstream's ClusterQueueSnapshot.Available.
        return max(0, self._available(fr))

    def _available(self, fr: FlavorResource) -> int:
        if not self.spec.cohort:
            return self.nominal(fr) - self.usage(fr)
        local = self._local_quota(fr)
        local_available = max(0, local - self.usage(fr))
        parent = self._cohort_quota(fr) - self._cohort_usage(fr)
        q = self._quota(fr)
        if q is not None and q.borrowing_limit is not None:
            stored = self.nominal(fr) - local
            used = max(0, self.usage(fr) - local)
            parent = min(parent, stored - used + q.borrowing_limit)
        return local_available + parent

    def potential_available(self, fr: FlavorResource) -> int:
        if not self.spec.cohort:
            return self.nominal(fr)
        value = self._local_quota(fr) + self._cohort_quota(fr)
        q = self._quota(fr)
        if q is not None and q.borrowing_limit is not None:
            value = min(value, self.nominal(fr) + q.borrowing_limit)
        return value

    def borrowing_with(self, fr: FlavorResource, val: int) -> bool:
        return self.usage(fr) + val > self.nominal(fr)

    def height_of_lowest_subtree_that_fits(self, fr: FlavorResource, val: int) -> tuple[int, bool]:
        has_parent = bool(self.spec.cohort)
        if not has_parent or not self.borrowing_with(fr, val):
            return 0, has_parent
        # The flat cohort is the root: height 1 whether or not it fits there.
        return 1, False

    def add_usage(self, usage: Mapping[FlavorResource, int]) -> None:
        for fr, value in usage.items():
            self.usage_of[fr] = self.usage_of.get(fr, 0) + value


class FakeFlatSnapshot:
    """ClusterQueues (those naming the same cohort form it) and the flavors that exist."""

    def __init__(
        self, cluster_queues: Iterable[ClusterQueue], flavors: Iterable[ResourceFlavor]
    ) -> None:
        self.cluster_queues = {cq.name: FakeFlatClusterQueue(cq, self) for cq in cluster_queues}
        self.flavors: dict[str, ResourceFlavor] = {f.name: f for f in flavors}
