"""The engine's flows through :class:`~numaplane.testing.kueue.FakeKueueApi`: objects created as
through the API, the scheduler and the controllers run until nothing is left to do, results read
back from the stored objects — reservation and admission, waiting for quota, finishing,
preemption through eviction and release to requeueing, assumed reservations and failed writes,
and the ClusterQueue/LocalQueue statuses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.kueue.config import FairSharingConfig, KueueConfig
from numaplane.kueue.engine import STATUS, WORKLOAD, Engine
from numaplane.kueue.workload import release_quota
from numaplane.testing import kueue as k
from numaplane.testing.kueue import FakeKueueApi

NS = "team"


def _api() -> FakeKueueApi:
    return FakeKueueApi()


def _release(api: FakeKueueApi, name: str) -> None:
    """What the job integration does once an evicted workload's job is no longer active."""
    raw = api.workload(NS, name)
    api.update({**raw, "status": release_quota(raw, api.now)}, status=True)


def _world(cpu: str = "2", **cq: Any) -> FakeKueueApi:
    api = _api()
    api.create(k.namespace(NS))
    api.create(k.resource_flavor("default"))
    api.create(k.cluster_queue("cq", {"default": {"cpu": cpu}}, **cq))
    api.create(k.local_queue(NS, "lq", "cq"))
    api.settle()
    return api


def engine(api: FakeKueueApi) -> Engine:
    """The fake's engine, as the Engine it is."""
    assert isinstance(api.engine, Engine)
    return api.engine


def _cond(api: FakeKueueApi, name: str, kind: str) -> tuple[str, str, str] | None:
    cond = api.condition(api.workload(NS, name), kind)
    if cond is None:
        return None
    return (str(cond["status"]), str(cond["reason"]), str(cond["message"]))


def test_a_workload_that_fits_is_reserved_then_admitted_with_upstream_events() -> None:
    api = _world()
    api.create(k.workload(NS, "w1", "lq", {"cpu": "1"}))
    api.settle()
    assert _cond(api, "w1", "QuotaReserved") == (
        "True",
        "QuotaReserved",
        "Quota reserved in ClusterQueue cq",
    )
    assert _cond(api, "w1", "Admitted") == ("True", "Admitted", "The workload is admitted")
    wl = api.workload(NS, "w1")
    assert wl["status"]["admission"] == {
        "clusterQueue": "cq",
        "podSetAssignments": [
            {
                "name": "main",
                "flavors": {"cpu": "default"},
                "resourceUsage": {"cpu": "1"},
                "count": 1,
            }
        ],
    }
    messages = [(e.reason, e.message) for e in api.events if e.obj["metadata"]["name"] == "w1"]
    assert messages == [
        ("QuotaReserved", "Quota reserved in ClusterQueue cq, wait time since queued was 0s"),
        ("Admitted", "Admitted by ClusterQueue cq, wait time since reservation was 0s"),
    ]


def test_what_does_not_fit_waits_with_the_assigners_message_and_is_counted_pending() -> None:
    api = _world()
    for name in ("w1", "w2", "w3"):
        api.create(k.workload(NS, name, "lq", {"cpu": "1"}))
        api.advance(1)
    api.settle()
    assert api.admitted() == [f"{NS}/w1", f"{NS}/w2"]
    status, _, message = _cond(api, "w3", "QuotaReserved") or ("", "", "")
    assert status == "False"
    assert message == (
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor "
        "default, 1 more needed"
    )
    cq = api.get("ClusterQueue", "cq")
    assert cq is not None
    st = cq["status"]
    assert (st["pendingWorkloads"], st["reservingWorkloads"], st["admittedWorkloads"]) == (1, 2, 2)
    assert st["flavorsReservation"] == [
        {"name": "default", "resources": [{"name": "cpu", "total": "2", "borrowed": "0"}]}
    ]
    lq = api.get("LocalQueue", f"{NS}/lq")
    assert lq is not None
    assert (lq["status"]["pendingWorkloads"], lq["status"]["admittedWorkloads"]) == (1, 2)


def test_a_finished_workload_frees_its_quota_for_the_next() -> None:
    api = _world(cpu="1")
    api.create(k.workload(NS, "w1", "lq", {"cpu": "1"}))
    api.advance(1)
    api.create(k.workload(NS, "w2", "lq", {"cpu": "1"}))
    api.settle()
    assert api.admitted() == [f"{NS}/w1"]
    done = api.workload(NS, "w1")
    done["status"]["conditions"].append(
        {
            "type": "Finished",
            "status": "True",
            "reason": "Succeeded",
            "message": "Job finished successfully",
            "lastTransitionTime": "2023-11-14T22:13:30Z",
        }
    )
    api.update(done, status=True)
    api.settle()
    assert _cond(api, "w2", "QuotaReserved") is not None
    assert (_cond(api, "w2", "QuotaReserved") or ("",))[0] == "True"
    cq = api.get("ClusterQueue", "cq")
    assert cq is not None
    assert cq["status"]["reservingWorkloads"] == 1


