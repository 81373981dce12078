"""The snapshot the flavor-assignment tests run against: the real quota tree
(``numaplane.kueue.cache``), built from model objects."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from numaplane.kueue.api.model import ClusterQueue, Cohort, ResourceFlavor
from numaplane.kueue.cache import KueueCache
from numaplane.kueue.resources import FlavorResource


def build_snapshot(
    queues: Sequence[ClusterQueue],
    flavors: Sequence[ResourceFlavor],
    usage: Mapping[str, Mapping[FlavorResource, int]] | None = None,
    cohorts: Sequence[Cohort] = (),
) -> Any:
    """A snapshot holding ``queues`` (a shared ``cohort`` name makes an implicit Cohort),
    ``cohorts`` and, of the flavors the queues name, only ``flavors`` (the
    others were deleted), with ``usage`` (queue name → usage) charged."""
    cache = KueueCache()
    named = {fq.name for q in queues for group in q.resource_groups for fq in group.flavors}
    for flavor in flavors:
        cache.upsert_flavor(flavor)
    for name in named - {f.name for f in flavors}:
        # Present when the queue was read, deleted before the assignment (TestDeletedFlavors).
        cache.upsert_flavor(ResourceFlavor(name))
    for cohort in cohorts:
        cache.upsert_cohort(cohort)
    for queue in queues:
        cache.upsert_cluster_queue(queue)
    snap = cache.snapshot()
    for name in named - {f.name for f in flavors}:
        del snap.flavors[name]
    for name, amounts in (usage or {}).items():
        snap.cluster_queues[name].add_usage(amounts)
    return snap
