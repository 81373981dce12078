"""Nomination and copies (R8): only once every other check is Ready (B17), AllAtOnce over the
connected clusters (F10), Incremental and external dispatchers, copies created with the origin
label and removed where no longer nominated."""

from __future__ import annotations

from dataclasses import replace

import pytest

from numaplane.kueue.configvalues import DISPATCHER_INCREMENTAL
from numaplane.kueue.multikueue import (
    CountMetric,
    CreateRemoteWorkload,
    DispatchState,
    reconcile,
)
from numaplane.kueue.multikueue.dispatch import Round

from .helpers import (
    CHECK,
    NOW,
    OPTS,
    T0,
    Case,
    check,
    cluster,
    cond,
    copy_of,
    local,
    removed,
    run_case,
    spec,
    status_write,
    view,
)

RESERVED = local()
EXTERNAL = replace(OPTS, dispatcher="example.com/my-dispatcher")
INCREMENTAL = replace(OPTS, dispatcher=DISPATCHER_INCREMENTAL)


def clone(origin: str = "multikueue", wl: dict[str, object] = RESERVED) -> dict[str, object]:
    """The copy cloneForCreate makes: no job-uid label, no owner, finalizer, uid or status."""
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": "job-job1-1a2b3",
            "namespace": "ns",
            "labels": {"team": "a", "kueue.x-k8s.io/multikueue-origin": origin},
            "annotations": {"note": "x"},
        },
        "spec": spec(),
    }


def created(
    cluster_name: str, origin: str = "multikueue"
) -> tuple[CreateRemoteWorkload, CountMetric]:
    """The copy created on ``cluster_name`` and its dispatched count."""
    labels = (("cluster_queue", "q1"), ("cluster", cluster_name))
    return (
        CreateRemoteWorkload(cluster_name, clone(origin)),
        CountMetric("multikueue_workloads_dispatched_total", labels),
    )


THREE_CHECKS = [check(), check("ac2", "Ready"), check("ac3")]

DRAINING = local(
    cond("Evicted", "True", "AdmissionCheck", "At least one admission check is false"),
    checks=[check()],
)


CASES = (
    Case(
        name="an evicted workload still holding its quota is not nominated again (C1)",
        view=view(DRAINING, cluster("worker1"), cluster("worker2")),
    ),
    Case(
        name="F10 AllAtOnce: every connected worker nominated (sorted) and given a copy",
        view=view(RESERVED, cluster("worker2"), cluster("worker1")),
        want=(
            status_write(RESERVED, nominatedClusterNames=["worker1", "worker2"]),
            *created("worker2"),
            *created("worker1"),
        ),
    ),
    Case(
        name="AllAtOnce: a disconnected worker is neither nominated nor an error",
        view=view(RESERVED, cluster("worker1"), cluster("worker2", connected=False)),
        want=(status_write(RESERVED, nominatedClusterNames=["worker1"]), *created("worker1")),
    ),
    Case(
        name="AllAtOnce: the same set in another order is not written again",
        view=view(
            local(nominatedClusterNames=["worker2", "worker1"]),
            cluster("worker1", copy_of(RESERVED)),
            cluster("worker2", copy_of(RESERVED)),
        ),
    ),
    Case(
        name="B17 another check still Pending: no nomination, no copies",
        view=view(local(checks=THREE_CHECKS)),
    ),
    Case(
        name="B17 every other check Ready: copies go out",
        view=view(local(checks=[check(), check("ac2", "Ready"), check("ac3", "Ready")])),
        want=(
            status_write(
                local(checks=[check(), check("ac2", "Ready"), check("ac3", "Ready")]),
                nominatedClusterNames=["worker1", "worker2"],
            ),
            *created("worker1"),
            *created("worker2"),
        ),
    ),
    Case(
        name="the origin of the Configuration labels the copies",
        view=view(RESERVED, cluster("worker1")),
        options=replace(OPTS, origin="manager-a"),
        want=(
            status_write(RESERVED, nominatedClusterNames=["worker1"]),
            *created("worker1", "manager-a"),
        ),
    ),
    Case(
        name="clusterName already set while the check is Pending (eviction under way): skipped",
        view=view(local(clusterName="worker1")),
    ),
    Case(
        name="check in Retry: no nomination",
        view=view(local(checks=[check(state="Retry")])),
    ),
    Case(
        name="C2 external dispatcher, nothing nominated yet: no copies",
        view=view(RESERVED),
        options=EXTERNAL,
    ),
    Case(
        name="C2 external dispatcher: copies follow its nominations, others removed",
        view=view(
            local(nominatedClusterNames=["worker2"]),
            cluster("worker1", copy_of(RESERVED)),
            cluster("worker2"),
        ),
        options=EXTERNAL,
        want=(removed("worker1"), *created("worker2")),
    ),
    Case(
        name="a nominated cluster without a connected client: an error, the rest synced",
        view=view(
            local(nominatedClusterNames=["worker1", "worker3"]),
            cluster("worker1"),
            cluster("worker3", connected=False),
        ),
        options=EXTERNAL,
        want=created("worker1"),
        error="cluster worker3: no remote client for nominated cluster",
    ),
    Case(
        name="Incremental: the first three clusters in config order, a round of 5 minutes",
        view=view(
            RESERVED,
            cluster("worker3"),
            cluster("worker1"),
            cluster("worker4"),
            cluster("worker2"),
        ),
        options=INCREMENTAL,
        want=(
            status_write(RESERVED, nominatedClusterNames=["worker3", "worker1", "worker4"]),
            *created("worker3"),
            *created("worker1"),
            *created("worker4"),
        ),
        requeue=300.0,
    ),
)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_nomination(case: Case) -> None:
    run_case(case)


def test_incremental_round_in_progress_waits_for_its_end() -> None:
    wl = local(nominatedClusterNames=["worker1"])
    state = DispatchState(rounds={"ns/job-job1-1a2b3": Round(NOW - 60, ("worker1",))})
    result = reconcile(
        view(wl, cluster("worker1", copy_of(wl)), cluster("worker2")), INCREMENTAL, NOW, state
    )
    assert result.actions == []
    assert result.requeue_after == 240.0


def test_incremental_nominations_extend_once_the_round_is_over() -> None:
    wl = local(nominatedClusterNames=["worker1"])
    state = DispatchState(rounds={"ns/job-job1-1a2b3": Round(T0, ("worker1",))})
    options = replace(INCREMENTAL, step_size=1)
    result = reconcile(
        view(wl, cluster("worker1", copy_of(wl)), cluster("worker2")), options, NOW, state
    )
    assert result.actions == [
        status_write(wl, nominatedClusterNames=["worker1", "worker2"]),
        *created("worker2"),
    ]
    assert state.rounds["ns/job-job1-1a2b3"] == Round(NOW, ("worker1", "worker2"))


def test_incremental_without_more_workers_still_syncs_its_copies() -> None:
    wl = local(nominatedClusterNames=["worker1"])
    result = reconcile(view(wl, cluster("worker1")), INCREMENTAL, NOW, DispatchState())
    assert result.actions == list(created("worker1"))
    assert result.error == "no more workers to nominate"


def test_the_check_name_of_the_view_is_the_one_synchronised() -> None:
    # A workload whose MultiKueue check has another name than ac1 is found by that name.
    wl = local(checks=[check("mk"), check(CHECK, "Ready")])
    result = reconcile(replace(view(wl, cluster("worker1")), check="mk"), OPTS, NOW)
    assert result.actions[0] == status_write(wl, nominatedClusterNames=["worker1"])
