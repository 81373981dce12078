# Over 400 lines: the tables of real kubectl commands and the pod spec they carry are one piece.
"""Real kubectl 1.32 bodies: kubectl's typed commands POST protobuf; a loopback front records
them, answers with the decoded object (so kubectl completes), and each body must decode to the
object kubectl meant — for ``create`` commands, exactly what ``--dry-run=client -o json`` prints
for the same command."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from numaplane.apiserver import errors
from numaplane.apiserver.protobuf import codec
from tests.apiserver.kubectl_front import KUBECTL, run_kubectl, serve_loopback, write_kubeconfig

pytestmark = [
    pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed: kubectl body tests skipped"),
    pytest.mark.timeout(180),
]

# Legacy discovery, just enough for kubectl's REST mapping of what the commands name.
_CORE: tuple[tuple[str, str, bool, tuple[str, ...]], ...] = (
    ("configmaps", "ConfigMap", True, ("cm",)),
    ("namespaces", "Namespace", False, ("ns",)),
    ("nodes", "Node", False, ("no",)),
    ("pods", "Pod", True, ("po",)),
    ("secrets", "Secret", True, ()),
    ("serviceaccounts", "ServiceAccount", True, ("sa",)),
    ("serviceaccounts/token", "TokenRequest", True, ()),
)
_GROUPS: dict[str, tuple[tuple[str, str, bool, tuple[str, ...]], ...]] = {
    "authentication.k8s.io/v1": (
        ("selfsubjectreviews", "SelfSubjectReview", False, ()),
        ("tokenreviews", "TokenReview", False, ()),
    ),
    "authorization.k8s.io/v1": (
        ("selfsubjectaccessreviews", "SelfSubjectAccessReview", False, ()),
        ("selfsubjectrulesreviews", "SelfSubjectRulesReview", True, ()),
    ),
    "batch/v1": (("cronjobs", "CronJob", True, ("cj",)), ("jobs", "Job", True, ())),
    "rbac.authorization.k8s.io/v1": (
        ("clusterrolebindings", "ClusterRoleBinding", False, ()),
        ("clusterroles", "ClusterRole", False, ()),
        ("rolebindings", "RoleBinding", True, ()),
        ("roles", "Role", True, ()),
    ),
    "scheduling.k8s.io/v1": (("priorityclasses", "PriorityClass", False, ("pc",)),),
}


_POD_SPEC: dict[str, Any] = {
    "initContainers": [{"name": "init", "image": "busybox", "command": ["true"]}],
    "containers": [
        {
            "name": "main",
            "image": "busybox",
            "args": ["sleep", "1"],
            "workingDir": "/w",
            "env": [
                {"name": "A", "value": "1"},
                {"name": "EMPTY"},
                {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                {
                    "name": "CPU",
                    "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1m"}},
                },
                {
                    "name": "MEM",
                    "valueFrom": {
                        "resourceFieldRef": {"containerName": "main", "resource": "limits.memory"}
                    },
                },
                {
                    "name": "CM",
                    "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k", "optional": False}},
                },
                {"name": "S", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
            ],
            "envFrom": [
                {"prefix": "P_", "configMapRef": {"name": "cm"}},
                {"secretRef": {"name": "s", "optional": True}},
            ],
            "ports": [{"containerPort": 8080, "protocol": "TCP", "name": "http"}],
            "volumeMounts": [
                {"name": "cfg", "mountPath": "/cfg", "readOnly": True},
                {"name": "scratch", "mountPath": "/tmp", "subPath": "x"},
            ],
            "imagePullPolicy": "IfNotPresent",
            "resources": {"limits": {"cpu": "1", "memory": "64Mi"}, "requests": {"cpu": "250m"}},
            "livenessProbe": {
                "httpGet": {
                    "path": "/healthz",
                    "port": "http",
                    "httpHeaders": [{"name": "X", "value": ""}],
                },
                "initialDelaySeconds": 3,
                "periodSeconds": 10,
            },
            "readinessProbe": {"tcpSocket": {"port": 8080}, "failureThreshold": 1},
            "startupProbe": {"grpc": {"port": 9090}, "terminationGracePeriodSeconds": 0},
            "lifecycle": {
                "preStop": {"sleep": {"seconds": 2}},
                "postStart": {"exec": {"command": ["true"]}},
            },
            "securityContext": {
                "allowPrivilegeEscalation": False,
                "capabilities": {"drop": ["ALL"]},
                "runAsNonRoot": True,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "terminationMessagePolicy": "FallbackToLogsOnError",
        }
    ],
    "volumes": [
        {
            "name": "cfg",
            "configMap": {"name": "cm", "items": [{"key": "k", "path": "p", "mode": 256}]},
        },
        {"name": "sec", "secret": {"secretName": "s", "defaultMode": 420, "optional": False}},
        {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi", "medium": "Memory"}},
        {"name": "host", "hostPath": {"path": "/var/x", "type": "DirectoryOrCreate"}},
        {"name": "claim", "persistentVolumeClaim": {"claimName": "pvc"}},
        {
            "name": "api",
            "projected": {
                "defaultMode": 420,
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {
                        "configMap": {
                            "name": "kube-root-ca.crt",
                            "items": [{"key": "ca.crt", "path": "ca.crt"}],
                        }
                    },
                    {
                        "downwardAPI": {
                            "items": [
                                {
                                    "path": "namespace",
                                    "fieldRef": {
                                        "apiVersion": "v1",
                                        "fieldPath": "metadata.namespace",
                                    },
                                }
                            ]
                        }
                    },
                ],
            },
        },
        {"name": "csi", "csi": {"driver": "d.example.com", "volumeAttributes": {"a": "b"}}},
    ],
    "restartPolicy": "OnFailure",
    "nodeSelector": {"zone": "a"},
    "serviceAccountName": "sa1",
    "securityContext": {
        "runAsUser": 1000,
        "fsGroup": 2000,
        "supplementalGroups": [3, 4],
        "sysctls": [{"name": "net.x", "value": "1"}],
    },
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}]
            },
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 1,
                    "preference": {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": ["n1"]}
                        ]
                    },
                }
            ],
        },
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 100,
                    "podAffinityTerm": {
                        "topologyKey": "kubernetes.io/hostname",
                        "labelSelector": {"matchLabels": {"app": "x"}},
                        "matchLabelKeys": ["pod-template-hash"],
                    },
                }
            ]
        },
    },
    "tolerations": [
        {"key": "k", "operator": "Exists", "effect": "NoExecute"},
        {"key": "t", "tolerationSeconds": 0},
    ],
    "topologySpreadConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "minDomains": 2}
    ],
    "hostAliases": [{"ip": "10.0.0.1", "hostnames": ["a"]}],
    "dnsConfig": {
        "nameservers": ["1.1.1.1"],
        "options": [{"name": "ndots", "value": "2"}, {"name": "edns0"}],
    },
    "readinessGates": [{"conditionType": "example.com/ready"}],
    "schedulingGates": [{"name": "example.com/gate"}],
    "os": {"name": "linux"},
    "terminationGracePeriodSeconds": 5,
    "priorityClassName": "pc1",
    "enableServiceLinks": False,
    "shareProcessNamespace": True,
}

CRONJOB: dict[str, Any] = {
    "kind": "CronJob",
    "apiVersion": "batch/v1",
    "metadata": {"name": "cj1", "namespace": "team", "uid": "cj-uid"},
    "spec": {
        "schedule": "* * * * *",
        "jobTemplate": {
            "metadata": {"labels": {"team": "a"}},
            "spec": {
                "backoffLimit": 0,
                "parallelism": 2,
                "template": {"metadata": {"labels": {"app": "x"}}, "spec": _POD_SPEC},
            },
        },
    },
}
"""A CronJob kubectl reads for ``create job --from=cronjob/cj1``: a pod template using most of
the pod fields this package declares, so kubectl's own encoding checks their numbers and its
dry run checks their JSON."""


POD: dict[str, Any] = {
    "kind": "Pod",
    "apiVersion": "v1",
    "metadata": {"name": "p1", "namespace": "team", "uid": "p-uid", "labels": {"app": "x"}},
    "spec": {**_POD_SPEC, "restartPolicy": "Always", "nodeName": "n1"},
    "status": {"phase": "Running", "podIP": "10.0.0.5", "qosClass": "Burstable"},
}
NODE: dict[str, Any] = {
    "kind": "Node",
    "apiVersion": "v1",
    "metadata": {"name": "n1", "uid": "n-uid"},
    "spec": {},
    "status": {},
}


def _resource_list(
    group_version: str, rows: tuple[tuple[str, str, bool, tuple[str, ...]], ...]
) -> dict[str, Any]:
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": [
            {
                "name": name,
                "singularName": "" if "/" in name else kind.lower(),
                "namespaced": namespaced,
                "kind": kind,
                "verbs": ["create"] if "/" in name else ["create", "delete", "get", "list"],
                "shortNames": list(short),
            }
            for name, kind, namespaced, short in rows
        ],
    }


@dataclass
class Recorded:
    """One request body kubectl sent."""

    method: str
    path: str
    content_type: str
    body: bytes


@dataclass
class Front:
    """The loopback front: its kubeconfig and what it recorded."""

    kubeconfig: Path
    cache: Path
    bodies: list[Recorded] = field(default_factory=list)


def _answer(obj: dict[str, Any]) -> dict[str, Any]:
    """What the front answers for a decoded body: the object, with the status a review or a
    token request needs for kubectl to finish."""
    kind = obj.get("kind")
    if kind == "SelfSubjectAccessReview":
        return {**obj, "status": {"allowed": True}}
    if kind == "SelfSubjectRulesReview":
        return {**obj, "status": {"resourceRules": [], "nonResourceRules": [], "incomplete": False}}
    if kind == "SelfSubjectReview":
        return {**obj, "status": {"userInfo": {"username": "alice", "groups": ["dev"]}}}
    if kind == "TokenRequest":
        return {**obj, "status": {"token": "tok", "expirationTimestamp": "2030-01-01T00:00:00Z"}}
    return obj


def _app(front: Front) -> web.Application:
    async def handle(request: web.Request) -> web.StreamResponse:
        path = request.path.rstrip("/")
        if request.method == "GET":
            if path == "/api":
                return web.json_response({"kind": "APIVersions", "versions": ["v1"]})
            if path == "/apis":
                groups = [
                    {
                        "name": gv.split("/")[0],
                        "versions": [{"groupVersion": gv, "version": "v1"}],
                        "preferredVersion": {"groupVersion": gv, "version": "v1"},
                    }
                    for gv in _GROUPS
                ]
                return web.json_response({"kind": "APIGroupList", "groups": groups})
            if path == "/api/v1":
                return web.json_response(_resource_list("v1", _CORE))
            gv = path.removeprefix("/apis/")
            if path.startswith("/apis/") and gv in _GROUPS:
                return web.json_response(_resource_list(gv, _GROUPS[gv]))
            if path == "/apis/batch/v1/namespaces/team/cronjobs/cj1":
                return web.json_response(CRONJOB)
            if path == "/api/v1/namespaces/team/pods/p1":
                return web.json_response(POD)
            if path == "/api/v1/nodes/n1":
                return web.json_response(NODE)
            raise web.HTTPNotFound()
        body = await request.read()
        front.bodies.append(Recorded(request.method, path, request.content_type, body))
        if request.content_type != codec.CONTENT_TYPE:
            return web.json_response({"kind": "Status", "status": "Success"})
        try:
            obj = codec.decode(body)
        except errors.StatusError as exc:
            return web.json_response(exc.status(), status=exc.code)
        return web.json_response(_answer(obj), status=201)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


@pytest.fixture(scope="module")
def front(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Front]:
    home = tmp_path_factory.mktemp("kubectl")
    front = Front(home / "config", home / "cache")
    with serve_loopback(_app(front)) as port:
        write_kubeconfig(front.kubeconfig, port, namespace="team")
        yield front


def kubectl(front: Front, *args: str) -> str:
    """Run kubectl against the front; its stdout (a failure fails the test with stderr)."""
    return run_kubectl(front.kubeconfig, front.cache, *args)


def _sent(front: Front, *args: str) -> Recorded:
    """The one body kubectl sends for ``args``."""
    before = len(front.bodies)
    kubectl(front, *args)
    sent = front.bodies[before:]
    assert len(sent) == 1, [(r.method, r.path, r.content_type) for r in sent]
    return sent[0]


@dataclass(frozen=True)
class CreateCase:
    """A ``kubectl create`` command whose body must equal its client dry run."""

    name: str
    args: tuple[str, ...]
    path: str


CREATE_CASES = (
    CreateCase(
        "configmap",
        ("create", "configmap", "cm1", "--from-literal=a=b", "--from-literal=c="),
        "/api/v1/namespaces/team/configmaps",
    ),
    CreateCase(
        "secret generic",
        ("create", "secret", "generic", "s1", "--from-literal=pw=s3cr\u00e9t", "--type=Opaque"),
        "/api/v1/namespaces/team/secrets",
    ),
    CreateCase("namespace", ("create", "namespace", "ns1"), "/api/v1/namespaces"),
    CreateCase(
        "serviceaccount",
        ("create", "serviceaccount", "sa1"),
        "/api/v1/namespaces/team/serviceaccounts",
    ),
    CreateCase(
        "job",
        ("create", "job", "j1", "--image=busybox:1.36", "--", "sh", "-c", "echo hi"),
        "/apis/batch/v1/namespaces/team/jobs",
    ),
    CreateCase(
        "configmap from a binary file",
        ("create", "configmap", "cm2", "--from-file=bin.dat={BIN}", "--from-literal=t=x"),
        "/api/v1/namespaces/team/configmaps",
    ),
    CreateCase(
        "secret from an env file",
        ("create", "secret", "generic", "e1", "--from-env-file={ENV}"),
        "/api/v1/namespaces/team/secrets",
    ),
    CreateCase(
        "secret docker-registry",
        (
            "create",
            "secret",
            "docker-registry",
            "d1",
            "--docker-username=u",
            "--docker-password=p",
            "--docker-server=r.example.com",
        ),
        "/api/v1/namespaces/team/secrets",
    ),
    CreateCase(
        "job from a cronjob",
        ("create", "job", "j2", "--from=cronjob/cj1"),
        "/apis/batch/v1/namespaces/team/jobs",
    ),
    CreateCase(
        "clusterrolebinding",
        (
            "create",
            "clusterrolebinding",
            "crb1",
            "--clusterrole=view",
            "--user=bob",
            "--group=devs",
            "--serviceaccount=team:sa1",
        ),
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    ),
    CreateCase(
        "rolebinding",
        ("create", "rolebinding", "rb1", "--role=r1", "--user=bob"),
        "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings",
    ),
    CreateCase(
        "role",
        ("create", "role", "r1", "--verb=get,list", "--resource=pods,jobs.batch"),
        "/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles",
    ),
    CreateCase(
        "clusterrole",
        (
            "create",
            "clusterrole",
            "cr1",
            "--verb=get",
            "--resource=configmaps",
            "--resource-name=x",
        ),
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    ),
    CreateCase(
        "clusterrole non-resource",
        ("create", "clusterrole", "cr3", "--verb=get", "--non-resource-url=/logs/*"),
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    ),
    CreateCase(
        "clusterrole aggregated",
        ("create", "clusterrole", "cr2", "--aggregation-rule=team=a,tier=b"),
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    ),
    CreateCase(
        "priorityclass",
        ("create", "priorityclass", "pc1", "--value=1000", "--description=hi"),
        "/apis/scheduling.k8s.io/v1/priorityclasses",
    ),
    CreateCase(
        "priorityclass global default",
        (
            "create",
            "priorityclass",
            "pc2",
            "--value=0",
            "--global-default",
            "--preemption-policy=Never",
        ),
        "/apis/scheduling.k8s.io/v1/priorityclasses",
    ),
)


@pytest.mark.parametrize("case", CREATE_CASES, ids=lambda c: c.name)
def test_create_body_is_the_client_dry_run(front: Front, case: CreateCase, tmp_path: Path) -> None:
    binary = tmp_path / "bin.dat"
    binary.write_bytes(bytes(range(256)))
    env = tmp_path / "env"
    env.write_text("A=1\nB=two words\n")
    args = tuple(arg.replace("{BIN}", str(binary)).replace("{ENV}", str(env)) for arg in case.args)
    sent = _sent(front, *args)
    assert (sent.method, sent.path, sent.content_type) == ("POST", case.path, codec.CONTENT_TYPE)
    # Flags go before a job's "--" (what follows it is the container's command).
    cut = args.index("--") if "--" in args else len(args)
    dry_run = (*args[:cut], "--dry-run=client", "-o", "json", *args[cut:])
    expected = json.loads(kubectl(front, *dry_run))
    assert codec.decode(sent.body) == expected


@dataclass(frozen=True)
class ReviewCase:
    """A kubectl command that POSTs a review or a token request, and the object it means."""

    name: str
    args: tuple[str, ...]
    path: str
    expected: dict[str, Any]


_META = {"creationTimestamp": None}
REVIEW_CASES = (
    ReviewCase(
        "can-i resource",
        ("auth", "can-i", "list", "pods"),
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        {
            "kind": "SelfSubjectAccessReview",
            "apiVersion": "authorization.k8s.io/v1",
            "metadata": _META,
            "spec": {
                "resourceAttributes": {
                    "namespace": "team",
                    "verb": "list",
                    "resource": "pods",
                }
            },
            "status": {"allowed": False},
        },
    ),
    ReviewCase(
        "can-i subresource in a group, by name, all namespaces",
        ("auth", "can-i", "update", "jobs.batch/j1", "--subresource=status", "-A"),
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        {
            "kind": "SelfSubjectAccessReview",
            "apiVersion": "authorization.k8s.io/v1",
            "metadata": _META,
            "spec": {
                "resourceAttributes": {
                    "verb": "update",
                    "group": "batch",
                    "resource": "jobs",
                    "subresource": "status",
                    "name": "j1",
                }
            },
            "status": {"allowed": False},
        },
    ),
    ReviewCase(
        "can-i non-resource",
        ("auth", "can-i", "get", "/healthz"),
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        {
            "kind": "SelfSubjectAccessReview",
            "apiVersion": "authorization.k8s.io/v1",
            "metadata": _META,
            "spec": {"nonResourceAttributes": {"path": "/healthz", "verb": "get"}},
            "status": {"allowed": False},
        },
    ),
    ReviewCase(
        "can-i list",
        ("auth", "can-i", "--list"),
        "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
        {
            "kind": "SelfSubjectRulesReview",
            "apiVersion": "authorization.k8s.io/v1",
            "metadata": _META,
            "spec": {"namespace": "team"},
            "status": {"resourceRules": None, "nonResourceRules": None, "incomplete": False},
        },
    ),
    ReviewCase(
        "whoami",
        ("auth", "whoami"),
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        {
            "kind": "SelfSubjectReview",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": _META,
            "status": {"userInfo": {}},
        },
    ),
    ReviewCase(
        "token",
        ("create", "token", "sa1"),
        "/api/v1/namespaces/team/serviceaccounts/sa1/token",
        {
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": _META,
            "spec": {"audiences": None, "expirationSeconds": None},
            "status": {"token": "", "expirationTimestamp": None},
        },
    ),
    ReviewCase(
        "token bound, with audiences and duration",
        (
            "create",
            "token",
            "sa1",
            "--audience=a1",
            "--audience=a2",
            "--duration=1h",
            "--bound-object-kind=Secret",
            "--bound-object-name=s1",
            "--bound-object-uid=u-1",
        ),
        "/api/v1/namespaces/team/serviceaccounts/sa1/token",
        {
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": _META,
            "spec": {
                "audiences": ["a1", "a2"],
                "expirationSeconds": 3600,
                "boundObjectRef": {
                    "kind": "Secret",
                    "apiVersion": "v1",
                    "name": "s1",
                    "uid": "u-1",
                },
            },
            "status": {"token": "", "expirationTimestamp": None},
        },
    ),
)


@pytest.mark.parametrize("case", REVIEW_CASES, ids=lambda c: c.name)
def test_review_and_token_bodies(front: Front, case: ReviewCase) -> None:
    sent = _sent(front, *case.args)
    assert (sent.method, sent.path, sent.content_type) == ("POST", case.path, codec.CONTENT_TYPE)
    assert codec.decode(sent.body) == case.expected


def test_debug_node_pod_body(front: Front) -> None:
    sent = _sent(front, "debug", "node/n1", "--image=busybox", "--profile=general")
    assert (sent.method, sent.path) == ("POST", "/api/v1/namespaces/team/pods")
    pod = codec.decode(sent.body)
    assert pod["metadata"]["name"].startswith("node-debugger-n1-")
    assert pod == {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": pod["metadata"]["name"], "creationTimestamp": None},
        "spec": {
            "volumes": [{"name": "host-root", "hostPath": {"path": "/"}}],
            "containers": [
                {
                    "name": "debugger",
                    "image": "busybox",
                    "resources": {},
                    "volumeMounts": [{"name": "host-root", "mountPath": "/host"}],
                    "terminationMessagePolicy": "File",
                }
            ],
            "restartPolicy": "Never",
            "nodeName": "n1",
            "hostNetwork": True,
            "hostPID": True,
            "hostIPC": True,
            "tolerations": [{"operator": "Exists"}],
        },
        "status": {},
    }


def test_debug_copy_pod_body_is_the_template_kubectl_encodes_for_a_job(front: Front) -> None:
    """kubectl debug --copy-to sends the whole pod; its spec is the same pod spec whose JSON the
    job dry run (from the CronJob holding the same spec) vouches for."""
    sent = _sent(front, "debug", "p1", "--copy-to=p3", "--set-image=*=busybox", "--keep-labels")
    pod = codec.decode(sent.body)
    job = json.loads(
        kubectl(
            front, "create", "job", "j9", "--from=cronjob/cj1", "--dry-run=client", "-o", "json"
        )
    )
    template_spec = job["spec"]["template"]["spec"]
    assert pod["spec"] == {**template_spec, "restartPolicy": "Always"}
    assert pod["metadata"] == {
        "name": "p3",
        "namespace": "team",
        "creationTimestamp": None,
        "labels": {"app": "x"},
    }
    assert pod["status"] == {}


RECONCILED = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: recon, labels: {a: b}}
rules:
- {apiGroups: [batch], resources: [jobs, jobs/status], verbs: [get, list]}
aggregationRule:
  clusterRoleSelectors:
  - matchExpressions: [{key: x, operator: In, values: ["yes"]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: rb, namespace: team}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: recon}
subjects:
- {kind: ServiceAccount, name: sa1, namespace: team}
"""


