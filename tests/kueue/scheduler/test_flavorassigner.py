"""Flavor assignment, case by case from upstream's ``flavorassigner_test.go``
(``TestAssignFlavors``, ``TestReclaimBeforePriorityPreemption``, ``TestDeletedFlavors``) and
quota.md §3/§6 (Q2, Q5, Q7, P4's message):
chosen flavors and modes, the tried index, borrowing level, usage, status reasons and the resolved
NoFit reason."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from numaplane.kueue.api.model import (
    MAY_STOP_SEARCH,
    PREEMPTION_OVER_BORROWING,
    TRY_NEXT_FLAVOR,
    BorrowWithinCohort,
    ClusterQueue,
    Cohort,
    FlavorFungibility,
    FlavorQuotas,
    PodSet,
    PreemptionPolicy,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Workload,
)
from numaplane.kueue.resources import FlavorResource, resource_value
from numaplane.kueue.scheduler.flavorassigner import (
    Assignment,
    ClusterQueueView,
    FlavorAssignmentMode,
    PreemptionPossibility,
    assign_flavors,
)
from numaplane.kueue.scheduler.fungibility import Granular, GranularMode, is_preferred

from .snapshots import build_snapshot

NO_FIT = FlavorAssignmentMode.NO_FIT
PREEMPT = FlavorAssignmentMode.PREEMPT
FIT = FlavorAssignmentMode.FIT
MAY = FlavorFungibility(when_can_borrow=MAY_STOP_SEARCH, when_can_preempt=MAY_STOP_SEARCH)
TRY = FlavorFungibility(when_can_borrow=TRY_NEXT_FLAVOR, when_can_preempt=TRY_NEXT_FLAVOR)
BORROW_TRY = FlavorFungibility(when_can_borrow=TRY_NEXT_FLAVOR, when_can_preempt=MAY_STOP_SEARCH)
GPU = "example.com/gpu"
MI = 1024 * 1024
GI = 1024 * MI
SPOT_TAINT = {"key": "instance", "value": "spot", "effect": "NoSchedule"}
SPOT_TOLERATION = {"key": "instance", "operator": "Equal", "value": "spot", "effect": "NoSchedule"}

FLAVORS = (
    ResourceFlavor("default"),
    ResourceFlavor("one", node_labels={"type": "one"}),
    ResourceFlavor("two", node_labels={"type": "two"}),
    ResourceFlavor("b_one", node_labels={"b_type": "one"}),
    ResourceFlavor("b_two", node_labels={"b_type": "two"}),
    ResourceFlavor("tainted", node_taints=(SPOT_TAINT,)),
    ResourceFlavor(
        "taint_and_toleration", node_taints=(SPOT_TAINT,), tolerations=(SPOT_TOLERATION,)
    ),
    ResourceFlavor("label-x-a", node_labels={"x": "a"}),
    ResourceFlavor("label-xy-b", node_labels={"x": "b", "y": "k"}),
)


# --- builders -----------------------------------------------------------------------------------


def rq(name: str, nominal: str, bl: str | None = None, ll: str | None = None) -> ResourceQuota:
    return ResourceQuota(
        name,
        resource_value(name, nominal),
        None if bl is None else resource_value(name, bl),
        None if ll is None else resource_value(name, ll),
    )


def fq(name: str, *resources: ResourceQuota) -> FlavorQuotas:
    return FlavorQuotas(name, resources)


def rg(*flavors: FlavorQuotas) -> ResourceGroup:
    return ResourceGroup(tuple(r.name for r in flavors[0].resources), flavors)


def cq(
    name: str,
    *groups: ResourceGroup,
    cohort: str = "",
    ff: FlavorFungibility | None = None,
    preemption: PreemptionPolicy | None = None,
    quota_check_strategy: str = "BlockUndeclared",
) -> ClusterQueue:
    return ClusterQueue(
        name,
        resource_groups=groups,
        cohort=cohort,
        flavor_fungibility=ff or FlavorFungibility(),
        preemption=preemption or PreemptionPolicy(),
        quota_check_strategy=quota_check_strategy,
    )


def ps(
    name: str,
    count: int,
    requests: Mapping[str, str],
    *,
    node_selector: Mapping[str, str] | None = None,
    terms: tuple[Mapping[str, Any], ...] = (),
    tolerations: tuple[Mapping[str, Any], ...] = (),
) -> PodSet:
    return PodSet(
        name,
        count,
        {res: resource_value(res, q) for res, q in requests.items()},
        node_selector=node_selector or {},
        required_node_affinity=terms,
        tolerations=tolerations,
    )


def term(*exprs: tuple[str, str, tuple[str, ...]]) -> Mapping[str, Any]:
    return {
        "matchExpressions": [{"key": k, "operator": op, "values": list(v)} for k, op, v in exprs]
    }


def wl(*pod_sets: PodSet) -> Workload:
    return Workload("ns", "wl", "uid", "lq", pod_sets)


@dataclass
class FakeOracle:
    """Upstream's ``testOracle``: a fixed answer per FlavorResource, (Preempt, 0) otherwise."""

    results: Mapping[FlavorResource, tuple[PreemptionPossibility, int]] = field(
        default_factory=dict
    )
    calls: list[tuple[FlavorResource, int]] = field(default_factory=list)

    def simulate_preemption(
        self, cq: ClusterQueueView, wl: Workload, fr: FlavorResource, quantity: int
    ) -> tuple[PreemptionPossibility, int]:
        self.calls.append((fr, quantity))
        return self.results.get(fr, (PreemptionPossibility.PREEMPT, 0))


#: Per podSet: resource → (flavor, mode, tried flavor index).
Flavors = Mapping[str, tuple[str, FlavorAssignmentMode, int]]


@dataclass(frozen=True)
class Case:
    name: str
    pod_sets: tuple[PodSet, ...]
    queue: ClusterQueue
    want_mode: FlavorAssignmentMode
    want_flavors: tuple[Flavors, ...]
    want_usage: Mapping[FlavorResource, int] | None
    #: None: not compared (upstream's table does not state them either).
    want_reasons: tuple[tuple[str, ...], ...] | None = ()
    want_borrowing: int = 0
    want_no_fit_reason: str = ""
    usage: Mapping[FlavorResource, int] = field(default_factory=dict)
    secondary: ClusterQueue | None = None
    secondary_usage: Mapping[FlavorResource, int] = field(default_factory=dict)
    simulation: Mapping[FlavorResource, tuple[PreemptionPossibility, int]] = field(
        default_factory=dict
    )
    fair_sharing: bool = False
    counts: tuple[int, ...] | None = None
    flavors: tuple[ResourceFlavor, ...] = FLAVORS


def run(case: Case) -> Assignment:
    queues = [case.queue] + ([case.secondary] if case.secondary else [])
    usage = {case.queue.name: case.usage}
    if case.secondary:
        usage[case.secondary.name] = case.secondary_usage
    snap = build_snapshot(queues, case.flavors, usage)
    main = snap.cluster_queues[case.queue.name]
    return assign_flavors(
        wl(*case.pod_sets),
        main,
        snap,
        FakeOracle(case.simulation),
        counts=case.counts,
        enable_fair_sharing=case.fair_sharing,
    )


