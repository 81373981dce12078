"""Objects the MultiKueue reconciler tests start from: the manager's Workload ``ns/job-job1-1a2b3``
owned by the batch/v1 Job ``ns/job1`` (queue ``q1``, MultiKueue check ``ac1``), its copies
and Jobs on the workers, and the views and expected actions built from them."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from numaplane.kueue.api.conditions import format_time
from numaplane.kueue.multikueue import (
    Action,
    DispatchState,
    GroupView,
    ReconcileOptions,
    RemoteView,
    RemoveRemoteObjects,
    UpdateLocalWorkloadStatus,
    reconcile,
)

from ..workload.helpers import T0, cond

__all__ = ["T0", "cond"]  # re-exported for the MultiKueue tests

Obj = dict[str, Any]

NOW = T0 + 1000
NS = "ns"
WL = "job-job1-1a2b3"
JOB = "job1"
CHECK = "ac1"
MK = "kueue.x-k8s.io/multikueue"
ORIGIN = "kueue.x-k8s.io/multikueue-origin"
PREBUILT = "kueue.x-k8s.io/prebuilt-workload-name"
OPTS = ReconcileOptions(worker_lost_timeout=300.0)


def check(name: str = CHECK, state: str = "Pending", message: str = "", **extra: Any) -> Obj:
    """An AdmissionCheckState set at T0."""
    return {
        "name": name,
        "state": state,
        "message": message,
        "lastTransitionTime": format_time(T0),
        **extra,
    }


RESERVED = cond("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue q1")
ADMITTED = cond("Admitted", "True", "Admitted", "The workload is admitted")


def admission(*, delayed: str | None = None, topology: bool = False) -> Obj:
    """``status.admission`` in ClusterQueue q1, podSet main on flavor default."""
    psa: Obj = {"name": "main", "flavors": {"cpu": "default"}, "resourceUsage": {"cpu": "1"}}
    psa["count"] = 1
    if delayed is not None:
        psa["delayedTopologyRequest"] = delayed
    if topology:
        psa["topologyAssignment"] = {"levels": ["h"], "domains": [{"values": ["n1"], "count": 1}]}
    return {"clusterQueue": "q1", "podSetAssignments": [psa]}


def spec(**extra: Any) -> Obj:
    """The Workload spec built from Job job1."""
    return {
        "queueName": "q1",
        "podSets": [
            {
                "name": "main",
                "count": 1,
                "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
            }
        ],
        "priority": 0,
        **extra,
    }


def local(
    *conditions: Obj,
    reserved: bool = True,
    checks: list[Obj] | None = None,
    deleting: bool = False,
    wl_spec: Obj | None = None,
    **status: Any,
) -> Obj:
    """The manager's Workload (quota reserved in q1 unless ``reserved=False``)."""
    conds = ([RESERVED] if reserved else []) + list(conditions)
    body: Obj = {"conditions": conds, **status}
    if reserved and "admission" not in status:
        body["admission"] = admission()
    body["admissionChecks"] = checks if checks is not None else [check()]
    meta: Obj = {
        "name": WL,
        "namespace": NS,
        "uid": "uid-wl",
        "resourceVersion": "11",
        "generation": 1,
        "labels": {"kueue.x-k8s.io/job-uid": "uid-job1", "team": "a"},
        "annotations": {"note": "x"},
        "finalizers": ["kueue.x-k8s.io/resource-in-use"],
        "ownerReferences": [
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": JOB,
                "uid": "uid-job1",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    if deleting:
        meta["deletionTimestamp"] = format_time(T0)
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": meta,
        "spec": wl_spec if wl_spec is not None else spec(),
        "status": body,
    }


def copy_of(wl: Obj, *conditions: Obj, wl_spec: Obj | None = None, **status: Any) -> Obj:
    """A copy of ``wl`` on a worker (origin label, no job-uid label) with its own status."""
    labels = {k: v for k, v in wl["metadata"]["labels"].items() if k != "kueue.x-k8s.io/job-uid"}
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": WL,
            "namespace": NS,
            "uid": "uid-remote",
            "resourceVersion": "5",
            "labels": {**labels, ORIGIN: "multikueue"},
            "finalizers": ["kueue.x-k8s.io/resource-in-use"],
        },
        "spec": copy.deepcopy(wl_spec if wl_spec is not None else wl["spec"]),
        "status": {"conditions": list(conditions), **status},
    }


def admitted_copy(wl: Obj, at: float = T0, **status: Any) -> Obj:
    """A copy reserved and admitted on its worker at ``at``."""
    reserved = cond("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue q1")
    admitted = cond("Admitted", "True", "Admitted", "The workload is admitted", at=at)
    return copy_of(wl, {**reserved, "lastTransitionTime": format_time(at)}, admitted, **status)


