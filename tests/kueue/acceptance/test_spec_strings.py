"""The condition types, reasons and messages SPEC.md §2 quotes, on the Workloads the engine
writes: admission (one and two phases), eviction by an AdmissionCheck in Retry, preemption and
the requeue after it, re-admission of a preempted workload, and finishing with its Job."""

from __future__ import annotations

from typing import Any

from numaplane.kueue import workload as workload_rules
from numaplane.testing.kueue import FakeKueueApi, cluster_queue, local_queue, workload
from tests.kueue.acceptance.decisions import condition
from tests.kueue.acceptance.drive import release, rounds
from tests.kueue.acceptance.objects import flavor

Obj = dict[str, Any]
NS = "spec"
API = "kueue.x-k8s.io/v1beta2"


def world(
    *, checks: tuple[str, ...] = (), within: str = "LowerPriority", cpu: str = "4"
) -> FakeKueueApi:
    """One ClusterQueue ``cq`` (flavor ``default``, ``cpu`` CPUs) with LocalQueue ``lq``, the
    AdmissionChecks ``checks`` (Active) in its strategy."""
    api = FakeKueueApi()
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    api.create(flavor("default"))
    for name in checks:
        made = api.create(
            {
                "apiVersion": API,
                "kind": "AdmissionCheck",
                "metadata": {"name": name},
                "spec": {"controllerName": "example.com/check"},
            }
        )
        active = {
            "type": "Active",
            "status": "True",
            "reason": "Active",
            "message": "The admission check is active",
            "lastTransitionTime": "2023-11-14T22:13:20Z",
        }
        api.update({**made, "status": {"conditions": [active]}}, status=True)
    extra: dict[str, Any] = {}
    if checks:
        extra["admissionChecksStrategy"] = {"admissionChecks": [{"name": n} for n in checks]}
    api.create(
        cluster_queue(
            "cq", {"default": {"cpu": cpu}}, preemption={"withinClusterQueue": within}, **extra
        )
    )
    api.create(local_queue(NS, "lq", "cq"))
    api.settle()
    return api


def wl(api: FakeKueueApi, name: str) -> Obj:
    """The Workload ``spec/name``."""
    return api.workload(NS, name)


def set_check(api: FakeKueueApi, name: str, check: str, state: str, message: str) -> None:
    """What an AdmissionCheck controller writes: the check's state on the workload."""
    raw = wl(api, name)
    status = dict(raw.get("status") or {})
    rows = []
    for row in status.get("admissionChecks") or []:
        if row["name"] == check:
            row = {
                **row,
                "state": state,
                "message": message,
                "lastTransitionTime": "2023-11-14T22:14:00Z",
            }
        rows.append(row)
    api.update({**raw, "status": {**status, "admissionChecks": rows}}, status=True)


def test_admission_in_one_phase() -> None:
    api = world()
    api.create(workload(NS, "a", "lq", {"cpu": "1"}))
    api.settle()
    got = wl(api, "a")
    assert condition(got, "QuotaReserved") == (
        "True",
        "QuotaReserved",
        "Quota reserved in ClusterQueue cq",
    )
    assert condition(got, "Admitted") == ("True", "Admitted", "The workload is admitted")
    events = [(e.type, e.reason, e.message) for e in api.events if e.obj["metadata"]["name"] == "a"]
    assert (
        "Normal",
        "QuotaReserved",
        "Quota reserved in ClusterQueue cq, wait time since queued was 0s",
    ) in events
    assert (
        "Normal",
        "Admitted",
        "Admitted by ClusterQueue cq, wait time since reservation was 0s",
    ) in events


def test_admission_in_two_phases_then_retry_evicts() -> None:
    api = world(checks=("check-a",))
    api.create(workload(NS, "a", "lq", {"cpu": "1"}))
    api.settle()
    got = wl(api, "a")
    assert condition(got, "QuotaReserved") == (
        "True",
        "QuotaReserved",
        "Quota reserved in ClusterQueue cq",
    )
    assert condition(got, "Admitted") == (
        "False",
        "UnsatisfiedAdmissionChecks",
        "The workload has not all checks ready",
    )
    assert [(c["name"], c["state"]) for c in got["status"]["admissionChecks"]] == [
        ("check-a", "Pending")
    ]
    set_check(api, "a", "check-a", "Ready", "")
    api.settle()
    assert condition(wl(api, "a"), "Admitted") == ("True", "Admitted", "The workload is admitted")
    set_check(api, "a", "check-a", "Retry", "try again")
    api.settle()
    got = wl(api, "a")
    assert condition(got, "Evicted") == (
        "True",
        "AdmissionCheck",
        'Evicted due to AdmissionCheck in Retry state: "check-a" (try again)',
    )
    [state] = got["status"]["admissionChecks"]
    assert (state["state"], state["message"]) == (
        "Pending",
        "Reset to Pending after eviction. Previously: Retry",
    )
    assert state.get("retryCount") == 1