SEC = "test-secondary-clusterqueue"
CQ = "test-clusterqueue"
P, R, N = PreemptionPossibility.PREEMPT, PreemptionPossibility.RECLAIM, None
NONE = PreemptionPossibility.NO_CANDIDATES
EXCEEDS = "insufficient quota for {r} in flavor {f}, previously considered podsets requests ({a}) + current podset request ({q}) > maximum capacity ({m})"  # noqa: E501


def exceeds(r: str, f: str, a: str, q: str, m: str) -> str:
    return EXCEEDS.format(r=r, f=f, a=a, q=q, m=m)


def unused(r: str, f: str, more: str) -> str:
    return f"insufficient unused quota for {r} in flavor {f}, {more} more needed"


BORROW_PREEMPT = PreemptionPolicy(
    reclaim_within_cohort="LowerPriority", borrow_within_cohort=BorrowWithinCohort("LowerPriority")
)

CASES = [
    Case(
        name="single flavor, fits",
        pod_sets=(ps("main", 1, {"cpu": "1", "memory": "1Mi"}),),
        queue=cq(CQ, rg(fq("default", rq("cpu", "1"), rq("memory", "2Mi")))),
        want_mode=FIT,
        want_flavors=({"cpu": ("default", FIT, -1), "memory": ("default", FIT, -1)},),
        want_usage={("default", "cpu"): 1000, ("default", "memory"): MI},
    ),
    Case(
        name="single flavor, fits tainted flavor",
        pod_sets=(ps("main", 1, {"cpu": "1"}, tolerations=(SPOT_TOLERATION,)),),
        queue=cq(CQ, rg(fq("tainted", rq("cpu", "4")))),
        want_mode=FIT,
        want_flavors=({"cpu": ("tainted", FIT, -1)},),
        want_usage={("tainted", "cpu"): 1000},
    ),
    Case(
        name="single flavor, fits tainted flavor with toleration",
        pod_sets=(ps("main", 1, {"cpu": "1"}),),
        queue=cq(CQ, rg(fq("taint_and_toleration", rq("cpu", "4")))),
        want_mode=FIT,
        want_flavors=({"cpu": ("taint_and_toleration", FIT, -1)},),
        want_usage={("taint_and_toleration", "cpu"): 1000},
    ),
    Case(
        name="single flavor, used resources, doesn't fit",
        pod_sets=(ps("main", 1, {"cpu": "2"}),),
        queue=cq(CQ, rg(fq("default", rq("cpu", "4")))),
        usage={("default", "cpu"): 3000},
        want_mode=PREEMPT,
        want_flavors=({"cpu": ("default", PREEMPT, -1)},),
        want_reasons=((unused("cpu", "default", "1"),),),
        want_usage={("default", "cpu"): 2000},
    ),
    Case(
        name="multiple resource groups, fits",
        pod_sets=(ps("main", 1, {"cpu": "3", "memory": "10Mi"}),),
        queue=cq(
            CQ,
            rg(fq("one", rq("cpu", "2")), fq("two", rq("cpu", "4"))),
            rg(fq("b_one", rq("memory", "1Gi")), fq("b_two", rq("memory", "5Gi"))),
        ),
        want_mode=FIT,
        want_flavors=({"cpu": ("two", FIT, -1), "memory": ("b_one", FIT, 0)},),
        want_usage={("two", "cpu"): 3000, ("b_one", "memory"): 10 * MI},
    ),
    Case(
        name="multiple resource groups, one could fit with preemption, other doesn't fit",
        pod_sets=(ps("main", 1, {"cpu": "3", "memory": "10Mi"}),),
        queue=cq(CQ, rg(fq("one", rq("cpu", "3"))), rg(fq("b_one", rq("memory", "1Mi")))),
        usage={("one", "cpu"): 1000},
        want_mode=NO_FIT,
        want_flavors=({},),
        want_reasons=((exceeds("memory", "b_one", "0", "10Mi", "1Mi"),),),
        want_usage={},
        want_no_fit_reason="ExceedsMaxQuota",
    ),
    Case(
        name="multiple resource groups with multiple resources, fits",
        pod_sets=(ps("main", 1, {"cpu": "3", "memory": "10Mi", GPU: "3"}),),
        queue=cq(
            CQ,
            rg(
                fq("one", rq("cpu", "2"), rq("memory", "1Gi")),
                fq("two", rq("cpu", "4"), rq("memory", "15Mi")),
            ),
            rg(fq("b_one", rq(GPU, "4")), fq("b_two", rq(GPU, "2"))),
        ),
        want_mode=FIT,
        want_flavors=(
            {"cpu": ("two", FIT, -1), "memory": ("two", FIT, -1), GPU: ("b_one", FIT, 0)},
        ),
        want_usage={("two", "cpu"): 3000, ("two", "memory"): 10 * MI, ("b_one", GPU): 3},
    ),
    Case(
        name="multiple resource groups with multiple resources, fits with different modes",
        pod_sets=(ps("main", 1, {"cpu": "3", "memory": "10Mi", GPU: "3"}),),
        queue=cq(
            CQ,
            rg(
                fq("one", rq("cpu", "2"), rq("memory", "1Gi")),
                fq("two", rq("cpu", "4"), rq("memory", "15Mi")),
            ),
            rg(fq("b_one", rq(GPU, "4"))),
            cohort="test-cohort",
        ),
        usage={("two", "memory"): 10 * MI},
        secondary=cq(SEC, rg(fq("b_one", rq(GPU, "0"))), cohort="test-cohort"),
        secondary_usage={("b_one", GPU): 2},
        simulation={("two", "memory"): (P, 1)},
        want_mode=PREEMPT,
        want_flavors=(
            {"cpu": ("two", FIT, -1), "memory": ("two", PREEMPT, -1), GPU: ("b_one", PREEMPT, -1)},
        ),
        want_reasons=(
            (
                exceeds("cpu", "one", "0", "3", "2"),
                unused("memory", "two", "5Mi"),
                unused(GPU, "b_one", "1"),
            ),
        ),
        want_borrowing=1,
        want_usage={("two", "cpu"): 3000, ("two", "memory"): 10 * MI, ("b_one", GPU): 3},
    ),
    Case(
        name="multiple resources in a group, doesn't fit",
        pod_sets=(ps("main", 1, {"cpu": "3", "memory": "10Mi"}),),
        queue=cq(
            CQ,
            rg(
                fq("one", rq("cpu", "2"), rq("memory", "1Gi")),
                fq("two", rq("cpu", "4"), rq("memory", "5Mi")),
            ),
        ),
        want_mode=NO_FIT,
        want_flavors=({},),
        want_reasons=(
            (exceeds("cpu", "one", "0", "3", "2"), exceeds("memory", "two", "0", "10Mi", "5Mi")),
        ),
        want_usage={},
        want_no_fit_reason="ExceedsMaxQuota",
    ),
    Case(
        name="multiple flavors, fits while skipping tainted flavor",
        pod_sets=(ps("main", 1, {"cpu": "3"}),),
        queue=cq(CQ, rg(fq("tainted", rq("cpu", "4")), fq("two", rq("cpu", "4")))),
        want_mode=FIT,
        want_flavors=({"cpu": ("two", FIT, -1)},),
        want_usage={("two", "cpu"): 3000},
    ),
    Case(
        name="multiple flavors, fits a node selector",
        pod_sets=(
            ps(
                "main",
                1,
                {"cpu": "1"},
                node_selector={"type": "two", "ignored1": "foo"},
                terms=(term(("ignored2", "In", ("bar",))),),
            ),
        ),
        queue=cq(CQ, rg(fq("one", rq("cpu", "4")), fq("two", rq("cpu", "4")))),
        want_mode=FIT,
        want_flavors=({"cpu": ("two", FIT, -1)},),
        want_usage={("two", "cpu"): 1000},
    ),
    Case(
        name="multiple flavors, fits with node affinity",
        pod_sets=(
            ps(
                "main",
                1,
                {"cpu": "1", "memory": "1Mi"},
                node_selector={"ignored1": "foo"},
                terms=(term(("type", "In", ("two",))),),
            ),
        ),
        queue=cq(
            CQ,
            rg(
                fq("one", rq("cpu", "4"), rq("memory", "1Gi")),
                fq("two", rq("cpu", "4"), rq("memory", "1Gi")),
            ),
        ),
        want_mode=FIT,
        want_flavors=({"cpu": ("two", FIT, -1), "memory": ("two", FIT, -1)},),
        want_usage={("two", "cpu"): 1000, ("two", "memory"): MI},
    ),
    Case(
        name="multiple flavors, node affinity fits any flavor",
        pod_sets=(
            ps(
                "main",
                1,
                {"cpu": "1"},
                terms=(term(("ignored2", "In", ("bar",))), term(("cpuType", "In", ("two",)))),
            ),
        ),
        queue=cq(CQ, rg(fq("one", rq("cpu", "4")), fq("two", rq("cpu", "4")))),
        want_mode=FIT,
        want_flavors=({"cpu": ("one", FIT, 0)},),
        want_usage={("one", "cpu"): 1000},
    ),
    Case(
        name="multiple flavors with different label keys, selector only uses flavor's own keys",
        pod_sets=(ps("main", 1, {"cpu": "1"}, node_selector={"x": "a", "y": "g"}),),
        queue=cq(CQ, rg(fq("label-x-a", rq("cpu", "4")), fq("label-xy-b", rq("cpu", "4")))),
        want_mode=FIT,
        want_flavors=({"cpu": ("label-x-a", FIT, 0)},),
        want_usage={("label-x-a", "cpu"): 1000},
    ),
    Case(
        name="labelless flavor in group with labeled flavor, workload uses labeled selector",
        pod_sets=(ps("main", 1, {"cpu": "1"}, node_selector={"type": "two"}),),
        queue=cq(CQ, rg(fq("default", rq("cpu", "4")), fq("two", rq("cpu", "4")))),
        want_mode=FIT,
        want_flavors=({"cpu": ("default", FIT, 0)},),
        want_usage={("default", "cpu"): 1000},
    ),
    Case(
        name="multiple flavors, doesn't fit node affinity",
        pod_sets=(ps("main", 1, {"cpu": "1"}, terms=(term(("type", "In", ("three",))),)),),
        queue=cq(CQ, rg(fq("one", rq("cpu", "4")), fq("two", rq("cpu", "4")))),
        want_mode=NO_FIT,
        want_flavors=({},),
        want_reasons=(
            ("flavor one doesn't match node affinity", "flavor two doesn't match node affinity"),
        ),
        want_usage={},
        want_no_fit_reason="NoMatchingFlavor",
    ),
    Case(
        name="multiple specs, fit different flavors",
        pod_sets=(ps("driver", 1, {"cpu": "5"}), ps("worker", 1, {"cpu": "3"})),
        queue=cq(CQ, rg(fq("one", rq("cpu", "4")), fq("two", rq("cpu", "10")))),
        want_mode=FIT,
        want_flavors=({"cpu": ("two", FIT, -1)}, {"cpu": ("one", FIT, 0)}),
        want_usage={("one", "cpu"): 3000, ("two", "cpu"): 5000},
    ),
    Case(
        name="multiple specs, fits borrowing",
        pod_sets=(
            ps("driver", 1, {"cpu": "4", "memory": "1Gi"}),
            ps("worker", 1, {"cpu": "6", "memory": "4Gi"}),
        ),
        queue=cq(
            CQ,
            rg(fq("default", rq("cpu", "2", bl="98"), rq("memory", "2Gi"))),
            cohort="test-cohort",
        ),
        secondary=cq(
            SEC, rg(fq("default", rq("cpu", "198"), rq("memory", "198Gi"))), cohort="test-cohort"
        ),
        want_mode=FIT,
        want_flavors=(
            {"cpu": ("default", FIT, -1), "memory": ("default", FIT, -1)},
            {"cpu": ("default", FIT, -1), "memory": ("default", FIT, -1)},
        ),
        want_borrowing=1,
        want_usage={("default", "cpu"): 10_000, ("default", "memory"): 5 * GI},
    ),
    Case(
        name="not enough space to borrow",
        pod_sets=(ps("main", 1, {"cpu": "2"}),),
        queue=cq(CQ, rg(fq("one", rq("cpu", "1"))), cohort="test-cohort"),
        secondary=cq(SEC, rg(fq("one", rq("cpu", "10", ll="0"))), cohort="test-cohort"),
        secondary_usage={("one", "cpu"): 9000},
        want_mode=NO_FIT,
        want_flavors=({},),
        want_reasons=((exceeds("cpu", "one", "0", "2", "1"),),),
        want_usage={},
        want_no_fit_reason="ExceedsMaxQuota",
    ),
    Case(
        name="past max, but can preempt in ClusterQueue",
        pod_sets=(ps("main", 1, {"cpu": "2"}),),
        queue=cq(CQ, rg(fq("one", rq("cpu", "2", bl="8"))), cohort="test-cohort"),
        usage={("one", "cpu"): 9000},
        secondary=cq(SEC, rg(fq("one", rq("cpu", "98"))), cohort="test-cohort"),
        secondary_usage={("one", "cpu"): 9000},
        simulation={("one", "cpu"): (P, 1)},
        want_mode=PREEMPT,
        want_flavors=({"cpu": ("one", PREEMPT, -1)},),
        want_reasons=((unused("cpu", "one", "1"),),),
        want_borrowing=1,
        want_usage={("one", "cpu"): 2000},
    ),
    Case(
        name="past min, but can preempt in ClusterQueue",
        pod_sets=(ps("main", 1, {"cpu": "2"}),),
        queue=cq(CQ, rg(fq("one", rq("cpu", "2")))),
        usage={("one", "cpu"): 1000},
        want_mode=PREEMPT,
        want_flavors=({"cpu": ("one", PREEMPT, -1)},),
        want_reasons=((unused("cpu", "one", "1"),),),
        want_usage={("one", "cpu"): 2000},
    ),
    Case(
        name="past min, but can preempt in cohort and ClusterQueue",
        pod_sets=(ps("main", 1, {"cpu": "2"}),),
        queue=cq(CQ, rg(fq("one", rq("cpu", "3"))), cohort="test-cohort"),
        usage={("one", "cpu"): 2000},
        secondary=cq(SEC, rg(fq("one", rq("cpu", "7"))), cohort="test-cohort"),
        secondary_usage={("one", "cpu"): 8000},
        simulation={("one", "cpu"): (P, 1)},
        want_mode=PREEMPT,
        want_flavors=({"cpu": ("one", PREEMPT, -1)},),
        want_reasons=((unused("cpu", "one", "2"),),),
        want_borrowing=1,
        want_usage={("one", "cpu"): 2000},
    ),
    Case(
        name="can only preempt flavors that match affinity",
        pod_sets=(ps("main", 1, {"cpu": "2"}, node_selector={"type": "two"}),),
        queue=cq(CQ, rg(fq("one", rq("cpu", "4")), fq("two", rq("cpu", "4")))),
        usage={("one", "cpu"): 3000, ("two", "cpu"): 3000},
        want_mode=PREEMPT,
        want_flavors=({"cpu": ("two", PREEMPT, -1)},),
        want_reasons=(("flavor one doesn't match node affinity", unused("cpu", "two", "1")),),
        want_usage={("two", "cpu"): 2000},
    ),
    Case(
        name="each podset requires preemption on a different flavor",
        pod_sets=(
            ps("launcher", 1, {"cpu": "2"}),
            ps("workers", 10, {"cpu": "1"}, tolerations=(SPOT_TOLERATION,)),
        ),
        queue=cq(CQ, rg(fq("one", rq("cpu", "4")), fq("tainted", rq("cpu", "10")))),
        usage={("one", "cpu"): 3000, ("tainted", "cpu"): 3000},
        want_mode=PREEMPT,
        want_flavors=({"cpu": ("one", PREEMPT, -1)}, {"cpu": ("tainted", PREEMPT, -1)}),
        want_reasons=(
            (
                unused("cpu", "one", "1"),
                "untolerated taint {instance spot NoSchedule <nil>} in flavor tainted",
            ),
            (exceeds("cpu", "one", "2", "10", "4"), unused("cpu", "tainted", "3")),
        ),
        want_usage={("one", "cpu"): 2000, ("tainted", "cpu"): 10_000},
    ),
    Case(
        name="resource not listed in clusterQueue",
        pod_sets=(ps("main", 1, {GPU: "2"}),),
        queue=cq(CQ, rg(fq("one", rq("cpu", "4")))),
        want_mode=NO_FIT,
        want_flavors=({},),
        want_reasons=((f"resource {GPU} unavailable in ClusterQueue",),),
        want_usage={},
        want_no_fit_reason="NoMatchingFlavor",
    ),
    Case(
        name="zero resource request not in clusterQueue should succeed",
        pod_sets=(ps("main", 1, {"cpu": "1", GPU: "0"}),),
        queue=cq(CQ, rg(fq("default", rq("cpu", "4")))),
        want_mode=FIT,
        want_flavors=({"cpu": ("default", FIT, -1)},),
        want_usage={("default", "cpu"): 1000},
    ),
    Case(
        name="zero resource request defined in clusterQueue should get flavor assigned",
        pod_sets=(ps("main", 1, {"cpu": "1", GPU: "0"}),),
        queue=cq(CQ, rg(fq("default", rq("cpu", "4"), rq(GPU, "4")))),
        want_mode=FIT,
        want_flavors=({"cpu": ("default", FIT, -1), GPU: ("default", FIT, -1)},),
        want_usage={("default", "cpu"): 1000, ("default", GPU): 0},
    ),
    Case(
        name="zero-count PodSet prefers a flavor with capacity",
        pod_sets=(ps("main", 0, {GPU: "1"}),),
        queue=cq(CQ, rg(fq("one", rq(GPU, "0")), fq("two", rq(GPU, "4")))),
        want_mode=FIT,
        want_flavors=({GPU: ("two", FIT, -1)},),
        want_usage={("two", GPU): 0},
    ),
    Case(
        name="zero-count PodSet retains its probe with explicit counts",
        pod_sets=(ps("main", 0, {GPU: "1"}),),
        queue=cq(CQ, rg(fq("one", rq(GPU, "0")), fq("two", rq(GPU, "4")))),
        counts=(0,),
        want_mode=FIT,
        want_flavors=({GPU: ("two", FIT, -1)},),
        want_usage={("two", GPU): 0},
    ),
    Case(
        name="zero-count PodSet prefers a flavor with pod capacity",
        pod_sets=(ps("main", 0, {}),),
        queue=cq(CQ, rg(fq("one", rq("pods", "0")), fq("two", rq("pods", "4")))),
        want_mode=FIT,
        want_flavors=({"pods": ("two", FIT, -1)},),
        want_usage={("two", "pods"): 0},
    ),
    Case(
        name="zero-count PodSet uses potential capacity even when quota is exhausted",
        pod_sets=(ps("main", 0, {GPU: "1"}),),
        queue=cq(CQ, rg(fq("one", rq(GPU, "0")), fq("two", rq(GPU, "4")))),
        usage={("two", GPU): 4},
        want_mode=FIT,
        want_flavors=({GPU: ("two", FIT, -1)},),
        want_usage={("two", GPU): 0},
    ),
    Case(
        name="zero-count PodSet falls back when no flavor has capacity",
        pod_sets=(ps("main", 0, {GPU: "1"}),),
        queue=cq(CQ, rg(fq("one", rq(GPU, "0")), fq("two", rq(GPU, "0")))),
        want_mode=FIT,
        want_flavors=({GPU: ("one", FIT, 0)},),
        want_usage={("one", GPU): 0},
    ),
    Case(
        name="num pods fit",
        pod_sets=(ps("main", 3, {"cpu": "1"}),),
        queue=cq(CQ, rg(fq("default", rq("pods", "3"), rq("cpu", "10")))),
        want_mode=FIT,
        want_flavors=({"cpu": ("default", FIT, -1), "pods": ("default", FIT, -1)},),
        want_usage={("default", "pods"): 3, ("default", "cpu"): 3000},
    ),
    Case(
        name="num pods don't fit",
        pod_sets=(ps("main", 3, {"cpu": "1"}),),
        queue=cq(CQ, rg(fq("default", rq("pods", "2"), rq("cpu", "10")))),
        want_mode=NO_FIT,
        want_flavors=({},),
        want_reasons=((exceeds("pods", "default", "0", "3", "2"),),),
        want_usage={},
        want_no_fit_reason="ExceedsMaxQuota",
    ),
    Case(
        name="preempt before try next flavor",
        pod_sets=(ps("main", 1, {"cpu": "9"}),),
        queue=cq(
            CQ,
            rg(
                fq("one", rq("pods", "10"), rq("cpu", "10")),
                fq("two", rq("pods", "10"), rq("cpu", "10")),
            ),
            ff=MAY,
        ),
        usage={("one", "cpu"): 2000},
        want_mode=PREEMPT,
        want_flavors=({"cpu": ("one", PREEMPT, 0), "pods": ("one", FIT, 0)},),
        want_reasons=((unused("cpu", "one", "1"),),),
        want_usage={("one", "cpu"): 9000, ("one", "pods"): 1},
    ),
    Case(
        name="preempt try next flavor",
        pod_sets=(ps("main", 1, {"cpu": "9"}),),
        queue=cq(
            CQ,
            rg(
                fq("one", rq("pods", "10"), rq("cpu", "10")),
                fq("two", rq("pods", "10"), rq("cpu", "10")),
            ),
        ),
        usage={("one", "cpu"): 2000},
        want_mode=FIT,
        want_flavors=({"cpu": ("two", FIT, -1), "pods": ("two", FIT, -1)},),
        want_usage={("two", "cpu"): 9000, ("two", "pods"): 1},
    ),
    Case(
        name="borrow try next flavor, found the first flavor",
        pod_sets=(ps("main", 1, {"cpu": "9"}),),
        queue=cq(
            CQ,
            rg(
                fq("one", rq("pods", "10"), rq("cpu", "10", bl="1")),
                fq("two", rq("pods", "10"), rq("cpu", "1")),
            ),
            cohort="test-cohort",
            ff=TRY,
        ),
        usage={("one", "cpu"): 2000},
        secondary=cq(SEC, rg(fq("one", rq("cpu", "1"))), cohort="test-cohort"),
        want_mode=FIT,
        want_flavors=({"cpu": ("one", FIT, -1), "pods": ("one", FIT, -1)},),
        want_borrowing=1,
        want_usage={("one", "cpu"): 9000, ("one", "pods"): 1},
    ),
    Case(
        name="borrow try next flavor, found the second flavor",
        pod_sets=(ps("main", 1, {"cpu": "9"}),),
        queue=cq(
            CQ,
            rg(
                fq("one", rq("pods", "10"), rq("cpu", "10", bl="1")),
                fq("two", rq("pods", "10"), rq("cpu", "10")),
            ),
            cohort="test-cohort",
            ff=TRY,
        ),
        usage={("one", "cpu"): 2000},
        secondary=cq(SEC, rg(fq("one", rq("cpu", "1"))), cohort="test-cohort"),
        want_mode=FIT,
        want_flavors=({"cpu": ("two", FIT, -1), "pods": ("two", FIT, -1)},),
        want_usage={("two", "cpu"): 9000, ("two", "pods"): 1},
    ),
    Case(
        name="borrow before try next flavor",
        pod_sets=(ps("main", 1, {"cpu": "9"}),),
        queue=cq(
            CQ,
            rg(
                fq("one", rq("pods", "10"), rq("cpu", "10", bl="1")),
                fq("two", rq("pods", "10"), rq("cpu", "10")),
            ),
            cohort="test-cohort",
        ),
        usage={("one", "cpu"): 2000},
        secondary=cq(SEC, rg(fq("one", rq("cpu", "1"))), cohort="test-cohort"),
        want_mode=FIT,
        want_flavors=({"cpu": ("one", FIT, 0), "pods": ("one", FIT, 0)},),
        want_borrowing=1,
        want_usage={("one", "cpu"): 9000, ("one", "pods"): 1},
    ),
    *[
        Case(
            name=f"when borrowing while preemption is needed for flavor one{suffix}",
            pod_sets=(ps("main", 1, {"cpu": "12"}),),
            queue=cq(
                CQ,
                rg(fq("one", first), fq("two", rq("cpu", "12"))),
                cohort="test-cohort",
                ff=MAY,
                preemption=BORROW_PREEMPT,
            ),
            secondary=cq(SEC, rg(fq("one", rq("cpu", "12"))), cohort="test-cohort"),
            secondary_usage={("one", "cpu"): 10_000},
            simulation={("one", "cpu"): (P, 1)},
            want_mode=PREEMPT,
            want_flavors=({"cpu": ("one", PREEMPT, 0)},),
            want_reasons=((unused("cpu", "one", "10"),),),
            want_borrowing=1,
            want_usage={("one", "cpu"): 12_000},
        )
        for suffix, first in (
            ("; WhenCanBorrow=MayStopSearch", rq("cpu", "0", bl="12")),
            (", no borrowingLimit; WhenCanBorrow=MayStopSearch", rq("cpu", "0")),
        )
    ],
    Case(
        name="when borrowing while preemption is needed for flavor one; "
        "WhenCanBorrow=TryNextFlavor",
        pod_sets=(ps("main", 1, {"cpu": "12"}),),
        queue=cq(
            CQ,
            rg(fq("one", rq("cpu", "0", bl="12")), fq("two", rq("cpu", "12"))),
            cohort="test-cohort",
            ff=BORROW_TRY,
            preemption=BORROW_PREEMPT,
        ),
        secondary=cq(SEC, rg(fq("one", rq("cpu", "12"))), cohort="test-cohort"),
        want_mode=FIT,
        want_flavors=({"cpu": ("two", FIT, -1)},),
        want_usage={("two", "cpu"): 12_000},
    ),
    Case(
        name="when borrowing while preemption is needed, but borrowingLimit exceeds the quota "
        "available in the cohort",
        pod_sets=(ps("main", 1, {"cpu": "12"}),),
        queue=cq(
            CQ,
            rg(fq("one", rq("cpu", "0", bl="12"))),
            cohort="test-cohort",
            preemption=BORROW_PREEMPT,
        ),
        secondary=cq(SEC, rg(fq("one", rq("cpu", "11"))), cohort="test-cohort"),
        secondary_usage={("one", "cpu"): 10_000},
        want_mode=NO_FIT,
        want_flavors=({},),
        want_reasons=((exceeds("cpu", "one", "0", "12", "11"),),),
        want_usage={},
        want_no_fit_reason="ExceedsMaxQuota",
    ),
    Case(
        name="lend try next flavor, found the second flavor",
        pod_sets=(ps("main", 1, {"cpu": "9"}),),
        queue=cq(
            CQ,
            rg(
                fq("one", rq("pods", "10"), rq("cpu", "10", ll="1")),
                fq("two", rq("pods", "10"), rq("cpu", "10", ll="0")),
            ),
            cohort="test-cohort",
            ff=TRY,
        ),
        usage={("one", "cpu"): 2000},
        secondary=cq(SEC, rg(fq("one", rq("cpu", "1"))), cohort="test-cohort"),
        want_mode=FIT,
        want_flavors=({"cpu": ("two", FIT, -1), "pods": ("two", FIT, -1)},),
        want_usage={("two", "cpu"): 9000, ("two", "pods"): 1},
    ),
    Case(
        name="lend try next flavor, found the first flavor",
        pod_sets=(ps("main", 1, {"cpu": "9"}),),
        queue=cq(
            CQ,
            rg(
                fq("one", rq("pods", "10"), rq("cpu", "10", ll="1")),
                fq("two", rq("pods", "10"), rq("cpu", "1", ll="0")),
            ),
            cohort="test-cohort",
            ff=TRY,
        ),
        usage={("one", "cpu"): 2000},
        secondary=cq(SEC, rg(fq("one", rq("cpu", "1"))), cohort="test-cohort"),
        want_mode=FIT,
        want_flavors=({"cpu": ("one", FIT, -1), "pods": ("one", FIT, -1)},),
        want_borrowing=1,
        want_usage={("one", "cpu"): 9000, ("one", "pods"): 1},
    ),
    Case(
        name="cannot preempt in cohort (oracle returns None) for the first flavor, tries the "
        "second flavor (which fits)",
        pod_sets=(ps("main", 1, {"cpu": "2"}),),
        queue=cq(
            CQ,
            rg(fq("one", rq("cpu", "0", bl="2")), fq("two", rq("cpu", "0", bl="2"))),
            cohort="test-cohort",
            ff=MAY,
            preemption=BORROW_PREEMPT,
        ),
        secondary=cq(
            SEC, rg(fq("one", rq("cpu", "2")), fq("two", rq("cpu", "2"))), cohort="test-cohort"
        ),
        secondary_usage={("one", "cpu"): 2000},
        simulation={("one", "cpu"): (NONE, 0)},
        want_mode=FIT,
        want_flavors=({"cpu": ("two", FIT, -1)},),
        want_borrowing=1,
        want_usage={("two", "cpu"): 2000},
    ),
    Case(
        name="quota exhausted, but can preempt in cohort and ClusterQueue",
        pod_sets=(ps("main", 1, {"cpu": "9"}),),
        queue=cq(
            CQ, rg(fq("one", rq("pods", "10"), rq("cpu", "10", ll="0"))), cohort="test-cohort"
        ),
        usage={("one", "cpu"): 2000},
        secondary=cq(SEC, rg(fq("one", rq("pods", "0"), rq("cpu", "0"))), cohort="test-cohort"),
        simulation={("one", "cpu"): (P, 1)},
        want_mode=PREEMPT,
        want_flavors=({"cpu": ("one", PREEMPT, -1), "pods": ("one", FIT, -1)},),
        want_reasons=((unused("cpu", "one", "1"),),),
        want_borrowing=1,
        want_usage={("one", "cpu"): 9000, ("one", "pods"): 1},
    ),
    Case(
        name="when borrowing while preemption is needed for flavor one, fair sharing enabled, "
        "reclaimWithinCohort=Any",
        fair_sharing=True,
        pod_sets=(ps("main", 1, {"cpu": "12"}),),
        queue=cq(
            CQ,
            rg(fq("one", rq("cpu", "0")), fq("two", rq("cpu", "12"))),
            cohort="test-cohort",
            ff=MAY,
            preemption=PreemptionPolicy(reclaim_within_cohort="Any"),
        ),
        secondary=cq(SEC, rg(fq("one", rq("cpu", "12"))), cohort="test-cohort"),
        secondary_usage={("one", "cpu"): 10_000},
        simulation={("one", "cpu"): (P, 1)},
        want_mode=PREEMPT,
        want_flavors=({"cpu": ("one", PREEMPT, 0)},),
        want_reasons=((unused("cpu", "one", "10"),),),
        want_borrowing=1,
        want_usage={("one", "cpu"): 12_000},
    ),
    Case(
        name="when borrowing while preemption is needed for flavor one, fair sharing enabled, "
        "reclaimWithinCohort=Never",
        fair_sharing=True,
        pod_sets=(ps("main", 1, {"cpu": "12"}),),
        queue=cq(
            CQ,
            rg(fq("one", rq("cpu", "0")), fq("two", rq("cpu", "12"))),
            cohort="test-cohort",
            ff=MAY,
            preemption=PreemptionPolicy(reclaim_within_cohort="Never"),
        ),
        secondary=cq(SEC, rg(fq("one", rq("cpu", "12"))), cohort="test-cohort"),
        secondary_usage={("one", "cpu"): 10_000},
        simulation={("one", "cpu"): (NONE, 0)},
        want_mode=FIT,
        want_flavors=({"cpu": ("two", FIT, -1)},),
        want_usage={("two", "cpu"): 12_000},
    ),
    Case(
        name="multi-podset, one fits and another fails, fitting podset attempts skipped in "
        "resolveNoFitReason",
        pod_sets=(
            ps("fitting-podset", 1, {"cpu": "1"}, node_selector={"type": "one"}),
            ps("blocking-podset", 1, {"cpu": "5"}),
        ),
        queue=cq(CQ, rg(fq("one", rq("cpu", "2")), fq("two", rq("cpu", "2")))),
        want_mode=NO_FIT,
        want_flavors=({"cpu": ("one", FIT, 0)}, {}),
        want_reasons=(
            (),
            (exceeds("cpu", "one", "1", "5", "2"), exceeds("cpu", "two", "0", "5", "2")),
        ),
        want_usage={("one", "cpu"): 1000},
        want_no_fit_reason="ExceedsMaxQuota",
    ),
    # TestDeletedFlavors: the ClusterQueue names a flavor that no longer exists.
    Case(
        name="multiple flavors, skip missing ResourceFlavor",
        pod_sets=(ps("main", 1, {"cpu": "3"}),),
        queue=cq(CQ, rg(fq("deleted-flavor", rq("cpu", "4")), fq("flavor", rq("cpu", "4")))),
        flavors=(ResourceFlavor("flavor"),),
        want_mode=FIT,
        want_flavors=({"cpu": ("flavor", FIT, -1)},),
        want_usage={("flavor", "cpu"): 3000},
    ),
    Case(
        name="flavor not found",
        pod_sets=(ps("main", 1, {"cpu": "1"}),),
        queue=cq(CQ, rg(fq("deleted-flavor", rq("cpu", "4")))),
        flavors=(ResourceFlavor("flavor"),),
        want_mode=NO_FIT,
        want_flavors=({},),
        want_reasons=(("flavor deleted-flavor not found",),),
        want_usage={},
        want_no_fit_reason="NoMatchingFlavor",
    ),
]


