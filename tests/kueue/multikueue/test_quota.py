"""Manager quota automation's decision (SPEC §3.19, scenario G11's rules; upstream's
``TestCQReconcile`` cases rewritten): which ClusterQueues it applies to, the condition's
reasons and messages, and the sums written to the manager flavor."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from numaplane.kueue.multikueue.quota import (
    MESSAGE_AUTOMATED,
    MESSAGE_CONFIG_NOT_FOUND,
    MESSAGE_NOT_REQUESTED,
    MESSAGE_ONE_FLAVOR,
    QuotaDecision,
    WorkerQueues,
    automate_quota,
    multikueue_check,
)

Obj = dict[str, Any]
NS = "ns"
AUTOMATED = ("True", "QuotaAutomated", MESSAGE_AUTOMATED)


def cq(name: str, *flavors: Mapping[str, str], groups: int = 1, **spec: Any) -> Obj:
    """A ClusterQueue: each flavor maps resource → nominal quota; with ``groups`` > 1 each
    flavor gets its own resource group."""
    rows: list[Obj] = [
        {
            "name": f"f{i}",
            "resources": [{"name": r, "nominalQuota": q} for r, q in flavor.items()],
        }
        for i, flavor in enumerate(flavors)
    ]
    if groups == 1:
        covered = list(dict.fromkeys(r for flavor in flavors for r in flavor))
        resource_groups: list[Obj] = [{"coveredResources": covered, "flavors": rows}]
    else:
        resource_groups = [
            {"coveredResources": list(flavor), "flavors": [row]}
            for flavor, row in zip(flavors, rows, strict=True)
        ]
    return {"metadata": {"name": name}, "spec": {"resourceGroups": resource_groups, **spec}}


def manager_cq(*flavors: Mapping[str, str], groups: int = 1) -> Obj:
    """Manager ClusterQueue ``cq1`` with the MultiKueue check ``ac1``."""
    return cq("cq1", *flavors, groups=groups, admissionChecks=["ac1"])


def with_borrowing_limit(obj: Obj, limit: str) -> Obj:
    """``obj`` with a borrowing limit on its first flavor's first resource."""
    obj["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["borrowingLimit"] = limit
    return obj


def lq(name: str, target: str, namespace: str = NS) -> Obj:
    """LocalQueue ``namespace/name`` pointing to ClusterQueue ``target``."""
    return {"metadata": {"namespace": namespace, "name": name}, "spec": {"clusterQueue": target}}


def check(name: str = "ac1", config: str = "config1", **parameters: str) -> Obj:
    """A MultiKueue AdmissionCheck naming MultiKueueConfig ``config``."""
    params = {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": config}
    return {
        "metadata": {"name": name},
        "spec": {
            "controllerName": "kueue.x-k8s.io/multikueue",
            "parameters": {**params, **parameters},
        },
    }


def config(management: str | None = "Automated") -> Obj:
    """MultiKueueConfig ``config1`` of worker1 and worker2."""
    spec: Obj = {"clusters": ["worker1", "worker2"]}
    if management is not None:
        spec["quotaManagement"] = management
    return {"metadata": {"name": "config1"}, "spec": spec}


@dataclass(frozen=True)
class Case:
    name: str
    cluster_queue: Obj
    want: QuotaDecision
    check: Obj | None = field(default_factory=check)
    config: Obj | None = field(default_factory=config)
    local_queues: Sequence[Obj] = (lq("lq1", "cq1"),)
    workers: Mapping[str, WorkerQueues] = field(default_factory=dict)


def worker(cqs: Sequence[Obj], *lqs: Obj) -> WorkerQueues:
    """A worker with ``cqs`` and ``lqs`` (LocalQueue lq1 → its first ClusterQueue by default)."""
    queues = lqs or (lq("lq1", cqs[0]["metadata"]["name"]),)
    return WorkerQueues(queues, cqs)


def quotas(**resources: str) -> tuple[Obj, ...]:
    """The manager flavor's expected ``resources``, in the keyword order."""
    return tuple({"name": r, "nominalQuota": q} for r, q in resources.items())


CASES = [
    Case(
        "sums each resource over the connected workers",
        manager_cq({"cpu": "0", "memory": "0"}),
        QuotaDecision(AUTOMATED, quotas(cpu="15", memory="30Gi")),
        workers={
            "worker1": worker([cq("w1-cq1", {"cpu": "10", "memory": "20Gi"})]),
            "worker2": worker([cq("w2-cq1", {"cpu": "5", "memory": "10Gi"})]),
        },
    ),
    Case(
        "unrelated worker ClusterQueues do not count",
        manager_cq({"cpu": "0"}),
        QuotaDecision(AUTOMATED, quotas(cpu="10")),
        workers={
            "worker1": worker([cq("w1-cq1", {"cpu": "10"}), cq("w1-other", {"cpu": "100"})]),
        },
    ),
    Case(
        "a worker ClusterQueue behind two LocalQueues counts once",
        manager_cq({"cpu": "0"}),
        QuotaDecision(AUTOMATED, quotas(cpu="23")),
        local_queues=(lq("lq1", "cq1"), lq("lq2", "cq1")),
        workers={
            "worker1": worker(
                [cq("w1-cq1", {"cpu": "10"})], lq("lq1", "w1-cq1"), lq("lq2", "w1-cq1")
            ),
            "worker2": worker(
                [cq("w2-cq1", {"cpu": "5"}), cq("w2-cq2", {"cpu": "8"})],
                lq("lq1", "w2-cq1"),
                lq("lq2", "w2-cq2"),
            ),
        },
    ),
    Case(
        "every flavor and resource group of a worker ClusterQueue counts",
        manager_cq({"cpu": "0", "gpu": "0"}),
        QuotaDecision(AUTOMATED, quotas(cpu="19", gpu="4")),
        workers={
            "worker1": worker([cq("w1-cq1", {"cpu": "10"}, {"gpu": "1"}, groups=2)]),
            "worker2": worker([cq("w2-cq1", {"cpu": "5", "gpu": "2"}, {"cpu": "4", "gpu": "1"})]),
        },
    ),
    Case(
        "a covered resource no worker offers gets 0",
        manager_cq({"cpu": "0", "memory": "0", "gpu": "0"}),
        QuotaDecision(AUTOMATED, quotas(cpu="15", memory="20Gi", gpu="0")),
        workers={
            "worker1": worker([cq("w1-cq1", {"cpu": "10", "memory": "20Gi"})]),
            "worker2": worker([cq("w2-cq1", {"cpu": "5"})]),
        },
    ),
    Case(
        "millicores add up",
        manager_cq({"cpu": "0"}),
        QuotaDecision(AUTOMATED, quotas(cpu="1500m")),
        workers={
            "worker1": worker([cq("w1-cq1", {"cpu": "500m"})]),
            "worker2": worker([cq("w2-cq1", {"cpu": "1"})]),
        },
    ),
    Case(
        "a worker LocalQueue of another namespace does not count",
        manager_cq({"cpu": "7"}),
        QuotaDecision(AUTOMATED, quotas(cpu="0")),
        workers={"worker1": worker([cq("w1-cq1", {"cpu": "10"})], lq("lq1", "w1-cq1", "other"))},
    ),
    Case(
        "a manager LocalQueue of another ClusterQueue does not count",
        manager_cq({"cpu": "3"}),
        QuotaDecision(AUTOMATED, quotas(cpu="0")),
        local_queues=(lq("lq1", "cq2"),),
        workers={"worker1": worker([cq("w1-cq1", {"cpu": "10"})])},
    ),
    Case(
        "quotas already right: the spec is left alone",
        manager_cq({"cpu": "20"}),
        QuotaDecision(AUTOMATED, None),
        workers={
            "worker1": worker([cq("w1-cq1", {"cpu": "10"})]),
            "worker2": worker([cq("w2-cq1", {"cpu": "10000m"})]),
        },
    ),
    Case(
        "a borrowing limit is dropped as upstream's write drops it",
        with_borrowing_limit(manager_cq({"cpu": "10"}), "1"),
        QuotaDecision(AUTOMATED, quotas(cpu="10")),
        workers={"worker1": worker([cq("w1-cq1", {"cpu": "10"})])},
    ),
    Case(
        "no workers connected: every covered resource 0",
        manager_cq({"cpu": "20"}),
        QuotaDecision(AUTOMATED, quotas(cpu="0")),
    ),
    Case(
        "manual quota management",
        manager_cq({"cpu": "100"}),
        QuotaDecision(("False", "NotRequested", MESSAGE_NOT_REQUESTED)),
        config=config("Manual"),
        workers={"worker1": worker([cq("w1-cq1", {"cpu": "10"})])},
    ),
    Case(
        "quota management unset means manual",
        manager_cq({"cpu": "100"}),
        QuotaDecision(("False", "NotRequested", MESSAGE_NOT_REQUESTED)),
        config=config(None),
    ),
    Case(
        "two manager resource groups",
        manager_cq({"cpu": "0"}, {"gpu": "0"}, groups=2),
        QuotaDecision(("False", "UnsupportedConfiguration", MESSAGE_ONE_FLAVOR)),
    ),
    Case(
        "two manager flavors",
        manager_cq({"cpu": "0"}, {"cpu": "0"}),
        QuotaDecision(("False", "UnsupportedConfiguration", MESSAGE_ONE_FLAVOR)),
    ),
    Case(
        "workers offer resources the manager does not cover",
        manager_cq({"cpu": "0"}),
        QuotaDecision(
            (
                "False",
                "UnsupportedConfiguration",
                "manager-side coveredResources is missing resources configured on workers: "
                "[gpu memory]",
            )
        ),
        workers={"worker1": worker([cq("w1-cq1", {"memory": "10Gi", "gpu": "2"})])},
    ),
    Case(
        "the config is missing",
        manager_cq({"cpu": "0"}),
        QuotaDecision(("False", "UnsupportedConfiguration", MESSAGE_CONFIG_NOT_FOUND)),
        config=None,
    ),
    Case(
        "not a MultiKueue ClusterQueue: the condition goes",
        cq("cq1", {"cpu": "100"}),
        QuotaDecision(),
        check=None,
    ),
    Case(
        "the check names something else than a config: no decision",
        manager_cq({"cpu": "0"}),
        QuotaDecision(
            error='wrong kind "Other", expecting "MultiKueueConfig": bad parameters reference'
        ),
        check=check(kind="Other"),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_automate_quota(case: Case) -> None:
    got = automate_quota(
        case.cluster_queue, case.check, case.config, case.local_queues, case.workers
    )
    assert got == case.want


@dataclass(frozen=True)
class CheckCase:
    name: str
    cluster_queue: Obj
    want: str | None


def other_check(name: str) -> Obj:
    """An AdmissionCheck of another controller."""
    return {"metadata": {"name": name}, "spec": {"controllerName": "example.com/other"}}


CHECKS = [check("ac1"), other_check("prov"), check("ac2")]
CHECK_CASES = [
    CheckCase("v1beta1 list", cq("cq1", {"cpu": "1"}, admissionChecks=["prov", "ac2"]), "ac2"),
    CheckCase(
        "v1beta2 strategy",
        cq("cq1", {"cpu": "1"}, admissionChecksStrategy={"admissionChecks": [{"name": "ac1"}]}),
        "ac1",
    ),
    CheckCase(
        "only another controller's check", cq("cq1", {"cpu": "1"}, admissionChecks=["prov"]), None
    ),
    CheckCase("no checks", cq("cq1", {"cpu": "1"}), None),
]


@pytest.mark.parametrize("case", CHECK_CASES, ids=lambda case: case.name)
def test_multikueue_check(case: CheckCase) -> None:
    found = multikueue_check(case.cluster_queue, CHECKS)
    assert (None if found is None else found["metadata"]["name"]) == case.want