def local_job(*, suspend: bool = True, managed_by: str | None = MK, **status: Any) -> Obj:
    """The manager's Job job1."""
    job_spec: Obj = {
        "parallelism": 1,
        "completions": 1,
        "suspend": suspend,
        "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "uid-job1"}},
        "template": {
            "metadata": {
                "labels": {
                    "batch.kubernetes.io/controller-uid": "uid-job1",
                    "controller-uid": "uid-job1",
                    "batch.kubernetes.io/job-name": JOB,
                    "job-name": JOB,
                    "app": "demo",
                }
            },
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]},
        },
    }
    if managed_by is not None:
        job_spec["managedBy"] = managed_by
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": JOB,
            "namespace": NS,
            "uid": "uid-job1",
            "resourceVersion": "21",
            "labels": {"kueue.x-k8s.io/queue-name": "q1"},
            "annotations": {"owner": "me"},
        },
        "spec": job_spec,
        "status": status,
    }


def worker_job(*, suspend: bool = False, origin: str | None = "multikueue", **status: Any) -> Obj:
    """Job job1 on a worker (created by the origin ``origin``; None: someone else's)."""
    labels = {"kueue.x-k8s.io/queue-name": "q1", PREBUILT: WL}
    if origin is not None:
        labels[ORIGIN] = origin
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": JOB, "namespace": NS, "uid": "uid-wj", "labels": labels},
        "spec": {"suspend": suspend},
        "status": status,
    }


def cluster(
    name: str,
    wl: Obj | None = None,
    job: Obj | None = None,
    *,
    connected: bool = True,
    lost_since: float | None = None,
) -> RemoteView:
    """One cluster of the config."""
    return RemoteView(name, connected, lost_since, wl, job)


def view(
    wl: Obj | None,
    *clusters: RemoteView,
    job: Obj | None = None,
    deleted: Obj | None = None,
) -> GroupView:
    """The group of ``wl`` over ``clusters`` (default: worker1 and worker2 connected, no
    copies), with the local Job ``job`` (default: a suspended MultiKueue Job)."""
    if not clusters:
        clusters = (cluster("worker1"), cluster("worker2"))
    return GroupView(wl, deleted, job if job is not None else local_job(), CHECK, clusters)


def removed(name: str) -> RemoveRemoteObjects:
    """The removal of the copy and Job on ``name``."""
    return RemoveRemoteObjects(name, NS, WL, JOB)


def status_write(wl: Obj, **changes: Any) -> UpdateLocalWorkloadStatus:
    """The local Workload's status write: ``wl`` with ``changes`` to its status (a None value
    removes the field)."""
    status = copy.deepcopy(wl["status"])
    for key, value in changes.items():
        if value is None:
            status.pop(key, None)
        else:
            status[key] = value
    return UpdateLocalWorkloadStatus({**wl, "status": status})


@dataclass(frozen=True)
class Case:
    """One reconcile: the view, and the actions, requeue and error it must give."""

    name: str
    view: GroupView
    want: tuple[Action, ...] = ()
    requeue: float | None = None
    error: str | None = None
    options: ReconcileOptions = OPTS


def run_case(case: Case) -> None:
    """Reconcile ``case.view`` at NOW and check the actions, requeue and error exactly."""
    result = reconcile(case.view, case.options, NOW, DispatchState())
    assert result.actions == list(case.want)
    assert result.requeue_after == case.requeue
    assert result.error == case.error


#: ``JobSuspended=True`` as the batch/v1 adapter sets it at NOW.
SUSPENDED_BY_ADAPTER = {
    "type": "Suspended",
    "status": "True",
    "lastProbeTime": format_time(NOW),
    "lastTransitionTime": format_time(NOW),
    "reason": "MultiKueueAdapter",
    "message": "Set by MultiKueue adapter",
}

#: The Job MultiKueue creates on the admitting worker from :func:`local_job`.
REMOTE_JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {
        "name": JOB,
        "namespace": NS,
        "labels": {"kueue.x-k8s.io/queue-name": "q1", ORIGIN: "multikueue", PREBUILT: WL},
        "annotations": {"owner": "me"},
    },
    "spec": {
        "parallelism": 1,
        "completions": 1,
        "suspend": True,
        "template": {
            "metadata": {
                "labels": {"batch.kubernetes.io/job-name": JOB, "job-name": JOB, "app": "demo"}
            },
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]},
        },
    },
}
