"""The manager side of MultiKueue in the single-cluster engine (FakeKueueApi; the test plays
the MultiKueue controller and the mirrored Job status): a Job managed by MultiKueue is admitted
and unsuspended like any Job, finishes with its mirrored status, and an eviction by its
MultiKueue check clears the workload's cluster nomination (SPEC §2.5, §3.4 invariants, §3.9)."""

from __future__ import annotations

from typing import Any

from numaplane.testing import kueue as k
from numaplane.testing.kueue import FakeKueueApi

NS = "team"
MK = "kueue.x-k8s.io/multikueue"


def _job(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "namespace": NS,
            "name": name,
            "labels": {"kueue.x-k8s.io/queue-name": "lq"},
        },
        "spec": {
            # As the API server's defaulting leaves a Job whose ClusterQueue has a MultiKueue
            # check.
            "suspend": True,
            "managedBy": MK,
            "parallelism": 1,
            "completions": 1,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
                    ],
                }
            },
        },
    }


def _world() -> FakeKueueApi:
    api = FakeKueueApi()
    api.create(k.namespace(NS))
    api.create(k.resource_flavor("default"))
    api.create(k.cluster_queue("cq", {"default": {"cpu": "1"}}, admissionChecks=["mk"]))
    api.create(k.local_queue(NS, "lq", "cq"))
    check = api.create(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "AdmissionCheck",
            "metadata": {"name": "mk"},
            "spec": {
                "controllerName": MK,
                "parameters": {
                    "apiGroup": "kueue.x-k8s.io",
                    "kind": "MultiKueueConfig",
                    "name": "config",
                },
            },
        }
    )
    # What the MultiKueue AdmissionCheck controller writes once the config's clusters connect.
    check["status"] = {
        "conditions": [
            {
                "type": "Active",
                "status": "True",
                "reason": "Active",
                "message": "The admission check is active",
                "lastTransitionTime": k.format_time(0),
            }
        ]
    }
    api.update(check, status=True)
    api.settle()
    return api


def _workload_of(api: FakeKueueApi, job: str) -> dict[str, Any]:
    found = [
        w
        for w in api.list("Workload")
        if any(r.get("name") == job for r in w["metadata"].get("ownerReferences") or [])
    ]
    assert len(found) == 1, found
    return found[0]


def _job_now(api: FakeKueueApi, name: str) -> dict[str, Any]:
    job = api.get("Job", f"{NS}/{name}")
    assert job is not None
    return job


def _cond(obj: dict[str, Any], kind: str) -> tuple[str, str] | None:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond["type"] == kind:
            return (cond["status"], cond["reason"])
    return None


def _set_check(
    api: FakeKueueApi, job: str, state: str, message: str, **status: Any
) -> dict[str, Any]:
    """Write the MultiKueue check's state (and ``status`` fields) as the controller does."""
    wl = _workload_of(api, job)
    for check in wl["status"]["admissionChecks"]:
        if check["name"] == "mk":
            check["state"] = state
            check["message"] = message
            check["lastTransitionTime"] = k.format_time(api.now)
    wl["status"].update(status)
    return api.update(wl, status=True)


def _set_job_status(api: FakeKueueApi, name: str, status: dict[str, Any]) -> None:
    job = _job_now(api, name)
    job["status"] = status
    api.update(job, status=True)


def _dispatched(api: FakeKueueApi, name: str) -> None:
    """Reserved on the manager, nominated, then admitted on worker1."""
    api.create(_job(name))
    api.settle()
    wl = _workload_of(api, name)
    assert _cond(wl, "QuotaReserved") == ("True", "QuotaReserved")
    assert _cond(wl, "Admitted") == ("False", "UnsatisfiedAdmissionChecks")
    assert _job_now(api, name)["spec"]["suspend"] is True
    wl["status"]["nominatedClusterNames"] = ["worker1", "worker2"]
    api.update(wl, status=True)
    api.settle()
    _set_check(
        api,
        name,
        "Ready",
        'The workload was admitted on "worker1"',
        clusterName="worker1",
        nominatedClusterNames=None,
    )
    api.settle()


def test_a_multikueue_job_is_started_on_admission_and_finishes_with_its_mirrored_status() -> None:
    api = _world()
    _dispatched(api, "sample")
    wl = _workload_of(api, "sample")
    assert _cond(wl, "Admitted") == ("True", "Admitted")
    assert wl["status"]["clusterName"] == "worker1"
    job = _job_now(api, "sample")
    # Unsuspended like any Job; managedBy keeps the Job controller (and so pods) away.
    assert job["spec"]["suspend"] is False
    assert job["spec"]["managedBy"] == MK
    # The MultiKueue controller mirrors the worker's final status.
    _set_job_status(
        api,
        "sample",
        {
            "succeeded": 1,
            "conditions": [{"type": "Complete", "status": "True", "reason": "CompletionsReached"}],
        },
    )
    api.settle()
    assert _cond(_workload_of(api, "sample"), "Finished") == ("True", "Succeeded")


def test_an_eviction_by_the_multikueue_check_clears_the_cluster_nomination() -> None:
    api = _world()
    _dispatched(api, "sample")
    _set_job_status(api, "sample", {"active": 1})
    api.settle()
    _set_check(api, "sample", "Retry", 'Workload evicted on worker cluster: "worker1"')
    api.settle()
    wl = _workload_of(api, "sample")
    assert _cond(wl, "Evicted") == ("True", "AdmissionCheck")
    assert "clusterName" not in wl["status"]
    assert "nominatedClusterNames" not in wl["status"]
    (check,) = wl["status"]["admissionChecks"]
    assert (check["state"], check["retryCount"]) == ("Pending", 1)
    assert check["message"] == "Reset to Pending after eviction. Previously: Retry"
    # Stopped, but the mirrored status still says a pod runs: the quota stays reserved.
    assert _job_now(api, "sample")["spec"]["suspend"] is True
    assert _cond(wl, "QuotaReserved") == ("True", "QuotaReserved")
    # Mirrored inactive (or cleared by MultiKueue after a lost worker): quota released.
    _set_job_status(api, "sample", {"active": 0})
    api.settle()
    wl = _workload_of(api, "sample")
    # Requeued after its backoff and reserved again, ready for a new dispatch.
    assert _cond(wl, "Requeued") == ("True", "BackoffFinished")
    assert _cond(wl, "QuotaReserved") == ("True", "QuotaReserved")
    assert api.event_reasons(wl["metadata"]["name"]).count("QuotaReserved") == 2
