"""A Workload from its JSON form: podSets and their requests, the status the core reads, the
queue-order timestamp, reclaimable pods, and ``status.admission`` written back as upstream
prints it."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.kueue.api import model
from numaplane.kueue.api.parse import (
    CREATION_TIMESTAMP,
    admission_to_dict,
    parse_admission,
    parse_workload,
)
from numaplane.kueue.errors import KueueObjectError

T0 = "2026-01-01T00:00:00Z"
T0_S = 1767225600.0


def wl(spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": "job-a-1",
            "namespace": "ns",
            "uid": "wl-uid",
            "creationTimestamp": T0,
            "labels": {"kueue.x-k8s.io/job-uid": "job-uid"},
        },
        "spec": spec
        if spec is not None
        else {
            "queueName": "lq",
            "podSets": [
                {
                    "count": 3,
                    "template": {
                        "spec": {
                            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                        }
                    },
                }
            ],
        },
    }
    if status is not None:
        obj["status"] = status
    return obj


def test_workload_defaults() -> None:
    got = parse_workload(wl())
    assert got.key == "ns/job-a-1"
    assert (got.uid, got.queue_name, got.priority, got.active) == ("wl-uid", "lq", 0, True)
    assert got.pod_sets == (model.PodSet(name="main", count=3, requests={"cpu": 1000}),)
    assert got.creation_time == T0_S
    assert got.queue_order_time == T0_S
    assert got.job_uid == "job-uid"
    assert got.admission is None
    assert got.conditions == {}
    assert got.requeue_at is None
    assert not got.deleting
    assert got.total_requests() == [{"cpu": 3000}]


def test_workload_pod_set_fields() -> None:
    terms = [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
    toleration = {"key": "spot", "operator": "Exists"}
    got = parse_workload(
        wl(
            {
                "queueName": "lq",
                "priority": 7,
                "active": False,
                "podSets": [
                    {
                        "name": "driver",
                        "template": {"spec": {"containers": [{"name": "c"}]}},
                    },
                    {
                        "name": "workers",
                        "count": 4,
                        "minCount": 2,
                        "template": {
                            "spec": {
                                "nodeSelector": {"disk": "ssd"},
                                "tolerations": [toleration],
                                "affinity": {
                                    "nodeAffinity": {
                                        "requiredDuringSchedulingIgnoredDuringExecution": {
                                            "nodeSelectorTerms": terms
                                        }
                                    }
                                },
                                "containers": [
                                    {"name": "c", "resources": {"limits": {"memory": "1Gi"}}}
                                ],
                            }
                        },
                    },
                ],
            }
        )
    )
    assert (got.priority, got.active) == (7, False)
    assert got.pod_sets == (
        model.PodSet(name="driver", count=1, requests={}),
        model.PodSet(
            name="workers",
            count=4,
            requests={"memory": 1 << 30},
            min_count=2,
            node_selector={"disk": "ssd"},
            required_node_affinity=tuple(terms),
            tolerations=(toleration,),
        ),
    )


def test_duplicate_pod_set_names_are_refused() -> None:
    spec = {"podSets": [{"name": "a"}, {"name": "a"}]}
    with pytest.raises(KueueObjectError, match=r"Workload ns/job-a-1: spec\.podSets\[1\]\.name"):
        parse_workload(wl(spec))


ADMISSION: dict[str, Any] = {
    "clusterQueue": "cq",
    "podSetAssignments": [
        {
            "name": "main",
            "flavors": {"memory": "default", "cpu": "default"},
            "resourceUsage": {"memory": "3Gi", "cpu": "3"},
            "count": 3,
        }
    ],
}


def test_workload_status() -> None:
    status = {
        "admission": ADMISSION,
        "conditions": [
            {
                "type": "QuotaReserved",
                "status": "True",
                "reason": "QuotaReserved",
                "message": "Quota reserved in ClusterQueue cq",
                "lastTransitionTime": "2026-01-01T00:00:05Z",
            },
            {
                "type": "Admitted",
                "status": "False",
                "reason": "UnsatisfiedAdmissionChecks",
                "message": "The workload has not all admission checks",
                "lastTransitionTime": "2026-01-01T00:00:05Z",
            },
        ],
        "admissionChecks": [
            {"name": "ac1", "state": "Ready", "lastTransitionTime": T0, "message": ""},
            {"name": "ac2", "state": "Retry", "lastTransitionTime": T0, "message": ""},
        ],
        "requeueState": {"count": 2, "requeueAt": "2026-01-01T00:01:00Z"},
    }
    got = parse_workload(wl(status=status))
    assert got.admission == model.Admission(
        "cq",
        (
            model.PodSetAssignment(
                "main", {"cpu": "default", "memory": "default"}, {"cpu": 3000, "memory": 3 << 30}, 3
            ),
        ),
    )
    assert got.admission.usage() == {("default", "cpu"): 3000, ("default", "memory"): 3 << 30}
    assert got.has_quota_reservation
    assert not got.is_admitted
    assert got.conditions["Admitted"] == (
        "False",
        "UnsatisfiedAdmissionChecks",
        "The workload has not all admission checks",
        T0_S + 5,
    )
    assert got.check_states == {"ac1": "Ready", "ac2": "Retry"}
    assert (got.requeue_count, got.requeue_at) == (2, T0_S + 60)


def test_admission_count_defaults_to_the_pod_set_count() -> None:
    admission = copy.deepcopy(ADMISSION)
    del admission["podSetAssignments"][0]["count"]
    got = parse_workload(wl(status={"admission": admission}))
    assert got.admission is not None
    assert got.admission.pod_set_assignments[0].count == 3
    assert parse_admission(admission).pod_set_assignments[0].count == 0


@dataclass(frozen=True)
class OrderCase:
    name: str
    reason: str
    status: str
    requeuing_timestamp: str
    evicted_order: bool


ORDER = [
    OrderCase("pods ready timeout", "PodsReadyTimeout", "True", "Eviction", True),
    OrderCase(
        "pods ready timeout, creation ordering", "PodsReadyTimeout", "True", "Creation", False
    ),
    OrderCase("admission check", "AdmissionCheck", "True", "Creation", True),
    OrderCase("preempted", "Preempted", "True", "Eviction", False),
    OrderCase("no longer evicted", "PodsReadyTimeout", "False", "Eviction", False),
]


@pytest.mark.parametrize("case", ORDER, ids=[case.name for case in ORDER])
def test_queue_order_time(case: OrderCase) -> None:
    evicted_at = "2026-01-01T01:00:00Z"
    status = {
        "conditions": [
            {
                "type": "Evicted",
                "status": case.status,
                "reason": case.reason,
                "message": "m",
                "lastTransitionTime": evicted_at,
            }
        ]
    }
    got = parse_workload(wl(status=status), requeuing_timestamp=case.requeuing_timestamp)
    want = T0_S + 3600 if case.evicted_order else T0_S
    assert got.queue_order_time == want
    assert got.creation_time == T0_S
    assert CREATION_TIMESTAMP == "Creation"


def test_workload_bad_time() -> None:
    obj = wl()
    obj["metadata"]["creationTimestamp"] = "yesterday"
    with pytest.raises(KueueObjectError, match=r"metadata\.creationTimestamp: not an RFC 3339"):
        parse_workload(obj)


def test_admission_to_dict_prints_quantities_as_upstream() -> None:
    admission = model.Admission(
        "cq",
        (
            model.PodSetAssignment(
                "main",
                {"memory": "default", "cpu": "default", "example.com/gpu": "gpus"},
                {"memory": 3 << 30, "cpu": 1500, "example.com/gpu": 2},
                3,
            ),
            model.PodSetAssignment("side", {"cpu": "default"}, {"cpu": 2000}, 1),
        ),
    )
    got = admission_to_dict(admission)
    assert got == {
        "clusterQueue": "cq",
        "podSetAssignments": [
            {
                "name": "main",
                "flavors": {"cpu": "default", "example.com/gpu": "gpus", "memory": "default"},
                "resourceUsage": {"cpu": "1500m", "example.com/gpu": "2", "memory": "3Gi"},
                "count": 3,
            },
            {
                "name": "side",
                "flavors": {"cpu": "default"},
                "resourceUsage": {"cpu": "2"},
                "count": 1,
            },
        ],
    }
    # Keys in Go's marshalling order (sorted), so a written status compares equal byte for byte.
    assert list(got["podSetAssignments"][0]["resourceUsage"]) == [
        "cpu",
        "example.com/gpu",
        "memory",
    ]
    assert parse_admission(got) == admission


@dataclass(frozen=True)
class ReclaimCase:
    name: str
    reclaimable: list[dict[str, Any]]
    want_cpu: int


RECLAIM = [
    ReclaimCase("none reclaimable", [], 3000),
    ReclaimCase("one of three pods done", [{"name": "main", "count": 1}], 2000),
    ReclaimCase("more reported than the podSet has", [{"name": "main", "count": 5}], 0),
    ReclaimCase("another podSet's pods", [{"name": "other", "count": 2}], 3000),
]


@pytest.mark.parametrize("case", RECLAIM, ids=[case.name for case in RECLAIM])
def test_usage_gives_back_reclaimable_pods(case: ReclaimCase) -> None:
    got = parse_workload(wl(status={"admission": ADMISSION, "reclaimablePods": case.reclaimable}))
    assert got.usage()[("default", "cpu")] == case.want_cpu
    # The admission itself is what the API holds, unchanged.
    assert got.admission is not None
    assert got.admission.usage()[("default", "cpu")] == 3000


def test_usage_of_a_pending_workload_is_empty() -> None:
    assert parse_workload(wl()).usage() == {}


def test_excluded_resource_prefixes_are_dropped() -> None:
    spec = {
        "podSets": [
            {
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "c",
                                "resources": {
                                    "requests": {"cpu": "1", "networking.example.com/vpc": 1}
                                },
                            }
                        ]
                    }
                }
            }
        ]
    }
    got = parse_workload(wl(spec), excluded_resource_prefixes=("networking.example.com/",))
    assert got.pod_sets[0].requests == {"cpu": 1000}
    assert parse_workload(wl(spec)).pod_sets[0].requests == {
        "cpu": 1000,
        "networking.example.com/vpc": 1,
    }
