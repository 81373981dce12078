"""CustomResourceDefinitions through the REST verbs: a created CRD is served at once for each
served version, its objects are stored at the storage version and read at any served one,
custom resources need a resourceVersion to update and are validated and pruned by their
schema, and deleting the CRD deletes its objects first."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from numaplane.apiserver.registry import CRD_RESOURCE
from numaplane.apiserver.rest import Cluster
from numaplane.apiserver.storage import ObjectKey
from tests.apiserver.rest_support import CRDS, CTX, raises, run_cluster

pytestmark = pytest.mark.timeout(120)

WIDGETS = Path(__file__).parent.parent / "data" / "crds" / "widgets.yaml"


def widgets_crd() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(WIDGETS.read_text())
    return loaded


def widget(name: str, version: str = "v1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"example.com/{version}",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"color": "red", **spec},
    }


async def with_crd(cluster: Cluster) -> None:
    result = await cluster.create(CTX, CRDS, "", widgets_crd())
    assert result.code == 201
    conditions = {c["type"]: c["status"] for c in result.body["status"]["conditions"]}
    assert conditions["Established"] == "True"
    assert "customresourcecleanup.apiextensions.k8s.io" in result.body["metadata"]["finalizers"]


def test_crd_is_served_for_each_served_version(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        assert cluster.registry.lookup("example.com", "v1", "widgets") is None
        await with_crd(cluster)
        assert cluster.registry.lookup("example.com", "v1", "widgets") is not None
        assert cluster.registry.lookup("example.com", "v1beta1", "widgets") is not None
        assert cluster.registry.lookup("example.com", "v1alpha1", "widgets") is None
        assert cluster.registry.preferred_version("example.com") == "v1"

    run_cluster(tmp_path, body)


def test_custom_resources_are_stored_at_the_storage_version(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await with_crd(cluster)
        beta = cluster.registry.lookup("example.com", "v1beta1", "widgets")
        v1 = cluster.registry.lookup("example.com", "v1", "widgets")
        assert beta is not None
        assert v1 is not None
        created = await cluster.create(CTX, beta, "default", widget("w", "v1beta1"))
        assert created.body["apiVersion"] == "example.com/v1beta1"
        stored = cluster.store.get(ObjectKey("widgets.example.com", "default", "w"))
        assert stored is not None
        assert stored["apiVersion"] == "example.com/v1"
        assert cluster.get(CTX, v1, "default", "w").body["apiVersion"] == "example.com/v1"
        listed = cluster.list(CTX, beta, "default").body
        assert listed["items"][0]["apiVersion"] == "example.com/v1beta1"
        assert listed["items"][0]["kind"] == "Widget"

    run_cluster(tmp_path, body)


def test_custom_resource_schema_defaults_and_validation(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await with_crd(cluster)
        v1 = cluster.registry.lookup("example.com", "v1", "widgets")
        assert v1 is not None
        created = (await cluster.create(CTX, v1, "default", widget("w"))).body
        assert created["spec"]["replicas"] == 1
        assert created["metadata"]["generation"] == 1
        error = await raises(cluster.create(CTX, v1, "default", widget("bad", replicas=11)))
        assert error.code == 422
        assert error.message.startswith('Widget.example.com "bad" is invalid: ')
        changed = copy.deepcopy(created)
        changed["spec"]["color"] = "blue"
        error = await raises(cluster.update(CTX, v1, "default", "w", changed))
        assert error.code == 422
        assert "color is immutable" in error.message

    run_cluster(tmp_path, body)


def test_custom_resource_update_needs_a_resource_version(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await with_crd(cluster)
        v1 = cluster.registry.lookup("example.com", "v1", "widgets")
        assert v1 is not None
        await cluster.create(CTX, v1, "default", widget("w"))
        error = await raises(cluster.update(CTX, v1, "default", "w", widget("w", replicas=2)))
        assert (error.code, error.message) == (
            422,
            'widgets.example.com "w" is invalid: metadata.resourceVersion: Invalid value: 0x0: '
            "must be specified for an update",
        )

    run_cluster(tmp_path, body)


def test_unknown_custom_resource_fields_under_strict_validation(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await with_crd(cluster)
        v1 = cluster.registry.lookup("example.com", "v1", "widgets")
        assert v1 is not None
        error = await raises(cluster.create(CTX, v1, "default", widget("w", foo=1)))
        assert (error.code, error.message) == (
            400,
            'strict decoding error: unknown field "spec.foo"',
        )
        ignore = dataclasses.replace(CTX, field_validation="Ignore")
        created = (await cluster.create(ignore, v1, "default", widget("w", foo=1))).body
        assert "foo" not in created["spec"]

    run_cluster(tmp_path, body)


def test_deleting_the_crd_deletes_its_objects_first(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await with_crd(cluster)
        v1 = cluster.registry.lookup("example.com", "v1", "widgets")
        assert v1 is not None
        for name in ("a", "b"):
            await cluster.create(CTX, v1, "default", widget(name))
        await cluster.delete(CTX, CRDS, "", "widgets.example.com", {})
        await cluster.settle()
        assert cluster.store.get_latest(ObjectKey(CRD_RESOURCE, "", "widgets.example.com")) is None
        assert cluster.store.list("widgets.example.com")[0] == []
        assert cluster.registry.lookup("example.com", "v1", "widgets") is None

    run_cluster(tmp_path, body)


def test_crds_are_served_again_after_restart(tmp_path: Path) -> None:
    async def first(cluster: Cluster) -> None:
        await with_crd(cluster)

    async def second(cluster: Cluster) -> None:
        assert cluster.registry.lookup("example.com", "v1", "widgets") is not None

    run_cluster(tmp_path, first)
    run_cluster(tmp_path, second)


def test_scale_subresource(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await with_crd(cluster)
        v1 = cluster.registry.lookup("example.com", "v1", "widgets")
        assert v1 is not None
        await cluster.create(CTX, v1, "default", widget("w", replicas=2))
        scale = cluster.get(CTX, v1, "default", "w", subresource="scale").body
        assert scale["kind"] == "Scale"
        assert scale["apiVersion"] == "autoscaling/v1"
        assert scale["spec"] == {"replicas": 2}
        scale["spec"]["replicas"] = 3
        updated = (await cluster.update(CTX, v1, "default", "w", scale, subresource="scale")).body
        assert updated["spec"] == {"replicas": 3}
        patched = await cluster.patch(
            CTX, v1, "default", "w", "application/merge-patch+json",
            b'{"spec":{"replicas":4}}', subresource="scale",
        )  # fmt: skip
        assert patched.body["spec"] == {"replicas": 4}
        stored = cluster.get(CTX, v1, "default", "w").body
        assert stored["spec"]["replicas"] == 4
        assert stored["metadata"]["generation"] == 3
        error = await raises(cluster.update(CTX, v1, "default", "w", scale, subresource="scale"))
        assert error.code == 409

    run_cluster(tmp_path, body)


def test_dry_run_crd_delete_changes_nothing(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await with_crd(cluster)
        dry = dataclasses.replace(CTX, dry_run=True)
        held = (await cluster.delete(dry, CRDS, "", "widgets.example.com", {})).body
        assert held["metadata"]["deletionTimestamp"]
        await cluster.settle()
        v1 = cluster.registry.lookup("example.com", "v1", "widgets")
        assert v1 is not None
        assert (await cluster.create(CTX, v1, "default", widget("w"))).code == 201
        stored = cluster.store.get_latest(ObjectKey(CRD_RESOURCE, "", "widgets.example.com"))
        assert stored is not None
        assert "deletionTimestamp" not in stored["metadata"]

    run_cluster(tmp_path, body)
