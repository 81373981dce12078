"""quota.md's worked examples (Q*, P*, M1) in process: the table's objects observed by the real
engine, one scheduling cycle, the decisions read back from the Workloads it wrote; then, for
the examples that preempt, the victims' quota released (as the job integration does once their
jobs stop) and the preemptor reserved."""

from __future__ import annotations

import pytest

from numaplane.testing.kueue import FakeKueueApi
from tests.kueue.acceptance import decisions
from tests.kueue.acceptance.cases import CASES, QuotaCase
from tests.kueue.acceptance.drive import release, rounds
from tests.kueue.acceptance.objects import EPOCH, flavor


def _world(case: QuotaCase) -> FakeKueueApi:
    """The example's objects created (workloads a second apart, the running ones with their
    reservation), and what observing them asks of the controllers done."""
    world = FakeKueueApi(start=EPOCH + len(case.workloads) + 10)
    for namespace in case.namespaces:
        world.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    for name in case.flavors:
        world.create(flavor(name))
    for cq in case.cluster_queues:
        world.create(cq)
    for lq in case.local_queues:
        world.create(lq)
    for index, spec in enumerate(case.workloads):
        world.create(spec.to_dict(EPOCH + index))
    world.reconcile()
    return world


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_first_cycle_decides_as_the_example_states(case: QuotaCase) -> None:
    world = _world(case)
    world.cycle()
    world.reconcile()
    got = decisions.observed(case, world.list("Workload"))
    assert got == decisions.expected(case, {})
    # Every preempted workload is evicted with reason Preempted and the same message.
    want_evicted = {k: ("Preempted", m) for k, (_, m) in got["preempted"].items()}
    assert decisions.evicted(world.list("Workload")) == want_evicted
    for key in case.reserved:
        obj = world.get("Workload", key)
        assert obj is not None
        cq = obj["status"]["admission"]["clusterQueue"]
        assert decisions.condition(obj, "QuotaReserved") == (
            "True",
            "QuotaReserved",
            f"Quota reserved in ClusterQueue {cq}",
        )
        # No admission checks: the reservation is the admission.
        assert decisions.condition(obj, "Admitted") == (
            "True",
            "Admitted",
            "The workload is admitted",
        )


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.after_release], ids=[c.name for c in CASES if c.after_release]
)
def test_the_preemptor_is_reserved_only_once_the_victims_quota_is_released(
    case: QuotaCase,
) -> None:
    world = _world(case)
    world.cycle()
    world.reconcile()
    # More cycles while the victims still hold their quota: nothing new is reserved and no
    # workload other than the stated victims is evicted.
    rounds(world, 3)
    assert decisions.reserved_after_release(case, world.list("Workload")) == {}
    assert set(decisions.evicted(world.list("Workload"))) == set(case.preempted)
    world.advance(1)
    release(world, case.preempted)
    rounds(world, 5)
    got = decisions.reserved_after_release(case, world.list("Workload"))
    assert got == {k: decisions.normalized(v) for k, v in case.after_release.items()}
    # The workloads that were not preempted kept their reservation throughout (a victim may
    # get one again once it fits).
    running = {w.key for w in case.workloads if w.holds is not None}
    assert running - set(case.preempted) <= decisions.held_by_running(case, world.list("Workload"))
