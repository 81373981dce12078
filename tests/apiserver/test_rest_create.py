"""Create as kube-apiserver does it: system metadata, generateName, namespaces, dryRun, field
validation, the object size limit and upstream's errors."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from numaplane.apiserver import rest_write
from numaplane.apiserver.rest import Cluster
from numaplane.apiserver.rest_common import NAME_ALPHABET, RequestContext, generate_name
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

RFC3339_SECONDS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def test_create_fills_system_metadata(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        result = await cluster.create(CTX, JOBS, "default", obj("Job", "j", spec={"x": 1}))
        assert result.code == 201
        metadata = result.body["metadata"]
        assert re.fullmatch(r"[0-9a-f-]{36}", metadata["uid"])
        assert RFC3339_SECONDS.match(metadata["creationTimestamp"])
        assert metadata["generation"] == 1
        assert int(metadata["resourceVersion"]) == cluster.store.current_rv()
        assert cluster.get(CTX, JOBS, "default", "j").body == result.body

    run_cluster(tmp_path, body)


def test_create_ignores_what_clients_may_not_set(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        given = obj("ConfigMap", "c")
        given["metadata"].update(
            uid="mine",
            resourceVersion="77",
            deletionTimestamp="2020-01-01T00:00:00Z",
            deletionGracePeriodSeconds=5,
            generation=9,
        )
        metadata = (await cluster.create(CTX, CONFIGMAPS, "default", given)).body["metadata"]
        assert metadata["uid"] != "mine"
        assert "deletionTimestamp" not in metadata
        assert "deletionGracePeriodSeconds" not in metadata
        assert "generation" not in metadata  # ConfigMaps do not track generation
        assert metadata["resourceVersion"] != "77"

    run_cluster(tmp_path, body)


def test_generate_name_uses_upstream_alphabet_and_length() -> None:
    name = generate_name("web-")
    assert name.startswith("web-")
    assert len(name) == 9
    assert all(c in NAME_ALPHABET for c in name[4:])
    assert len(generate_name("a" * 80)) == 63


def test_generate_name_creates_distinct_objects(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        names = set()
        for _ in range(5):
            given = {"metadata": {"generateName": "cm-"}, "data": {"a": "1"}}
            names.add(
                (await cluster.create(CTX, CONFIGMAPS, "default", given)).body["metadata"]["name"]
            )
        assert len(names) == 5
        assert all(n.startswith("cm-") for n in names)

    run_cluster(tmp_path, body)


def test_generate_name_gives_up_after_eight_collisions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tries: list[str] = []

    def fixed(base: str) -> str:
        tries.append(base)
        return base + "aaaaa"

    monkeypatch.setattr(rest_write, "generate_name", fixed)

    async def body(cluster: Cluster) -> None:
        await cluster.create(CTX, CONFIGMAPS, "default", obj("ConfigMap", "cm-aaaaa"))
        tries.clear()
        error = await raises(
            cluster.create(CTX, CONFIGMAPS, "default", {"metadata": {"generateName": "cm-"}})
        )
        assert (error.code, error.reason) == (409, "AlreadyExists")
        assert error.message == (
            'configmaps "cm-aaaaa" already exists, the server was not able to generate a '
            "unique name for the object"
        )
        assert len(tries) == 8

    run_cluster(tmp_path, body)


@dataclass(frozen=True)
class CreateErrorCase:
    name: str
    namespace: str
    body: dict[str, Any]
    code: int
    reason: str
    message: str
    info: Any = CONFIGMAPS
    setup: tuple[dict[str, Any], ...] = ()


CREATE_ERRORS = [
    CreateErrorCase(
        "exists", "default", obj("ConfigMap", "dup"), 409, "AlreadyExists",
        'configmaps "dup" already exists', setup=(obj("ConfigMap", "dup"),),
    ),
    CreateErrorCase(
        "namespace-mismatch", "default", obj("ConfigMap", "c", namespace="other"), 400,
        "BadRequest",
        "the namespace of the provided object does not match the namespace sent on the request",
    ),
    CreateErrorCase(
        "no-namespace", "nope", obj("ConfigMap", "c", namespace=""), 404, "NotFound",
        'namespaces "nope" not found',
    ),
    CreateErrorCase(
        "invalid", "default", obj("Job", "j", spec={"bad": True}), 422, "Invalid",
        'Job.batch "j" is invalid: spec.bad: Invalid value: true: must be false', info=JOBS,
    ),
    CreateErrorCase(
        "no-name", "default", obj("ConfigMap", ""), 422, "Invalid",
        'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is '
        "required",
    ),
    CreateErrorCase(
        "too-large", "default", obj("ConfigMap", "big", data={"a": "x" * (1536 * 1024)}), 500,
        "", "etcdserver: request is too large",
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", CREATE_ERRORS, ids=[c.name for c in CREATE_ERRORS])
def test_create_errors(tmp_path: Path, case: CreateErrorCase) -> None:
    async def body(cluster: Cluster) -> None:
        for given in case.setup:
            await cluster.create(CTX, case.info, case.namespace, given)
        error = await raises(cluster.create(CTX, case.info, case.namespace, case.body))
        assert (error.code, error.reason, error.message) == (case.code, case.reason, case.message)

    run_cluster(tmp_path, body)


def test_create_in_terminating_namespace_is_forbidden(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        await cluster.create(CTX, NAMESPACES, "", obj("Namespace", "doomed", namespace=""))
        # A pod with a finalizer keeps the namespace terminating.
        pod = obj("Pod", "held", namespace="doomed")
        pod["metadata"]["finalizers"] = ["example.com/hold"]
        await cluster.create(CTX, PODS, "doomed", pod)
        await cluster.delete(CTX, NAMESPACES, "", "doomed", {})
        await cluster.settle()
        error = await raises(
            cluster.create(CTX, CONFIGMAPS, "doomed", obj("ConfigMap", "c", namespace="doomed"))
        )
        assert (error.code, error.reason) == (403, "Forbidden")
        assert error.message == (
            'configmaps "c" is forbidden: unable to create new content in namespace doomed '
            "because it is being terminated"
        )
        assert error.details is not None
        assert error.details["causes"][0]["reason"] == "NamespaceTerminating"

    run_cluster(tmp_path, body)


def test_dry_run_create_stores_nothing(tmp_path: Path) -> None:
    async def body(cluster: Cluster) -> None:
        before = cluster.store.current_rv()
        result = await cluster.create(DRY, CONFIGMAPS, "default", obj("ConfigMap", "c"))
        assert result.code == 201
        assert result.body["metadata"]["uid"]
        assert "resourceVersion" not in result.body["metadata"]
        assert cluster.store.current_rv() == before
        error = await raises(_get(cluster, "c"))
        assert error.code == 404

    run_cluster(tmp_path, body)


async def _get(cluster: Cluster, name: str) -> Any:
    return cluster.get(CTX, CONFIGMAPS, "default", name)


@dataclass(frozen=True)
class ValidationCase:
    name: str
    directive: str
    warnings: tuple[str, ...]
    message: str = ""


VALIDATION = [
    ValidationCase(
        "strict", "Strict", (),
        'strict decoding error: unknown field "spec.foo", unknown field "spec.bar"',
    ),
    ValidationCase("warn", "Warn", ('unknown field "spec.foo"', 'unknown field "spec.bar"')),
    ValidationCase("ignore", "Ignore", ()),
]  # fmt: skip


@pytest.mark.parametrize("case", VALIDATION, ids=[c.name for c in VALIDATION])
def test_field_validation(tmp_path: Path, case: ValidationCase) -> None:
    def unknown(info: Any, body: dict[str, Any]) -> list[str]:
        return [f"spec.{k}" for k in body.get("spec", {}) if k in ("foo", "bar")]

    async def body(cluster: Cluster) -> None:
        ctx = dataclasses.replace(CTX, field_validation=case.directive)
        given = obj("Job", "j", spec={"foo": 1, "bar": 2})
        if case.message:
            error = await raises(cluster.create(ctx, JOBS, "default", given))
            assert (error.code, error.message) == (400, case.message)
            return
        result = await cluster.create(ctx, JOBS, "default", given)
        assert result.warnings == case.warnings

    run_cluster(tmp_path, body, unknown_fields=unknown)


def test_request_context_defaults_to_strict() -> None:
    assert RequestContext(CTX.user).field_validation == "Strict"
