"""Model objects for the preemption and scheduling-cycle tests, written the way upstream's
``TestPreemption``/``TestSchedule`` tables write them (amounts in Kueue's integers: cpu in
millicores, memory in bytes)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from numaplane.kueue.api.model import (
    Admission,
    BorrowWithinCohort,
    ClusterQueue,
    Cohort,
    FlavorQuotas,
    PodSet,
    PodSetAssignment,
    PreemptionPolicy,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Workload,
)
from numaplane.kueue.cache import KueueCache, Snapshot

#: The time every test cycle runs at (seconds since the epoch).
NOW = 1_700_000_000.0
GI = 1024**3


def cpu(cores: float) -> int:
    """``cores`` CPUs in millicores."""
    return round(cores * 1000)


def quota(
    resource: str, nominal: int, borrowing: int | None = None, lending: int | None = None
) -> ResourceQuota:
    """One resource's quota."""
    return ResourceQuota(resource, nominal, borrowing, lending)


def flavor(name: str, *quotas: ResourceQuota) -> FlavorQuotas:
    """A flavor of a resource group."""
    return FlavorQuotas(name, tuple(quotas))


def group(*flavors: FlavorQuotas) -> ResourceGroup:
    """A resource group covering the first flavor's resources, in order."""
    return ResourceGroup(tuple(q.name for q in flavors[0].resources), tuple(flavors))


def preemption(
    within: str = "Never",
    reclaim: str = "Never",
    borrow: str = "Never",
    threshold: int | None = None,
) -> PreemptionPolicy:
    """``spec.preemption``."""
    return PreemptionPolicy(reclaim, within, BorrowWithinCohort(borrow, threshold))


def cluster_queue(
    name: str, *groups: ResourceGroup, cohort: str = "", **fields: Any
) -> ClusterQueue:
    """A ClusterQueue that admits every namespace unless ``namespace_selector`` says otherwise."""
    fields.setdefault("namespace_selector", {})
    return replace(ClusterQueue(name=name, resource_groups=groups, cohort=cohort), **fields)


def admitted(
    name: str,
    cq: str,
    usage: Mapping[tuple[str, str], int],
    *,
    priority: int = 0,
    namespace: str = "",
    reserved_at: float = NOW,
    evicted: bool = False,
    uid: str = "",
) -> Workload:
    """A workload of one pod reserving ``usage`` ((flavor, resource) → amount) in ``cq``."""
    flavors = {resource: fl for fl, resource in usage}
    totals = {resource: amount for (_, resource), amount in usage.items()}
    conditions: dict[str, tuple[str, str, str, float]] = {
        "QuotaReserved": (
            "True",
            "QuotaReserved",
            f"Quota reserved in ClusterQueue {cq}",
            reserved_at,
        )
    }
    if evicted:
        conditions["Evicted"] = ("True", "Preempted", "", reserved_at)
    return Workload(
        namespace=namespace,
        name=name,
        uid=uid or name,
        queue_name="main",
        pod_sets=(PodSet("main", 1, totals),),
        priority=priority,
        creation_time=reserved_at,
        queue_order_time=reserved_at,
        admission=Admission(cq, (PodSetAssignment("main", flavors, totals, 1),)),
        conditions=conditions,
    )


def with_pod_sets(wl: Workload, *assignments: tuple[str, str, str, int, int]) -> Workload:
    """``wl`` (an :func:`admitted` workload) reserving per podSet instead: each assignment is
    (podSet, flavor, resource, amount, count)."""
    assert wl.admission is not None
    return replace(
        wl,
        pod_sets=tuple(PodSet(ps, n, {res: amount // n}) for ps, _, res, amount, n in assignments),
        admission=Admission(
            wl.admission.cluster_queue,
            tuple(
                PodSetAssignment(ps, {res: fl}, {res: amount}, n)
                for ps, fl, res, amount, n in assignments
            ),
        ),
    )


def pending(
    name: str,
    requests: Mapping[str, int],
    *,
    count: int = 1,
    priority: int = 0,
    namespace: str = "",
    queue: str = "main",
    created: float = NOW - 60,
    uid: str = "",
    job_uid: str = "",
    pod_set: str = "main",
    min_count: int | None = None,
) -> Workload:
    """A pending workload with one podSet of ``count`` pods each requesting ``requests``."""
    return Workload(
        namespace=namespace,
        name=name,
        uid=uid or name,
        queue_name=queue,
        pod_sets=(PodSet(pod_set, count, dict(requests), min_count=min_count),),
        priority=priority,
        creation_time=created,
        queue_order_time=created,
        job_uid=job_uid,
    )


def cohort(name: str, parent: str = "", *groups: ResourceGroup) -> Cohort:
    """A Cohort object (with quota of its own when ``groups`` are given)."""
    return Cohort(name=name, parent=parent, resource_groups=groups)


def snapshot_of(
    flavors: Iterable[str],
    queues: Iterable[ClusterQueue],
    workloads: Iterable[Workload] = (),
    cohorts: Iterable[Cohort] = (),
) -> Snapshot:
    """The snapshot a cache holding these objects takes."""
    cache = KueueCache()
    for name in flavors:
        cache.upsert_flavor(ResourceFlavor(name))
    for co in cohorts:
        cache.upsert_cohort(co)
    for cq in queues:
        cache.upsert_cluster_queue(cq)
    for wl in workloads:
        cache.upsert_workload(wl)
    return cache.snapshot()
