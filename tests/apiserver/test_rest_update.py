"""Update as kube-apiserver does it: optimistic concurrency, generation, the status
subresource, update-as-create, no-op updates, pods/binding and patches."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from numaplane.apiserver.errors import OBJECT_MODIFIED
from numaplane.apiserver.rest import Cluster
from tests.apiserver.rest_support import (
    CONFIGMAPS,
    CTX,
    DRY,
    JOBS,
    PODS,
    SERVICEACCOUNTS,
    obj,
    raises,
    run_cluster,
)

pytestmark = pytest.mark.timeout(120)


def test_stale_resource_version_conflicts(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        first = (await cluster.create(CTX, CONFIGMAPS, "default", obj("ConfigMap", "c"))).body
        changed = copy.deepcopy(first)
        changed["data"] = {"a": "1"}
        await cluster.update(CTX, CONFIGMAPS, "default", "c", changed)
        stale = copy.deepcopy(first)
        stale["data"] = {"a": "2"}
        error = await raises(cluster.update(CTX, CONFIGMAPS, "default", "c", stale))
        assert (error.code, error.reason) == (409, "Conflict")
        assert (
            error.message == f'Operation cannot be fulfilled on configmaps "c": {OBJECT_MODIFIED}'
        )

    run_cluster(tmp_path, body)


def test_update_without_resource_version_is_unconditional_for_builtins(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await cluster.create(CTX, CONFIGMAPS, "default", obj("ConfigMap", "c"))
        result = await cluster.update(
            CTX, CONFIGMAPS, "default", "c", obj("ConfigMap", "c", data={"a": "1"})
        )
        assert result.code == 200
        assert result.body["data"] == {"a": "1"}

    run_cluster(tmp_path, body)


@dataclass(frozen=True)
class GenerationCase:
    name: str
    change: dict[str, Any]
    generation: int


GENERATION = [
    GenerationCase("spec-bumps", {"spec": {"x": 2}}, 2),
    GenerationCase("labels-do-not", {"metadata": {"labels": {"a": "b"}}}, 1),
    GenerationCase("status-ignored-on-main-resource", {"status": {"active": 1}}, 1),
]


@pytest.mark.parametrize("case", GENERATION, ids=[c.name for c in GENERATION])
def test_generation_follows_spec_changes(tmp_path: Path, case: GenerationCase) -> None:
    async def body(cluster: Cluster) -> None:
        job = (await cluster.create(CTX, JOBS, "default", obj("Job", "j", spec={"x": 1}))).body
        new = copy.deepcopy(job)
        for key, value in case.change.items():
            if key == "metadata":
                new["metadata"].update(value)
            else:
                new[key] = value
        result = await cluster.update(CTX, JOBS, "default", "j", new)
        assert result.body["metadata"]["generation"] == case.generation
        assert "status" not in result.body

    run_cluster(tmp_path, body)


def test_status_subresource_changes_only_status(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        job = (await cluster.create(CTX, JOBS, "default", obj("Job", "j", spec={"x": 1}))).body
        new = copy.deepcopy(job)
        new["spec"] = {"x": 99}
        new["status"] = {"active": 1}
        result = await cluster.update(CTX, JOBS, "default", "j", new, subresource="status")
        assert result.body["spec"] == {"x": 1}
        assert result.body["status"] == {"active": 1}
        assert result.body["metadata"]["generation"] == 1

    run_cluster(tmp_path, body)


def test_update_as_create_where_the_kind_allows(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        created = await cluster.update(
            CTX, SERVICEACCOUNTS, "default", "robot", obj("ServiceAccount", "robot")
        )
        assert created.code == 201
        error = await raises(
            cluster.update(CTX, CONFIGMAPS, "default", "absent", obj("ConfigMap", "absent"))
        )
        assert (error.code, error.message) == (404, 'configmaps "absent" not found')

    run_cluster(tmp_path, body)


def test_noop_update_keeps_resource_version(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        first = (await cluster.create(CTX, CONFIGMAPS, "default", obj("ConfigMap", "c"))).body
        again = await cluster.update(CTX, CONFIGMAPS, "default", "c", copy.deepcopy(first))
        assert again.body["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]

    run_cluster(tmp_path, body)


def test_update_keeps_uid_and_creation_timestamp(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        first = (await cluster.create(CTX, CONFIGMAPS, "default", obj("ConfigMap", "c"))).body
        new = copy.deepcopy(first)
        del new["metadata"]["uid"]
        new["metadata"]["creationTimestamp"] = "2000-01-01T00:00:00Z"
        new["data"] = {"a": "1"}
        result = (await cluster.update(CTX, CONFIGMAPS, "default", "c", new)).body
        assert result["metadata"]["uid"] == first["metadata"]["uid"]
        assert result["metadata"]["creationTimestamp"] == first["metadata"]["creationTimestamp"]

    run_cluster(tmp_path, body)


@dataclass(frozen=True)
class UpdateErrorCase:
    name: str
    url_name: str
    metadata: dict[str, Any]
    code: int
    message: str


UPDATE_ERRORS = [
    UpdateErrorCase(
        "name-mismatch", "c", {"name": "other"}, 400,
        "the name of the object (other) does not match the name on the URL (c)",
    ),
    UpdateErrorCase(
        "uid-precondition", "c", {"name": "c", "uid": "not-it"}, 409,
        'Operation cannot be fulfilled on configmaps "c": Precondition failed: UID in '
        "precondition: not-it, UID in object meta: ",
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", UPDATE_ERRORS, ids=[c.name for c in UPDATE_ERRORS])
def test_update_errors(tmp_path: Path, case: UpdateErrorCase) -> None:
    async def body(cluster: Cluster) -> None:
        await cluster.create(CTX, CONFIGMAPS, "default", obj("ConfigMap", "c"))
        given = obj("ConfigMap", "c")
        given["metadata"].update(case.metadata)
        error = await raises(cluster.update(CTX, CONFIGMAPS, "default", case.url_name, given))
        assert error.code == case.code
        assert error.message.startswith(case.message)

    run_cluster(tmp_path, body)


def test_dry_run_update_stores_nothing(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await cluster.create(CTX, CONFIGMAPS, "default", obj("ConfigMap", "c"))
        before = cluster.store.current_rv()
        result = await cluster.update(
            DRY, CONFIGMAPS, "default", "c", obj("ConfigMap", "c", data={"a": "1"})
        )
        assert result.body["data"] == {"a": "1"}
        assert cluster.store.current_rv() == before
        assert "data" not in cluster.get(CTX, CONFIGMAPS, "default", "c").body

    run_cluster(tmp_path, body)


@dataclass(frozen=True)
class BindCase:
    name: str
    binding: dict[str, Any]
    code: int
    message: str


BIND_ERRORS = [
    BindCase(
        "already-bound", {"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n2"}},
        409, 'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to '
        'node "n1"',
    ),
    BindCase(
        "no-target", {"metadata": {"name": "p"}, "target": {}}, 422,
        'Binding "p" is invalid: target.name: Required value',
    ),
    BindCase(
        "name-mismatch", {"metadata": {"name": "q"}, "target": {"name": "n1"}}, 400,
        "name in URL does not match name in Binding object",
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", BIND_ERRORS, ids=[c.name for c in BIND_ERRORS])
def test_binding(tmp_path: Path, case: BindCase) -> None:
    async def body(cluster: Cluster) -> None:
        await cluster.create(CTX, PODS, "default", obj("Pod", "p", spec={}))
        first = {"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}}
        result = await cluster.create(CTX, PODS, "default", first, subresource="binding", name="p")
        assert (result.code, result.body["status"]) == (201, "Success")
        pod = cluster.get(CTX, PODS, "default", "p").body
        assert pod["spec"]["nodeName"] == "n1"
        assert pod["status"]["conditions"][0]["type"] == "PodScheduled"
        assert pod["status"]["conditions"][0]["status"] == "True"
        error = await raises(
            cluster.create(CTX, PODS, "default", case.binding, subresource="binding", name="p")
        )
        assert (error.code, error.message) == (case.code, case.message)

    run_cluster(tmp_path, body)


@dataclass(frozen=True)
class PatchCase:
    name: str
    patch_type: str
    patch: Any
    data: dict[str, str]


PATCHES = [
    PatchCase(
        "json", "application/json-patch+json",
        [{"op": "add", "path": "/data/b", "value": "2"}], {"a": "1", "b": "2"},
    ),
    PatchCase("merge", "application/merge-patch+json", {"data": {"a": None, "c": "3"}}, {"c": "3"}),
    PatchCase(
        "strategic", "application/strategic-merge-patch+json", {"data": {"b": "2"}},
        {"a": "1", "b": "2"},
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", PATCHES, ids=[c.name for c in PATCHES])
def test_patch_types(tmp_path: Path, case: PatchCase) -> None:
    pytest.importorskip("numaplane.apiserver.patch")

    async def body(cluster: Cluster) -> None:
        await cluster.create(CTX, CONFIGMAPS, "default", obj("ConfigMap", "c", data={"a": "1"}))
        result = await cluster.patch(
            CTX, CONFIGMAPS, "default", "c", case.patch_type, json.dumps(case.patch).encode()
        )
        assert result.body["data"] == case.data

    run_cluster(tmp_path, body)


def test_patch_of_missing_object_is_not_found(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        error = await raises(
            cluster.patch(CTX, CONFIGMAPS, "default", "x", "application/merge-patch+json", b"{}")
        )
        assert (error.code, error.message) == (404, 'configmaps "x" not found')

    run_cluster(tmp_path, body)


def test_patch_with_unknown_content_type(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await cluster.create(CTX, CONFIGMAPS, "default", obj("ConfigMap", "c"))
        error = await raises(cluster.patch(CTX, CONFIGMAPS, "default", "c", "text/plain", b"{}"))
        assert (error.code, error.reason) == (415, "UnsupportedMediaType")

    run_cluster(tmp_path, body)


def test_apply_needs_a_field_manager(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        error = await raises(
            cluster.patch(CTX, CONFIGMAPS, "default", "c", "application/apply-patch+yaml", b"{}")
        )
        assert (error.code, error.message) == (
            422,
            'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required '
            "for apply patch",
        )

    run_cluster(tmp_path, body)
