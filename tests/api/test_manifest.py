"""Reading pods from Kubernetes manifests, and the one-line errors for bad ones."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from numaplane.api.manifest import (
    ManifestError,
    load_pods,
    pod_from_dict,
    pod_uid,
    pods_from_text,
)
from numaplane.api.pod import QOSClass
from numaplane.api.quantity import Quantity
from numaplane.errors import InputError

DATA = Path(__file__).parent / "data"


def q(text: str) -> Quantity:
    return Quantity.parse(text)


def test_multi_document_yaml_with_defaults() -> None:
    dpdk, web = load_pods(DATA / "pods.yaml")

    assert (dpdk.namespace, dpdk.name) == ("telco", "dpdk")
    assert dpdk.uid == pod_uid("telco", "dpdk")
    assert dpdk.labels == {"app": "dpdk"}
    assert dpdk.annotations == {"example.com/owner": "network-team"}
    assert dpdk.node_name == "worker-1"
    assert dpdk.termination_grace_period_seconds == 10
    assert dpdk.restart_policy == "Always"
    forwarder = dpdk.container("forwarder")
    assert forwarder.image == "registry.example.com/dpdk:23.11"
    assert forwarder.command == ("/usr/bin/testpmd",)
    assert forwarder.args == ("-l", "2-5", "--", "-i")
    assert forwarder.working_dir == "/opt/dpdk"
    # valueFrom entries are resolved by the kubelet; they are skipped, not fatal.
    assert forwarder.env == (("MODE", "poll"),)
    # SetDefaults_Pod: a limit without a request defaults the request, so the pod is Guaranteed.
    assert forwarder.requests_of("cpu") == q("4")
    assert forwarder.requests_of("hugepages-1Gi") == q("2Gi")
    assert forwarder.requests_of("example.com/sriov") == q("1")
    assert dpdk.qos_class is QOSClass.GUARANTEED

    assert web.uid == "0b6f2f5e-8d0c-4c1e-9a7e-3f4d2a1b0c9d"
    assert web.namespace == "default"
    assert web.restart_policy == "OnFailure"
    assert web.termination_grace_period_seconds == 30
    assert web.status_qos_class is QOSClass.BURSTABLE
    assert [c.name for c in web.init_containers] == ["migrate", "log-shipper"]
    assert web.container("log-shipper").is_restartable
    assert not web.container("migrate").is_restartable
    # YAML reads `cpu: 0.5` as a float; it still means 500m exactly.
    assert web.container("app").requests_of("cpu") == q("500m")
    # PodRequests: cpu max(500m, 500m + 250m); memory max(1Gi, 512Mi + 256Mi).
    assert web.effective_requests() == {"cpu": q("750m"), "memory": q("1Gi")}


def test_list_in_json() -> None:
    a, b = load_pods(DATA / "list.json")
    assert (a.key, b.key) == ("batch/a", "batch/b")
    assert a.qos_class is QOSClass.GUARANTEED
    assert b.qos_class is QOSClass.BEST_EFFORT
    assert b.container("main").image == "busybox"


def test_pod_level_resources_defaulted() -> None:
    """``defaultPodRequests``: unset pod-level requests take the containers' aggregate request
    where a container requests the resource, else the pod-level limit."""
    (pod,) = load_pods(DATA / "pod-level.yaml")
    assert pod.resources is not None
    assert pod.resources.requests == {"cpu": q("1"), "memory": q("8Gi")}
    assert pod.resources.limits == {"cpu": q("4"), "memory": q("8Gi")}
    assert pod.qos_class is QOSClass.BURSTABLE
    assert pod.effective_requests() == {"cpu": q("1"), "memory": q("8Gi")}


def test_pod_level_limits_defaulted_from_containers() -> None:
    """``defaultPodLimits``: with pod-level requests only, a limit every container sets is
    aggregated into the pod level."""
    text = """
        kind: Pod
        metadata: {name: p}
        spec:
          resources: {requests: {cpu: "2", memory: 1Gi}}
          containers:
            - {name: a, resources: {limits: {cpu: "1", memory: 1Gi}}}
            - {name: b, resources: {limits: {cpu: "1"}}}
    """
    (pod,) = pods_from_text(textwrap.dedent(text), "p.yaml")
    assert pod.resources is not None
    assert pod.resources.limits == {"cpu": q("2")}
    assert pod.resources.requests == {"cpu": q("2"), "memory": q("1Gi")}


def test_uid_is_stable_and_distinct() -> None:
    assert pod_uid("default", "a") == pod_uid("default", "a")
    assert pod_uid("default", "a") != pod_uid("other", "a")
    assert pod_uid("default", "a") != pod_uid("default", "b")
    pod = pod_from_dict(
        {"kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": [{"name": "c"}]}}, "x"
    )
    assert pod.uid == pod_uid("default", "a")


def test_empty_documents_and_list_without_items() -> None:
    assert pods_from_text("---\n---\n", "empty.yaml") == []
    assert pods_from_text("kind: List\nitems: []\n", "list.yaml") == []
    assert pods_from_text("", "nothing.yaml") == []


def test_unreadable_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    with pytest.raises(ManifestError) as caught:
        load_pods(missing)
    assert str(caught.value).startswith(f"{missing}: cannot read the file")


@dataclass(frozen=True)
class ErrorCase:
    """A bad manifest and the exact one-line message ``<file>: <field>: <reason>``."""

    name: str
    text: str
    message: str
    source: str = "pod.yaml"


POD = """
kind: Pod
metadata: {name: p}
spec:
  containers:
