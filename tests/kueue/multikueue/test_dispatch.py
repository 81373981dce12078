"""The dispatchers (SPEC §3.5): the incremental dispatcher's vectors of scenario C7 (upstream
``incrementaldispatcher_test.go``; feature gates of upstream HEAD: config order and stepSize
honoured, with the rows that turn them off), its skip cases, AllAtOnce, and scenario C8 (the
cost-ordered spillover, through the reconciler with an injected clock)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from numaplane.kueue.configvalues import DISPATCHER_INCREMENTAL
from numaplane.kueue.multikueue import (
    CountMetric,
    CreateRemoteWorkload,
    DispatchState,
    GroupView,
    UpdateLocalWorkloadStatus,
    reconcile,
)
from numaplane.kueue.multikueue.dispatch import (
    Nomination,
    Round,
    all_at_once,
    effective_step_size,
    incremental,
)

from .helpers import (
    ADMITTED,
    NOW,
    OPTS,
    admitted_copy,
    check,
    cluster,
    cond,
    local,
    view,
    worker_job,
)

KEY = "ns/wl"
NO_MORE = "no more workers to nominate"
FIFTEEN = tuple("ONMLKJIHGFEDCBA")


def letters(text: str) -> tuple[str, ...]:
    """``"FED"`` → ``("F", "E", "D")``."""
    return tuple(text)


@dataclass(frozen=True)
class Vector:
    """One row of C7: the config's clusters, the nominations already written and the state
    of the current round (None: no round; "expired" or "running"), the settings, and the
    nominations that must result (with the error and the requeue)."""

    name: str
    config: tuple[str, ...]
    want: tuple[str, ...]
    already: tuple[str, ...] = ()
    round: str | None = None
    step_size: int = 3
    step_size_gate: bool = True
    config_order: bool = True
    error: str | None = None
    requeue: float | None = 300.0


VECTORS = (
    Vector("one cluster", letters("A"), letters("A")),
    Vector("two clusters in config order", letters("BA"), letters("BA")),
    Vector("three clusters in config order", letters("CBA"), letters("CBA")),
    Vector("fifteen clusters: the first three of the config", FIFTEEN, letters("ONM")),
    Vector(
        "all nominated and the round over: no more workers",
        letters("CBA"),
        letters("CBA"),
        already=letters("CBA"),
        round="expired",
        error=NO_MORE,
        requeue=None,
    ),
    Vector(
        "round over: the next three appended",
        letters("FEDCBA"),
        letters("FEDCBA"),
        already=letters("FED"),
        round="expired",
    ),
    Vector(
        "round still running: unchanged until its end",
        letters("FEDCBA"),
        letters("FED"),
        already=letters("FED"),
        round="running",
        requeue=240.0,
    ),
    Vector(
        "eight clusters, six nominated, round over: all eight",
        letters("HGFEDCBA"),
        letters("HGFEDCBA"),
        already=letters("HGFEDC"),
        round="expired",
    ),
    Vector(
        "no clusters: no more workers", (), (), error="no more workers to nominate", requeue=None
    ),
    Vector("stepSize 2", letters("EDCBA"), letters("ED"), step_size=2),
    Vector(
        "stepSize 2, round over: two more",
        letters("EDCBA"),
        letters("EDCB"),
        already=letters("ED"),
        round="expired",
        step_size=2,
    ),
    Vector(
        "stepSize 10 with the config gate off: 3",
        letters("GFEDCBA"),
        letters("GFE"),
        step_size=10,
        step_size_gate=False,
    ),
    Vector("ordering gate off: by name", letters("CBA"), letters("ABC"), config_order=False),
    Vector(
        "ordering gate off, fifteen: the first three by name",
        FIFTEEN,
        letters("ABC"),
        config_order=False,
    ),
    Vector(
        "ordering gate off, round over: the next three by name",
        letters("FEDCBA"),
        letters("FEDABC"),
        already=letters("FED"),
        round="expired",
        config_order=False,
    ),
    Vector(
        "ordering gate off, stepSize 2: the first two by name",
        letters("EDCBA"),
        letters("AB"),
        step_size=2,
        config_order=False,
    ),
)


@pytest.mark.parametrize("vector", VECTORS, ids=[v.name for v in VECTORS])
def test_incremental_vectors(vector: Vector) -> None:
    state = DispatchState()
    if vector.round == "expired":
        state.rounds[KEY] = Round(NOW - 301, vector.already)
    elif vector.round == "running":
        state.rounds[KEY] = Round(NOW - 60, vector.already)
    got = incremental(
        KEY,
        vector.config,
        vector.already,
        state,
        NOW,
        step_size=effective_step_size(vector.step_size, config_gate=vector.step_size_gate),
        respect_config_order=vector.config_order,
    )
    changed = vector.want != vector.already
    assert got == Nomination(vector.want, changed, vector.requeue, vector.error)
    if changed:
        assert state.rounds[KEY] == Round(NOW, vector.want)


def test_a_round_whose_nominations_were_lost_is_over() -> None:
    # The write of the round's nominations failed (or an eviction cleared them): no wait.
    state = DispatchState(rounds={KEY: Round(NOW - 10, letters("CBA"))})
    got = incremental(KEY, letters("CBA"), (), state, NOW)
    assert got == Nomination(letters("CBA"), True, 300.0)


@pytest.mark.parametrize(
    ("size", "gate", "want"),
    [(5, True, 5), (None, True, 3), (0, True, 3), (5, False, 3)],
    ids=["set", "unset", "zero", "gate off"],
)
def test_effective_step_size(size: int | None, gate: bool, want: int) -> None:
    assert effective_step_size(size, config_gate=gate) == want


def test_all_at_once_sorted_and_written_only_on_change() -> None:
    assert all_at_once(["w2", "w1"], []) == Nomination(("w1", "w2"), True)
    assert all_at_once(["w2", "w1"], ["w2", "w1"]) == Nomination(("w1", "w2"), False)
    assert all_at_once([], ["w1"]) == Nomination((), True)


INCREMENTAL = replace(OPTS, dispatcher=DISPATCHER_INCREMENTAL)
RUNNING = local(
    ADMITTED, checks=[check(state="Ready", message='The workload was admitted on "worker1"')]
)
RUNNING["status"]["clusterName"] = "worker1"
SKIPS = {
    "workload deleted": view(None, deleted=local()),
    "no MultiKueue check": view(local(checks=[check("prov")])),
    "check Rejected": view(local(checks=[check(state="Rejected")])),
    "check Ready": view(RUNNING, cluster("worker1", admitted_copy(RUNNING), worker_job())),
    "clusterName already set": view(local(clusterName="worker1")),
    "workload finished": view(local(cond("Finished", "True", "Succeeded"))),
    "workload without reservation": view(local(reserved=False)),
}


@pytest.mark.parametrize("group", SKIPS.values(), ids=SKIPS.keys())
def test_incremental_skips(group: GroupView) -> None:
    state = DispatchState()
    result = reconcile(group, INCREMENTAL, NOW, state)
    assert state.rounds == {}
    assert not [a for a in result.actions if isinstance(a, CreateRemoteWorkload)]


# ----- C8: cost-ordered spillover ----------------------------------------------------------

SPILLOVER = ("worker-onprem", "worker-aws", "worker-gcp")


@dataclass(frozen=True)
class SpillStep:
    """One look of the reconciler, ``at`` seconds after the first: the nominations the Workload
    must carry after it, the clusters a copy is created on by it, its requeue and error."""

    name: str
    at: float
    nominated: tuple[str, ...]
    created: tuple[str, ...] = ()
    requeue: float | None = None
    error: str | None = None


SPILL_STEPS = (
    SpillStep("round 1: onprem alone", 0, SPILLOVER[:1], SPILLOVER[:1], 300.0),
    SpillStep("4 min 59 s: still onprem alone", 299, SPILLOVER[:1], requeue=1.0),
    SpillStep("5 min: aws added", 300, SPILLOVER[:2], ("worker-aws",), 300.0),
    SpillStep("9 min 59 s: onprem and aws", 599, SPILLOVER[:2], requeue=1.0),
    SpillStep("10 min: all three", 600, SPILLOVER, ("worker-gcp",), 300.0),
    SpillStep("15 min: no more workers", 900, SPILLOVER, error=NO_MORE),
)


def test_c8_cost_ordered_spillover_with_step_size_1() -> None:
    """Scenario C8 (upstream's ``concepts/multikueue.md`` example): config [worker-onprem,
    worker-aws, worker-gcp], Incremental with stepSize 1, no worker admitting: the cheapest
    cluster alone first, the next one added after each 5-minute round, in config order; the
    copies already made are kept."""
    options = replace(OPTS, dispatcher=DISPATCHER_INCREMENTAL, step_size=1)
    state = DispatchState()
    wl = local()
    copies: dict[str, dict[str, object] | None] = dict.fromkeys(SPILLOVER)
    seen = []
    for step in SPILL_STEPS:
        group = view(wl, *(cluster(name, copies[name]) for name in SPILLOVER))
        result = reconcile(group, options, NOW + step.at, state)
        created = []
        for action in result.actions:
            if isinstance(action, UpdateLocalWorkloadStatus):
                wl = action.obj
            elif isinstance(action, CreateRemoteWorkload):
                created.append(action.cluster)
                copies[action.cluster] = action.obj
            elif not isinstance(action, CountMetric):  # the dispatch counter
                raise AssertionError(f"{step.name}: unexpected {action}")
        nominated = tuple(wl["status"].get("nominatedClusterNames") or ())
        seen.append((step.name, nominated, tuple(created), result.requeue_after, result.error))
    assert seen == [(s.name, s.nominated, s.created, s.requeue, s.error) for s in SPILL_STEPS]
