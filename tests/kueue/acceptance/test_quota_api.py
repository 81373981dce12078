"""quota.md's worked examples (Q*, P*, M1) through the API: each example on its own logical
cluster of one ``numaplane apiserver``, its objects created with the client (running workloads
get their reservation through the status subresource) before ``numaplane kueue`` starts, so its
first cycle sees them all; the decisions are read back from the Workloads. For the examples that
preempt, the test then releases the victims' quota as a job integration does once their jobs
stop, and the preemptor gets its reservation."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from numaplane.kube import ApiError
from numaplane.kueue import workload as workload_rules
from numaplane.testing.apiserver import RunningApiServer, running_apiserver
from tests.kueue.acceptance import decisions
from tests.kueue.acceptance.apiworld import ApiWorld, kueue_process
from tests.kueue.acceptance.cases import CASES, QuotaCase
from tests.kueue.acceptance.objects import flavor, running_status

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]


def cluster_name(case: QuotaCase) -> str:
    """The case's logical cluster (a DNS label)."""
    return re.sub(r"[^a-z0-9-]", "-", case.name.lower())[:40].strip("-")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApiServer]:
    """One API server, a logical cluster per example."""
    names = [cluster_name(c) for c in CASES]
    with running_apiserver(tmp_path_factory.mktemp("kueue-api"), clusters=names) as handle:
        yield handle


def _populate(world: ApiWorld, case: QuotaCase) -> dict[str, str]:
    """Create the example's objects; the UIDs the server gave the workloads, by key."""
    world.install_crds()
    for namespace in case.namespaces:
        if namespace != "default":
            world.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    for name in case.flavors:
        world.create(flavor(name))
    for cq in case.cluster_queues:
        world.create(cq)
    for lq in case.local_queues:
        world.create(lq)
    uids = {}
    now = time.time()
    for index, spec in enumerate(case.workloads):
        status = None
        if spec.holds is not None:
            # Reserved in the past, in creation order (the candidates' order reads it).
            status = running_status(spec.holds, now - 100 + index)
        created = world.create(spec.to_dict(now, with_status=False), status)
        uids[spec.key] = str(created["metadata"]["uid"])
        # One second apart: creation timestamps are whole seconds and FIFO order reads them.
        time.sleep(1.0 if spec.holds is None and index + 1 < len(case.workloads) else 0)
    return uids


def _release_evicted(world: ApiWorld, workloads: list[dict[str, Any]]) -> None:
    """Release the quota of every evicted workload that still holds some."""
    for raw in workloads:
        evicted = decisions.condition(raw, "Evicted")
        if evicted is not None and evicted[0] == "True" and decisions.reservation(raw):
            with contextlib.suppress(ApiError):  # changed meanwhile: the next look retries
                world.write_status(raw, workload_rules.release_quota(raw, time.time()))


def _first_cycle_done(case: QuotaCase) -> Any:
    """Whether the Workloads show the example's decisions (the same sets, the pending ones with
    the stated reason: the scheduler's pending write may land after the evictions it decided
    along with it)."""

    def done(found: list[dict[str, Any]]) -> bool:
        got = decisions.observed(case, found)
        return (
            set(got["reserved"]) == set(case.reserved)
            and set(got["preempted"]) == set(case.preempted)
            and all(got["pending"].get(k, ("",))[0] == r for k, (r, _) in case.pending.items())
        )

    return done


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_example_through_the_api(
    server: RunningApiServer, case: QuotaCase, tmp_path: Path
) -> None:
    world = ApiWorld(server.cluster_kubeconfig(cluster_name(case)))
    uids = _populate(world, case)
    log = tmp_path / "kueue.log"
    with kueue_process(world.kubeconfig, log) as kueue:
        found = world.wait_for(_first_cycle_done(case), kueue)
        got = decisions.observed(case, found)
        assert got == decisions.expected(case, uids), log.read_text()[-4000:]
        want_evicted = {k: ("Preempted", m) for k, (_, m) in got["preempted"].items()}
        assert decisions.evicted(found) == want_evicted
        if not case.after_release:
            return
        # The job integration's part, for as long as it takes: an evicted workload's job stops
        # and its quota is released. (A victim released first may take quota back before the
        # preemptor's other victim is released, and be preempted again: released again here.)
        want = {k: decisions.normalized(v) for k, v in case.after_release.items()}
        found = world.wait_for(
            lambda items: decisions.reserved_after_release(case, items) == want,
            kueue,
            each=lambda items: _release_evicted(world, items),
        )
        assert decisions.reserved_after_release(case, found) == want, log.read_text()[-4000:]
        running = {w.key for w in case.workloads if w.holds is not None}
        assert running - set(case.preempted) <= decisions.held_by_running(case, found)