"""

ERROR_CASES = [
    ErrorCase(
        "quantity typo",
        POD + "    - {name: c, resources: {limits: {cpu: 2x}}}\n",
        "pod.yaml: spec.containers[0].resources.limits.cpu: invalid quantity '2x': quantities "
        "must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ),
    ErrorCase(
        "wrong-case suffix",
        POD + "    - {name: c, resources: {requests: {memory: 1mi}}}\n",
        "pod.yaml: spec.containers[0].resources.requests.memory: invalid quantity '1mi': "
        "unable to parse the suffix 'mi'",
    ),
    ErrorCase(
        "negative quantity",
        POD + "    - {name: c, resources: {requests: {memory: -1Gi}}}\n",
        "pod.yaml: spec.containers[0].resources.requests.memory: must not be negative, got '-1Gi'",
    ),
    ErrorCase(
        "boolean quantity",
        POD + "    - {name: c, resources: {requests: {cpu: true}}}\n",
        "pod.yaml: spec.containers[0].resources.requests.cpu: expected a quantity, "
        "got the boolean True",
    ),
    ErrorCase(
        "request above limit",
        POD + "    - {name: c, resources: {requests: {cpu: 2}, limits: {cpu: 1}}}\n",
        "pod.yaml: spec.containers[0].resources.requests.cpu: request 2 is greater than "
        "the limit 1",
    ),
    ErrorCase(
        "missing containers",
        "kind: Pod\nmetadata: {name: p}\nspec: {}\n",
        "pod.yaml: spec.containers: a pod needs at least one container",
    ),
    ErrorCase(
        "missing spec",
        "kind: Pod\nmetadata: {name: p}\n",
        "pod.yaml: spec: required field is missing",
    ),
    ErrorCase(
        "missing name",
        "kind: Pod\nmetadata: {}\nspec: {containers: [{name: c}]}\n",
        "pod.yaml: metadata.name: required field is missing",
    ),
    ErrorCase(
        "container without name",
        POD + "    - {name: a}\n    - {image: busybox}\n",
        "pod.yaml: spec.containers[1].name: required field is missing",
    ),
    ErrorCase(
        "duplicate container names",
        POD + "    - {name: a}\n    - {name: a}\n",
        "pod.yaml: spec.containers[1].name: duplicate container name 'a'",
    ),
    ErrorCase(
        "app container named like an init container",
        "kind: Pod\nmetadata: {name: p}\nspec:\n  initContainers: [{name: a}]\n"
        "  containers: [{name: a}]\n",
        "pod.yaml: spec.containers[0].name: duplicate container name 'a'",
    ),
    ErrorCase(
        "container is not a mapping",
        POD + "    - just-a-string\n",
        "pod.yaml: spec.containers[0]: expected a container (a mapping), got str 'just-a-string'",
    ),
    ErrorCase(
        "containers is not a list",
        "kind: Pod\nmetadata: {name: p}\nspec: {containers: {name: c}}\n",
        "pod.yaml: spec.containers: expected a list of containers, got a mapping",
    ),
    ErrorCase(
        "kind is not Pod",
        "kind: Deployment\nmetadata: {name: d}\n",
        "pod.yaml: kind: kind 'Deployment' is not supported; expected Pod or List",
    ),
    ErrorCase(
        "kind missing",
        "metadata: {name: p}\n",
        "pod.yaml: kind: missing; expected Pod or List",
    ),
    ErrorCase(
        "non-pod list item",
        "kind: List\nitems:\n  - {kind: Service, metadata: {name: s}}\n",
        "pod.yaml: items[0].kind: expected kind Pod, got 'Service'",
    ),
    ErrorCase(
        "error inside a list item",
        "kind: List\nitems:\n  - {kind: Pod, metadata: {name: p}, spec: {containers: []}}\n",
        "pod.yaml: items[0].spec.containers: a pod needs at least one container",
    ),
    ErrorCase(
        "error in second document",
        POD + "    - {name: c}\n---\n" + POD + "    - {name: c, resources: {limits: {cpu: x}}}\n",
        "pod.yaml: document 2: spec.containers[0].resources.limits.cpu: invalid quantity 'x': "
        "quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ),
    ErrorCase(
        "yaml syntax error",
        "kind: Pod\nmetadata: {name: p\nspec: {}\n",
        "pod.yaml: invalid YAML at line 3, column 5: expected ',' or '}', but got ':'",
    ),
    ErrorCase(
        "json syntax error",
        '{"kind": "Pod",\n "metadata": }\n',
        "pod.json: invalid JSON at line 2, column 14: Expecting value",
        source="pod.json",
    ),
    ErrorCase(
        "document is a list",
        "- a\n- b\n",
        "pod.yaml: expected a Kubernetes object (a mapping), got a list",
    ),
    ErrorCase(
        "second document is a scalar",
        POD + "    - {name: c}\n---\n42\n",
        "pod.yaml: document 2: expected a Kubernetes object (a mapping), got int 42",
    ),
    ErrorCase(
        "bad restart policy",
        "kind: Pod\nmetadata: {name: p}\n"
        "spec: {restartPolicy: Sometimes, containers: [{name: c}]}\n",
        "pod.yaml: spec.restartPolicy: must be one of Always, OnFailure, Never; got 'Sometimes'",
    ),
    ErrorCase(
        "bad container restart policy",
        "kind: Pod\nmetadata: {name: p}\n"
        "spec:\n  initContainers: [{name: i, restartPolicy: always}]\n"
        "  containers: [{name: c}]\n",
        "pod.yaml: spec.initContainers[0].restartPolicy: must be one of Always, OnFailure, Never; "
        "got 'always'",
    ),
    ErrorCase(
        "bad grace period",
        "kind: Pod\nmetadata: {name: p}\n"
        "spec: {terminationGracePeriodSeconds: soon, containers: [{name: c}]}\n",
        "pod.yaml: spec.terminationGracePeriodSeconds: expected an integer, got str 'soon'",
    ),
    ErrorCase(
        "label value not a string",
        "kind: Pod\nmetadata: {name: p, labels: {tier: 1}}\nspec: {containers: [{name: c}]}\n",
        "pod.yaml: metadata.labels.tier: expected a string, got int 1",
    ),
    ErrorCase(
        "args not strings",
        POD + "    - {name: c, args: [--port, 80]}\n",
        "pod.yaml: spec.containers[0].args[1]: expected a string, got int 80",
    ),
    ErrorCase(
        "env without name",
        POD + "    - {name: c, env: [{value: x}]}\n",
        "pod.yaml: spec.containers[0].env[0].name: required field is missing",
    ),
    ErrorCase(
        "unknown qos class",
        POD + "    - {name: c}\nstatus: {qosClass: Platinum}\n",
        "pod.yaml: status.qosClass: must be one of Guaranteed, Burstable, BestEffort; "
        "got 'Platinum'",
    ),
    ErrorCase(
        "pod-level extended resource",
        "kind: Pod\nmetadata: {name: p}\n"
        "spec: {resources: {limits: {example.com/gpu: 1}}, containers: [{name: c}]}\n",
        "pod.yaml: spec.resources.limits.example.com/gpu: pod-level resources may only set cpu, "
        "memory and hugepages-<size>",
    ),
    ErrorCase(
        "label key not a string",
        "kind: Pod\nmetadata: {name: p, labels: {1: a}}\nspec: {containers: [{name: c}]}\n",
        "pod.yaml: metadata.labels.1: keys must be strings, got int 1",
    ),
    ErrorCase(
        "resource name not a string",
        POD + "    - {name: c, resources: {requests: {1: 2}}}\n",
        "pod.yaml: spec.containers[0].resources.requests.1: resource names must be non-empty "
        "strings",
    ),
    ErrorCase(
        "env is not a list",
        POD + "    - {name: c, env: 3}\n",
        "pod.yaml: spec.containers[0].env: expected a list of variables, got int 3",
    ),
    ErrorCase(
        "a YAML date where a string belongs",
        POD + "    - {name: c, image: 2024-01-01}\n",
        "pod.yaml: spec.containers[0].image: expected a string, got date datetime.date(2024, 1, 1)",
    ),
    ErrorCase(
        "braces in a bad quantity are quoted, not expanded",
        POD + "    - {name: c, resources: {limits: {cpu: '{x}'}}}\n",
        "pod.yaml: spec.containers[0].resources.limits.cpu: invalid quantity '{x}': quantities "
        "must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ),
    ErrorCase(
        "a long value is shortened in the message",
        "kind: Pod\nmetadata: {name: p}\nspec: {restartPolicy: " + "x" * 500 + "}\n",
        "pod.yaml: spec.restartPolicy: must be one of Always, OnFailure, Never; got '"
        + "x" * 60
        + "...'",
    ),
    ErrorCase(
        "a date YAML's grammar accepts but the calendar does not",
        "kind: Pod\nmetadata: {name: p, uid: 2024-13-45}\n",
        "pod.yaml: invalid YAML: month must be in 1..12",
    ),
    ErrorCase(
        "YAML nested too deeply",
        "[" * 5000 + "]" * 5000,
        "pod.yaml: invalid YAML: nested too deeply",
    ),
    ErrorCase(
        "JSON nested too deeply",
        "[" * 100000 + "]" * 100000,
        "pod.json: invalid JSON: nested too deeply",
        source="pod.json",
    ),
    ErrorCase(
        "same pod twice",
        POD + "    - {name: c}\n---\n" + POD + "    - {name: c}\n",
        "pod.yaml: pod default/p appears more than once",
    ),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=lambda c: c.name)
def test_manifest_errors(case: ErrorCase) -> None:
    with pytest.raises(ManifestError) as caught:
        pods_from_text(case.text, case.source)
    message = str(caught.value)
    assert message == case.message
    assert "\n" not in message
    assert isinstance(caught.value, InputError)
    assert caught.value.source == case.source


def test_pod_from_dict_prefixes_paths() -> None:
    with pytest.raises(ManifestError) as caught:
        pod_from_dict({"metadata": {"name": "p"}, "spec": {}}, "cluster", "items[3].")
    assert (
        str(caught.value) == "cluster: items[3].spec.containers: a pod needs at least one container"
    )


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (1, "numaplane_pods.json: pods[1]: expected a Pod (a mapping), got int 1"),
        ([1], "numaplane_pods.json: pods[1]: expected a Pod (a mapping), got a list"),
        ({"kind": 1}, "numaplane_pods.json: pods[1].kind: expected kind Pod, got 1"),
    ],
    ids=["a number", "a list", "a kind that is no string"],
)
def test_pod_from_dict_refuses_what_is_no_pod(record: object, message: str) -> None:
    """A pod record file holding ``{"pods": [1, 2]}`` is one error line, not a TypeError."""
    with pytest.raises(ManifestError) as caught:
        pod_from_dict(record, "numaplane_pods.json", "pods[1].")
    assert str(caught.value) == message
