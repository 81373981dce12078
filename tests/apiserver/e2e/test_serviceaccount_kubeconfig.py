"""A MultiKueue worker kubeconfig made the way Kueue's documentation makes it (a ServiceAccount,
a ClusterRole and its binding, a ``kubernetes.io/service-account-token`` Secret read back with
kubectl) works with kubectl, and can do what the role allows and nothing more."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
import yaml

from tests.apiserver.e2e.conftest import Kubectl

pytestmark = pytest.mark.timeout(240)

SA = "multikueue-sa"
NS = "kueue-system"

ROLE_AND_BINDING = f"""
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {SA}
  namespace: {NS}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {SA}-role
rules:
- apiGroups: [batch]
  resources: [jobs]
  verbs: [create, delete, get, list, watch]
- apiGroups: [batch]
  resources: [jobs/status]
  verbs: [get]
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch]
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads]
  verbs: [create, delete, get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {SA}-crb
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {SA}-role
subjects:
- kind: ServiceAccount
  name: {SA}
  namespace: {NS}
"""

TOKEN_SECRET = f"""
apiVersion: v1
kind: Secret
type: kubernetes.io/service-account-token
metadata:
  name: {SA}
  namespace: {NS}
  annotations:
    kubernetes.io/service-account.name: "{SA}"
"""

JOB = """
apiVersion: batch/v1
kind: Job
metadata:
  name: sample
  namespace: default
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: [sleep, "1"]
"""


@pytest.fixture(scope="module")
def worker_kubeconfig(kubectl: Kubectl, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The kubeconfig, written from what kubectl reads back, as the upstream script does."""
    kubectl.out("create", "namespace", NS)
    kubectl.out("apply", "-f", "-", stdin=ROLE_AND_BINDING)
    kubectl.out("apply", "-f", "-", stdin=TOKEN_SECRET)
    token_b64 = kubectl.out("get", "-n", NS, f"secrets/{SA}", "-o", "jsonpath={.data['token']}")
    ca_b64 = kubectl.out("get", "-n", NS, f"secrets/{SA}", "-o", "jsonpath={.data['ca\\.crt']}")
    namespace = kubectl.out("get", "-n", NS, f"secrets/{SA}", "-o", "jsonpath={.data.namespace}")
    assert base64.b64decode(namespace).decode() == NS
    context = kubectl.out("config", "current-context").strip()
    cluster = kubectl.out(
        "config", "view", "-o", f'jsonpath={{.contexts[?(@.name == "{context}")].context.cluster}}'
    )
    server = kubectl.out(
        "config", "view", "-o", f'jsonpath={{.clusters[?(@.name == "{cluster}")].cluster.server}}'
    )
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": cluster, "cluster": {"certificate-authority-data": ca_b64, "server": server}}
        ],
        "contexts": [{"name": context, "context": {"cluster": cluster, "user": f"{cluster}-{SA}"}}],
        "current-context": context,
        "users": [
            {"name": f"{cluster}-{SA}", "user": {"token": base64.b64decode(token_b64).decode()}}
        ],
    }
    path = tmp_path_factory.mktemp("worker") / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


def test_the_token_authenticates_as_the_service_account(worker_kubeconfig: Path) -> None:
    worker = Kubectl(worker_kubeconfig)
    who = json.loads(worker.out("auth", "whoami", "-o", "json"))
    assert who["status"]["userInfo"]["username"] == f"system:serviceaccount:{NS}:{SA}"
    assert "system:serviceaccounts" in who["status"]["userInfo"]["groups"]


def test_it_can_do_what_the_role_allows(worker_kubeconfig: Path) -> None:
    worker = Kubectl(worker_kubeconfig)
    assert "job.batch/sample created" in worker.out("create", "-f", "-", stdin=JOB)
    assert worker.json("get", "job", "sample", "-n", "default")["spec"]["backoffLimit"] == 6
    worker.out("get", "pods", "-A")
    assert worker.out("auth", "can-i", "create", "jobs.batch").strip() == "yes"
    assert 'job.batch "sample" deleted' in worker.out("delete", "job", "sample", "-n", "default")


def test_and_nothing_more(worker_kubeconfig: Path, kubectl: Kubectl) -> None:
    worker = Kubectl(worker_kubeconfig)
    err = worker.fails("get", "secrets", "-n", NS)
    assert (
        f'secrets is forbidden: User "system:serviceaccount:{NS}:{SA}" cannot list resource '
        f'"secrets" in API group "" in the namespace "{NS}"'
    ) in err
    err = worker.fails("create", "configmap", "x", "-n", "default")
    assert 'configmaps is forbidden: User "system:serviceaccount:' in err
    assert worker.run("auth", "can-i", "delete", "pods", check=False).stdout.strip() == "no"
    kubectl.out("create", "-f", "-", stdin=JOB.replace("name: sample", "name: locked"))
    err = worker.fails("patch", "job", "locked", "-n", "default", "-p", '{"spec":{"suspend":true}}')
    assert 'jobs.batch "locked" is forbidden' in err
    assert 'cannot patch resource "jobs" in API group "batch"' in err


def test_kubectl_create_token_issues_a_working_token(kubectl: Kubectl, tmp_path: Path) -> None:
    kubectl.run("create", "namespace", NS, check=False)
    kubectl.run("create", "serviceaccount", "short-lived", "-n", NS, check=False)
    token = kubectl.out("create", "token", "short-lived", "-n", NS, "--duration=10m").strip()
    assert token.count(".") == 2
    config = yaml.safe_load(kubectl.out("config", "view", "--raw"))
    config["users"][0]["user"] = {"token": token}
    path = tmp_path / "token.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    who = json.loads(Kubectl(path).out("auth", "whoami", "-o", "json"))
    assert who["status"]["userInfo"]["username"] == f"system:serviceaccount:{NS}:short-lived"
    # No role grants it anything: listing pods is refused.
    assert "Forbidden" in Kubectl(path).fails("get", "pods", "-n", NS)
