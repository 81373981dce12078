"""Kueue objects as the API serves them (``kueue.x-k8s.io/v1beta2`` JSON), built for the
acceptance tables: the same dicts are fed to the engine in process and created through the API
server, so both levels decide from identical inputs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from numaplane.kueue.api.conditions import format_time
from numaplane.kueue.constants import API_VERSION, JOB_UID_LABEL

#: The time every table starts at (seconds since the epoch); objects are a second apart so the
#: FIFO order the tables state is the creation order.
EPOCH = 1_800_000_000.0

Obj = dict[str, Any]


def flavor(name: str, node_labels: Mapping[str, str] | None = None) -> Obj:
    """A ResourceFlavor."""
    spec: Obj = {}
    if node_labels:
        spec["nodeLabels"] = dict(node_labels)
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceFlavor",
        "metadata": {"name": name},
        "spec": spec,
    }


@dataclass(frozen=True)
class Quota:
    """One resource of a flavor: ``nominal`` and optional limits, as quantity strings."""

    resource: str
    nominal: str
    borrowing_limit: str | None = None
    lending_limit: str | None = None

    def to_dict(self) -> Obj:
        """The ``resources[]`` entry."""
        out: Obj = {"name": self.resource, "nominalQuota": self.nominal}
        if self.borrowing_limit is not None:
            out["borrowingLimit"] = self.borrowing_limit
        if self.lending_limit is not None:
            out["lendingLimit"] = self.lending_limit
        return out


@dataclass(frozen=True)
class Group:
    """A resource group: covered resources and, per flavor in order, its quotas."""

    covered: tuple[str, ...]
    flavors: tuple[tuple[str, tuple[Quota, ...]], ...]

    def to_dict(self) -> Obj:
        """The ``resourceGroups[]`` entry."""
        return {
            "coveredResources": list(self.covered),
            "flavors": [
                {"name": name, "resources": [q.to_dict() for q in quotas]}
                for name, quotas in self.flavors
            ],
        }


def group(flavors: Sequence[tuple[str, Sequence[Quota]]]) -> Group:
    """A group covering every resource its first flavor lists."""
    covered = tuple(q.resource for q in flavors[0][1])
    return Group(covered, tuple((name, tuple(quotas)) for name, quotas in flavors))


def cluster_queue(
    name: str,
    groups: Sequence[Group],
    *,
    cohort: str = "",
    strategy: str | None = None,
    within: str | None = None,
    reclaim: str | None = None,
    borrow_within: str | None = None,
    namespace_selector: Mapping[str, Any] | None = None,
) -> Obj:
    """A ClusterQueue open to every namespace (unless a selector is given)."""
    spec: Obj = {
        "namespaceSelector": dict(namespace_selector or {}),
        "resourceGroups": [g.to_dict() for g in groups],
    }
    if cohort:
        spec["cohortName"] = cohort
    if strategy:
        spec["queueingStrategy"] = strategy
    preemption: Obj = {}
    if within:
        preemption["withinClusterQueue"] = within
    if reclaim:
        preemption["reclaimWithinCohort"] = reclaim
    if borrow_within:
        preemption["borrowWithinCohort"] = {"policy": borrow_within}
    if preemption:
        spec["preemption"] = preemption
    return {
        "apiVersion": API_VERSION,
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": spec,
    }


def local_queue(namespace: str, name: str, cluster_queue_name: str) -> Obj:
    """A LocalQueue."""
    return {
        "apiVersion": API_VERSION,
        "kind": "LocalQueue",
        "metadata": {"namespace": namespace, "name": name},
        "spec": {"clusterQueue": cluster_queue_name},
    }


@dataclass(frozen=True)
class PodSetSpec:
    """A podSet: ``count`` pods each requesting ``requests`` (quantity strings)."""

    name: str
    count: int
    requests: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> Obj:
        """The ``podSets[]`` entry with a one-container template."""
        return {
            "name": self.name,
            "count": self.count,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "c",
                            "image": "registry.k8s.io/pause:3.9",
                            "resources": {"requests": dict(self.requests)},
                        }
                    ],
                }
            },
        }


@dataclass(frozen=True)
class Assigned:
    """What a running workload holds: per podSet, resource → (flavor, total quantity)."""

    cluster_queue: str
    pod_sets: tuple[tuple[str, int, tuple[tuple[str, str, str], ...]], ...]

    def to_dict(self) -> Obj:
        """``status.admission``."""
        return {
            "clusterQueue": self.cluster_queue,
            "podSetAssignments": [
                {
                    "name": name,
                    "count": count,
                    "flavors": {res: fl for res, fl, _ in usage},
                    "resourceUsage": {res: qty for res, _, qty in usage},
                }
                for name, count, usage in self.pod_sets
            ],
        }


@dataclass(frozen=True)
class WorkloadSpec:
    """A Workload of a table: pending when ``holds`` is None, else running with that admission
    (QuotaReserved and Admitted, as a workload upstream's tests build with ``Admit``)."""

    namespace: str
    name: str
    pod_sets: tuple[PodSetSpec, ...]
    queue: str = "main"
    priority: int = 0
    uid: str = ""
    job_uid: str = ""
    holds: Assigned | None = None

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    def to_dict(self, created: float, *, with_status: bool = True) -> Obj:
        """The Workload created at ``created``; with ``with_status``, a running one carries its
        reservation (the status an API client writes separately)."""
        meta: Obj = {
            "namespace": self.namespace,
            "name": self.name,
            "creationTimestamp": format_time(created),
        }
        if self.uid:
            meta["uid"] = self.uid
        if self.job_uid:
            meta["labels"] = {JOB_UID_LABEL: self.job_uid}
        out: Obj = {
            "apiVersion": API_VERSION,
            "kind": "Workload",
            "metadata": meta,
            "spec": {
                "queueName": self.queue,
                "priority": self.priority,
                "podSets": [p.to_dict() for p in self.pod_sets],
            },
        }
        if with_status and self.holds is not None:
            out["status"] = running_status(self.holds, created)
        return out


def running_status(holds: Assigned, at: float) -> Obj:
    """The status of a workload that reserved quota and was admitted at ``at``."""
    when = format_time(at)
    return {
        "admission": holds.to_dict(),
        "conditions": [
            {
                "type": "QuotaReserved",
                "status": "True",
                "reason": "QuotaReserved",
                "message": f"Quota reserved in ClusterQueue {holds.cluster_queue}",
                "lastTransitionTime": when,
            },
            {
                "type": "Admitted",
                "status": "True",
                "reason": "Admitted",
                "message": "The workload is admitted",
                "lastTransitionTime": when,
            },
        ],
    }


def main(count: int, **requests: str) -> tuple[PodSetSpec, ...]:
    """The single podSet ``main``."""
    return (PodSetSpec("main", count, requests),)


def cpu_on(cluster_queue_name: str, flavor_name: str, amount: str, count: int = 1) -> Assigned:
    """A ``main`` podSet holding ``amount`` cpu of ``flavor_name``."""
    return Assigned(cluster_queue_name, (("main", count, (("cpu", flavor_name, amount),)),))
