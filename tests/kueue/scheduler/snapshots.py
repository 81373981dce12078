"""The snapshot the flavor-assignment tests run against: kquota's real
``numaplane.kueue.cache`` snapshot when this tree has it, otherwise the flat-cohort fake
(:mod:`.fake_flat_snapshot`), which stands in only until the branches are merged."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any

from numaplane.kueue.api.model import ClusterQueue, Cohort, ResourceFlavor
from numaplane.kueue.resources import FlavorResource

from .fake_flat_snapshot import FakeFlatSnapshot

# Looked up by name: the package exists on every branch, KueueCache only once kquota's is merged.
KueueCache: Any = getattr(importlib.import_module("numaplane.kueue.cache"), "KueueCache", None)

#: Whether the tests run against the real quota tree.
REAL_SNAPSHOT: bool = KueueCache is not None


def build_snapshot(
    queues: Sequence[ClusterQueue],
    flavors: Sequence[ResourceFlavor],
    usage: Mapping[str, Mapping[FlavorResource, int]] | None = None,
    cohorts: Sequence[Cohort] = (),
) -> Any:
    """A snapshot holding ``queues`` (a shared ``cohort`` name makes an implicit Cohort),
    ``cohorts`` (real snapshot only) and, of the flavors the queues name, only ``flavors`` (the
    others were deleted), with ``usage`` (queue name → usage) charged."""
    if KueueCache is None:
        if cohorts:
            raise ValueError("the flat-cohort fake has no Cohort objects")
        snap: Any = FakeFlatSnapshot(queues, flavors)
    else:
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