def test_preemption_requeue_and_readmission() -> None:
    api = world(cpu="2")
    api.create(workload(NS, "low", "lq", {"cpu": "2"}, priority=0))
    api.settle()
    api.advance(1)
    made = api.create(workload(NS, "high", "lq", {"cpu": "2"}, priority=10))
    rounds(api, 1)
    uid = made["metadata"]["uid"]
    message = (
        f"Preempted to accommodate a workload (UID: {uid}, JobUID: UNKNOWN) due to "
        "prioritization in the ClusterQueue; preemptor path: /cq; preemptee path: /cq"
    )
    low = wl(api, "low")
    assert condition(low, "Evicted") == ("True", "Preempted", message)
    assert condition(low, "Preempted") == ("True", "InClusterQueue", message)
    assert condition(wl(api, "high"), "QuotaReserved") == (
        "False",
        "WaitingForPreemptedWorkloads",
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor "
        "default, 2 more needed. Pending the preemption of 1 workload(s)",
    )
    events = [
        (e.type, e.reason, e.message) for e in api.events if e.obj["metadata"]["name"] == "low"
    ]
    assert ("Normal", "Preempted", message) in events
    # Once the victim's job stopped: no reservation, requeued at once (reason Preempted).
    release(api, [f"{NS}/low"])
    low = wl(api, "low")
    reserved = condition(low, "QuotaReserved")
    assert reserved is not None
    assert reserved[0] == "False"
    assert reserved[1] in ("PendingEvaluation", "Pending")
    assert reserved[2] == message
    assert condition(low, "Requeued") == ("True", "Preempted", message)
    assert not low["status"].get("admission")
    rounds(api, 2)
    # The victim queues again and waits: the preemptor holds the quota now.
    assert condition(wl(api, "low"), "QuotaReserved") == (
        "False",
        "WaitingForQuota",
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor "
        "default, 2 more needed",
    )
    assert condition(wl(api, "high"), "QuotaReserved") == (
        "True",
        "QuotaReserved",
        "Quota reserved in ClusterQueue cq",
    )
    # The preemptor finishes; the victim is reserved again and its eviction turns False.
    api.advance(1)
    high = wl(api, "high")
    finished = workload_rules.finish(high, "Succeeded", "Job finished successfully", api.now)
    api.update({**high, "status": finished}, status=True)
    api.settle()
    low = wl(api, "low")
    assert condition(low, "QuotaReserved") == (
        "True",
        "QuotaReserved",
        "Quota reserved in ClusterQueue cq",
    )
    assert condition(low, "Evicted") == ("False", "QuotaReserved", f"Previously: {message}")
    assert condition(low, "Preempted") == ("False", "QuotaReserved", f"Previously: {message}")


def test_a_job_finishes_its_workload() -> None:
    api = world()
    api.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "namespace": NS,
                "name": "pi",
                "labels": {"kueue.x-k8s.io/queue-name": "lq"},
            },
            "spec": {
                "suspend": True,
                "parallelism": 1,
                "completions": 1,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {
                                "name": "c",
                                "image": "busybox",
                                "resources": {"requests": {"cpu": "1"}},
                            }
                        ],
                    }
                },
            },
        }
    )
    api.settle()
    [owned] = api.list("Workload")
    assert condition(owned, "Admitted") == ("True", "Admitted", "The workload is admitted")
    started = api.get("Job", f"{NS}/pi")
    assert started is not None
    assert started["spec"]["suspend"] is False
    complete = {
        "type": "Complete",
        "status": "True",
        "reason": "CompletionsReached",
        "message": "Reached expected number of succeeded pods",
    }
    api.update(
        {**started, "status": {"succeeded": 1, "active": 0, "conditions": [complete]}}, status=True
    )
    api.settle()
    [owned] = api.list("Workload")
    assert condition(owned, "Finished") == (
        "True",
        "Succeeded",
        "Reached expected number of succeeded pods",
    )
