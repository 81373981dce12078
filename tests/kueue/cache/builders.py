"""Small constructors for the model objects the cache tests build (amounts in Kueue's integers:
cpu in millicores)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from numaplane.kueue.api.model import (
    Admission,
    ClusterQueue,
    Cohort,
    FlavorQuotas,
    PodSet,
    PodSetAssignment,
    ResourceGroup,
    ResourceQuota,
    Workload,
)

#: One quota cell: (flavor, resource, nominal, borrowing limit, lending limit).
Cell = tuple[str, str, int, int | None, int | None]


def groups(*cells: Cell) -> tuple[ResourceGroup, ...]:
    """Resource groups from cells: one group per resource, flavors in the order given."""
    by_resource: dict[str, list[FlavorQuotas]] = {}
    for flavor, resource, nominal, borrowing, lending in cells:
        quota = ResourceQuota(resource, nominal, borrowing, lending)
        by_resource.setdefault(resource, []).append(FlavorQuotas(flavor, (quota,)))
    return tuple(
        ResourceGroup((resource,), tuple(flavors)) for resource, flavors in by_resource.items()
    )


def cq(name: str, cohort: str = "", *cells: Cell, **fields: Any) -> ClusterQueue:
    """A ClusterQueue with one resource group per resource (``fields``: any other field)."""
    return replace(ClusterQueue(name=name, cohort=cohort, resource_groups=groups(*cells)), **fields)


def cohort(name: str, parent: str = "", *cells: Cell) -> Cohort:
    """A Cohort object, with quota of its own when ``cells`` are given."""
    return Cohort(name=name, parent=parent, resource_groups=groups(*cells))


def admitted(
    name: str,
    cluster_queue: str,
    usage: dict[tuple[str, str], int],
    *,
    namespace: str = "ns",
    queue: str = "main",
    is_admitted: bool = False,
    priority: int = 0,
    pods_ready: bool = False,
) -> Workload:
    """A workload reserving ``usage`` ((flavor, resource) → amount, one flavor per resource) in
    ``cluster_queue``."""
    flavors = {resource: flavor for flavor, resource in usage}
    totals = {resource: amount for (_, resource), amount in usage.items()}
    conditions = {"QuotaReserved": ("True", "QuotaReserved", "", 0.0)}
    if is_admitted:
        conditions["Admitted"] = ("True", "Admitted", "", 0.0)
    if pods_ready:
        conditions["PodsReady"] = ("True", "PodsReady", "", 0.0)
    return Workload(
        namespace=namespace,
        name=name,
        uid=f"uid-{name}",
        queue_name=queue,
        pod_sets=(PodSet("main", 1, totals),),
        priority=priority,
        admission=Admission(cluster_queue, (PodSetAssignment("main", flavors, totals, 1),)),
        conditions=conditions,
    )