def test_auth_reconcile_bodies(front: Front, tmp_path: Path) -> None:
    """kubectl auth reconcile creates what is missing with the typed clients: the role, the
    binding's namespace, the binding."""
    manifest = tmp_path / "rbac.yaml"
    manifest.write_text(RECONCILED)
    before = len(front.bodies)
    kubectl(front, "auth", "reconcile", "-f", str(manifest))
    sent = [(r.path, r.content_type, codec.decode(r.body)) for r in front.bodies[before:]]
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    assert sent == [
        (
            f"{rbac}/clusterroles",
            codec.CONTENT_TYPE,
            {
                "kind": "ClusterRole",
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "metadata": {"name": "recon", "creationTimestamp": None, "labels": {"a": "b"}},
                "rules": [
                    {
                        "verbs": ["get", "list"],
                        "apiGroups": ["batch"],
                        "resources": ["jobs", "jobs/status"],
                    }
                ],
                "aggregationRule": {
                    "clusterRoleSelectors": [
                        {"matchExpressions": [{"key": "x", "operator": "In", "values": ["yes"]}]}
                    ]
                },
            },
        ),
        (
            "/api/v1/namespaces",
            codec.CONTENT_TYPE,
            {
                "kind": "Namespace",
                "apiVersion": "v1",
                "metadata": {"name": "team", "creationTimestamp": None},
                "spec": {},
                "status": {},
            },
        ),
        (
            f"{rbac}/namespaces/team/rolebindings",
            codec.CONTENT_TYPE,
            {
                "kind": "RoleBinding",
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "metadata": {"name": "rb", "namespace": "team", "creationTimestamp": None},
                "subjects": [{"kind": "ServiceAccount", "name": "sa1", "namespace": "team"}],
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "recon",
                },
            },
        ),
    ]