@dataclass(frozen=True)
class PreemptionCase:
    name: str
    policy: str
    #: Whether the high-priority workload preempts the low one.
    preempts: bool


PREEMPTION_CASES = [
    PreemptionCase("lower-priority-is-preempted", "LowerPriority", True),
    PreemptionCase("never-keeps-it", "Never", False),
]


@pytest.mark.parametrize("case", PREEMPTION_CASES, ids=[c.name for c in PREEMPTION_CASES])
def test_preemption_evicts_then_the_release_admits_the_preemptor(case: PreemptionCase) -> None:
    api = _world(cpu="2", preemption={"withinClusterQueue": case.policy})
    api.create(k.workload(NS, "low", "lq", {"cpu": "2"}, priority=1))
    api.settle()
    assert api.admitted() == [f"{NS}/low"]
    api.advance(1)
    high = api.create(k.workload(NS, "high", "lq", {"cpu": "2"}, priority=10))
    api.settle()
    if not case.preempts:
        assert api.admitted() == [f"{NS}/low"]
        assert _cond(api, "low", "Evicted") is None
        return
    uid = high["metadata"]["uid"]
    message = (
        f"Preempted to accommodate a workload (UID: {uid}, JobUID: UNKNOWN) due to "
        "prioritization in the ClusterQueue; preemptor path: /cq; preemptee path: /cq"
    )
    assert _cond(api, "low", "Preempted") == ("True", "InClusterQueue", message)
    evicted = _cond(api, "low", "Evicted")
    assert evicted is not None
    assert evicted[:2] == ("True", "Preempted")
    assert "Preempted" in api.event_reasons("low")
    # Its quota is held until its job is inactive: the preemptor waits meanwhile.
    assert api.reserved() == [f"{NS}/low"]
    high_wait = _cond(api, "high", "QuotaReserved")
    assert high_wait is not None
    assert high_wait[2].endswith("Pending the preemption of 1 workload(s)")
    _release(api, "low")
    api.settle()
    assert api.admitted() == [f"{NS}/high"]
    assert (_cond(api, "low", "QuotaReserved") or ("",))[0] == "False"
    requeued = _cond(api, "low", "Requeued")
    assert requeued is not None
    assert requeued[:2] == ("True", "Preempted")


@dataclass(frozen=True)
class ConflictCase:
    name: str
    #: What another writer changes between the decision and its write.
    change: str
    #: Whether the decision is redone on the fresh object (else forgotten and re-decided).
    redone: bool


CONFLICT_CASES = [
    ConflictCase("labels-changed-redone", "labels", True),
    ConflictCase("spec-changed-decided-again", "priority", False),
]


@pytest.mark.parametrize("case", CONFLICT_CASES, ids=[c.name for c in CONFLICT_CASES])
def test_a_reservation_that_meets_a_conflict(case: ConflictCase) -> None:
    api = _world(cpu="1")
    api.create(k.workload(NS, "w1", "lq", {"cpu": "1"}))
    api.reconcile()
    outcome = engine(api).cycle(api.now)
    [write] = [w for w in outcome.writes if w.assumed]
    assert (write.verb, write.kind) == (STATUS, WORKLOAD)
    assert engine(api).cache.is_assumed(f"{NS}/w1")
    touched = api.workload(NS, "w1")
    if case.change == "labels":
        touched["metadata"]["labels"] = {"touched": "yes"}
    else:
        touched["spec"]["priority"] = 5
    api.update(touched)
    cycles_before = api.cycles
    landed = api.apply(write)
    assert (landed is not None) == case.redone
    # Landed (the reserved version counts) or forgotten: no assumption is left either way.
    assert not engine(api).cache.is_assumed(f"{NS}/w1")
    assert api.reserved() == ([f"{NS}/w1"] if case.redone else [])
    api.settle()
    assert api.admitted() == [f"{NS}/w1"]
    # Redone: no further cycle was needed to reserve it.
    assert (api.cycles == cycles_before) == case.redone


