"""kubectl's everyday verbs against the server: what users type, checked by what kubectl prints
and by the objects the server then holds."""

from __future__ import annotations

import json
import time

import pytest

from tests.apiserver.e2e.conftest import Kubectl

pytestmark = pytest.mark.timeout(240)

CONFIGMAP = """
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: {ns}
  labels: {{app: web, tier: front}}
data:
  mode: fast
"""

POD = """
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: {ns}
  labels: {{app: web}}
spec:
  containers:
  - name: main
    image: busybox
    command: [sleep, "3600"]
    resources:
      limits: {{cpu: "1", memory: 64Mi}}
"""


def namespace(kubectl: Kubectl, name: str) -> str:
    """Create namespace ``name`` and return it."""
    kubectl.out("create", "namespace", name)
    return name


def test_fresh_server_has_the_system_namespaces(kubectl: Kubectl) -> None:
    out = kubectl.out("get", "namespaces")
    assert out.splitlines()[0].split() == ["NAME", "STATUS", "AGE"]
    names = {line.split()[0] for line in out.splitlines()[1:]}
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= names
    assert all(line.split()[1] == "Active" for line in out.splitlines()[1:])


def test_apply_get_in_every_output_format(kubectl: Kubectl) -> None:
    ns = namespace(kubectl, "formats")
    assert "configmap/settings created" in kubectl.out(
        "apply", "-f", "-", stdin=CONFIGMAP.format(ns=ns)
    )
    assert "configmap/settings unchanged" in kubectl.out(
        "apply", "-f", "-", stdin=CONFIGMAP.format(ns=ns)
    )
    table = kubectl.out("get", "configmap", "settings", "-n", ns)
    assert table.splitlines()[0].split() == ["NAME", "DATA", "AGE"]
    assert table.splitlines()[1].split()[:2] == ["settings", "1"]
    obj = kubectl.json("get", "cm", "settings", "-n", ns)
    assert obj["data"] == {"mode": "fast"}
    assert obj["metadata"]["uid"]
    assert obj["metadata"]["creationTimestamp"].endswith("Z")
    assert int(obj["metadata"]["resourceVersion"]) > 0
    assert "kubectl.kubernetes.io/last-applied-configuration" in obj["metadata"]["annotations"]
    assert "mode: fast" in kubectl.out("get", "cm", "settings", "-n", ns, "-o", "yaml")
    path = kubectl.out("get", "cm", "settings", "-n", ns, "-o", "jsonpath={.data.mode}")
    assert path == "fast"
    labelled = kubectl.out("get", "cm", "-n", ns, "-l", "app=web,tier in (front)", "-o", "name")
    assert labelled.split() == ["configmap/settings"]
    # Only the root CA bundle (which every namespace holds) lacks the label.
    unlabelled = kubectl.out("get", "cm", "-n", ns, "-l", "tier!=front", "-o", "name").split()
    assert set(unlabelled) <= {"configmap/kube-root-ca.crt"}


def test_label_annotate_and_the_three_patch_types(kubectl: Kubectl) -> None:
    ns = namespace(kubectl, "patching")
    kubectl.out("apply", "-f", "-", stdin=POD.format(ns=ns))
    kubectl.out("label", "pod", "web", "-n", ns, "stage=canary")
    kubectl.out("annotate", "pod", "web", "-n", ns, "owner=team-a")
    kubectl.out(
        "patch",
        "pod",
        "web",
        "-n",
        ns,
        "--type=strategic",
        "-p",
        '{"spec":{"containers":[{"name":"main","image":"busybox:1.36"}]}}',
    )
    kubectl.out(
        "patch",
        "pod",
        "web",
        "-n",
        ns,
        "--type=merge",
        "-p",
        '{"metadata":{"labels":{"tier":"x"}}}',
    )
    kubectl.out(
        "patch",
        "pod",
        "web",
        "-n",
        ns,
        "--type=json",
        "-p",
        '[{"op":"remove","path":"/metadata/labels/stage"}]',
    )
    pod = kubectl.json("get", "pod", "web", "-n", ns)
    assert pod["metadata"]["labels"] == {"app": "web", "tier": "x"}
    assert pod["metadata"]["annotations"]["owner"] == "team-a"
    assert [c["image"] for c in pod["spec"]["containers"]] == ["busybox:1.36"]
    # Defaults the kubelet relies on: requests from limits, Guaranteed QoS, Pending phase.
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1", "memory": "64Mi"}
    assert pod["status"]["qosClass"] == "Guaranteed"
    assert pod["spec"]["restartPolicy"] == "Always"
    failed = kubectl.fails(
        "patch",
        "pod",
        "web",
        "-n",
        ns,
        "--type=json",
        "-p",
        '[{"op":"test","path":"/metadata/name","value":"other"}]',
    )
    assert "testing value /metadata/name failed" in failed


