"""The verbs over the real built-in kinds (``numaplane.apiserver.kinds``): what their
strategies add to the REST rules — pods' graceful deletion from their defaults, Jobs'
generation and status, namespaces' finalizer and phase, CRDs validated by the crd package."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from numaplane.apiserver.lifecycle import event_last_write
from numaplane.apiserver.registry import Registry
from numaplane.apiserver.resource import ResourceInfo
from numaplane.apiserver.rest import Cluster
from numaplane.apiserver.storage import ObjectKey
from tests.apiserver.rest_support import CTX, raises, run_cluster

pytestmark = pytest.mark.timeout(120)

T = TypeVar("T")
APPLY = "application/apply-patch+yaml"


def run(tmp_path: Path, body: Callable[[Cluster], Awaitable[T]]) -> T:
    return run_cluster(tmp_path, body, real_kinds=True)


def served(registry: Registry, group: str, resource: str) -> ResourceInfo:
    info = registry.lookup(group, "v1", resource)
    assert info is not None
    return info


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec},
    }


def test_pod_deletion_grace_comes_from_the_pod(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        pods = served(cluster.registry, "", "pods")
        await cluster.create(CTX, pods, "default", pod("pending"))
        await cluster.delete(CTX, pods, "default", "pending", {})
        assert cluster.store.get_latest(ObjectKey("pods", "default", "pending")) is None
        await cluster.create(CTX, pods, "default", pod("bound", nodeName="n1"))
        held = (await cluster.delete(CTX, pods, "default", "bound", {})).body
        assert held["metadata"]["deletionGracePeriodSeconds"] == 30

    run(tmp_path, body)


def test_job_generation_and_status(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        jobs = served(cluster.registry, "batch", "jobs")
        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j"},
            "spec": {
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "c", "image": "busybox"}],
                    }
                }
            },
        }
        created = (await cluster.create(CTX, jobs, "default", job)).body
        assert created["metadata"]["generation"] == 1
        suspended = copy.deepcopy(created)
        suspended["spec"]["suspend"] = True
        updated = (await cluster.update(CTX, jobs, "default", "j", suspended)).body
        assert updated["metadata"]["generation"] == 2
        with_status = copy.deepcopy(updated)
        with_status["status"] = {"active": 1}
        result = (
            await cluster.update(CTX, jobs, "default", "j", with_status, subresource="status")
        ).body
        assert result["status"]["active"] == 1
        assert result["metadata"]["generation"] == 2
        template_changed = copy.deepcopy(result)
        template_changed["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx"
        error = await raises(cluster.update(CTX, jobs, "default", "j", template_changed))
        assert error.code == 422
        assert "field is immutable" in error.message

    run(tmp_path, body)


def test_namespace_lifecycle_with_the_real_strategy(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        namespaces = served(cluster.registry, "", "namespaces")
        configmaps = served(cluster.registry, "", "configmaps")
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
        created = (await cluster.create(CTX, namespaces, "", ns)).body
        assert created["spec"]["finalizers"] == ["kubernetes"]
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
        await cluster.create(CTX, configmaps, "team", cm)
        terminating = (await cluster.delete(CTX, namespaces, "", "team", {})).body
        assert terminating["status"]["phase"] == "Terminating"
        await cluster.settle()
        assert cluster.store.get_latest(ObjectKey("namespaces", "", "team")) is None
        assert cluster.store.list("configmaps", "team")[0] == []

    run(tmp_path, body)


def test_invalid_crd_is_refused_by_the_crd_rules(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        crds = served(cluster.registry, "apiextensions.k8s.io", "customresourcedefinitions")
        crd = {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "wrong.example.com"},
            "spec": {
                "group": "example.com",
                "scope": "Namespaced",
                "names": {"plural": "things", "kind": "Thing"},
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {"openAPIV3Schema": {"type": "object"}},
                    }
                ],
            },
        }
        error = await raises(cluster.create(CTX, crds, "", crd))
        assert error.code == 422
        assert error.message.startswith(
            'CustomResourceDefinition.apiextensions.k8s.io "wrong.example.com" is invalid: '
            "metadata.name: Invalid value"
        )
        assert cluster.registry.lookup("example.com", "v1", "things") is None

    run(tmp_path, body)


def test_new_pods_go_through_the_default_admission_chain(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        pods = served(cluster.registry, "", "pods")
        created = (await cluster.create(CTX, pods, "default", pod("p"))).body
        spec = created["spec"]
        assert spec["serviceAccountName"] == "default"
        assert spec["priority"] == 0
        assert {t["key"] for t in spec["tolerations"]} == {
            "node.kubernetes.io/not-ready",
            "node.kubernetes.io/unreachable",
        }
        error = await raises(
            cluster.create(CTX, pods, "default", pod("q", priorityClassName="nope"))
        )
        assert (error.code, error.message) == (
            403,
            'pods "q" is forbidden: no PriorityClass with name nope was found',
        )
        critical = pod("r", priorityClassName="system-node-critical")
        assert (await cluster.create(CTX, pods, "default", critical)).body["spec"][
            "priority"
        ] == 2000001000

    run(tmp_path, body)


def test_new_namespace_has_its_default_account_at_once(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        namespaces = served(cluster.registry, "", "namespaces")
        pods = served(cluster.registry, "", "pods")
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fresh"}}
        await cluster.create(CTX, namespaces, "", ns)
        created = await cluster.create(CTX, pods, "fresh", pod("p"))
        assert created.body["spec"]["serviceAccountName"] == "default"

    run(tmp_path, body)


def test_both_event_apis_share_one_store(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        core = served(cluster.registry, "", "events")
        v1 = cluster.registry.lookup("events.k8s.io", "v1", "events")
        assert v1 is not None
        event = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": "e1"},
            "eventTime": "2026-01-01T00:00:00.000000Z",
            "reportingController": "example.com/ctl",
            "reportingInstance": "ctl-1",
            "action": "Bind",
            "reason": "Scheduled",
            "note": "bound it",
            "type": "Normal",
            "regarding": {"kind": "Pod", "namespace": "default", "name": "p"},
        }
        created = (await cluster.create(CTX, v1, "default", event)).body
        assert created["note"] == "bound it"
        as_core = cluster.get(CTX, core, "default", "e1").body
        assert as_core["apiVersion"] == "v1"
        assert as_core["message"] == "bound it"
        assert as_core["involvedObject"]["name"] == "p"
        listed = cluster.list(CTX, v1, "default", field_selector="regarding.name=p").body
        assert [e["metadata"]["name"] for e in listed["items"]] == ["e1"]
        core_listed = cluster.list(
            CTX, core, "default", field_selector="involvedObject.name=p"
        ).body
        assert [e["metadata"]["name"] for e in core_listed["items"]] == ["e1"]

    run(tmp_path, body)


def test_writes_record_their_field_manager(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        configmaps = served(cluster.registry, "", "configmaps")
        ctx = dataclasses.replace(CTX, field_manager="kubectl-create")
        cm = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "c"},
            "data": {"a": "1"},
        }
        created = (await cluster.create(ctx, configmaps, "default", cm)).body
        managed = created["metadata"]["managedFields"]
        assert [(m["manager"], m["operation"]) for m in managed] == [("kubectl-create", "Update")]
        assert "f:a" in managed[0]["fieldsV1"]["f:data"]

    run(tmp_path, body)


def test_server_side_apply_creates_then_conflicts(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        configmaps = served(cluster.registry, "", "configmaps")
        first = dataclasses.replace(CTX, field_manager="alice")
        second = dataclasses.replace(CTX, field_manager="bob")
        applied = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: '1'\n"
        created = await cluster.patch(
            first, configmaps, "default", "c", "application/apply-patch+yaml", applied
        )
        assert created.code == 201
        assert created.body["metadata"]["managedFields"][0]["manager"] == "alice"
        changed = applied.replace(b"'1'", b"'2'")
        error = await raises(
            cluster.patch(
                second, configmaps, "default", "c", "application/apply-patch+yaml", changed
            )
        )
        assert error.code == 409
        assert error.message.startswith("Apply failed with 1 conflict")
        forced = await cluster.patch(
            second, configmaps, "default", "c", "application/apply-patch+yaml", changed,
            force=True,
        )  # fmt: skip
        assert forced.body["data"] == {"a": "2"}

    run(tmp_path, body)


def test_events_expire_an_hour_after_their_last_write(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        core = served(cluster.registry, "", "events")
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "e1"},
            "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p"},
            "reason": "Scheduled",
            "message": "bound",
            "type": "Normal",
            "source": {"component": "test"},
        }
        created = (await cluster.create(CTX, core, "default", event)).body
        written = event_last_write(created)
        assert written is not None
        lifecycle = cluster.controllers.lifecycle
        assert await lifecycle.expire_events(written + 1800) == 0
        assert cluster.store.get_latest(ObjectKey("events", "default", "e1")) is not None
        assert await lifecycle.expire_events(written + 3601) == 1
        assert cluster.store.get_latest(ObjectKey("events", "default", "e1")) is None

    run(tmp_path, body)