def test_a_pending_verdict_that_meets_a_conflict_lands_on_the_fresh_workload() -> None:
    # Upstream applies the scheduler's QuotaReserved=False with force; dropping it on a
    # conflict would leave the parked head showing "pending evaluation" indefinitely.
    api = _world(cpu="1")
    api.create(k.workload(NS, "w1", "lq", {"cpu": "1"}))
    api.settle()
    api.create(k.workload(NS, "w2", "lq", {"cpu": "1"}))
    api.reconcile()
    outcome = engine(api).cycle(api.now)
    [write] = [w for w in outcome.writes if w.key == f"{NS}/w2"]
    touched = api.workload(NS, "w2")
    touched["metadata"]["labels"] = {"touched": "yes"}
    api.update(touched)
    assert api.apply(write) is not None
    reserved = _cond(api, "w2", "QuotaReserved")
    assert reserved is not None
    assert reserved[:2] == ("False", "WaitingForQuota")
    assert reserved[2].startswith("couldn't assign flavors to pod set main")
    assert api.workload(NS, "w2")["metadata"]["labels"] == {"touched": "yes"}


def test_an_assumed_reservation_is_not_handed_out_twice() -> None:
    api = _world(cpu="1")
    api.create(k.workload(NS, "w1", "lq", {"cpu": "1"}))
    api.advance(1)
    api.create(k.workload(NS, "w2", "lq", {"cpu": "1"}))
    api.reconcile()
    first = engine(api).cycle(api.now)
    assert [w.assumed for w in first.writes if w.assumed] == [f"{NS}/w1"]
    # Before the write lands, the next cycle sees the quota as taken.
    second = engine(api).cycle(api.now)
    assert not [w for w in second.writes if w.assumed]
    for write in first.writes + second.writes:
        api.apply(write)
    api.settle()
    assert api.admitted() == [f"{NS}/w1"]


def test_a_namespace_the_selector_does_not_match_stays_pending() -> None:
    api = _api()
    api.create(k.namespace(NS, {"team": "b"}))
    api.create(k.resource_flavor("default"))
    selector = {"matchLabels": {"team": "a"}}
    api.create(k.cluster_queue("cq", {"default": {"cpu": "2"}}, namespace_selector=selector))
    api.create(k.local_queue(NS, "lq", "cq"))
    api.create(k.workload(NS, "w1", "lq", {"cpu": "1"}))
    api.settle()
    assert api.admitted() == []
    # The scheduler says why in a Warning event; its Misconfigured condition is one the
    # workload controller re-evaluates (upstream keeps only schedulerSetReasons).
    warnings = [(e.type, e.message) for e in api.events if e.obj["metadata"]["name"] == "w1"]
    assert ("Warning", "Workload namespace doesn't match ClusterQueue selector") in warnings
    assert (_cond(api, "w1", "QuotaReserved") or ("",))[0] == "False"
    # Relabelling the namespace makes it admissible without any other change.
    ns = api.get("Namespace", NS)
    assert ns is not None
    ns["metadata"]["labels"] = {"team": "a"}
    api.update(ns)
    api.settle()
    assert api.admitted() == [f"{NS}/w1"]


def test_a_cluster_queue_without_its_flavor_is_inactive_and_admits_nothing() -> None:
    api = _api()
    api.create(k.namespace(NS))
    api.create(k.cluster_queue("cq", {"missing": {"cpu": "2"}}))
    api.create(k.local_queue(NS, "lq", "cq"))
    api.create(k.workload(NS, "w1", "lq", {"cpu": "1"}))
    api.settle()
    assert api.admitted() == []
    cq = api.get("ClusterQueue", "cq")
    assert cq is not None
    [active] = cq["status"]["conditions"]
    assert (active["status"], active["reason"]) == ("False", "FlavorNotFound")
    lq = api.get("LocalQueue", f"{NS}/lq")
    assert lq is not None
    [lq_active] = lq["status"]["conditions"]
    assert (lq_active["status"], lq_active["reason"]) == ("False", "ClusterQueueIsInactive")
    api.create(k.resource_flavor("missing"))
    api.settle()
    assert api.admitted() == [f"{NS}/w1"]


def test_a_late_pending_version_does_not_free_an_assumed_reservation() -> None:
    api = _world(cpu="1")
    api.create(k.workload(NS, "w1", "lq", {"cpu": "1"}))
    api.advance(1)
    api.create(k.workload(NS, "w2", "lq", {"cpu": "1"}))
    api.reconcile()
    first = engine(api).cycle(api.now)
    [reservation] = [w for w in first.writes if w.assumed]
    # Another writer's pending status of w1 lands while our reservation is in flight.
    late = api.workload(NS, "w1")
    late["status"].setdefault("conditions", []).append(
        {
            "type": "Note",
            "status": "True",
            "reason": "Other",
            "message": "someone else",
            "lastTransitionTime": "2023-11-14T22:13:20Z",
        }
    )
    api.update(late, status=True)
    assert engine(api).cache.is_assumed(f"{NS}/w1")
    second = engine(api).cycle(api.now)
    assert not [w for w in second.writes if w.assumed]
    # Ours meets the conflict and is redone on the fresh w1; w2 still waits.
    assert api.apply(reservation) is not None
    for write in second.writes:
        api.apply(write)
    api.settle()
    assert api.reserved() == [f"{NS}/w1"]


