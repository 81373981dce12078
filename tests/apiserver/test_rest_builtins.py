"""The verbs over the real built-in kinds (``numaplane.apiserver.kinds``): what their
strategies add to the REST rules — pods' graceful deletion from their defaults, Jobs'
generation and status, namespaces' finalizer and phase, CRDs validated by the crd package."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from numaplane.apiserver.registry import Registry
from numaplane.apiserver.resource import ResourceInfo
from numaplane.apiserver.rest import Cluster
from numaplane.apiserver.rest_core import no_unknown_fields
from numaplane.apiserver.storage import ObjectKey
from tests.apiserver.rest_support import CTX, raises

pytestmark = pytest.mark.timeout(120)

T = TypeVar("T")


def run(tmp_path: Path, body: Callable[[Cluster], Awaitable[T]]) -> T:
    async def main() -> T:
        cluster = await Cluster.open("c1", tmp_path, unknown_fields=no_unknown_fields)
        try:
            await cluster.settle()
            return await body(cluster)
        finally:
            await cluster.close()

    return asyncio.run(main())


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
