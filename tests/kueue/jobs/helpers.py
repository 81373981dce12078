"""batch/v1 Jobs (as the API server stores them, defaults applied) and Workloads the job
integration's tests start from."""

from __future__ import annotations

import copy
from typing import Any

from numaplane.kueue.api.conditions import format_time

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z
NS = "team-a"
UID = "a1b2c3d4-0000-4000-8000-000000000001"
#: ``workload_name("sample-job", UID)`` — upstream's hash, worked out once.
WL_NAME = "job-sample-job-57a5d"
Obj = dict[str, Any]


def job(
    *,
    queue: str | None = "user-queue",
    suspend: bool = True,
    parallelism: int = 3,
    completions: int | None = 3,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    status: Obj | None = None,
    node_selector: dict[str, str] | None = None,
    priority_class: str | None = None,
) -> Obj:
    """The quick-start Job as stored: one container asking for 1 CPU and 200Mi."""
    meta_labels = dict(labels or {})
    if queue is not None:
        meta_labels["kueue.x-k8s.io/queue-name"] = queue
    pod_spec: Obj = {
        "restartPolicy": "Never",
        "containers": [
            {
                "name": "dummy-job",
                "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
                "args": ["entrypoint-tester", "hello", "world"],
                "resources": {"requests": {"cpu": "1", "memory": "200Mi"}},
            }
        ],
    }
    if node_selector:
        pod_spec["nodeSelector"] = dict(node_selector)
    if priority_class:
        pod_spec["priorityClassName"] = priority_class
    spec: Obj = {
        "parallelism": parallelism,
        "suspend": suspend,
        "template": {
            "metadata": {
                "labels": {
                    "batch.kubernetes.io/controller-uid": UID,
                    "batch.kubernetes.io/job-name": "sample-job",
                    "controller-uid": UID,
                    "job-name": "sample-job",
                }
            },
            "spec": pod_spec,
        },
    }
    if completions is not None:
        spec["completions"] = completions
    meta: Obj = {"name": "sample-job", "namespace": NS, "uid": UID, "labels": meta_labels}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": spec,
        "status": dict(status or {}),
    }


def cond(kind: str, status: str, reason: str, message: str = "", at: float = T0) -> Obj:
    """A metav1.Condition as the API serves it."""
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": format_time(at),
    }


def with_status(wl: Obj, **status: Any) -> Obj:
    """``wl`` with ``status`` replaced."""
    new = copy.deepcopy(wl)
    new["status"] = status
    return new


def admission(cq: str = "cluster-queue", flavor: str = "default-flavor", count: int = 3) -> Obj:
    """``status.admission`` of the Job's podSet on one flavor."""
    return {
        "clusterQueue": cq,
        "podSetAssignments": [
            {
                "name": "main",
                "flavors": {"cpu": flavor, "memory": flavor},
                "resourceUsage": {"cpu": str(count), "memory": f"{200 * count}Mi"},
                "count": count,
            }
        ],
    }


def admitted(wl: Obj, cq: str = "cluster-queue", count: int = 3) -> Obj:
    """``wl`` with quota reserved and admitted in ``cq``."""
    return with_status(
        wl,
        admission=admission(cq, count=count),
        conditions=[
            cond("QuotaReserved", "True", "QuotaReserved", f"Quota reserved in ClusterQueue {cq}"),
            cond("Admitted", "True", "Admitted", "The workload is admitted"),
        ],
    )