# --- quota.md §6: the shared Q setup (TestSchedule) ----------------------------------------------

Q_FLAVORS = tuple(ResourceFlavor(n) for n in ("default", "on-demand", "spot", "model-a"))
ENG_ALPHA = cq(
    "eng-alpha",
    rg(fq("on-demand", rq("cpu", "50", bl="50")), fq("spot", rq("cpu", "100", bl="0"))),
    cohort="eng",
)
ENG_BETA = cq(
    "eng-beta",
    rg(fq("on-demand", rq("cpu", "50", bl="10")), fq("spot", rq("cpu", "0", bl="100"))),
    rg(fq("model-a", rq("nvidia.com/gpu", "20", bl="0"))),
    cohort="eng",
    preemption=PreemptionPolicy(reclaim_within_cohort="Any", within_cluster_queue="LowerPriority"),
)
LEND_A = cq("lend-a", rg(fq("default", rq("cpu", "3", ll="2"))), cohort="lend")
LEND_B = cq("lend-b", rg(fq("default", rq("cpu", "2", ll="2"))), cohort="lend")

Q_CASES = [
    Case(
        name="Q2 assign multiple resources and flavors",
        pod_sets=(
            ps("one", 10, {"cpu": "6", "nvidia.com/gpu": "1"}),
            ps("two", 40, {"cpu": "1"}),
        ),
        queue=ENG_BETA,
        secondary=ENG_ALPHA,
        flavors=Q_FLAVORS,
        want_mode=FIT,
        want_flavors=(
            {"cpu": ("on-demand", FIT, 0), "nvidia.com/gpu": ("model-a", FIT, -1)},
            {"cpu": ("spot", FIT, -1)},
        ),
        want_borrowing=1,
        want_usage={
            ("on-demand", "cpu"): 60_000,
            ("model-a", "nvidia.com/gpu"): 10,
            ("spot", "cpu"): 40_000,
        },
    ),
    Case(
        name="Q5 not enough resources to borrow, fallback to next flavor",
        pod_sets=(ps("main", 60, {"cpu": "1"}),),
        queue=ENG_ALPHA,
        secondary=ENG_BETA,
        secondary_usage={("on-demand", "cpu"): 45_000},
        flavors=Q_FLAVORS,
        want_mode=FIT,
        want_flavors=({"cpu": ("spot", FIT, -1)},),
        want_usage={("spot", "cpu"): 60_000},
    ),
    Case(
        name="Q7 workload exceeds lending limit when borrow in cohort",
        pod_sets=(ps("main", 1, {"cpu": "3"}),),
        queue=LEND_B,
        usage={("default", "cpu"): 2000},
        secondary=LEND_A,
        flavors=Q_FLAVORS,
        want_mode=NO_FIT,
        want_flavors=({},),
        want_reasons=((unused("cpu", "default", "1"),),),
        want_usage={},
        want_no_fit_reason="WaitingForQuota",
    ),
    Case(
        name="P4 preemptor: on-demand needs preemption, spot cannot be borrowed",
        pod_sets=(ps("main", 20, {"cpu": "1"}),),
        queue=ENG_BETA,
        usage={("on-demand", "cpu"): 40_000},
        secondary=ENG_ALPHA,
        secondary_usage={("on-demand", "cpu"): 60_000, ("spot", "cpu"): 100_000},
        flavors=Q_FLAVORS,
        want_mode=PREEMPT,
        want_flavors=({"cpu": ("on-demand", PREEMPT, -1)},),
        want_reasons=((unused("cpu", "on-demand", "20"), unused("cpu", "spot", "20")),),
        want_usage={("on-demand", "cpu"): 20_000},
    ),
]

