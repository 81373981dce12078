"""Deletion as kube-apiserver and its garbage collector do it: finalizers hold an object,
ownerReferences cascade with background, foreground and orphan propagation, and a deleted
Namespace takes what it holds with it."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable

import pytest

from tests.apiserver.e2e.conftest import Kubectl

pytestmark = pytest.mark.timeout(240)


def eventually(check: Callable[[], bool], timeout: float = 30.0) -> None:
    """Poll ``check`` until it holds (the garbage collector works asynchronously)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    pytest.fail("condition not reached in time")


def family(kubectl: Kubectl, ns: str, *, block: bool = False) -> str:
    """An owner ConfigMap with two dependents; returns the owner's uid."""
    kubectl.out("create", "namespace", ns)
    kubectl.out("create", "configmap", "owner", "-n", ns)
    uid = kubectl.json("get", "cm", "owner", "-n", ns)["metadata"]["uid"]
    for name in ("child-a", "child-b"):
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": uid}
        if block:
            ref["blockOwnerDeletion"] = True
        child = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns, "ownerReferences": [ref]},
        }
        kubectl.out("create", "-f", "-", stdin=json.dumps(child))
    return str(uid)


def names(kubectl: Kubectl, ns: str) -> set[str]:
    """The ConfigMaps in ``ns`` (less the root CA bundle some servers publish)."""
    out = kubectl.out("get", "cm", "-n", ns, "-o", "jsonpath={.items[*].metadata.name}")
    return set(out.split()) - {"kube-root-ca.crt"}


def test_background_deletes_dependents_after_the_owner(kubectl: Kubectl) -> None:
    family(kubectl, "cascade-bg")
    kubectl.out("delete", "cm", "owner", "-n", "cascade-bg", "--cascade=background")
    eventually(lambda: names(kubectl, "cascade-bg") == set())


def test_foreground_deletes_dependents_first(kubectl: Kubectl) -> None:
    family(kubectl, "cascade-fg", block=True)
    kubectl.out("delete", "cm", "owner", "-n", "cascade-fg", "--cascade=foreground", "--wait=true")
    eventually(lambda: names(kubectl, "cascade-fg") == set())


def test_orphan_keeps_dependents_and_drops_their_references(kubectl: Kubectl) -> None:
    family(kubectl, "cascade-or")
    kubectl.out("delete", "cm", "owner", "-n", "cascade-or", "--cascade=orphan")
    eventually(lambda: names(kubectl, "cascade-or") == {"child-a", "child-b"})

    def unowned() -> bool:
        child = kubectl.json("get", "cm", "child-a", "-n", "cascade-or")
        return not child["metadata"].get("ownerReferences")

    eventually(unowned)


def test_finalizer_holds_an_object_until_removed(kubectl: Kubectl) -> None:
    kubectl.out("create", "namespace", "finalizing")
    held = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "held", "namespace": "finalizing", "finalizers": ["example.com/x"]},
    }
    kubectl.out("create", "-f", "-", stdin=json.dumps(held))
    kubectl.out("delete", "cm", "held", "-n", "finalizing", "--wait=false")
    obj = kubectl.json("get", "cm", "held", "-n", "finalizing")
    assert obj["metadata"]["deletionTimestamp"].endswith("Z")
    kubectl.out(
        "patch",
        "cm",
        "held",
        "-n",
        "finalizing",
        "--type=json",
        "-p",
        '[{"op":"remove","path":"/metadata/finalizers"}]',
    )
    eventually(lambda: names(kubectl, "finalizing") == set())


def test_deleting_a_namespace_removes_what_it_holds(kubectl: Kubectl) -> None:
    kubectl.out("create", "namespace", "doomed")
    kubectl.out("create", "configmap", "a", "-n", "doomed")
    kubectl.out("create", "secret", "generic", "b", "-n", "doomed", "--from-literal=k=v")
    kubectl.out("delete", "namespace", "doomed", "--wait=true", "--timeout=60s")
    err = kubectl.fails("get", "namespace", "doomed")
    assert 'namespaces "doomed" not found' in err
    # kubectl, on a 404, asks for the namespace and reports that it is gone.
    err = kubectl.fails("get", "secret", "b", "-n", "doomed")
    assert 'namespaces "doomed" not found' in err


def admin_ca_pem(kubectl: Kubectl) -> str:
    """The CA bundle the admin kubeconfig trusts."""
    field = "jsonpath={.clusters[0].cluster.certificate-authority-data}"
    return base64.b64decode(kubectl.out("config", "view", "--raw", "-o", field)).decode()


def test_every_namespace_gets_the_root_ca_configmap(kubectl: Kubectl) -> None:
    ca = admin_ca_pem(kubectl)
    assert "BEGIN CERTIFICATE" in ca
    kubectl.out("create", "namespace", "root-ca")

    def published() -> str:
        done = kubectl.run(
            "get",
            "cm",
            "kube-root-ca.crt",
            "-n",
            "root-ca",
            "-o",
            r"jsonpath={.data.ca\.crt}",
            check=False,
        )
        return done.stdout if done.returncode == 0 else ""

    eventually(lambda: published() == ca)
    # Deleted, it comes back (the publisher re-creates it).
    kubectl.out("delete", "cm", "kube-root-ca.crt", "-n", "root-ca")
    eventually(lambda: published() == ca)
