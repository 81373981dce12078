"""Laws of preemption on random cohorts (classical and Fair Sharing): the targets make room,
every target is allowed by the preemptor queue's policies with a reason that says whose queue
it is in, and the simulation leaves the snapshot as it was."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from numaplane.kueue.api.model import Workload
from numaplane.kueue.cache import Snapshot
from numaplane.kueue.scheduler.preemption import PreemptionOptions, Preemptor
from numaplane.kueue.scheduler.preemption_policy import satisfies_preemption_policy
from tests.kueue.scheduler.sched_builders import (
    NOW,
    admitted,
    cluster_queue,
    cpu,
    flavor,
    group,
    pending,
    preemption,
    quota,
    snapshot_of,
)

CPU = ("default", "cpu")
POLICIES = ("Never", "LowerPriority", "LowerOrNewerEqualPriority", "Any")


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[Snapshot, Workload, int, bool]:
    n_queues = draw(st.integers(2, 4))
    queues = []
    for i in range(n_queues):
        within = draw(st.sampled_from(POLICIES[:3]))
        reclaim = draw(st.sampled_from(("Never", "LowerPriority", "Any")))
        nominal = cpu(draw(st.integers(0, 4)))
        limit = draw(st.one_of(st.none(), st.integers(0, 4).map(cpu)))
        queues.append(
            cluster_queue(
                f"q{i}",
                group(flavor("default", quota("cpu", nominal, limit))),
                cohort="co",
                preemption=preemption(within, reclaim),
            )
        )
    workloads = []
    for j in range(draw(st.integers(0, 8))):
        q = draw(st.integers(0, n_queues - 1))
        amount = cpu(draw(st.integers(1, 3)))
        prio = draw(st.integers(-2, 2))
        at = NOW - draw(st.integers(0, 100))
        workloads.append(admitted(f"w{j}", f"q{q}", {CPU: amount}, priority=prio, reserved_at=at))
    snap = snapshot_of(["default"], queues, workloads)
    incoming = pending(
        "in", {"cpu": cpu(draw(st.integers(1, 4)))}, priority=draw(st.integers(-2, 3))
    )
    return snap, incoming, draw(st.integers(0, n_queues - 1)), draw(st.booleans())


def _fits(snap: Snapshot, cq: str, amount: int) -> bool:
    return snap.cluster_queues[cq].available(CPU) >= amount


@settings(max_examples=150, deadline=None)
@given(scenarios())
def test_targets_make_room_within_policy(scenario: tuple[Snapshot, Workload, int, bool]) -> None:
    snap, incoming, q, fair = scenario
    cq_name = f"q{q}"
    amount = incoming.pod_sets[0].requests["cpu"]
    before = {
        n: {k: v for k, v in c.node.usage.items() if v} for n, c in snap.cluster_queues.items()
    }
    preemptor = Preemptor(NOW, PreemptionOptions(fair_sharing=fair))
    targets = preemptor.targets_for(incoming, cq_name, frozenset({CPU}), {CPU: amount}, snap)
    after = {
        n: {k: v for k, v in c.node.usage.items() if v} for n, c in snap.cluster_queues.items()
    }
    assert after == before
    if not targets:
        return
    spec = snap.cluster_queues[cq_name].spec.preemption
    for t in targets:
        own = t.cluster_queue == cq_name
        policy = spec.within_cluster_queue if own else spec.reclaim_within_cohort
        assert satisfies_preemption_policy(incoming, t.workload, policy)
        assert t.reason == "InClusterQueue" if own else t.reason != "InClusterQueue"
    restore = snap.simulate_workload_removal(t.workload for t in targets)
    assert _fits(snap, cq_name, amount)
    restore()