# --- TestReclaimBeforePriorityPreemption: uno, due, tre with 10 compute and 10 gpu each ----------

RECLAIM_FLAVORS = tuple(ResourceFlavor(n) for n in ("uno", "due", "tre"))


def reclaim_case(
    name: str,
    requests: Mapping[str, str],
    usage: Mapping[FlavorResource, int],
    other_usage: Mapping[FlavorResource, int],
    want_mode: FlavorAssignmentMode,
    want: Flavors,
    *,
    simulation: Mapping[FlavorResource, tuple[PreemptionPossibility, int]] | None = None,
    ff: FlavorFungibility | None = None,
) -> Case:
    names = ("uno", "due", "tre")
    return Case(
        name=name,
        pod_sets=(ps("main", 1, requests),),
        queue=cq(
            CQ,
            rg(*(fq(n, rq("compute", "10"), rq("gpu", "10")) for n in names)),
            cohort="cohort",
            ff=ff or FlavorFungibility(when_can_preempt=TRY_NEXT_FLAVOR),
            preemption=PreemptionPolicy(
                reclaim_within_cohort="LowerPriority", within_cluster_queue="LowerPriority"
            ),
        ),
        usage=usage,
        secondary=cq(
            "other-clusterqueue",
            rg(*(fq(n, rq("compute", "0"), rq("gpu", "0")) for n in names)),
            cohort="cohort",
        ),
        secondary_usage=other_usage,
        simulation=simulation or {},
        flavors=RECLAIM_FLAVORS,
        want_mode=want_mode,
        want_flavors=(want,),
        want_reasons=None,
        want_usage=None,
    )


