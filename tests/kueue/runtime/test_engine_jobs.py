"""The batch/v1 Job integration through the engine (FakeKueueApi; no Job controller: the Job's
status is written by the test, as the Job controller would): a queued Job gets its Workload,
is started with the flavor's node labels once admitted, suspended again when preempted, its
quota released once it has no active pods, and its Workload finishes with it."""

from __future__ import annotations

from typing import Any

from numaplane.testing import kueue as k
from numaplane.testing.kueue import FakeKueueApi

NS = "team"


def _job(name: str, *, cpu: str = "1", priority_class: str = "") -> dict[str, Any]:
    labels = {"kueue.x-k8s.io/queue-name": "lq"}
    if priority_class:
        labels["kueue.x-k8s.io/priority-class"] = priority_class
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"namespace": NS, "name": name, "labels": labels},
        "spec": {
            # As the API server's Kueue defaulting leaves a Job with a queue name.
            "suspend": True,
            "parallelism": 1,
            "completions": 1,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}
                    ],
                }
            },
        },
    }


def _world(cpu: str = "1", **cq: Any) -> FakeKueueApi:
    api = FakeKueueApi()
    api.create(k.namespace(NS))
    api.create(k.resource_flavor("default", {"instance-type": "on-demand"}))
    api.create(k.cluster_queue("cq", {"default": {"cpu": cpu}}, **cq))
    api.create(k.local_queue(NS, "lq", "cq"))
    for name, value in (("low", 10), ("high", 1000)):
        api.create(k.workload_priority_class(name, value))
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


def _cond(obj: dict[str, Any], kind: str) -> tuple[str, str] | None:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond["type"] == kind:
            return (cond["status"], cond["reason"])
    return None


def _job_now(api: FakeKueueApi, name: str) -> dict[str, Any]:
    job = api.get("Job", f"{NS}/{name}")
    assert job is not None
    return job


def _set_job_status(api: FakeKueueApi, name: str, status: dict[str, Any]) -> None:
    job = _job_now(api, name)
    job["status"] = status
    api.update(job, status=True)


def test_a_queued_job_gets_a_workload_and_starts_with_the_flavors_node_labels() -> None:
    api = _world()
    api.create(_job("sample"))
    api.settle()
    wl = _workload_of(api, "sample")
    assert wl["spec"]["queueName"] == "lq"
    assert _cond(wl, "Admitted") == ("True", "Admitted")
    job = _job_now(api, "sample")
    assert job["spec"]["suspend"] is False
    assert job["spec"]["template"]["spec"]["nodeSelector"] == {"instance-type": "on-demand"}
    reasons = api.event_reasons("sample")
    assert reasons[:2] == ["CreatedWorkload", "Started"]


def test_the_workload_finishes_with_its_job_and_frees_the_quota() -> None:
    api = _world()
    api.create(_job("first"))
    api.advance(1)
    api.create(_job("second"))
    api.settle()
    assert _job_now(api, "second")["spec"]["suspend"] is True
    _set_job_status(
        api,
        "first",
        {
            "succeeded": 1,
            "conditions": [{"type": "Complete", "status": "True", "reason": "CompletionsReached"}],
        },
    )
    api.settle()
    assert _cond(_workload_of(api, "first"), "Finished") == ("True", "Succeeded")
    assert _job_now(api, "second")["spec"]["suspend"] is False


def test_a_preempted_job_is_suspended_and_its_quota_released_once_inactive() -> None:
    api = _world(preemption={"withinClusterQueue": "LowerPriority"})
    api.create(_job("low-job", priority_class="low"))
    api.settle()
    assert _job_now(api, "low-job")["spec"]["suspend"] is False
    _set_job_status(api, "low-job", {"active": 1})
    api.advance(1)
    api.create(_job("high-job", priority_class="high"))
    api.settle()
    low = _workload_of(api, "low-job")
    assert _cond(low, "Evicted") == ("True", "Preempted")
    assert _cond(low, "Preempted") == ("True", "InClusterQueue")
    # Stopped, but its pod still runs: the quota stays reserved, the preemptor waits.
    assert _job_now(api, "low-job")["spec"]["suspend"] is True
    assert _cond(low, "QuotaReserved") == ("True", "QuotaReserved")
    assert _job_now(api, "high-job")["spec"]["suspend"] is True
    # The Job controller reports no active pod: Kueue releases the quota; the preemptor runs.
    _set_job_status(api, "low-job", {"active": 0})
    api.settle()
    low = _workload_of(api, "low-job")
    # Requeued at once (a preemption), it now waits for quota behind the preemptor.
    assert _cond(low, "Requeued") == ("True", "Preempted")
    assert _cond(low, "QuotaReserved") == ("False", "WaitingForQuota")
    assert _job_now(api, "high-job")["spec"]["suspend"] is False
    assert _cond(_workload_of(api, "high-job"), "Admitted") == ("True", "Admitted")
