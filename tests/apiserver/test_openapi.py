"""OpenAPI documents: built-in definitions, v3 index and group-version documents, v2, and the
unknown fields strict field validation reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest

from numaplane.apiserver import openapi, openapi_builtin
from numaplane.apiserver.discovery import document_hash
from numaplane.apiserver.openapi_paths import group_identifier
from numaplane.apiserver.resource import ResourceInfo
from tests.apiserver.info_support import info

#: A small custom resource schema: typed spec fields, a free-form subtree, an embedded object.
QUEUE_SCHEMA: dict[str, Any] = {
    "description": "Queue is a test queue.",
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "description": "spec of the queue",
            "type": "object",
            "properties": {
                "size": {"type": "integer", "minimum": 0},
                "flavors": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                },
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {},
                },
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            },
            "x-kubernetes-validations": [{"rule": "self.size >= 0", "message": "size"}],
        },
        "status": {
            "type": "object",
            "nullable": True,
            "properties": {"ready": {"type": "boolean"}},
        },
    },
}

PODS = info("", "v1", "pods", "Pod", True, subresources=("status", "binding"))
NAMESPACES = info("", "v1", "namespaces", "Namespace", False, subresources=("status",))
JOBS = info("batch", "v1", "jobs", "Job", True, subresources=("status",))
SSAR = info(
    "authorization.k8s.io",
    "v1",
    "selfsubjectaccessreviews",
    "SelfSubjectAccessReview",
    False,
    verbs=("create",),
)
QUEUES = info(
    "queues.example.com",
    "v1beta1",
    "queues",
    "Queue",
    False,
    subresources=("status",),
    extra={"openapi_schema": QUEUE_SCHEMA},
)
QUEUES_ALPHA = info(
    "queues.example.com",
    "v1alpha1",
    "queues",
    "Queue",
    False,
    extra={"openapi_schema": QUEUE_SCHEMA},
)
ALL = [PODS, NAMESPACES, JOBS, SSAR, QUEUES, QUEUES_ALPHA]


@pytest.fixture(scope="module")
def docs() -> openapi.OpenAPIDocuments:
    return openapi.OpenAPIDocuments(ALL)


def test_builtin_definitions_keep_kubectls_patch_metadata() -> None:
    defs = openapi_builtin.builtin_definitions()
    containers = defs["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-strategy"] == "merge"
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["items"] == {"$ref": "#/definitions/io.k8s.api.core.v1.Container"}
    owners = defs["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"][
        "ownerReferences"
    ]
    assert owners["x-kubernetes-patch-merge-key"] == "uid"
    pod = defs["io.k8s.api.core.v1.Pod"]
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Pod", "version": "v1"}]
    # JSON Schema's nullable type lists and enum pins are undone.
    assert pod["type"] == "object"
    assert pod["properties"]["apiVersion"] == {
        "description": pod["properties"]["apiVersion"]["description"],
        "type": "string",
    }
    assert defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"] == {
        "type": "string",
        "format": "int-or-string",
    }
    assert defs["io.k8s.apimachinery.pkg.api.resource.Quantity"] == {"type": "string"}


@dataclass(frozen=True)
class NameCase:
    name: str
    group: str
    version: str
    kind: str
    expected: str | None


@pytest.mark.parametrize(
    "case",
    [
        NameCase("core", "", "v1", "Pod", "io.k8s.api.core.v1.Pod"),
        NameCase("batch", "batch", "v1", "Job", "io.k8s.api.batch.v1.Job"),
        NameCase(
            "apiextensions",
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
        ),
        NameCase(
            "list", "rbac.authorization.k8s.io", "v1", "RoleList", "io.k8s.api.rbac.v1.RoleList"
        ),
        NameCase("unknown", "example.com", "v1", "Thing", None),
    ],
    ids=lambda c: c.name,
)
def test_definition_names(case: NameCase) -> None:
    assert openapi_builtin.definition_name(case.group, case.version, case.kind) == case.expected


def test_v3_index_points_at_hashed_documents(docs: openapi.OpenAPIDocuments) -> None:
    root = docs.v3_root()
    assert list(root["paths"]) == [
        "api/v1",
        "apis/authorization.k8s.io/v1",
        "apis/batch/v1",
        "apis/queues.example.com/v1beta1",
        "apis/queues.example.com/v1alpha1",
    ]
    for path, entry in root["paths"].items():
        found = docs.v3_bytes(path)
        assert found is not None
        data, digest = found
        assert entry["serverRelativeURL"] == f"/openapi/v3/{path}?hash={digest}"
        assert digest == document_hash(data)


def test_documents_are_deterministic() -> None:
    one = openapi.OpenAPIDocuments(ALL).v3_root()
    two = openapi.OpenAPIDocuments(list(reversed(ALL))).v3_root()
    assert one == two


def test_unknown_group_version_has_no_document(docs: openapi.OpenAPIDocuments) -> None:
    assert docs.v3_document("apis/apps/v1") is None
    assert docs.v3_bytes("api/v2") is None


def _patch_supports(doc: dict[str, Any], group: str, version: str, kind: str, param: str) -> bool:
    """kubectl 1.32's test (queryParamVerifierV3): the first PATCH operation of the kind must
    list the query parameter."""
    for item in doc["paths"].values():
        op = item.get("patch")
        if op is None:
            continue
        if op["x-kubernetes-group-version-kind"] != {
            "group": group,
            "version": version,
            "kind": kind,
        }:
            continue
        return any(p["name"] == param and p["in"] == "query" for p in op["parameters"])
    return False


@dataclass(frozen=True)
class ValidationCase:
    name: str
    path: str
    group: str
    version: str
    kind: str


@pytest.mark.parametrize(
    "case",
    [
        ValidationCase("pod", "api/v1", "", "v1", "Pod"),
        ValidationCase("namespace", "api/v1", "", "v1", "Namespace"),
        ValidationCase("job", "apis/batch/v1", "batch", "v1", "Job"),
        ValidationCase(
            "custom resource",
            "apis/queues.example.com/v1beta1",
            "queues.example.com",
            "v1beta1",
            "Queue",
        ),
    ],
    ids=lambda c: c.name,
)
def test_kubectl_sees_server_side_field_validation(
    docs: openapi.OpenAPIDocuments, case: ValidationCase
) -> None:
    doc = docs.v3_document(case.path)
    assert doc is not None
    assert _patch_supports(doc, case.group, case.version, case.kind, "fieldValidation")
    assert not _patch_supports(doc, case.group, case.version, case.kind, "noSuchParameter")


def test_v3_core_document(docs: openapi.OpenAPIDocuments) -> None:
    doc = docs.v3_document("api/v1")
    assert doc is not None
    assert doc["openapi"] == "3.0.0"
    schemas = doc["components"]["schemas"]
    pod = schemas["io.k8s.api.core.v1.Pod"]
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Pod", "version": "v1"}]
    assert pod["properties"]["spec"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.api.core.v1.PodSpec"}
    ]
    # Everything a schema reaches is in the document, and nothing refers outside it.
    refs = set(openapi_builtin.references(doc, openapi_builtin.V3_REF))
    assert refs <= set(schemas)
    assert "io.k8s.api.core.v1.Container" in schemas
    assert "io.k8s.api.batch.v1.Job" not in schemas
    assert schemas["io.k8s.apimachinery.pkg.api.resource.Quantity"]["oneOf"] == [
        {"type": "string"},
        {"type": "number"},
    ]
    paths = doc["paths"]
    assert set(paths) == {
        "/api/v1/namespaces",
        "/api/v1/namespaces/{name}",
        "/api/v1/namespaces/{name}/status",
        "/api/v1/namespaces/{namespace}/pods",
        "/api/v1/namespaces/{namespace}/pods/{name}",
        "/api/v1/namespaces/{namespace}/pods/{name}/status",
        "/api/v1/pods",
    }
    patch = paths["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"]
    assert patch["operationId"] == "patchCoreV1NamespacedPod"
    assert patch["x-kubernetes-action"] == "patch"
    assert "application/strategic-merge-patch+json" in patch["requestBody"]["content"]
    assert paths["/api/v1/pods"]["get"]["operationId"] == "listCoreV1PodForAllNamespaces"
    assert (
        paths["/api/v1/namespaces/{name}/status"]["patch"]["operationId"]
        == "patchCoreV1NamespaceStatus"
    )


def test_create_only_resource_has_only_create(docs: openapi.OpenAPIDocuments) -> None:
    doc = docs.v3_document("apis/authorization.k8s.io/v1")
    assert doc is not None
    assert list(doc["paths"]) == ["/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"]
    item = doc["paths"]["/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"]
    assert set(item) == {"post", "parameters"}


def test_custom_resource_document(docs: openapi.OpenAPIDocuments) -> None:
    doc = docs.v3_document("apis/queues.example.com/v1beta1")
    assert doc is not None
    schemas = doc["components"]["schemas"]
    queue = schemas["com.example.queues.v1beta1.Queue"]
    gvk = {"group": "queues.example.com", "kind": "Queue", "version": "v1beta1"}
    assert queue["x-kubernetes-group-version-kind"] == [gvk]
    assert queue["description"] == "Queue is a test queue."
    assert queue["properties"]["metadata"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    ]
    # v3 keeps what OpenAPI 3 can say (nullable, CEL rules, list types).
    assert queue["properties"]["status"]["nullable"] is True
    assert queue["properties"]["spec"]["x-kubernetes-validations"] == [
        {"rule": "self.size >= 0", "message": "size"}
    ]
    listed = schemas["com.example.queues.v1beta1.QueueList"]
    assert listed["x-kubernetes-group-version-kind"] == [{**gvk, "kind": "QueueList"}]
    assert listed["properties"]["items"]["items"] == {
        "$ref": "#/components/schemas/com.example.queues.v1beta1.Queue"
    }
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in schemas
    patch = doc["paths"]["/apis/queues.example.com/v1beta1/queues/{name}"]["patch"]
    # Custom resources take no strategic merge patch.
    assert set(patch["requestBody"]["content"]) == {
        "application/apply-patch+yaml",
        "application/json-patch+json",
        "application/merge-patch+json",
    }
    assert patch["operationId"] == "patchQueuesExampleComV1beta1Queue"


def test_v2_document(docs: openapi.OpenAPIDocuments) -> None:
    doc = docs.v2_document()
    assert doc["swagger"] == "2.0"
    defs = doc["definitions"]
    assert "io.k8s.api.core.v1.Pod" in defs
    assert "com.example.queues.v1alpha1.Queue" in defs
    # Swagger 2.0 has no nullable.
    assert "nullable" not in defs["com.example.queues.v1beta1.Queue"]["properties"]["status"]
    assert set(openapi_builtin.references(doc)) <= set(defs)
    patch = doc["paths"]["/apis/batch/v1/namespaces/{namespace}/jobs/{name}"]["patch"]
    params = {p["name"]: p for p in patch["parameters"]}
    assert params["body"]["schema"] == {
        "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
    }
    assert params["fieldValidation"]["type"] == "string"
    data, digest = docs.v2_bytes()
    assert orjson.loads(data) == doc
    assert digest == document_hash(data)


@pytest.mark.parametrize(
    ("group", "expected"),
    [
        ("", "Core"),
        ("batch", "Batch"),
        ("rbac.authorization.k8s.io", "RbacAuthorization"),
        ("apiextensions.k8s.io", "Apiextensions"),
        ("kueue.x-k8s.io", "KueueXK8sIo"),
    ],
)
def test_group_identifier(group: str, expected: str) -> None:
    assert group_identifier(group) == expected


@dataclass(frozen=True)
class UnknownCase:
    name: str
    info: ResourceInfo
    obj: dict[str, Any]
    expected: list[str] = field(default_factory=list)


POD_OK: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "p",
        "labels": {"any": "thing"},
        "managedFields": [{"fieldsV1": {"f:x": {}}}],
    },
    "spec": {
        "containers": [
            {
                "name": "c",
                "image": "i",
                "resources": {"limits": {"cpu": "1"}},
                "ports": [{"containerPort": 80}],
                "livenessProbe": {"httpGet": {"port": "http"}},
            }
        ],
        "nodeSelector": {"a": "b"},
    },
    "status": {"phase": "Running"},
}


@pytest.mark.parametrize(
    "case",
    [
        UnknownCase("known pod", PODS, POD_OK),
        UnknownCase(
            "spec field", PODS, {**POD_OK, "spec": {**POD_OK["spec"], "foo": 1}}, ["spec.foo"]
        ),
        UnknownCase(
            "container field, then metadata field, in document order",
            PODS,
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "spec": {"containers": [{"name": "a"}, {"name": "b", "imagePullPolicyX": "x"}]},
                "metadata": {"name": "p", "bogus": True},
            },
            ["spec.containers[1].imagePullPolicyX", "metadata.bogus"],
        ),
        UnknownCase(
            "top level", JOBS, {"apiVersion": "batch/v1", "kind": "Job", "extra": {}}, ["extra"]
        ),
        UnknownCase(
            "job template",
            JOBS,
            {"spec": {"template": {"spec": {"containers": [{"name": "c", "args2": []}]}}}},
            ["spec.template.spec.containers[0].args2"],
        ),
        UnknownCase(
            "custom resource",
            QUEUES,
            {
                "apiVersion": "queues.example.com/v1beta1",
                "kind": "Queue",
                "metadata": {"name": "q", "nope": 1},
                "spec": {
                    "size": 1,
                    "sized": 2,
                    "flavors": [{"name": "a", "weight": 1}],
                    "free": {"anything": {"goes": [1]}},
                    "labels": {"x": "y"},
                    "template": {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": {"name": "t", "oops": 1},
                    },
                },
                "status": {"ready": True, "why": "x"},
            },
            [
                "metadata.nope",
                "spec.sized",
                "spec.flavors[0].weight",
                "spec.template.metadata.oops",
                "status.why",
            ],
        ),
        UnknownCase(
            "kind without a schema",
            info("example.com", "v1", "things", "Thing", True),
            {"spec": {"x": 1}},
        ),
    ],
    ids=lambda c: c.name,
)
def test_unknown_fields(case: UnknownCase) -> None:
    assert openapi.unknown_fields(case.info, case.obj) == case.expected


def test_strict_decoding_message() -> None:
    assert openapi.strict_decoding_message(["spec.foo", "spec.bar"]) == (
        'strict decoding error: unknown field "spec.foo", unknown field "spec.bar"'
    )


def test_entry_points_share_documents_of_one_served_set() -> None:
    first = openapi.documents_for(ALL)
    assert openapi.documents_for(list(ALL)) is first
    changed_schema = {**QUEUE_SCHEMA, "description": "changed"}
    changed = [i for i in ALL if i is not QUEUES] + [
        info(
            "queues.example.com",
            "v1beta1",
            "queues",
            "Queue",
            False,
            extra={"openapi_schema": changed_schema},
        )
    ]
    assert openapi.documents_for(changed) is not first
    found = openapi.openapi_v3_bytes(ALL, "apis/batch/v1")
    assert found is not None
    assert openapi.openapi_v3(ALL, "apis/batch/v1") == orjson.loads(found[0])
    assert openapi.openapi_v3(ALL, "apis/apps/v1") is None
    assert openapi.openapi_v3_index(ALL) == first.v3_root()
    assert openapi.openapi_v2(ALL) == orjson.loads(openapi.openapi_v2_bytes(ALL)[0])


def test_crd_code_extra_keys_mark_a_custom_resource() -> None:
    # numaplane.apiserver.crd hands the schema over as extra["schema"] and names the CRD.
    widgets = info(
        "widgets.example.com",
        "v1",
        "widgets",
        "Widget",
        True,
        extra={"schema": QUEUE_SCHEMA, "crd": "widgets.widgets.example.com", "prune": print},
    )
    doc = openapi.OpenAPIDocuments([widgets]).v3_document("apis/widgets.example.com/v1")
    assert doc is not None
    widget = doc["components"]["schemas"]["com.example.widgets.v1.Widget"]
    assert widget["properties"]["spec"]["description"] == "spec of the queue"
    assert openapi.unknown_fields(widgets, {"spec": {"nope": 1}}) == ["spec.nope"]
    assert openapi.documents_for([widgets]) is openapi.documents_for([widgets])


def test_a_kind_without_any_schema_still_has_paths() -> None:
    things = info("example.com", "v1", "things", "Thing", True)
    doc = openapi.OpenAPIDocuments([things]).v3_document("apis/example.com/v1")
    assert doc is not None
    assert _patch_supports(doc, "example.com", "v1", "Thing", "fieldValidation")
    thing = doc["components"]["schemas"]["com.example.v1.Thing"]
    assert thing["x-kubernetes-preserve-unknown-fields"] is True