RECLAIM_CASES = [
    reclaim_case(
        "Select first flavor which fits",
        {"gpu": "10"},
        {("uno", "gpu"): 1},
        {("due", "gpu"): 1},
        FIT,
        {"gpu": ("tre", FIT, -1)},
    ),
    reclaim_case(
        "Select first flavor where gpu reclamation is possible",
        {"gpu": "10"},
        {("uno", "gpu"): 1},
        {("due", "gpu"): 1, ("tre", "gpu"): 1},
        PREEMPT,
        {"gpu": ("due", PREEMPT, -1)},
        simulation={("uno", "gpu"): (P, 0), ("due", "gpu"): (R, 0)},
    ),
    reclaim_case(
        "Select first flavor when flavor fungibility is disabled",
        {"gpu": "10"},
        {("uno", "gpu"): 1},
        {("due", "gpu"): 1, ("tre", "gpu"): 1},
        PREEMPT,
        {"gpu": ("uno", PREEMPT, 0)},
        ff=FlavorFungibility(when_can_preempt=MAY_STOP_SEARCH),
    ),
    reclaim_case(
        "Select first flavor where priority based preemption is possible",
        {"gpu": "10"},
        {("uno", "gpu"): 1, ("due", "gpu"): 1, ("tre", "gpu"): 1},
        {},
        PREEMPT,
        {"gpu": ("uno", PREEMPT, -1)},
    ),
    reclaim_case(
        "Select second flavor where gpu reclamation is possible, as compute Fits",
        {"gpu": "10", "compute": "10"},
        {("uno", "gpu"): 1, ("uno", "compute"): 1, ("due", "compute"): 1},
        {("due", "gpu"): 1, ("tre", "gpu"): 1},
        PREEMPT,
        {"gpu": ("tre", PREEMPT, -1), "compute": ("tre", FIT, -1)},
        simulation={("uno", "gpu"): (P, 0), ("due", "gpu"): (R, 0), ("tre", "gpu"): (R, 0)},
    ),
]

