"""The in-process controllers: the garbage collector's three propagation policies, owners
that are missing or shared, the namespace lifecycle, system namespaces and default service
accounts, and the cleanup of a deleted CRD's objects."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from numaplane.apiserver.rest import Cluster
from numaplane.apiserver.storage import ObjectKey
from tests.apiserver.rest_support import (
    CONFIGMAPS,
    CTX,
    JOBS,
    NAMESPACES,
    PODS,
    SERVICEACCOUNTS,
    obj,
    owner_ref,
    run_cluster,
)

pytestmark = pytest.mark.timeout(120)


def pod(name: str, *refs: dict[str, Any], finalizers: tuple[str, ...] = ()) -> dict[str, Any]:
    """An unscheduled pod owned by ``refs``."""
    body = obj("Pod", name, spec={})
    if refs:
        body["metadata"]["ownerReferences"] = list(refs)
    if finalizers:
        body["metadata"]["finalizers"] = list(finalizers)
    return body


def exists(cluster: Cluster, resource: str, name: str, namespace: str = "default") -> bool:
    return cluster.store.get_latest(ObjectKey(resource, namespace, name)) is not None


async def release(cluster: Cluster, name: str, namespace: str = "default") -> None:
    """Clear the finalizers of the pod ``name`` (what its finalizer's owner would do)."""
    stored = cluster.store.get_latest(ObjectKey("pods", namespace, name))
    assert stored is not None
    released = copy.deepcopy(stored)
    released["metadata"]["finalizers"] = []
    await cluster.update(CTX, PODS, namespace, name, released)


@dataclass(frozen=True)
class PropagationCase:
    name: str
    policy: str
    pods_left: bool
    refs_left: bool


PROPAGATION = [
    PropagationCase("background", "Background", pods_left=False, refs_left=False),
    PropagationCase("foreground", "Foreground", pods_left=False, refs_left=False),
    PropagationCase("orphan", "Orphan", pods_left=True, refs_left=False),
]


@pytest.mark.parametrize("case", PROPAGATION, ids=[c.name for c in PROPAGATION])
def test_propagation_policies(tmp_path: Path, case: PropagationCase) -> None:
    async def body(cluster: Cluster) -> None:
        job = (await cluster.create(CTX, JOBS, "default", obj("Job", "j"))).body
        for name in ("p1", "p2"):
            await cluster.create(CTX, PODS, "default", pod(name, owner_ref(job, block=True)))
        await cluster.delete(CTX, JOBS, "default", "j", {"propagationPolicy": case.policy})
        await cluster.settle()
        assert not exists(cluster, "jobs.batch", "j")
        for name in ("p1", "p2"):
            assert exists(cluster, "pods", name) == case.pods_left
            if case.pods_left:
                stored = cluster.store.get_latest(ObjectKey("pods", "default", name))
                assert stored is not None
                assert bool(stored["metadata"].get("ownerReferences")) == case.refs_left

    run_cluster(tmp_path, body)


def test_foreground_waits_for_blocking_dependents(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        job = (await cluster.create(CTX, JOBS, "default", obj("Job", "j"))).body
        held = pod("held", owner_ref(job, block=True), finalizers=("example.com/hold",))
        await cluster.create(CTX, PODS, "default", held)
        await cluster.delete(CTX, JOBS, "default", "j", {"propagationPolicy": "Foreground"})
        await cluster.settle()
        owner = cluster.store.get_latest(ObjectKey("jobs.batch", "default", "j"))
        assert owner is not None
        assert owner["metadata"]["finalizers"] == ["foregroundDeletion"]
        dependent = cluster.store.get_latest(ObjectKey("pods", "default", "held"))
        assert dependent is not None
        assert dependent["metadata"]["deletionTimestamp"]
        await release(cluster, "held")
        await cluster.settle()
        assert not exists(cluster, "pods", "held")
        assert not exists(cluster, "jobs.batch", "j")

    run_cluster(tmp_path, body)


def test_shared_dependent_keeps_living_owner(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        first = (await cluster.create(CTX, JOBS, "default", obj("Job", "a"))).body
        second = (await cluster.create(CTX, JOBS, "default", obj("Job", "b"))).body
        await cluster.create(CTX, PODS, "default", pod("p", owner_ref(first), owner_ref(second)))
        await cluster.delete(CTX, JOBS, "default", "a", {"propagationPolicy": "Background"})
        await cluster.settle()
        stored = cluster.store.get_latest(ObjectKey("pods", "default", "p"))
        assert stored is not None
        assert [r["name"] for r in stored["metadata"]["ownerReferences"]] == ["b"]

    run_cluster(tmp_path, body)


def test_dependent_of_a_missing_owner_is_collected(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        ghost = {"apiVersion": "batch/v1", "kind": "Job", "name": "gone", "uid": "no-such-uid"}
        await cluster.create(CTX, PODS, "default", pod("orphaned", ghost))
        await cluster.settle()
        assert not exists(cluster, "pods", "orphaned")

    run_cluster(tmp_path, body)


def test_dependent_of_a_recreated_owner_is_collected(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        job = (await cluster.create(CTX, JOBS, "default", obj("Job", "j"))).body
        await cluster.create(CTX, PODS, "default", pod("p", owner_ref(job)))
        await cluster.delete(CTX, JOBS, "default", "j", {"propagationPolicy": "Orphan"})
        await cluster.settle()
        # Same name, new uid: the old reference no longer names a living owner.
        await cluster.create(CTX, JOBS, "default", obj("Job", "j"))
        stale = obj("Pod", "q", spec={})
        stale["metadata"]["ownerReferences"] = [owner_ref(job)]
        await cluster.create(CTX, PODS, "default", stale)
        await cluster.settle()
        assert exists(cluster, "pods", "p")
        assert not exists(cluster, "pods", "q")

    run_cluster(tmp_path, body)


def test_system_namespaces_and_default_service_accounts(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        listed = cluster.list(CTX, NAMESPACES, "").body["items"]
        assert [n["metadata"]["name"] for n in listed] == [
            "default",
            "kube-node-lease",
            "kube-public",
            "kube-system",
        ]
        await cluster.create(CTX, NAMESPACES, "", obj("Namespace", "team", namespace=""))
        await cluster.settle()
        assert exists(cluster, "serviceaccounts", "default", "team")
        # The controller puts back a deleted default account.
        await cluster.delete(CTX, SERVICEACCOUNTS, "team", "default", {})
        await cluster.settle()
        assert exists(cluster, "serviceaccounts", "default", "team")

    run_cluster(tmp_path, body)


def test_namespace_deletion_empties_then_removes_it(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await cluster.create(CTX, NAMESPACES, "", obj("Namespace", "team", namespace=""))
        for name in ("a", "b"):
            await cluster.create(CTX, CONFIGMAPS, "team", obj("ConfigMap", name, namespace="team"))
        held = pod("held", finalizers=("example.com/hold",))
        held["metadata"]["namespace"] = "team"
        await cluster.create(CTX, PODS, "team", held)
        first = (await cluster.delete(CTX, NAMESPACES, "", "team", {})).body
        assert first["status"]["phase"] == "Terminating"
        assert first["metadata"]["deletionTimestamp"]
        await cluster.settle()
        assert exists(cluster, "namespaces", "team", "")
        assert not exists(cluster, "configmaps", "a", "team")
        ns = cluster.store.get_latest(ObjectKey("namespaces", "", "team"))
        assert ns is not None
        said = {c["type"]: (c["status"], c["message"]) for c in ns["status"]["conditions"]}
        assert said["NamespaceContentRemaining"] == (
            "True",
            "Some resources are remaining: pods has 1 resource instances",
        )
        assert said["NamespaceFinalizersRemaining"] == (
            "True",
            "Some content in the namespace has finalizers remaining: example.com/hold in 1 "
            "resource instances",
        )
        await release(cluster, "held", "team")
        await cluster.settle()
        assert not exists(cluster, "namespaces", "team", "")
        assert cluster.store.list("serviceaccounts", "team")[0] == []

    run_cluster(tmp_path, body)


def test_controllers_resync_what_happened_while_closed(tmp_path: Path) -> None:
    async def first(cluster: Cluster) -> None:
        job = (await cluster.create(CTX, JOBS, "default", obj("Job", "j"))).body
        await cluster.create(CTX, PODS, "default", pod("p", owner_ref(job)))
        await cluster.controllers.stop()
        await cluster.delete(CTX, JOBS, "default", "j", {"propagationPolicy": "Background"})
        assert exists(cluster, "pods", "p")

    async def second(cluster: Cluster) -> None:
        assert not exists(cluster, "pods", "p")

    run_cluster(tmp_path, first)
    run_cluster(tmp_path, second)


def test_foreground_namespace_deletion_still_empties_it(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await cluster.create(CTX, NAMESPACES, "", obj("Namespace", "team", namespace=""))
        held = pod("held", finalizers=("example.com/hold",))
        held["metadata"]["namespace"] = "team"
        await cluster.create(CTX, PODS, "team", held)
        await cluster.delete(CTX, NAMESPACES, "", "team", {"propagationPolicy": "Foreground"})
        await cluster.settle()
        # The namespace waits for its content even once the GC's finalizer is gone.
        assert exists(cluster, "namespaces", "team", "")
        await release(cluster, "held", "team")
        await cluster.settle()
        assert not exists(cluster, "namespaces", "team", "")

    run_cluster(tmp_path, body)
