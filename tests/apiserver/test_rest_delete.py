"""Delete and deletecollection as kube-apiserver does them: DeleteOptions, preconditions,
finalizers and deletionTimestamp, pods' graceful deletion, the answer's shape, dryRun."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from numaplane.apiserver.rest import Cluster
from tests.apiserver.rest_support import (
    CONFIGMAPS,
    CTX,
    DRY,
    JOBS,
    NAMESPACES,
    PODS,
    obj,
    raises,
    run_cluster,
)

pytestmark = pytest.mark.timeout(120)


def test_delete_answers_a_success_status(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        created = (await cluster.create(CTX, JOBS, "default", obj("Job", "j"))).body
        result = await cluster.delete(
            CTX, JOBS, "default", "j", {"propagationPolicy": "Background"}
        )
        assert result.code == 200
        assert result.body == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": {
                "name": "j",
                "group": "batch",
                "kind": "jobs",
                "uid": created["metadata"]["uid"],
            },
        }
        assert (await raises(cluster.delete(CTX, JOBS, "default", "j", {}))).code == 404

    run_cluster(tmp_path, body)


def test_batch_v1_jobs_orphan_by_default(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await cluster.create(CTX, JOBS, "default", obj("Job", "j"))
        result = (await cluster.delete(CTX, JOBS, "default", "j", {})).body
        assert result["metadata"]["finalizers"] == ["orphan"]
        assert result["metadata"]["deletionTimestamp"]
        await cluster.settle()
        assert cluster.store.list("jobs.batch", "default")[0] == []

    run_cluster(tmp_path, body)


def test_pod_delete_answers_the_object(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await cluster.create(CTX, PODS, "default", obj("Pod", "p", spec={}))
        result = await cluster.delete(CTX, PODS, "default", "p", {})
        assert result.body["kind"] == "Pod"
        assert cluster.store.list("pods", "default")[0] == []

    run_cluster(tmp_path, body)


def test_bound_pod_is_deleted_gracefully(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        pod = obj("Pod", "p", spec={"nodeName": "n1", "terminationGracePeriodSeconds": 45})
        await cluster.create(CTX, PODS, "default", pod)
        result = (await cluster.delete(CTX, PODS, "default", "p", {})).body
        assert result["metadata"]["deletionGracePeriodSeconds"] == 45
        assert result["metadata"]["deletionTimestamp"]
        # A shorter grace period may follow; a longer one changes nothing.
        longer = (await cluster.delete(CTX, PODS, "default", "p", {"gracePeriodSeconds": 60})).body
        assert longer["metadata"]["deletionGracePeriodSeconds"] == 45
        shorter = (await cluster.delete(CTX, PODS, "default", "p", {"gracePeriodSeconds": 5})).body
        assert shorter["metadata"]["deletionGracePeriodSeconds"] == 5
        # The kubelet's final delete.
        await cluster.delete(CTX, PODS, "default", "p", {"gracePeriodSeconds": 0})
        assert cluster.store.list("pods", "default")[0] == []

    run_cluster(tmp_path, body)


def test_finalizers_hold_the_object_until_removed(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        cm = obj("ConfigMap", "c")
        cm["metadata"]["finalizers"] = ["example.com/hold"]
        await cluster.create(CTX, CONFIGMAPS, "default", cm)
        held = (await cluster.delete(CTX, CONFIGMAPS, "default", "c", {})).body
        assert held["metadata"]["deletionTimestamp"]
        assert held["metadata"]["deletionGracePeriodSeconds"] == 0
        assert held["metadata"]["finalizers"] == ["example.com/hold"]
        again = (await cluster.delete(CTX, CONFIGMAPS, "default", "c", {})).body
        assert again["metadata"]["deletionTimestamp"] == held["metadata"]["deletionTimestamp"]
        released = copy.deepcopy(held)
        released["metadata"]["finalizers"] = []
        result = await cluster.update(CTX, CONFIGMAPS, "default", "c", released)
        assert result.code == 200
        assert cluster.store.get_latest(_key("c")) is None

    run_cluster(tmp_path, body)


def _key(name: str) -> Any:
    from numaplane.apiserver.storage import ObjectKey

    return ObjectKey("configmaps", "default", name)


def test_deletion_timestamp_bumps_generation_once(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        job = obj("Job", "j", spec={"x": 1})
        job["metadata"]["finalizers"] = ["example.com/hold"]
        await cluster.create(CTX, JOBS, "default", job)
        first = (await cluster.delete(CTX, JOBS, "default", "j", {})).body
        second = (await cluster.delete(CTX, JOBS, "default", "j", {})).body
        assert first["metadata"]["generation"] == 2
        assert second["metadata"]["generation"] == 2

    run_cluster(tmp_path, body)


@dataclass(frozen=True)
class DeleteErrorCase:
    name: str
    options: dict[str, Any]
    code: int
    message: str


def _delete_errors(uid: str, rv: str) -> list[DeleteErrorCase]:
    return [
        DeleteErrorCase(
            "uid-precondition", {"preconditions": {"uid": "other"}}, 409,
            f'Operation cannot be fulfilled on ConfigMap "c": the UID in the precondition '
            f"(other) does not match the UID in record ({uid}). The object might have been "
            "deleted and then recreated",
        ),
        DeleteErrorCase(
            "rv-precondition", {"preconditions": {"resourceVersion": "1"}}, 409,
            f'Operation cannot be fulfilled on ConfigMap "c": the ResourceVersion in the '
            f"precondition (1) does not match the ResourceVersion in record ({rv}). The object "
            "might have been modified",
        ),
        DeleteErrorCase(
            "unknown-policy", {"propagationPolicy": "Later"}, 422,
            'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
            '"Later": supported values: "Foreground", "Background", "Orphan", "nil"',
        ),
        DeleteErrorCase(
            "both-policies", {"propagationPolicy": "Orphan", "orphanDependents": True}, 422,
            'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: '
            '"Orphan": orphanDependents and deletionPropagation cannot be both set',
        ),
    ]  # fmt: skip


CASE_NAMES = ["uid-precondition", "rv-precondition", "unknown-policy", "both-policies"]


@pytest.mark.parametrize("index", range(len(CASE_NAMES)), ids=CASE_NAMES)
def test_delete_errors(tmp_path: Path, index: int) -> None:
    async def body(cluster: Cluster) -> None:
        created = (await cluster.create(CTX, CONFIGMAPS, "default", obj("ConfigMap", "c"))).body
        case = _delete_errors(created["metadata"]["uid"], created["metadata"]["resourceVersion"])[
            index
        ]
        error = await raises(cluster.delete(CTX, CONFIGMAPS, "default", "c", case.options))
        assert (error.code, error.message) == (case.code, case.message)
        assert cluster.store.get_latest(_key("c")) is not None

    run_cluster(tmp_path, body)


def test_immortal_namespaces(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        for name in ("default", "kube-system", "kube-public"):
            error = await raises(cluster.delete(CTX, NAMESPACES, "", name, {}))
            assert (error.code, error.message) == (
                403,
                f'namespaces "{name}" is forbidden: this namespace may not be deleted',
            )

    run_cluster(tmp_path, body)


def test_dry_run_delete_keeps_the_object(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await cluster.create(CTX, CONFIGMAPS, "default", obj("ConfigMap", "c"))
        result = await cluster.delete(DRY, CONFIGMAPS, "default", "c", {})
        assert result.body["status"] == "Success"
        assert cluster.store.get_latest(_key("c")) is not None

    run_cluster(tmp_path, body)


def test_delete_collection_by_selector(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        for name, tier in (("a", "web"), ("b", "db"), ("c", "web")):
            cm = obj("ConfigMap", name)
            cm["metadata"]["labels"] = {"tier": tier}
            await cluster.create(CTX, CONFIGMAPS, "default", cm)
        result = await cluster.delete_collection(
            CTX, CONFIGMAPS, "default", {}, label_selector="tier=web"
        )
        assert [o["metadata"]["name"] for o in result.body["items"]] == ["a", "c"]
        left = cluster.list(CTX, CONFIGMAPS, "default").body["items"]
        assert [o["metadata"]["name"] for o in left] == ["b"]

    run_cluster(tmp_path, body)