# --- fungibility preference (quota.md §3 step 3) -----------------------------------------------


def preference_case(name: str, preference: str | None, want: Flavors, borrowing: int) -> Case:
    return Case(
        name=name,
        pod_sets=(ps("main", 1, {"cpu": "4"}),),
        queue=cq(
            CQ,
            rg(fq("one", rq("cpu", "10")), fq("two", rq("cpu", "0"))),
            cohort="test-cohort",
            ff=FlavorFungibility(TRY_NEXT_FLAVOR, TRY_NEXT_FLAVOR, preference),
        ),
        usage={("one", "cpu"): 8000},
        secondary=cq(SEC, rg(fq("two", rq("cpu", "10"))), cohort="test-cohort"),
        want_mode=min(fa[1] for fa in want.values()),
        want_flavors=(want,),
        want_reasons=None,
        want_usage=None,
        want_borrowing=borrowing,
    )


PREFERENCE_CASES = [
    preference_case(
        "BorrowingOverPreemption (default) takes the fitting flavor that borrows",
        None,
        {"cpu": ("two", FIT, -1)},
        1,
    ),
    preference_case(
        "PreemptionOverBorrowing takes the preempting flavor that does not borrow",
        PREEMPTION_OVER_BORROWING,
        {"cpu": ("one", PREEMPT, -1)},
        0,
    ),
]


