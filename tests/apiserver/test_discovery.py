"""Discovery documents: legacy lists, aggregated v2/v2beta1, ordering, hashes, negotiation."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.apiserver import discovery
from numaplane.apiserver.resource import ALL_VERBS
from tests.apiserver.info_support import info

PODS = info(
    "",
    "v1",
    "pods",
    "Pod",
    True,
    short_names=("po",),
    categories=("all",),
    subresources=("status", "binding", "proxy"),
)
SERVICE_ACCOUNTS = info(
    "",
    "v1",
    "serviceaccounts",
    "ServiceAccount",
    True,
    short_names=("sa",),
    subresources=("token",),
)
JOBS = info("batch", "v1", "jobs", "Job", True, categories=("all",), subresources=("status",))
SSAR = info(
    "authorization.k8s.io",
    "v1",
    "selfsubjectaccessreviews",
    "SelfSubjectAccessReview",
    False,
    verbs=("create",),
)
RBAC_ROLES = info("rbac.authorization.k8s.io", "v1", "roles", "Role", True)
EVENTS = info("events.k8s.io", "v1", "events", "Event", True, short_names=("ev",))
CRDS = info(
    "apiextensions.k8s.io",
    "v1",
    "customresourcedefinitions",
    "CustomResourceDefinition",
    False,
    short_names=("crd", "crds"),
    subresources=("status",),
)
LEASES = info("coordination.k8s.io", "v1", "leases", "Lease", True)
CQ_BETA = info(
    "kueue.x-k8s.io",
    "v1beta1",
    "clusterqueues",
    "ClusterQueue",
    False,
    short_names=("cq",),
    categories=("kueue",),
    subresources=("status",),
    storage_version="v1beta1",
)
CQ_ALPHA = info(
    "kueue.x-k8s.io", "v1alpha1", "clusterqueues", "ClusterQueue", False, storage_version="v1beta1"
)
WORKLOADS = info(
    "kueue.x-k8s.io", "v1beta1", "workloads", "Workload", True, subresources=("status", "scale")
)
ALL = [
    CQ_ALPHA,
    PODS,
    JOBS,
    SSAR,
    RBAC_ROLES,
    EVENTS,
    CRDS,
    LEASES,
    CQ_BETA,
    WORKLOADS,
    SERVICE_ACCOUNTS,
]


def test_core_resource_list_has_subresources_kinds_and_no_api_version() -> None:
    doc = discovery.api_resource_list(ALL, "", "v1")
    assert doc is not None
    assert "apiVersion" not in doc
    assert doc["kind"] == "APIResourceList"
    assert doc["groupVersion"] == "v1"
    names = [r["name"] for r in doc["resources"]]
    assert names == [
        "pods",
        "pods/binding",
        "pods/proxy",
        "pods/status",
        "serviceaccounts",
        "serviceaccounts/token",
    ]
    by_name = {r["name"]: r for r in doc["resources"]}
    assert by_name["pods"] == {
        "name": "pods",
        "singularName": "pod",
        "namespaced": True,
        "kind": "Pod",
        "verbs": sorted(ALL_VERBS),
        "shortNames": ["po"],
        "categories": ["all"],
        # kube-apiserver's published value for core/v1 Pod.
        "storageVersionHash": "xPOwRZ+Yhw8=",
    }
    assert by_name["pods/binding"] == {
        "name": "pods/binding",
        "singularName": "",
        "namespaced": True,
        "kind": "Binding",
        "verbs": ["create"],
    }
    assert by_name["pods/status"]["kind"] == "Pod"
    assert by_name["pods/proxy"]["kind"] == "PodProxyOptions"
    assert by_name["pods/status"]["verbs"] == ["get", "patch", "update"]
    assert by_name["serviceaccounts/token"]["group"] == "authentication.k8s.io"
    assert by_name["serviceaccounts/token"]["version"] == "v1"
    assert by_name["serviceaccounts/token"]["kind"] == "TokenRequest"


def test_group_resource_list_says_v1_and_hashes_the_storage_version() -> None:
    doc = discovery.api_resource_list(ALL, "batch", "v1")
    assert doc is not None
    assert doc["apiVersion"] == "v1"
    assert doc["groupVersion"] == "batch/v1"
    assert doc["resources"][0]["storageVersionHash"] == "mudhfqk/qZY="
    alpha = discovery.api_resource_list(ALL, "kueue.x-k8s.io", "v1alpha1")
    beta = discovery.api_resource_list(ALL, "kueue.x-k8s.io", "v1beta1")
    assert alpha is not None
    assert beta is not None
    # Both served versions are stored at v1beta1: the hash names the storage version.
    assert alpha["resources"][0]["storageVersionHash"] == beta["resources"][0]["storageVersionHash"]


def test_create_only_resources_have_no_storage_hash() -> None:
    doc = discovery.api_resource_list(ALL, "authorization.k8s.io", "v1")
    assert doc is not None
    assert doc["resources"] == [
        {
            "name": "selfsubjectaccessreviews",
            "singularName": "selfsubjectaccessreview",
            "namespaced": False,
            "kind": "SelfSubjectAccessReview",
            "verbs": ["create"],
        }
    ]


@dataclass(frozen=True)
class MissingCase:
    name: str
    group: str
    version: str


@pytest.mark.parametrize(
    "case",
    [
        MissingCase("unknown group", "apps", "v1"),
        MissingCase("unknown version", "batch", "v2"),
        MissingCase("core v2", "", "v2"),
    ],
    ids=lambda c: c.name,
)
def test_unserved_group_versions_are_none(case: MissingCase) -> None:
    assert discovery.api_resource_list(ALL, case.group, case.version) is None


def test_group_list_follows_aggregator_priorities_then_custom_groups() -> None:
    doc = discovery.api_group_list(ALL)
    assert doc["kind"] == "APIGroupList"
    assert doc["apiVersion"] == "v1"
    assert [g["name"] for g in doc["groups"]] == [
        "events.k8s.io",
        "authorization.k8s.io",
        "batch",
        "rbac.authorization.k8s.io",
        "apiextensions.k8s.io",
        "coordination.k8s.io",
        "kueue.x-k8s.io",
    ]
    kueue = doc["groups"][-1]
    assert kueue["versions"] == [
        {"groupVersion": "kueue.x-k8s.io/v1beta1", "version": "v1beta1"},
        {"groupVersion": "kueue.x-k8s.io/v1alpha1", "version": "v1alpha1"},
    ]
    assert kueue["preferredVersion"] == {
        "groupVersion": "kueue.x-k8s.io/v1beta1",
        "version": "v1beta1",
    }


def test_api_group_document_and_unknown_group() -> None:
    doc = discovery.api_group(ALL, "batch")
    assert doc == {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": "batch",
        "versions": [{"groupVersion": "batch/v1", "version": "v1"}],
        "preferredVersion": {"groupVersion": "batch/v1", "version": "v1"},
    }
    assert discovery.api_group(ALL, "apps") is None
    assert discovery.api_group(ALL, "") is None


def test_api_versions_document() -> None:
    assert discovery.api_versions() == {"kind": "APIVersions", "versions": ["v1"]}
    assert discovery.api_versions("127.0.0.1:6443")["serverAddressByClientCIDRs"] == [
        {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}
    ]


def test_version_order_is_kube_aware() -> None:
    versions = [
        "foo10",
        "v1",
        "v10",
        "v2",
        "v11alpha2",
        "v10beta3",
        "v3beta1",
        "v12alpha1",
        "v11beta2",
        "foo1",
    ]
    assert sorted(versions, key=discovery.version_sort_key) == [
        "v10",
        "v2",
        "v1",
        "v11beta2",
        "v10beta3",
        "v3beta1",
        "v12alpha1",
        "v11alpha2",
        "foo1",
        "foo10",
    ]


def test_aggregated_core_document() -> None:
    doc = discovery.aggregated_discovery(ALL, core=True)
    assert doc["kind"] == "APIGroupDiscoveryList"
    assert doc["apiVersion"] == "apidiscovery.k8s.io/v2"
    assert doc["metadata"] == {}
    [core] = doc["items"]
    assert core["metadata"] == {"creationTimestamp": None}
    [v1] = core["versions"]
    assert v1["version"] == "v1"
    assert v1["freshness"] == "Current"
    pods = v1["resources"][0]
    assert pods == {
        "resource": "pods",
        "responseKind": {"group": "", "version": "", "kind": "Pod"},
        "scope": "Namespaced",
        "singularResource": "pod",
        "verbs": sorted(ALL_VERBS),
        "shortNames": ["po"],
        "categories": ["all"],
        "subresources": [
            {
                "subresource": "binding",
                "responseKind": {"group": "", "version": "", "kind": "Binding"},
                "verbs": ["create"],
            },
            {
                "subresource": "proxy",
                "responseKind": {"group": "", "version": "", "kind": "PodProxyOptions"},
                "verbs": ["create", "delete", "get", "patch", "update"],
            },
            {
                "subresource": "status",
                "responseKind": {"group": "", "version": "", "kind": "Pod"},
                "verbs": ["get", "patch", "update"],
            },
        ],
    }


def test_aggregated_groups_document() -> None:
    doc = discovery.aggregated_discovery(ALL, core=False, version="v2beta1")
    assert doc["apiVersion"] == "apidiscovery.k8s.io/v2beta1"
    names = [item["metadata"]["name"] for item in doc["items"]]
    assert names == [g["name"] for g in discovery.api_group_list(ALL)["groups"]]
    kueue = doc["items"][-1]
    assert [v["version"] for v in kueue["versions"]] == ["v1beta1", "v1alpha1"]
    beta = kueue["versions"][0]
    assert [r["resource"] for r in beta["resources"]] == ["clusterqueues", "workloads"]
    assert beta["resources"][0]["scope"] == "Cluster"
    scale = beta["resources"][1]["subresources"][0]
    assert scale == {
        "subresource": "scale",
        "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
        "verbs": ["get", "patch", "update"],
    }


def test_aggregated_rejects_unknown_version() -> None:
    with pytest.raises(ValueError, match="v3"):
        discovery.aggregated_discovery(ALL, core=False, version="v3")


@dataclass(frozen=True)
class NegotiationCase:
    name: str
    accept: str
    expected: str | None


@pytest.mark.parametrize(
    "case",
    [
        NegotiationCase("kubectl 1.32", discovery.KUBECTL_DISCOVERY_ACCEPT, "v2"),
        NegotiationCase(
            "v2beta1 only",
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
            "v2beta1",
        ),
        NegotiationCase("plain json", "application/json, */*", None),
        NegotiationCase("empty", "", None),
        NegotiationCase(
            "plain preferred by q",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0.5,application/json",
            None,
        ),
        NegotiationCase(
            "unknown version skipped",
            "application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,"
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
            "v2",
        ),
        NegotiationCase(
            "protobuf then json", "application/vnd.kubernetes.protobuf,application/json", None
        ),
    ],
    ids=lambda c: c.name,
)
def test_negotiate_discovery(case: NegotiationCase) -> None:
    assert discovery.negotiate_discovery(case.accept) == case.expected


def test_content_type_of_aggregated_response() -> None:
    assert (
        discovery.aggregated_content_type("v2")
        == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    )


def test_document_hash_follows_content() -> None:
    one = discovery.aggregated_discovery(ALL, core=False)
    again = discovery.aggregated_discovery(list(reversed(ALL)), core=False)
    fewer = discovery.aggregated_discovery([i for i in ALL if i is not JOBS], core=False)
    assert discovery.document_hash(one) == discovery.document_hash(again)
    assert discovery.document_hash(one) != discovery.document_hash(fewer)
    assert len(discovery.document_hash(one)) == 128
    assert discovery.document_hash(one) == discovery.document_hash(one).upper()
