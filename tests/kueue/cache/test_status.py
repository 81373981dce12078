"""A ClusterQueue's ``Active`` condition (reasons and messages as upstream ``inactiveReason``)
and the usage rows of ClusterQueue and LocalQueue status (upstream ``cache.Usage``,
``LocalQueueUsage``)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from numaplane.kueue.api.model import (
    AdmissionCheck,
    AdmissionCheckRule,
    ClusterQueue,
    FlavorQuotas,
    LocalQueue,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
)
from numaplane.kueue.cache import KueueCache
from numaplane.kueue.cache.status import PROVISIONING_REQUEST_CONTROLLER
from numaplane.kueue.constants import MULTIKUEUE_CONTROLLER
from tests.kueue.cache.builders import admitted, cq

TWO_FLAVORS = cq("q", "", ("f1", "cpu", 1000, None, None), ("f2", "cpu", 1000, None, None))
MK = MULTIKUEUE_CONTROLLER


@dataclass(frozen=True)
class ActiveCase:
    name: str
    queue: ClusterQueue
    flavors: tuple[str, ...]
    checks: tuple[AdmissionCheck, ...]
    expected: tuple[bool, str, str]


def rules(*names: str, on: tuple[str, ...] = ()) -> tuple[AdmissionCheckRule, ...]:
    return tuple(AdmissionCheckRule(n, on) for n in names)


ACTIVE_CASES = (
    ActiveCase("ready", TWO_FLAVORS, ("f1", "f2"), (), (True, "Ready", "Can admit new workloads")),
    ActiveCase(
        "flavors missing, in resource-group order",
        TWO_FLAVORS,
        (),
        (),
        (
            False,
            "FlavorNotFound",
            "Can't admit new workloads: references missing ResourceFlavor(s): f1,f2.",
        ),
    ),
    ActiveCase(
        "stopped comes first",
        replace(TWO_FLAVORS, stop_policy="Hold"),
        ("f2",),
        (),
        (
            False,
            "Stopped",
            "Can't admit new workloads: is stopped, references missing ResourceFlavor(s): f1.",
        ),
    ),
    ActiveCase(
        "HoldAndDrain is stopped too",
        replace(TWO_FLAVORS, stop_policy="HoldAndDrain"),
        ("f1", "f2"),
        (),
        (False, "Stopped", "Can't admit new workloads: is stopped."),
    ),
    ActiveCase(
        "admission checks missing (sorted) and inactive",
        replace(TWO_FLAVORS, admission_checks=rules("zeta", "alpha", "off")),
        ("f1", "f2"),
        (AdmissionCheck("off", "ctrl", active=False),),
        (
            False,
            "AdmissionCheckNotFound",
            "Can't admit new workloads: references missing AdmissionCheck(s): alpha,zeta, "
            "references inactive AdmissionCheck(s): off.",
        ),
    ),
    ActiveCase(
        "active admission check",
        replace(TWO_FLAVORS, admission_checks=rules("ok")),
        ("f1", "f2"),
        (AdmissionCheck("ok", "ctrl", active=True),),
        (True, "Ready", "Can admit new workloads"),
    ),
    ActiveCase(
        "two MultiKueue checks",
        replace(TWO_FLAVORS, admission_checks=rules("mk2", "mk1")),
        ("f1", "f2"),
        (AdmissionCheck("mk1", MK, active=True), AdmissionCheck("mk2", MK, active=True)),
        (
            False,
            "MultipleMultiKueueAdmissionChecks",
            "Can't admit new workloads: Cannot use multiple MultiKueue AdmissionChecks on the "
            "same ClusterQueue, found: mk1,mk2.",
        ),
    ),
    ActiveCase(
        "MultiKueue check on some flavors only",
        replace(TWO_FLAVORS, admission_checks=rules("mk", on=("f1",))),
        ("f1", "f2"),
        (AdmissionCheck("mk", MK, active=True),),
        (
            False,
            "MultiKueueAdmissionCheckAppliedPerFlavor",
            "Can't admit new workloads: Cannot specify MultiKueue AdmissionCheck per flavor, "
            "found: mk.",
        ),
    ),
    ActiveCase(
        "MultiKueue check listing every flavor is fine",
        replace(TWO_FLAVORS, admission_checks=rules("mk", on=("f2", "f1"))),
        ("f1", "f2"),
        (AdmissionCheck("mk", MK, active=True),),
        (True, "Ready", "Can admit new workloads"),
    ),
    ActiveCase(
        "MultiKueue with a ProvisioningRequest check",
        replace(TWO_FLAVORS, admission_checks=rules("mk", "prov")),
        ("f1", "f2"),
        (
            AdmissionCheck("mk", MK, active=True),
            AdmissionCheck("prov", PROVISIONING_REQUEST_CONTROLLER, active=True),
        ),
        (
            False,
            "MultiKueueWithProvisioningRequest",
            "Can't admit new workloads: Cannot use both MultiKueue and ProvisioningRequest "
            "AdmissionChecks together, found: mk, prov.",
        ),
    ),
    ActiveCase(
        "terminating wins over everything",
        replace(TWO_FLAVORS, deleting=True, stop_policy="Hold"),
        (),
        (),
        (False, "Terminating", "Can't admit new workloads; clusterQueue is terminating"),
    ),
)


@pytest.mark.parametrize("case", ACTIVE_CASES, ids=[c.name for c in ACTIVE_CASES])
def test_cluster_queue_active(case: ActiveCase) -> None:
    cache = KueueCache()
    for flavor in case.flavors:
        cache.upsert_flavor(ResourceFlavor(flavor))
    for check in case.checks:
        cache.upsert_admission_check(check)
    cache.upsert_cluster_queue(case.queue)
    assert cache.cluster_queue_active(case.queue.name) == case.expected
    snap = cache.snapshot().cluster_queues[case.queue.name]
    assert snap.active is case.expected[0]
    assert snap.inactive_reason == ("" if case.expected[0] else case.expected[1])


def test_unknown_cluster_queue_is_not_found() -> None:
    assert KueueCache().cluster_queue_active("nope") == (
        False,
        "NotFound",
        "ClusterQueue not found",
    )


def test_flavor_and_check_events_report_queues_that_became_active() -> None:
    cache = KueueCache()
    cache.upsert_cluster_queue(replace(TWO_FLAVORS, admission_checks=rules("ac")))
    assert cache.upsert_flavor(ResourceFlavor("f1")) == set()
    assert cache.upsert_flavor(ResourceFlavor("f2")) == set()
    assert cache.upsert_admission_check(AdmissionCheck("ac", "ctrl", active=False)) == set()
    assert cache.upsert_admission_check(AdmissionCheck("ac", "ctrl", active=True)) == {"q"}
    assert cache.cluster_queue_active("q")[0]
    assert cache.delete_flavor("f1") == set()
    assert cache.cluster_queue_active("q")[1] == "FlavorNotFound"


def test_cluster_queue_usage_rows() -> None:
    """Rows per flavor of every group in order, resources sorted by name, ``borrowed`` above
    nominal in a cohort; reservation counts reserving workloads, usage only admitted ones."""
    queue = ClusterQueue(
        name="q",
        cohort="co",
        resource_groups=(
            ResourceGroup(
                ("memory", "cpu"),
                (
                    FlavorQuotas("f1", (ResourceQuota("memory", 1024), ResourceQuota("cpu", 2000))),
                    FlavorQuotas("f2", (ResourceQuota("memory", 0), ResourceQuota("cpu", 0))),
                ),
            ),
        ),
    )
    other = cq("other", "co", ("f1", "cpu", 4000, None, None), ("f1", "memory", 0, None, None))
    cache = KueueCache()
    cache.upsert_cluster_queue(queue)
    cache.upsert_cluster_queue(other)
    cache.upsert_workload(admitted("a", "q", {("f1", "cpu"): 3000}, is_admitted=True))
    cache.upsert_workload(admitted("b", "q", {("f1", "cpu"): 500, ("f1", "memory"): 2048}))
    usage = cache.cluster_queue_usage("q")
    assert usage.reserving_workloads == 2
    assert usage.admitted_workloads == 1
    assert usage.to_status() == {
        "flavorsReservation": [
            {
                "name": "f1",
                "resources": [
                    {"name": "cpu", "total": "3500m", "borrowed": "1500m"},
                    {"name": "memory", "total": "2Ki", "borrowed": "1Ki"},
                ],
            },
            {
                "name": "f2",
                "resources": [
                    {"name": "cpu", "total": "0", "borrowed": "0"},
                    {"name": "memory", "total": "0", "borrowed": "0"},
                ],
            },
        ],
        "flavorsUsage": [
            {
                "name": "f1",
                "resources": [
                    {"name": "cpu", "total": "3", "borrowed": "1"},
                    {"name": "memory", "total": "0", "borrowed": "0"},
                ],
            },
            {
                "name": "f2",
                "resources": [
                    {"name": "cpu", "total": "0", "borrowed": "0"},
                    {"name": "memory", "total": "0", "borrowed": "0"},
                ],
            },
        ],
        "reservingWorkloads": 2,
        "admittedWorkloads": 1,
    }


def test_borrowed_is_zero_without_cohort() -> None:
    cache = KueueCache()
    cache.upsert_cluster_queue(cq("q", "", ("f", "cpu", 1000, None, None)))
    cache.upsert_workload(admitted("a", "q", {("f", "cpu"): 3000}))
    row = cache.cluster_queue_usage("q").flavors_reservation[0].resources[0]
    assert (row.total, row.borrowed) == (3000, 0)


def test_local_queue_usage() -> None:
    cache = KueueCache()
    cache.upsert_cluster_queue(cq("q", "", ("f", "cpu", 10000, None, None)))
    cache.upsert_local_queue(LocalQueue("ns", "main", "q"))
    cache.upsert_workload(admitted("a", "q", {("f", "cpu"): 1000}, is_admitted=True))
    cache.upsert_workload(admitted("b", "q", {("f", "cpu"): 2000}))
    cache.upsert_workload(admitted("c", "q", {("f", "cpu"): 4000}, queue="other"))
    usage = cache.local_queue_usage("ns", "main")
    assert usage.to_status() == {
        "flavorsReservation": [{"name": "f", "resources": [{"name": "cpu", "total": "3"}]}],
        "flavorsUsage": [{"name": "f", "resources": [{"name": "cpu", "total": "1"}]}],
        "reservingWorkloads": 2,
        "admittedWorkloads": 1,
    }
    cache.delete_workload("ns/a")
    assert cache.local_queue_usage("ns", "main").reserving_workloads == 1
    assert cache.local_queue_usage("ns", "missing").to_status() == {
        "flavorsReservation": [],
        "flavorsUsage": [],
        "reservingWorkloads": 0,
        "admittedWorkloads": 0,
    }


def test_topology_not_found_only_with_topology_aware_scheduling() -> None:
    tas = replace(TWO_FLAVORS, admission_checks=())
    off = KueueCache()
    on = KueueCache(topology_aware=True)
    for cache in (off, on):
        cache.upsert_flavor(ResourceFlavor("f1", topology_name="dc"))
        cache.upsert_flavor(ResourceFlavor("f2"))
        cache.upsert_cluster_queue(tas)
    assert off.cluster_queue_active("q")[0]
    assert on.cluster_queue_active("q") == (
        False,
        "TopologyNotFound",
        'Can\'t admit new workloads: there is no Topology "dc" for TAS flavor "f1".',
    )
    assert on.upsert_topology("dc") == {"q"}
    assert on.cluster_queue_active("q")[0]
    on.delete_topology("dc")
    assert on.cluster_queue_active("q")[1] == "TopologyNotFound"


def test_topology_is_not_checked_on_a_multikueue_manager_queue() -> None:
    cache = KueueCache(topology_aware=True)
    cache.upsert_flavor(ResourceFlavor("f1", topology_name="dc"))
    cache.upsert_flavor(ResourceFlavor("f2"))
    cache.upsert_admission_check(AdmissionCheck("mk", MK, active=True))
    cache.upsert_cluster_queue(replace(TWO_FLAVORS, admission_checks=rules("mk")))
    assert cache.cluster_queue_active("q") == (True, "Ready", "Can admit new workloads")