def flavors_of(
    assignment: Assignment,
) -> tuple[dict[str, tuple[str, FlavorAssignmentMode, int]], ...]:
    return tuple(
        {res: (fa.name, fa.mode, fa.tried_flavor_idx) for res, fa in psa.flavors.items()}
        for psa in assignment.pod_sets
    )


ALL_CASES = CASES + Q_CASES + RECLAIM_CASES + PREFERENCE_CASES


@pytest.mark.parametrize("case", ALL_CASES, ids=[c.name for c in ALL_CASES])
def test_assign_flavors(case: Case) -> None:
    got = run(case)
    assert got.mode is case.want_mode
    assert flavors_of(got) == case.want_flavors
    if case.want_reasons is not None:
        want_reasons = case.want_reasons or tuple(() for _ in case.want_flavors)
        assert tuple(tuple(sorted(p.status.reasons)) for p in got.pod_sets) == tuple(
            tuple(sorted(r)) for r in want_reasons
        )
    assert got.borrowing == case.want_borrowing
    if case.want_usage is not None:
        assert got.usage == case.want_usage
    assert got.reason() == case.want_no_fit_reason


# --- TestHierarchical: Cohorts three > two > one, each owning 4 cpu of its own flavor -----------

HIERARCHY = (
    Cohort("three", resource_groups=(rg(fq("three", rq("cpu", "4"))),)),
    Cohort("two", parent="three", resource_groups=(rg(fq("two", rq("cpu", "4"))),)),
    Cohort("one", parent="two", resource_groups=(rg(fq("one", rq("cpu", "4"))),)),
)
PREEMPT_TRY = FlavorFungibility(when_can_preempt=TRY_NEXT_FLAVOR)
ZERO_EACH = (fq("one", rq("cpu", "0")), fq("two", rq("cpu", "0")), fq("three", rq("cpu", "0")))