def test_the_assumed_version_is_what_parsing_the_reserved_workload_gives() -> None:
    api = _world(cpu="2")
    api.create(k.workload(NS, "w1", "lq", {"cpu": "1"}, count=2))
    api.reconcile()
    outcome = engine(api).cycle(api.now)
    [write] = [w for w in outcome.writes if w.assumed]
    assumed = engine(api).assumed[f"{NS}/w1"]
    assert assumed == engine(api).parse_workload(write.obj)
    assert assumed.is_admitted


def test_a_workload_waits_for_its_local_queue_and_is_admitted_once_it_exists() -> None:
    api = _api()
    api.create(k.namespace(NS))
    api.create(k.resource_flavor("default"))
    api.create(k.cluster_queue("cq", {"default": {"cpu": "2"}}))
    api.create(k.workload(NS, "w1", "lq", {"cpu": "1"}))
    api.settle()
    assert _cond(api, "w1", "QuotaReserved") == (
        "False",
        "Misconfigured",
        "LocalQueue lq doesn't exist",
    )
    api.create(k.local_queue(NS, "lq", "cq"))
    api.settle()
    assert api.admitted() == [f"{NS}/w1"]


def test_fair_sharing_shares_are_written_to_queue_and_cohort_status() -> None:
    config = KueueConfig(fair_sharing=FairSharingConfig(enable=True))
    api = FakeKueueApi(config=config)
    api.create(k.namespace(NS))
    api.create(k.resource_flavor("default"))
    api.create(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "Cohort",
            "metadata": {"name": "co"},
            "spec": {},
        }
    )
    for name in ("a", "b"):
        api.create(k.cluster_queue(name, {"default": {"cpu": "2"}}, cohort="co"))
        api.create(k.local_queue(NS, name, name))
    api.create(k.workload(NS, "w1", "a", {"cpu": "3"}))
    api.settle()
    assert api.admitted() == [f"{NS}/w1"]
    shares = {}
    for name in ("a", "b"):
        cq = api.get("ClusterQueue", name)
        assert cq is not None
        shares[name] = cq["status"]["fairSharing"]["weightedShare"]
    # a borrows 1 of the 4 CPUs the cohort can lend: 1000 × 1/4.
    assert shares == {"a": 250, "b": 0}
    cohort = api.get("Cohort", "co")
    assert cohort is not None
    assert cohort["status"]["fairSharing"] == {"weightedShare": 0}


@dataclass(frozen=True)
class StrategyCase:
    name: str
    strategy: str
    admitted: bool


STRATEGY_CASES = [
    StrategyCase("block-undeclared", "BlockUndeclared", False),
    StrategyCase("ignore-undeclared", "IgnoreUndeclared", True),
]


@pytest.mark.parametrize("case", STRATEGY_CASES, ids=[c.name for c in STRATEGY_CASES])
def test_the_configured_quota_check_strategy_applies_to_every_queue(case: StrategyCase) -> None:
    api = FakeKueueApi(config=KueueConfig(quota_check_strategy=case.strategy))
    api.create(k.namespace(NS))
    api.create(k.resource_flavor("default"))
    api.create(k.cluster_queue("cq", {"default": {"cpu": "2"}}))
    api.create(k.local_queue(NS, "lq", "cq"))
    # memory is no resource the queue declares.
    api.create(k.workload(NS, "w1", "lq", {"cpu": "1", "memory": "1Gi"}))
    api.settle()
    assert (api.admitted() == [f"{NS}/w1"]) == case.admitted


def test_lowering_a_reserved_workloads_priority_wakes_the_parked_preemptor() -> None:
    # Upstream's workload Update handler: a priority change of a workload holding quota moves
    # the parked workloads of its tree back to the heaps (QueueAssociatedInadmissibleWorkloads
    # After), so one that could not preempt it may now (MultiKueue scenario E8).
    api = _world(cpu="2", preemption={"withinClusterQueue": "LowerPriority"})
    api.create(k.workload(NS, "first", "lq", {"cpu": "2"}, priority=10))
    api.settle()
    api.advance(1)
    api.create(k.workload(NS, "second", "lq", {"cpu": "2"}, priority=10))
    api.settle()
    assert api.admitted() == [f"{NS}/first"]
    assert _cond(api, "first", "Evicted") is None
    lowered = api.workload(NS, "first")
    api.update({**lowered, "spec": {**lowered["spec"], "priority": 1}})
    api.settle()
    evicted = _cond(api, "first", "Evicted")
    assert evicted is not None
    assert evicted[:2] == ("True", "Preempted")
    waiting = _cond(api, "second", "QuotaReserved")
    assert waiting is not None
    assert waiting[2].endswith("Pending the preemption of 1 workload(s)")
