"""Kueue objects as a user would apply them (the JSON of ``kubectl apply``), for tests and
benchmarks: namespaces, ResourceFlavors, ClusterQueues with one resource group, LocalQueues and
Workloads of one podSet."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Obj = dict[str, Any]

API = "kueue.x-k8s.io/v1beta2"


def namespace(name: str, labels: Mapping[str, str] | None = None) -> Obj:
    """A core/v1 Namespace."""
    meta: Obj = {"name": name}
    if labels:
        meta["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def resource_flavor(name: str, node_labels: Mapping[str, str] | None = None) -> Obj:
    """A ResourceFlavor."""
    spec: Obj = {"nodeLabels": dict(node_labels)} if node_labels else {}
    return {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


def cluster_queue(
    name: str,
    quotas: Mapping[str, Mapping[str, Any]],
    *,
    cohort: str = "",
    preemption: Mapping[str, Any] | None = None,
    namespace_selector: Mapping[str, Any] | None = None,
    **spec: Any,
) -> Obj:
    """A ClusterQueue with one resource group: ``quotas`` maps flavor → resource → nominal
    quantity, or → ``{"nominalQuota": q, "borrowingLimit": b, "lendingLimit": l}``. Every
    namespace is selected unless ``namespace_selector`` says otherwise."""
    covered: list[str] = []
    flavors = []
    for flavor, resources in quotas.items():
        rows = []
        for resource, quota in resources.items():
            if resource not in covered:
                covered.append(resource)
            row = dict(quota) if isinstance(quota, Mapping) else {"nominalQuota": quota}
            rows.append({"name": resource, **row})
        flavors.append({"name": flavor, "resources": rows})
    body: Obj = {
        "namespaceSelector": dict(namespace_selector) if namespace_selector is not None else {},
        "resourceGroups": [{"coveredResources": covered, "flavors": flavors}],
        **spec,
    }
    if cohort:
        body["cohortName"] = cohort
    if preemption is not None:
        body["preemption"] = dict(preemption)
    return {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": body}


def local_queue(namespace: str, name: str, cluster_queue: str) -> Obj:
    """A LocalQueue."""
    return {
        "apiVersion": API,
        "kind": "LocalQueue",
        "metadata": {"namespace": namespace, "name": name},
        "spec": {"clusterQueue": cluster_queue},
    }


def workload_priority_class(name: str, value: int) -> Obj:
    """A WorkloadPriorityClass."""
    return {
        "apiVersion": API,
        "kind": "WorkloadPriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def workload(
    namespace: str,
    name: str,
    queue: str,
    requests: Mapping[str, Any],
    *,
    count: int = 1,
    priority: int | None = None,
    min_count: int | None = None,
) -> Obj:
    """A Workload with one podSet ``main`` of ``count`` pods, each requesting ``requests``."""
    pod_set: Obj = {
        "name": "main",
        "count": count,
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "c",
                        "image": "busybox",
                        "resources": {"requests": {k: str(v) for k, v in requests.items()}},
                    }
                ],
            }
        },
    }
    if min_count is not None:
        pod_set["minCount"] = min_count
    spec: Obj = {"queueName": queue, "podSets": [pod_set]}
    if priority is not None:
        spec["priority"] = priority
    return {
        "apiVersion": API,
        "kind": "Workload",
        "metadata": {"namespace": namespace, "name": name},
        "spec": spec,
    }
