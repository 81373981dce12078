"""core/v1 Pod: defaulting, QoS, validation messages, update rules, status and binding
subresources, table rows and field set."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest

from numaplane.apiserver.errors import StatusError, invalid
from numaplane.apiserver.kinds.pod import (
    POD_STATUS_STRATEGY,
    POD_STRATEGY,
    bind_pod,
    pod_fields,
)
from numaplane.apiserver.kinds.pod_table import POD_PRINTER

NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z
CREATED = "2023-11-14T22:10:00Z"  # 3m20s before NOW


def container(name: str = "c", image: str = "busybox:1.36", **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": image, **extra}


def pod(*containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "creationTimestamp": CREATED},
        "spec": {"containers": list(containers) or [container()], **spec},
    }


def created(obj: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    POD_STRATEGY.default(obj)
    POD_STRATEGY.prepare_for_create(obj)
    return obj


def test_defaults_fill_the_spec_as_the_scheme_does() -> None:
    obj = created(pod(container(image="nginx", ports=[{"containerPort": 80}])))
    assert obj["spec"] == {
        "containers": [
            {
                "name": "c",
                "image": "nginx",
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "imagePullPolicy": "Always",
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
            }
        ],
        "enableServiceLinks": True,
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
        "schedulerName": "default-scheduler",
    }
    assert obj["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


@dataclass(frozen=True)
class PullCase:
    name: str
    image: str
    policy: str


PULL_CASES = [
    PullCase("no tag", "nginx", "Always"),
    PullCase("latest", "nginx:latest", "Always"),
    PullCase("tagged", "nginx:1.25", "IfNotPresent"),
    PullCase("registry port, no tag", "localhost:5000/nginx", "Always"),
    PullCase("digest", "nginx@sha256:abc", "IfNotPresent"),
    PullCase("latest pinned by digest", "nginx:latest@sha256:abc", "Always"),
]


@pytest.mark.parametrize("case", PULL_CASES, ids=lambda c: c.name)
def test_image_pull_policy_default(case: PullCase) -> None:
    obj = created(pod(container(image=case.image)))
    assert obj["spec"]["containers"][0]["imagePullPolicy"] == case.policy


@dataclass(frozen=True)
class QOSCase:
    name: str
    resources: tuple[dict[str, Any], ...]
    qos: str


QOS_CASES = [
    QOSCase("nothing set", ({},), "BestEffort"),
    QOSCase(
        "limits only become requests",
        ({"limits": {"cpu": "1", "memory": "1Gi"}},),
        "Guaranteed",
    ),
    QOSCase("requests only", ({"requests": {"cpu": "100m"}},), "Burstable"),
    QOSCase(
        "request below limit",
        ({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1Gi"}},),
        "Burstable",
    ),
    QOSCase(
        "guaranteed next to best effort",
        ({"limits": {"cpu": "1", "memory": "1Gi"}}, {}),
        "Burstable",
    ),
    QOSCase(
        "extended resources do not count", ({"limits": {"example.com/gpu": "1"}},), "BestEffort"
    ),
]


@pytest.mark.parametrize("case", QOS_CASES, ids=lambda c: c.name)
def test_qos_class_on_create(case: QOSCase) -> None:
    containers = [container(f"c{i}", resources=r) for i, r in enumerate(case.resources)]
    assert created(pod(*containers))["status"]["qosClass"] == case.qos


def test_create_resets_status_and_marks_gated_pods() -> None:
    given = pod(schedulingGates=[{"name": "kueue"}])
    given["status"] = {"phase": "Running", "podIP": "10.0.0.1"}
    obj = created(given)
    assert obj["status"]["phase"] == "Pending"
    assert "podIP" not in obj["status"]
    assert obj["status"]["conditions"][0]["reason"] == "SchedulingGated"


REQUEST_RULE = "must be less than or equal to cpu limit of 1"


@dataclass(frozen=True)
class InvalidCase:
    name: str
    obj: dict[str, Any]
    message: str


INVALID_CASES = [
    InvalidCase(
        "no containers",
        {**pod(), "spec": {"containers": []}},
        'Pod "p" is invalid: spec.containers: Required value',
    ),
    InvalidCase(
        "request above limit",
        pod(container(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})),
        'Pod "p" is invalid: spec.containers[0].resources.requests: Invalid value: "2": '
        + REQUEST_RULE,
    ),
    InvalidCase(
        "duplicate container names across init and app",
        pod(container("a"), initContainers=[container("a")]),
        'Pod "p" is invalid: spec.initContainers[0].name: Duplicate value: "a"',
    ),
    InvalidCase(
        "missing image",
        pod(container(image="")),
        'Pod "p" is invalid: spec.containers[0].image: Required value',
    ),
    InvalidCase(
        "bad restart policy",
        pod(restartPolicy="Sometimes"),
        'Pod "p" is invalid: spec.restartPolicy: Unsupported value: "Sometimes": supported '
        'values: "Always", "OnFailure", "Never"',
    ),
    InvalidCase(
        "bad dns policy",
        pod(dnsPolicy="Nope"),
        'Pod "p" is invalid: spec.dnsPolicy: Unsupported value: "Nope": supported values: '
        '"ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"',
    ),
    InvalidCase(
        "extended resource needs a limit equal to its request",
        pod(container(resources={"requests": {"example.com/gpu": "1"}})),
        'Pod "p" is invalid: spec.containers[0].resources.limits: Required value: Limit must be '
        "set for non overcommitable resources",
    ),
    InvalidCase(
        "unknown unprefixed resource (requests defaulted from limits)",
        pod(container(resources={"limits": {"gpu": "1"}})),
        'Pod "p" is invalid: [spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": '
        "must be a standard resource for containers, spec.containers[0].resources.requests[gpu]: "
        'Invalid value: "gpu": must be a standard resource for containers]',
    ),
    InvalidCase(
        "negative quantity",
        pod(container(resources={"requests": {"cpu": "-1"}})),
        'Pod "p" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "-1": '
        "must be greater than or equal to 0",
    ),
    InvalidCase(
        "mount of an unknown volume",
        pod(container(volumeMounts=[{"name": "data", "mountPath": "/d"}])),
        'Pod "p" is invalid: spec.containers[0].volumeMounts[0].name: Not found: "data"',
    ),
    InvalidCase(
        "secret volume without its secret",
        pod(volumes=[{"name": "v", "secret": {}}]),
        'Pod "p" is invalid: spec.volumes[0].secret.secretName: Required value',
    ),
    InvalidCase(
        "port out of range",
        pod(container(ports=[{"containerPort": 70000}])),
        'Pod "p" is invalid: spec.containers[0].ports[0].containerPort: Invalid value: 70000: '
        "must be between 1 and 65535, inclusive",
    ),
    InvalidCase(
        "toleration without key must be Exists",
        pod(tolerations=[{"operator": "Equal", "value": "x", "effect": "NoSchedule"}]),
        'Pod "p" is invalid: spec.tolerations[0].operator: Invalid value: "Equal": operator '
        'must be Exists when `key` is empty, which means "match all values and all keys"',
    ),
    InvalidCase(
        "toleration seconds need NoExecute",
        pod(tolerations=[{"key": "k", "operator": "Exists", "tolerationSeconds": 5}]),
        'Pod "p" is invalid: spec.tolerations[0].effect: Invalid value: "": effect must be '
        "'NoExecute' when `tolerationSeconds` is set",
    ),
    InvalidCase(
        "port names",
        pod(
            container(
                ports=[{"containerPort": 80, "name": "Web"}, {"containerPort": 81, "name": "a--b"}]
            )
        ),
        'Pod "p" is invalid: [spec.containers[0].ports[0].name: Invalid value: "Web": must '
        "contain only alpha-numeric characters (a-z, 0-9), and hyphens (-), "
        'spec.containers[0].ports[1].name: Invalid value: "a--b": must not contain consecutive '
        "hyphens]",
    ),
    InvalidCase(
        "env name with '='",
        pod(container(env=[{"name": "A=B", "value": "x"}])),
        'Pod "p" is invalid: spec.containers[0].env[0].name: Invalid value: "A=B": a valid '
        "environment variable name must consist only of printable ASCII characters other than "
        "'='",
    ),
]


@pytest.mark.parametrize("case", INVALID_CASES, ids=lambda c: c.name)
def test_invalid_pods(case: InvalidCase) -> None:
    obj = copy.deepcopy(case.obj)
    POD_STRATEGY.default(obj)
    errors = POD_STRATEGY.validate(obj)
    assert invalid("", "Pod", "p", errors).message == case.message


def test_malformed_quantity_is_a_decode_error() -> None:
    obj = pod(container(resources={"limits": {"cpu": "lots"}}))
    POD_STRATEGY.default(obj)
    with pytest.raises(StatusError) as caught:
        POD_STRATEGY.validate(obj)
    assert caught.value.code == 400
    assert caught.value.message.startswith('Pod in version "v1" cannot be handled as a Pod: ')


def stored(obj: dict[str, Any]) -> dict[str, Any]:
    obj = created(obj)
    obj["metadata"].update(uid="u", resourceVersion="7")
    return obj


@dataclass(frozen=True)
class UpdateCase:
    name: str
    change: dict[str, Any]
    first_error: str
    old_spec: dict[str, Any] = field(default_factory=dict)


UPDATE_CASES = [
    UpdateCase("image may change", {"containers": [container(image="busybox:1.37")]}, ""),
    UpdateCase(
        "grace period may not change",
        {"terminationGracePeriodSeconds": 5},
        "spec: Forbidden: pod updates may not change fields other than "
        "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
        "`spec.tolerations` (only additions to existing tolerations),"
        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously "
        "negative)\n  spec.terminationGracePeriodSeconds: 30 -> 5",
    ),
    UpdateCase(
        "containers may not be added",
        {"containers": [container(), container("d")]},
        "spec.containers: Forbidden: pod updates may not add or remove containers",
    ),
    UpdateCase("deadline may be set", {"activeDeadlineSeconds": 60}, ""),
    UpdateCase(
        "gated pod gains node selector terms",
        {"nodeSelector": {"zone": "a", "gpu": "h100"}},
        "",
        {"schedulingGates": [{"name": "kueue"}], "nodeSelector": {"zone": "a"}},
    ),
    UpdateCase(
        "gated pod may not change node selector terms",
        {"nodeSelector": {"zone": "b"}},
        "spec.nodeSelector: Forbidden: only additions to spec.nodeSelector are allowed (no "
        "mutations or deletions)",
        {"schedulingGates": [{"name": "kueue"}], "nodeSelector": {"zone": "a"}},
    ),
    UpdateCase(
        "scheduling gates may be removed",
        {"schedulingGates": []},
        "",
        {"schedulingGates": [{"name": "kueue"}]},
    ),
    UpdateCase(
        "scheduling gates may not be added",
        {"schedulingGates": [{"name": "more"}]},
        "spec.schedulingGates[0]: Forbidden: only deletion is allowed, but found new scheduling "
        "gate 'more'",
    ),
    UpdateCase(
        "tolerations may be added",
        {"tolerations": [{"key": "k", "operator": "Exists"}]},
        "",
    ),
    UpdateCase(
        "toleration seconds may change",
        {"tolerations": [{"key": "k", "effect": "NoExecute", "tolerationSeconds": 1}]},
        "",
        {"tolerations": [{"key": "k", "effect": "NoExecute", "tolerationSeconds": 60}]},
    ),
    UpdateCase(
        "tolerations may not be removed",
        {"tolerations": []},
        "spec.tolerations: Forbidden: existing toleration can not be modified except its "
        "tolerationSeconds",
        {"tolerations": [{"key": "k", "operator": "Exists"}]},
    ),
]


@pytest.mark.parametrize("case", UPDATE_CASES, ids=lambda c: c.name)
def test_pod_update_rules(case: UpdateCase) -> None:
    old = stored(pod(**case.old_spec))
    new = copy.deepcopy(old)
    new["spec"].update(copy.deepcopy(case.change))
    POD_STRATEGY.default(new)
    POD_STRATEGY.prepare_for_update(new, old)
    errors = POD_STRATEGY.validate_update(new, old)
    assert (str(errors[0]) if errors else "") == case.first_error


def test_main_resource_keeps_status_and_status_endpoint_keeps_spec() -> None:
    old = stored(pod())
    new = copy.deepcopy(old)
    new["status"] = {"phase": "Running"}
    new["spec"]["nodeName"] = "elsewhere"
    POD_STRATEGY.prepare_for_update(new, old)
    assert new["status"] == old["status"]
    status_write = copy.deepcopy(old)
    status_write["status"] = {"phase": "Running", "qosClass": "BestEffort"}
    status_write["spec"]["nodeName"] = "elsewhere"
    POD_STATUS_STRATEGY.prepare_for_update(status_write, old)
    assert status_write["spec"] == old["spec"]
    assert status_write["status"]["phase"] == "Running"
    assert POD_STATUS_STRATEGY.validate_update(status_write, old) == []
    assert not POD_STRATEGY.bumps_generation(new, old)


def test_v1_mirrors_ips_and_service_account() -> None:
    obj = pod(serviceAccount="builder")
    obj["status"] = {"podIP": "10.0.0.9", "hostIPs": [{"ip": "192.168.0.2"}]}
    POD_STRATEGY.default(obj)
    assert obj["spec"]["serviceAccountName"] == "builder"
    assert obj["spec"]["serviceAccount"] == "builder"
    assert obj["status"]["podIPs"] == [{"ip": "10.0.0.9"}]
    assert obj["status"]["hostIP"] == "192.168.0.2"


def test_field_set() -> None:
    obj = created(pod(nodeName="n1"))
    obj["status"].update(podIPs=[{"ip": "10.1.2.3"}, {"ip": "fd00::1"}])
    assert pod_fields(obj) == {
        "metadata.name": "p",
        "metadata.namespace": "default",
        "spec.nodeName": "n1",
        "spec.restartPolicy": "Always",
        "spec.schedulerName": "default-scheduler",
        "spec.serviceAccountName": "",
        "spec.hostNetwork": "false",
        "status.phase": "Pending",
        "status.podIP": "10.1.2.3",
        "status.nominatedNodeName": "",
    }


def running(name: str, ready: bool = True, restarts: int = 0, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "ready": ready,
        "restartCount": restarts,
        "state": {"running": {"startedAt": CREATED}},
        **extra,
    }


@dataclass(frozen=True)
class RowCase:
    name: str
    spec: dict[str, Any]
    status: dict[str, Any]
    cells: list[Any]
    meta: dict[str, Any] = field(default_factory=dict)


ROWS = [
    RowCase(
        "pending",
        {},
        {"phase": "Pending"},
        ["p", "0/1", "Pending", "0", "3m20s", "<none>", "<none>", "<none>", "<none>"],
    ),
    RowCase(
        "running and ready on a node",
        {"nodeName": "n1"},
        {
            "phase": "Running",
            "podIP": "10.0.0.5",
            "podIPs": [{"ip": "10.0.0.5"}],
            "containerStatuses": [running("c")],
        },
        ["p", "1/1", "Running", "0", "3m20s", "10.0.0.5", "n1", "<none>", "<none>"],
    ),
    RowCase(
        "crash loop with the last restart's age",
        {},
        {
            "phase": "Running",
            "containerStatuses": [
                {
                    "name": "c",
                    "ready": False,
                    "restartCount": 4,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {
                        "terminated": {"exitCode": 1, "finishedAt": "2023-11-14T22:13:00Z"}
                    },
                }
            ],
        },
        [
            "p",
            "0/1",
            "CrashLoopBackOff",
            "4 (20s ago)",
            "3m20s",
            "<none>",
            "<none>",
            "<none>",
            "<none>",
        ],
    ),
    RowCase(
        "second init container running",
        {"initContainers": [container("i1"), container("i2")]},
        {
            "phase": "Pending",
            "initContainerStatuses": [
                {"name": "i1", "state": {"terminated": {"exitCode": 0}}},
                {"name": "i2", "state": {"running": {}}},
            ],
        },
        ["p", "0/1", "Init:1/2", "0", "3m20s", "<none>", "<none>", "<none>", "<none>"],
    ),
    RowCase(
        "init container failed",
        {"initContainers": [container("i1")]},
        {
            "phase": "Pending",
            "initContainerStatuses": [{"name": "i1", "state": {"terminated": {"exitCode": 3}}}],
        },
        ["p", "0/1", "Init:ExitCode:3", "0", "3m20s", "<none>", "<none>", "<none>", "<none>"],
    ),
    RowCase(
        "completed",
        {},
        {
            "phase": "Succeeded",
            "containerStatuses": [
                {"name": "c", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
            ],
        },
        ["p", "0/1", "Completed", "0", "3m20s", "<none>", "<none>", "<none>", "<none>"],
    ),
    RowCase(
        "terminating",
        {},
        {"phase": "Running", "containerStatuses": [running("c")]},
        ["p", "1/1", "Terminating", "0", "3m20s", "<none>", "<none>", "<none>", "<none>"],
        {"deletionTimestamp": "2023-11-14T22:13:00Z"},
    ),
    RowCase(
        "scheduling gated with a nominated node and readiness gates",
        {"readinessGates": [{"conditionType": "x.io/ready"}]},
        {
            "phase": "Pending",
            "nominatedNodeName": "n2",
            "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"},
                {"type": "x.io/ready", "status": "True"},
            ],
        },
        ["p", "0/1", "SchedulingGated", "0", "3m20s", "<none>", "<none>", "n2", "1/1"],
    ),
]


@pytest.mark.parametrize("case", ROWS, ids=lambda c: c.name)
def test_table_rows(case: RowCase) -> None:
    obj = pod(**case.spec)
    obj["status"] = case.status
    obj["metadata"].update(case.meta)
    assert POD_PRINTER.row(obj, NOW) == case.cells
    assert len(case.cells) == len(POD_PRINTER.columns())


def binding(node: str = "n1", name: str = "p") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name, "annotations": {"a.io/x": "1"}},
        "target": {"kind": "Node", "name": node},
    }


def test_binding_assigns_the_node() -> None:
    obj = stored(pod())
    bound = bind_pod(obj, binding(), "p")
    assert bound["spec"]["nodeName"] == "n1"
    assert bound["metadata"]["annotations"] == {"a.io/x": "1"}
    assert bound["status"]["conditions"] == [{"type": "PodScheduled", "status": "True"}]
    assert "nodeName" not in obj["spec"]  # the stored object is never changed


@dataclass(frozen=True)
class BindingErrorCase:
    name: str
    pod_spec: dict[str, Any]
    binding: dict[str, Any]
    code: int
    message: str


BINDING_ERRORS = [
    BindingErrorCase(
        "already bound",
        {"nodeName": "n0"},
        binding(),
        409,
        'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n0"',
    ),
    BindingErrorCase(
        "name mismatch",
        {},
        binding(name="q"),
        400,
        "name in URL does not match name in Binding object",
    ),
    BindingErrorCase(
        "no target",
        {},
        {**binding(), "target": {}},
        422,
        'Binding "p" is invalid: target.name: Required value',
    ),
]


@pytest.mark.parametrize("case", BINDING_ERRORS, ids=lambda c: c.name)
def test_binding_errors(case: BindingErrorCase) -> None:
    with pytest.raises(StatusError) as caught:
        bind_pod(stored(pod(**case.pod_spec)), case.binding, "p")
    assert (caught.value.code, caught.value.message) == (case.code, case.message)


def terminated(name: str, code: int) -> dict[str, Any]:
    return {"name": name, "state": {"terminated": {"exitCode": code}}}


@dataclass(frozen=True)
class StatusCase:
    name: str
    restart_policy: str
    old_status: dict[str, Any]
    new_status: dict[str, Any]
    errors: tuple[str, ...]


STATUS_CASES = [
    StatusCase(
        "qos class comes back when dropped",
        "Always",
        {"phase": "Pending", "qosClass": "BestEffort"},
        {"phase": "Running"},
        (),
    ),
    StatusCase(
        "qos class is immutable",
        "Always",
        {"qosClass": "BestEffort"},
        {"qosClass": "Guaranteed"},
        ('status.qosClass: Invalid value: "Guaranteed": field is immutable',),
    ),
    StatusCase(
        "a Never pod's container stays terminated",
        "Never",
        {"qosClass": "BestEffort", "containerStatuses": [terminated("c", 0)]},
        {"containerStatuses": [{"name": "c", "state": {"running": {}}}]},
        (
            "status.containerStatuses[0].state: Forbidden: may not be transitioned to "
            "non-terminated state",
        ),
    ),
    StatusCase(
        "an OnFailure pod's failed container may restart",
        "OnFailure",
        {"qosClass": "BestEffort", "containerStatuses": [terminated("c", 1)]},
        {"containerStatuses": [{"name": "c", "state": {"running": {}}}]},
        (),
    ),
    StatusCase(
        "pod IPs must be IPs",
        "Always",
        {"qosClass": "BestEffort"},
        {"podIPs": [{"ip": "10.0.0.1"}, {"ip": "not-an-ip"}]},
        (
            'status.podIPs[1]: Invalid value: "not-an-ip": must be a valid IP address, (e.g. '
            "10.9.8.7 or 2001:db8::ffff)",
        ),
    ),
    StatusCase(
        "nominated node must be a node name",
        "Always",
        {"qosClass": "BestEffort"},
        {"nominatedNodeName": "Node_1"},
        (
            'status.nominatedNodeName: Invalid value: "Node_1": a lowercase RFC 1123 subdomain '
            "must consist of lower case alphanumeric characters, '-' or '.', and must start and "
            "end with an alphanumeric character (e.g. 'example.com', regex used for validation "
            "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ),
    ),
]


@pytest.mark.parametrize("case", STATUS_CASES, ids=lambda c: c.name)
def test_status_updates(case: StatusCase) -> None:
    old = stored(pod(restartPolicy=case.restart_policy))
    old["status"] = copy.deepcopy(case.old_status)
    new = copy.deepcopy(old)
    new["status"] = copy.deepcopy(case.new_status)
    POD_STATUS_STRATEGY.default(new)
    POD_STATUS_STRATEGY.prepare_for_update(new, old)
    assert new["status"].get("qosClass")
    errors = tuple(str(e) for e in POD_STATUS_STRATEGY.validate_update(new, old))
    assert errors == case.errors