def test_replace_needs_the_current_resource_version(kubectl: Kubectl) -> None:
    ns = namespace(kubectl, "replacing")
    kubectl.out("apply", "-f", "-", stdin=CONFIGMAP.format(ns=ns))
    obj = kubectl.json("get", "cm", "settings", "-n", ns)
    obj["data"]["mode"] = "slow"
    assert "configmap/settings replaced" in kubectl.out("replace", "-f", "-", stdin=json.dumps(obj))
    obj["data"]["mode"] = "stale"
    err = kubectl.fails("replace", "-f", "-", stdin=json.dumps(obj))
    assert (
        'Operation cannot be fulfilled on configmaps "settings": the object has been modified; '
        "please apply your changes to the latest version and try again"
    ) in err


def test_describe_create_secret_and_server_dry_run(kubectl: Kubectl) -> None:
    ns = namespace(kubectl, "describing")
    kubectl.out("apply", "-f", "-", stdin=POD.format(ns=ns))
    described = kubectl.out("describe", "pod", "web", "-n", ns)
    assert "Name:" in described
    assert "web" in described
    assert "QoS Class:" in described
    kubectl.out("create", "secret", "generic", "creds", "-n", ns, "--from-literal=user=admin")
    secret = kubectl.json("get", "secret", "creds", "-n", ns)
    assert secret["type"] == "Opaque"
    assert secret["data"] == {"user": "YWRtaW4="}
    dry = kubectl.out("create", "configmap", "ghost", "-n", ns, "--dry-run=server", "-o", "json")
    assert json.loads(dry)["metadata"]["name"] == "ghost"
    assert "NotFound" in kubectl.fails("get", "cm", "ghost", "-n", ns)


def test_errors_read_as_upstream(kubectl: Kubectl) -> None:
    err = kubectl.fails("get", "configmap", "missing", "-n", "default")
    assert 'Error from server (NotFound): configmaps "missing" not found' in err
    err = kubectl.fails("get", "jobs.batch", "missing", "-n", "default")
    assert 'jobs.batch "missing" not found' in err
    kubectl.out("create", "configmap", "twice", "-n", "default")
    err = kubectl.fails("create", "configmap", "twice", "-n", "default")
    assert 'configmaps "twice" already exists' in err
    bad = POD.format(ns="default").replace("name: main", "name: Main_Container")
    err = kubectl.fails("apply", "-f", "-", stdin=bad)
    assert 'The Pod "web" is invalid' in err
    assert "spec.containers[0].name" in err


def test_delete_and_wait(kubectl: Kubectl) -> None:
    ns = namespace(kubectl, "waiting")
    kubectl.out("apply", "-f", "-", stdin=POD.format(ns=ns))
    waiter = kubectl.start("wait", "-n", ns, "--for=condition=Ready", "pod/web", "--timeout=60s")
    try:
        time.sleep(1.0)
        status = {
            "status": {
                "phase": "Running",
                "conditions": [{"type": "Ready", "status": "True"}],
            }
        }
        kubectl.out(
            "patch",
            "pod",
            "web",
            "-n",
            ns,
            "--subresource=status",
            "--type=merge",
            "-p",
            json.dumps(status),
        )
        out, err = waiter.communicate(timeout=60)
    finally:
        waiter.kill()
    assert waiter.returncode == 0, err
    assert "pod/web condition met" in out
    assert 'pod "web" force deleted' in kubectl.out(
        "delete", "pod", "web", "-n", ns, "--grace-period=0", "--force"
    )


def test_get_watch_streams_changes(kubectl: Kubectl) -> None:
    ns = namespace(kubectl, "watching")
    watcher = kubectl.start(
        "get", "configmaps", "-n", ns, "-w", "--output-watch-events", "--request-timeout=20s"
    )
    try:
        time.sleep(1.5)
        for i in range(3):
            kubectl.out("create", "configmap", f"w{i}", "-n", ns)
        kubectl.out("delete", "configmap", "w0", "-n", ns)
        time.sleep(1.5)
    finally:
        watcher.terminate()
        out, _ = watcher.communicate(timeout=20)
    rows = [line.split() for line in out.splitlines() if line.strip()]
    events = [(r[0], r[1]) for r in rows if r[0] in {"ADDED", "MODIFIED", "DELETED"}]
    assert ("ADDED", "w0") in events
    assert ("ADDED", "w2") in events
    assert ("DELETED", "w0") in events
    assert events.index(("ADDED", "w0")) < events.index(("DELETED", "w0"))


def test_explain_and_auth_can_i(kubectl: Kubectl) -> None:
    explained = kubectl.out("explain", "pod.spec.containers")
    assert "KIND:" in explained
    assert "Pod" in explained
    assert "FIELD:" in explained
    assert "image" in explained
    assert kubectl.out("auth", "can-i", "create", "pods").strip() == "yes"
    assert kubectl.out("auth", "can-i", "--list").count("*") >= 1
