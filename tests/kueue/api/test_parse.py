"""Kueue's queue, quota and check objects from their JSON form: upstream's defaults, v1beta2
names with the v1beta1 fallbacks, what upstream's webhook refuses, and one-line errors naming the
object and field (Workloads: ``test_parse_workload``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.kueue.api import model
from numaplane.kueue.api.parse import (
    PARSERS,
    parse_admission_check,
    parse_cluster_queue,
    parse_cohort,
    parse_local_queue,
    parse_resource_flavor,
    parse_workload_priority_class,
)
from numaplane.kueue.errors import KueueObjectError

T0 = "2026-01-01T00:00:00Z"
T0_S = 1767225600.0


def cq(spec: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq", **meta},
        "spec": spec,
    }


GROUPS = [
    {
        "coveredResources": ["cpu", "memory"],
        "flavors": [
            {
                "name": "default",
                "resources": [
                    {"name": "cpu", "nominalQuota": 9, "borrowingLimit": "500m"},
                    {"name": "memory", "nominalQuota": "36Gi", "lendingLimit": "1Gi"},
                ],
            },
            {
                "name": "spot",
                "resources": [
                    {"name": "cpu", "nominalQuota": "1.5"},
                    {"name": "memory", "nominalQuota": 0},
                ],
            },
        ],
    }
]


def test_cluster_queue_with_every_field() -> None:
    obj = cq(
        {
            "cohortName": "team",
            "resourceGroups": GROUPS,
            "queueingStrategy": "StrictFIFO",
            "namespaceSelector": {"matchLabels": {"team": "a"}},
            "preemption": {
                "reclaimWithinCohort": "Any",
                "withinClusterQueue": "LowerOrNewerEqualPriority",
                "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100},
            },
            "flavorFungibility": {
                "whenCanBorrow": "TryNextFlavor",
                "whenCanPreempt": "TryNextFlavor",
                "preference": "PreemptionOverBorrowing",
            },
            "admissionChecksStrategy": {
                "admissionChecks": [{"name": "ac1", "onFlavors": ["spot"]}, {"name": "ac2"}]
            },
            "stopPolicy": "Hold",
            "fairSharing": {"weight": "1500m"},
        },
        uid="u1",
        deletionTimestamp=T0,
    )
    got = parse_cluster_queue(obj)
    assert got == model.ClusterQueue(
        name="cq",
        resource_groups=(
            model.ResourceGroup(
                covered_resources=("cpu", "memory"),
                flavors=(
                    model.FlavorQuotas(
                        "default",
                        (
                            model.ResourceQuota("cpu", 9000, borrowing_limit=500),
                            model.ResourceQuota("memory", 36 << 30, lending_limit=1 << 30),
                        ),
                    ),
                    model.FlavorQuotas(
                        "spot", (model.ResourceQuota("cpu", 1500), model.ResourceQuota("memory", 0))
                    ),
                ),
            ),
        ),
        cohort="team",
        queueing_strategy=model.STRICT_FIFO,
        namespace_selector={"matchLabels": {"team": "a"}},
        preemption=model.PreemptionPolicy(
            reclaim_within_cohort=model.ANY,
            within_cluster_queue=model.LOWER_OR_NEWER_EQUAL_PRIORITY,
            borrow_within_cohort=model.BorrowWithinCohort(model.LOWER_PRIORITY, 100),
        ),
        flavor_fungibility=model.FlavorFungibility(
            model.TRY_NEXT_FLAVOR, model.TRY_NEXT_FLAVOR, model.PREEMPTION_OVER_BORROWING
        ),
        admission_checks=(
            model.AdmissionCheckRule("ac1", ("spot",)),
            model.AdmissionCheckRule("ac2"),
        ),
        stop_policy=model.STOP_HOLD,
        fair_weight_milli=1500,
        uid="u1",
        deleting=True,
    )
    assert got.raw is obj
    assert got.quotas()[("spot", "cpu")].nominal == 1500


def test_cluster_queue_defaults() -> None:
    got = parse_cluster_queue(cq({}))
    assert got == model.ClusterQueue(name="cq")
    # nil selector matches no namespace; {} matches all: the two must stay apart.
    assert got.namespace_selector is None
    assert parse_cluster_queue(cq({"namespaceSelector": {}})).namespace_selector == {}


def test_cluster_queue_v1beta1_names() -> None:
    got = parse_cluster_queue(
        cq(
            {
                "cohort": "old",
                "admissionChecks": ["a", "b"],
                "flavorFungibility": {"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"},
            }
        )
    )
    assert got.cohort == "old"
    assert got.admission_checks == (model.AdmissionCheckRule("a"), model.AdmissionCheckRule("b"))
    assert got.flavor_fungibility == model.FlavorFungibility(
        model.MAY_STOP_SEARCH, model.MAY_STOP_SEARCH
    )


def test_quota_check_strategy_comes_from_the_configuration() -> None:
    got = parse_cluster_queue(cq({}), quota_check_strategy=model.IGNORE_UNDECLARED)
    assert got.quota_check_strategy == model.IGNORE_UNDECLARED
    assert parse_cluster_queue(cq({})).quota_check_strategy == model.BLOCK_UNDECLARED


def test_cohort_name_wins_over_v1beta1_cohort() -> None:
    assert parse_cluster_queue(cq({"cohortName": "new", "cohort": "old"})).cohort == "new"


@dataclass(frozen=True)
class BadCase:
    name: str
    spec: dict[str, Any]
    field: str
    reason: str


BAD = [
    BadCase(
        "unknown queueing strategy",
        {"queueingStrategy": "FIFO"},
        "spec.queueingStrategy",
        'unsupported value "FIFO"',
    ),
    BadCase(
        "unknown reclaim policy",
        {"preemption": {"reclaimWithinCohort": "Always"}},
        "spec.preemption.reclaimWithinCohort",
        'unsupported value "Always"',
    ),
    BadCase(
        "bad quantity",
        {"resourceGroups": [{**GROUPS[0], "flavors": [{"name": "f", "resources": [
            {"name": "cpu", "nominalQuota": "ten"}, {"name": "memory", "nominalQuota": 1}]}]}]},
        "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
        "invalid quantity 'ten'",
    ),
    BadCase(
        "flavor resources out of order",
        {"resourceGroups": [{**GROUPS[0], "flavors": [{"name": "f", "resources": [
            {"name": "memory", "nominalQuota": 1}, {"name": "cpu", "nominalQuota": 1}]}]}]},
        "spec.resourceGroups[0].flavors[0].resources",
        "must list the coveredResources ['cpu', 'memory'] in order",
    ),
    BadCase(
        "negative quota",
        {"resourceGroups": [{**GROUPS[0], "flavors": [{"name": "f", "resources": [
            {"name": "cpu", "nominalQuota": "-1"}, {"name": "memory", "nominalQuota": 1}]}]}]},
        "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
        "must be greater than or equal to 0",
    ),
    BadCase(
        "lending more than the nominal quota",
        {"resourceGroups": [{**GROUPS[0], "flavors": [{"name": "f", "resources": [
            {"name": "cpu", "nominalQuota": 1, "lendingLimit": 2},
            {"name": "memory", "nominalQuota": 1}]}]}]},
        "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit",
        "must be less than or equal to the nominalQuota",
    ),
    BadCase(
        "a resource in two groups",
        {"resourceGroups": [GROUPS[0], {"coveredResources": ["gpu", "cpu"], "flavors": []}]},
        "spec.resourceGroups[1].coveredResources[1]",
        'Duplicate value: "cpu"',
    ),
    BadCase(
        "a flavor in two groups",
        {"resourceGroups": [GROUPS[0], {"coveredResources": ["gpu"], "flavors": [
            {"name": "spot", "resources": [{"name": "gpu", "nominalQuota": 1}]}]}]},
        "spec.resourceGroups[1].flavors[0].name",
        'Duplicate value: "spot"',
    ),
    BadCase(
        "resource groups not a list",
        {"resourceGroups": {"cpu": 1}},
        "spec.resourceGroups",
        "expected a list, not object",
    ),
    BadCase(
        "threshold not an integer",
        {"preemption": {"borrowWithinCohort": {"maxPriorityThreshold": "high"}}},
        "spec.preemption.borrowWithinCohort.maxPriorityThreshold",
        "expected an integer, not string",
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", BAD, ids=[case.name for case in BAD])
def test_bad_cluster_queue_is_one_line_naming_the_field(case: BadCase) -> None:
    with pytest.raises(KueueObjectError) as err:
        parse_cluster_queue(cq(case.spec))
    assert err.value.kind == "ClusterQueue"
    assert err.value.name == "cq"
    assert err.value.field == case.field
    assert case.reason in err.value.reason
    assert str(err.value).startswith(f"ClusterQueue cq: {case.field}: ")
    assert "\n" not in str(err.value)


def test_object_without_a_name() -> None:
    with pytest.raises(KueueObjectError, match=r"metadata\.name: required"):
        parse_cluster_queue({"spec": {}})
    with pytest.raises(KueueObjectError, match="expected an object, not list"):
        parse_cluster_queue([])  # type: ignore[arg-type]


def test_cohort() -> None:
    got = parse_cohort(
        {
            "metadata": {"name": "root"},
            "spec": {"parentName": "top", "resourceGroups": GROUPS, "fairSharing": {"weight": 2}},
        }
    )
    assert (got.name, got.parent, got.fair_weight_milli) == ("root", "top", 2000)
    assert (
        got.resource_groups == parse_cluster_queue(cq({"resourceGroups": GROUPS})).resource_groups
    )
    assert parse_cohort({"metadata": {"name": "c"}}) == model.Cohort(name="c")


def test_resource_flavor() -> None:
    taint = {"key": "spot", "value": "true", "effect": "NoSchedule"}
    toleration = {"key": "spot", "operator": "Exists", "effect": "NoSchedule"}
    got = parse_resource_flavor(
        {
            "metadata": {"name": "spot"},
            "spec": {
                "nodeLabels": {"instance": "spot"},
                "nodeTaints": [taint],
                "tolerations": [toleration],
                "topologyName": "default",
            },
        }
    )
    assert got == model.ResourceFlavor(
        "spot", {"instance": "spot"}, (taint,), (toleration,), "default"
    )
    assert parse_resource_flavor({"metadata": {"name": "d"}}) == model.ResourceFlavor("d")


def test_local_queue() -> None:
    got = parse_local_queue(
        {"metadata": {"name": "lq", "namespace": "team-a"}, "spec": {"clusterQueue": "cq"}}
    )
    assert got == model.LocalQueue("team-a", "lq", "cq")
    assert got.key == "team-a/lq"
    with pytest.raises(KueueObjectError, match=r"LocalQueue team-a/lq: spec\.clusterQueue"):
        parse_local_queue({"metadata": {"name": "lq", "namespace": "team-a"}, "spec": {}})


def test_admission_check_is_active_only_with_active_true() -> None:
    def ac(status: str | None) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "metadata": {"name": "ac"},
            "spec": {
                "controllerName": "kueue.x-k8s.io/multikueue",
                "parameters": {
                    "apiGroup": "kueue.x-k8s.io",
                    "kind": "MultiKueueConfig",
                    "name": "m",
                },
            },
        }
        if status is not None:
            obj["status"] = {"conditions": [{"type": "Active", "status": status}]}
        return obj

    got = parse_admission_check(ac("True"))
    assert got.active
    assert got.controller_name == "kueue.x-k8s.io/multikueue"
    assert got.parameters == {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": "m"}
    assert not parse_admission_check(ac("False")).active
    assert not parse_admission_check(ac(None)).active


def test_workload_priority_class() -> None:
    got = parse_workload_priority_class({"metadata": {"name": "high"}, "value": 10000})
    assert got == model.WorkloadPriorityClass("high", 10000)
    with pytest.raises(KueueObjectError, match="WorkloadPriorityClass high: value: required"):
        parse_workload_priority_class({"metadata": {"name": "high"}})


def test_parsers_cover_every_kind_but_workload() -> None:
    assert sorted(PARSERS) == sorted(
        [
            "AdmissionCheck",
            "ClusterQueue",
            "Cohort",
            "LocalQueue",
            "ResourceFlavor",
            "WorkloadPriorityClass",
        ]
    )
    got = PARSERS["ClusterQueue"](cq({}))
    assert got == model.ClusterQueue(name="cq")
