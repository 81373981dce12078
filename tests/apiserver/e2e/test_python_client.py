"""The official ``kubernetes`` Python client works against the server unchanged: typed APIs,
custom objects and ``watch.Watch``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client, config, watch

from numaplane.testing.apiserver import RunningApiServer

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def api(server: RunningApiServer) -> Iterator[Any]:
    """An ApiClient from the admin kubeconfig."""
    # The client's models are typed loosely (Optional everywhere): the tests read them as Any.
    make: Any = config.new_client_from_config
    with make(config_file=str(server.kubeconfig)) as api_client:
        yield api_client


def test_core_v1(api: Any) -> None:
    core: Any = client.CoreV1Api(api)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="pyclient")))
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cfg"), data={"k": "v"})
    created = core.create_namespaced_config_map("pyclient", body)
    assert created.metadata.uid
    core.patch_namespaced_config_map("cfg", "pyclient", {"data": {"k": "w"}})
    assert core.read_namespaced_config_map("cfg", "pyclient").data == {"k": "w"}
    listed = core.list_namespaced_config_map("pyclient", label_selector="")
    # The root CA bundle appears in every namespace, once its publisher has run.
    assert {c.metadata.name for c in listed.items} - {"kube-root-ca.crt"} == {"cfg"}
    with pytest.raises(client.ApiException) as missing:
        core.read_namespaced_config_map("nope", "pyclient")
    assert missing.value.status == 404
    core.delete_namespaced_config_map("cfg", "pyclient")


def test_batch_v1_defaults(api: Any) -> None:
    batch: Any = client.BatchV1Api(api)
    job = client.V1Job(
        metadata=client.V1ObjectMeta(name="pi"),
        spec=client.V1JobSpec(
            template=client.V1PodTemplateSpec(
                spec=client.V1PodSpec(
                    restart_policy="Never",
                    containers=[client.V1Container(name="pi", image="perl", command=["true"])],
                )
            )
        ),
    )
    made = batch.create_namespaced_job("default", job)
    assert made.spec.completions == 1
    assert made.spec.parallelism == 1
    assert made.spec.backoff_limit == 6
    assert (
        made.spec.selector.match_labels["batch.kubernetes.io/controller-uid"] == made.metadata.uid
    )
    batch.delete_namespaced_job("pi", "default", propagation_policy="Background")


def test_paginated_list(api: Any) -> None:
    core: Any = client.CoreV1Api(api)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="paging")))
    for i in range(7):
        core.create_namespaced_config_map(
            "paging", client.V1ConfigMap(metadata=client.V1ObjectMeta(name=f"c{i}"))
        )
    seen: list[str] = []
    token = None
    while True:
        page = core.list_namespaced_config_map("paging", limit=3, _continue=token)
        seen += [c.metadata.name for c in page.items if c.metadata.name != "kube-root-ca.crt"]
        token = page.metadata._continue
        if not token:
            break
        assert page.metadata.remaining_item_count is None or page.metadata.remaining_item_count > 0
    assert sorted(seen) == [f"c{i}" for i in range(7)]
    assert len(seen) == 7


def test_watch_streams_events_in_order(api: Any) -> None:
    core: Any = client.CoreV1Api(api)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="pywatch")))
    # The root CA publisher adds kube-root-ca.crt to every new namespace at its own pace: the
    # watch follows only the test's ConfigMaps.
    selector = "test=watch"
    start = core.list_namespaced_config_map("pywatch").metadata.resource_version
    events: list[tuple[str, str]] = []
    watch_class: Any = watch.Watch  # untyped in the client
    w = watch_class()

    def consume() -> None:
        for event in w.stream(
            core.list_namespaced_config_map,
            "pywatch",
            resource_version=start,
            label_selector=selector,
            timeout_seconds=20,
        ):
            events.append((event["type"], event["object"].metadata.name))
            if len(events) == 4:
                w.stop()

    reader = threading.Thread(target=consume)
    reader.start()
    for name in ("a", "b", "c"):
        core.create_namespaced_config_map(
            "pywatch",
            client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels={"test": "watch"})),
        )
    core.delete_namespaced_config_map("a", "pywatch")
    reader.join(timeout=30)
    assert events == [("ADDED", "a"), ("ADDED", "b"), ("ADDED", "c"), ("DELETED", "a")]


def test_custom_objects(api: Any) -> None:
    ext: Any = client.ApiextensionsV1Api(api)
    crd: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {"size": {"type": "integer", "minimum": 1}},
                                }
                            },
                        }
                    },
                }
            ],
        },
    }
    ext.create_custom_resource_definition(crd)
    custom: Any = client.CustomObjectsApi(api)
    widget = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"size": 3},
    }
    for _ in range(50):  # the CRD becomes Established asynchronously
        try:
            custom.create_namespaced_custom_object(
                "example.com", "v1", "default", "widgets", widget
            )
            break
        except client.ApiException as err:
            if err.status != 404:
                raise
            threading.Event().wait(0.1)
    got = custom.get_namespaced_custom_object("example.com", "v1", "default", "widgets", "w")
    assert got["spec"] == {"size": 3}
    bad = dict(widget, metadata={"name": "z"}, spec={"size": 0})
    with pytest.raises(client.ApiException) as refused:
        custom.create_namespaced_custom_object("example.com", "v1", "default", "widgets", bad)
    assert refused.value.status == 422
    assert "should be greater than or equal to 1" in str(refused.value.body)