@dataclass(frozen=True)
class HierarchyCase:
    name: str
    flavors: tuple[FlavorQuotas, ...]
    usage: Mapping[FlavorResource, int]
    want: str
    other_usage: Mapping[FlavorResource, int] = field(default_factory=dict)
    ff: FlavorFungibility = PREEMPT_TRY
    simulation: Mapping[FlavorResource, tuple[PreemptionPossibility, int]] = field(
        default_factory=dict
    )


HIERARCHY_CASES = [
    HierarchyCase(
        "Select the top flavor",
        ZERO_EACH,
        {("one", "cpu"): 4000},
        "three",
        other_usage={("two", "cpu"): 4000},
    ),
    HierarchyCase("Select the first flavor which fits", ZERO_EACH, {("one", "cpu"): 4000}, "two"),
    HierarchyCase(
        "Select deeper-borrowing flavor that fits when shallower-borrowing flavor has no "
        "preemption candidates",
        (fq("one", rq("cpu", "4", bl="0")), *ZERO_EACH[1:]),
        {("one", "cpu"): 4000},
        "two",
        ff=FlavorFungibility(TRY_NEXT_FLAVOR, TRY_NEXT_FLAVOR, PREEMPTION_OVER_BORROWING),
        simulation={("one", "cpu"): (NONE, 1)},
    ),
]


@pytest.mark.parametrize("case", HIERARCHY_CASES, ids=[c.name for c in HIERARCHY_CASES])
def test_hierarchical_cohorts(case: HierarchyCase) -> None:
    preemption = PreemptionPolicy(
        reclaim_within_cohort="LowerPriority", within_cluster_queue="LowerPriority"
    )
    test_cq = cq(CQ, rg(*case.flavors), cohort="one", ff=case.ff, preemption=preemption)
    other = cq("other-clusterqueue", rg(*ZERO_EACH), cohort="two")
    snap = build_snapshot(
        [test_cq, other],
        tuple(ResourceFlavor(n) for n in ("one", "two", "three")),
        {CQ: case.usage, "other-clusterqueue": case.other_usage},
        cohorts=HIERARCHY,
    )
    got = assign_flavors(
        wl(ps("main", 1, {"cpu": "4"})), snap.cluster_queues[CQ], snap, FakeOracle(case.simulation)
    )
    assert got.mode is FIT
    assert {r: fa.name for r, fa in got.pod_sets[0].flavors.items()} == {"cpu": case.want}


# --- TestIsPreferred ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PreferredCase:
    name: str
    a: tuple[GranularMode, int]
    b: tuple[GranularMode, int]
    want: bool
    preference: str | None = None


POB = PREEMPTION_OVER_BORROWING
PREFERRED_CASES = [
    PreferredCase(
        "fit over preempt at the same level", (GranularMode.FIT, 0), (GranularMode.PREEMPT, 0), True
    ),
    PreferredCase(
        "explicit BorrowingOverPreemption prioritises the preemption mode",
        (GranularMode.PREEMPT, 1),
        (GranularMode.FIT, 2),
        False,
        "BorrowingOverPreemption",
    ),
    PreferredCase(
        "explicit PreemptionOverBorrowing prioritises the borrowing level",
        (GranularMode.PREEMPT, 1),
        (GranularMode.FIT, 2),
        True,
        POB,
    ),
    PreferredCase(
        "explicit PreemptionOverBorrowing breaks borrowing ties with preemption",
        (GranularMode.PREEMPT, 1),
        (GranularMode.FIT, 1),
        False,
        POB,
    ),
    PreferredCase(
        "PreemptionOverBorrowing rejects a no-candidate flavor before comparing borrowing",
        (GranularMode.NO_CANDIDATES, 1),
        (GranularMode.FIT, 2),
        False,
        POB,
    ),
    PreferredCase(
        "PreemptionOverBorrowing prefers fit over a shallower no-candidate flavor",
        (GranularMode.FIT, 2),
        (GranularMode.NO_CANDIDATES, 1),
        True,
        POB,
    ),
    PreferredCase(
        "no-candidate flavor remains preferable to no-fit flavor",
        (GranularMode.NO_CANDIDATES, 1),
        (GranularMode.NO_FIT, 0),
        True,
    ),
    PreferredCase(
        "no-fit flavor remains worse than no-candidate flavor",
        (GranularMode.NO_FIT, 0),
        (GranularMode.NO_CANDIDATES, 1),
        False,
    ),
    PreferredCase(
        "no-candidate flavors retain borrowing preference",
        (GranularMode.NO_CANDIDATES, 1),
        (GranularMode.NO_CANDIDATES, 2),
        True,
        POB,
    ),
    PreferredCase(
        "no-candidate flavors retain borrowing preference in reverse",
        (GranularMode.NO_CANDIDATES, 2),
        (GranularMode.NO_CANDIDATES, 1),
        False,
        POB,
    ),
]


@pytest.mark.parametrize("case", PREFERRED_CASES, ids=[c.name for c in PREFERRED_CASES])
def test_is_preferred(case: PreferredCase) -> None:
    ff = FlavorFungibility(TRY_NEXT_FLAVOR, TRY_NEXT_FLAVOR, case.preference)
    assert is_preferred(Granular(*case.a), Granular(*case.b), ff) is case.want


# --- the flavors considered, as the QuotaReserved event lists them -----------------------------

CONSIDERED = {
    "preempt try next flavor": (
        "main: one(preemptionMode=Preempt;insufficient unused quota for cpu in flavor one, 1 more "
        "needed)"
    ),
    "multiple specs, fits borrowing": (
        "driver: default(Fit;borrow=1) | worker: default(Fit;borrow=1)"
    ),
    "cannot preempt in cohort (oracle returns None) for the first flavor, tries the second flavor "
    "(which fits)": (
        "main: one(preemptionMode=NoCandidates;insufficient unused quota for cpu in flavor one, 2 "
        "more needed), two(Fit;borrow=1)"
    ),
    "multiple flavors, fits while skipping tainted flavor": (
        "main: tainted(NoFit;untolerated taint {instance spot NoSchedule <nil>} in flavor tainted)"
    ),
    "when borrowing while preemption is needed for flavor one, fair sharing enabled, "
    "reclaimWithinCohort=Never": (
        "main: one(NoFit;borrow=1;insufficient unused quota for cpu in flavor one, 10 more needed)"
    ),
    "multiple resources in a group, doesn't fit": (
        "main: one(NoFit;insufficient quota for cpu in flavor one, previously considered podsets "
        "requests (0) + current podset request (3) > maximum capacity (2)), two(NoFit;insufficient "
        "quota for memory in flavor two, previously considered podsets requests (0) + current "
        "podset request (10Mi) > maximum capacity (5Mi))"
    ),
    "single flavor, fits": "",
}
BY_NAME = {c.name: c for c in ALL_CASES}


@pytest.mark.parametrize("name", list(CONSIDERED))
def test_flavors_considered(name: str) -> None:
    assert run(BY_NAME[name]).flavors_considered() == CONSIDERED[name]
