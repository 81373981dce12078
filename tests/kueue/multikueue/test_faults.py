"""MultiKueue under faults, end to end with real processes (issue 16, "Faults"): one
``numaplane up`` with a manager and two workers (logical clusters, each with its own
controllers, Kueue and a simulated node), the manager reaching each worker through a loopback
link the test can cut (see :mod:`tests.kueue.multikueue.faultworld`). Each test submits 200
Jobs to the manager at once, strikes while some run on a worker, and then requires **0
duplicate runs and 0 lost Jobs** over all 200, counted by watches on every cluster for the
whole test, and the workers left with nothing of them.

``workerLostTimeout`` is 4s, gcInterval 2s. A worker away for longer than the timeout (killed,
or cut off) has its Jobs declared lost by the manager and re-dispatched: those Jobs may run a
second time, once per retry the manager records (SPEC §3.14: the worker's copy is never
fenced, it is cleaned once the worker is back, §3.15); anything beyond that is a duplicate.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.kueue.multikueue.faultledger import Verdict
from tests.kueue.multikueue.faultworld import WORKER_LOST_TIMEOUT_S, FaultWorld, fault_world

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]

JOBS = 200
#: How many of a test's Jobs must be running on the struck worker before it strikes.
RUNNING_BEFORE = 4


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultWorld]:
    with fault_world(tmp_path_factory.mktemp("mk-faults") / "data") as running:
        yield running


def _strike_when_running(world: FaultWorld, worker: str, names: list[str]) -> list[str]:
    """Wait until some of ``names`` run on ``worker``; those running there."""

    def enough() -> list[str] | None:
        found = world.ledger.running_on(worker, names)
        return found if len(found) >= RUNNING_BEFORE else None

    return world.until(f"{RUNNING_BEFORE} jobs running on {worker}", enough)


def _report(what: str, verdict: Verdict, started: float) -> None:
    print(
        f"\n{what}: jobs={verdict.jobs} complete={verdict.complete} "
        f"duplicates={len(verdict.duplicates)} lost={len(verdict.lost)} "
        f"retried={verdict.retried} ran_twice={verdict.ran_twice} runs={verdict.runs_by_worker} "
        f"time={time.monotonic() - started:.1f}s"
    )
    for line in verdict.twice:
        print(f"  ran twice: {line}")


def _no_duplicate_none_lost(verdict: Verdict) -> None:
    assert verdict.jobs == JOBS
    assert verdict.duplicates == []
    assert verdict.lost == []
    assert verdict.complete == JOBS


def test_a_worker_killed_and_restarted(world: FaultWorld) -> None:
    """worker1's API server (as the manager sees it: its link closed, connections refused)
    and its controllers, Kueue and node agent SIGKILLed; once the manager shows it not Active,
    back (``up`` has restarted the processes, the link listens again) after twice
    workerLostTimeout: the Jobs admitted there are declared lost and re-dispatched."""
    started = time.monotonic()
    names = world.submit("kill", JOBS)
    _strike_when_running(world, "worker1", names)
    world.call(world.links["worker1"].cut())
    killed = world.kill(world.worker_processes("worker1"))
    world.until(
        "worker1's processes restarted",
        lambda: (
            len(set(world.processes(world.worker_processes("worker1"))) - set(killed))
            == len(killed)
        ),
    )
    world.lost("worker1")
    time.sleep(2 * WORKER_LOST_TIMEOUT_S)  # fault duration, not an assertion
    world.call(world.links["worker1"].restore())
    verdict = world.verdict("kill", names)
    _report("worker killed", verdict, started)
    _no_duplicate_none_lost(verdict)
    # The Jobs running there when it died were declared lost and run again elsewhere.
    assert verdict.retried >= 1


def test_a_worker_partitioned_shorter_than_the_lost_timeout(world: FaultWorld) -> None:
    """Every byte to and from worker2 dropped for half of workerLostTimeout, then the link
    heals: nothing is evicted, the Jobs running there keep running and finish there."""
    started = time.monotonic()
    names = world.submit("short", JOBS)
    running = _strike_when_running(world, "worker2", names)
    world.links["worker2"].partition()
    time.sleep(WORKER_LOST_TIMEOUT_S / 2)  # fault duration, not an assertion
    world.call(_heal(world, "worker2"))
    verdict = world.verdict("short", names)
    _report("worker partitioned < workerLostTimeout", verdict, started)
    _no_duplicate_none_lost(verdict)
    assert verdict.retried == 0
    for name in running:
        assert [w for w, _ in world.ledger.runs_of(name)] == ["worker2"], name


async def _heal(world: FaultWorld, worker: str) -> None:
    world.links[worker].heal()


def test_a_worker_partitioned_longer_than_the_lost_timeout(world: FaultWorld) -> None:
    """worker1 unreachable (connections closed and refused, as a kubeconfig pointing nowhere)
    for twice workerLostTimeout: its Jobs are re-dispatched to worker2, and its copies are
    cleaned once it is back; no Job runs more often than the retries the manager recorded."""
    started = time.monotonic()
    names = world.submit("long", JOBS)
    _strike_when_running(world, "worker1", names)
    world.call(world.links["worker1"].cut())
    world.lost("worker1")
    time.sleep(2 * WORKER_LOST_TIMEOUT_S)  # fault duration, not an assertion
    world.call(world.links["worker1"].restore())
    verdict = world.verdict("long", names)
    _report("worker partitioned > workerLostTimeout", verdict, started)
    _no_duplicate_none_lost(verdict)
    assert verdict.retried >= 1


def test_the_manager_kueue_killed_mid_dispatch_and_restarted(world: FaultWorld) -> None:
    """The manager's Kueue SIGKILLed while Jobs are being dispatched and run; ``up`` restarts
    it; every Job still runs exactly once."""
    started = time.monotonic()
    names = world.submit("mgr", JOBS)
    _strike_when_running(world, "worker1", names)
    world.kill(world.manager_kueue())
    verdict = world.verdict("mgr", names)
    _report("manager Kueue killed", verdict, started)
    _no_duplicate_none_lost(verdict)
