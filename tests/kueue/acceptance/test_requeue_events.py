"""What wakes parked workloads: upstream's ClusterQueue update handler requeues a ClusterQueue's
inadmissible workloads only when its spec changed (``qManager.UpdateClusterQueue(ctx, cq,
specUpdated)``); a status write (Kueue's own, after every admission) changes nothing. A wake on
every status write retries every parked workload of the cohort tree after each admission, which
costs cycles and makes decisions depend on when those writes are observed."""

from __future__ import annotations

from numaplane.testing.kueue import FakeKueueApi, cluster_queue, local_queue, workload
from tests.kueue.acceptance.objects import flavor

NS = "wake"


def _parked() -> FakeKueueApi:
    """One CPU, taken by ``a``; ``b`` (one CPU) parked as inadmissible."""
    api = FakeKueueApi()
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    api.create(flavor("default"))
    api.create(cluster_queue("cq", {"default": {"cpu": "1"}}))
    api.create(local_queue(NS, "lq", "cq"))
    api.create(workload(NS, "a", "lq", {"cpu": "1"}))
    api.settle()
    api.advance(1)
    api.create(workload(NS, "b", "lq", {"cpu": "1"}))
    api.settle()
    assert api.reserved() == [f"{NS}/a"]
    assert not api.engine.has_work()
    return api


def test_a_spec_change_requeues_parked_workloads() -> None:
    api = _parked()
    cq = api.get("ClusterQueue", "cq")
    assert cq is not None
    cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "2"
    api.update(cq)
    assert api.engine.has_work()
    api.settle()
    assert api.reserved() == [f"{NS}/a", f"{NS}/b"]


def test_a_status_write_leaves_parked_workloads_parked() -> None:
    api = _parked()
    cq = api.get("ClusterQueue", "cq")
    assert cq is not None
    status = dict(cq.get("status") or {})
    status["pendingWorkloads"] = int(status.get("pendingWorkloads", 0)) + 1
    api.update({**cq, "status": status}, status=True)
    assert not api.engine.has_work()
