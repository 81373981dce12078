"""The upstream Kueue CRDs, applied unchanged, become served resources: their examples apply
unchanged, ``kubectl get`` prints the CRDs' printer columns, and their CEL rules refuse what
they forbid with the rule's message.

Reads ``../shared/kueue`` (upstream's CRDs and examples, never copied into the repository): the
``shared_kueue`` group, skipped with one line when it is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.apiserver.e2e.conftest import Kubectl

pytestmark = [pytest.mark.shared_kueue, pytest.mark.timeout(300)]

SERVED = [
    "admissionchecks",
    "clusterqueues",
    "cohorts",
    "localqueues",
    "multikueueclusters",
    "multikueueconfigs",
    "provisioningrequestconfigs",
    "resourceflavors",
    "topologies",
    "workloadpriorityclasses",
    "workloads",
]


@pytest.fixture(scope="module")
def kueue(kubectl: Kubectl, kueue_dir: Path) -> Kubectl:
    """The server with every Kueue CRD installed the way Kueue's docs install them."""
    kubectl.out("apply", "--server-side", "-f", str(kueue_dir / "crds"))
    for name in SERVED:
        kubectl.out(
            "wait", "--for=condition=Established", f"crd/{name}.kueue.x-k8s.io", "--timeout=60s"
        )
    return kubectl


def test_every_served_version_is_discoverable(kueue: Kubectl) -> None:
    for version in ("v1beta1", "v1beta2"):
        resources = kueue.out("api-resources", "--api-group=kueue.x-k8s.io", "-o", "name")
        assert {f"{n}.kueue.x-k8s.io" for n in SERVED} <= set(resources.split())
        listed = json.loads(kueue.out("get", "--raw", f"/apis/kueue.x-k8s.io/{version}"))
        assert {r["name"] for r in listed["resources"]} >= set(SERVED)


def test_client_side_apply_of_the_big_crd_fails_as_on_kube_apiserver(
    kubectl: Kubectl, kueue_dir: Path
) -> None:
    # kubectl apply (client side) stores the whole object in an annotation; the Workload CRD is
    # bigger than the 256 KiB annotation limit, which is why Kueue installs with --server-side.
    err = kubectl.fails("apply", "-f", str(kueue_dir / "crds" / "kueue.x-k8s.io_workloads.yaml"))
    assert "metadata.annotations: Too long: may not be more than 262144 bytes" in err


def test_examples_apply_unchanged_and_print_the_crd_columns(
    kueue: Kubectl, kueue_dir: Path
) -> None:
    setup = kueue_dir / "examples" / "getting-started" / "quick-start-setup.yaml"
    out = kueue.out("apply", "-f", str(setup))
    assert "clusterqueue.kueue.x-k8s.io/cluster-queue created" in out
    out = kueue.out(
        "apply", "-f", str(kueue_dir / "examples" / "admin" / "single-clusterqueue-setup.yaml")
    )
    assert "clusterqueue.kueue.x-k8s.io/cluster-queue" in out
    table = kueue.out("get", "clusterqueues")
    # The CRD's additionalPrinterColumns: Cohort and Pending Workloads, the rest at priority 1.
    assert table.splitlines()[0].split() == ["NAME", "COHORT", "PENDING", "WORKLOADS"]
    wide = kueue.out("get", "clusterqueues", "-o", "wide").splitlines()[0].split()
    assert wide == ["NAME", "COHORT", "STRATEGY", "PENDING", "WORKLOADS", "ADMITTED", "WORKLOADS"]
    assert table.splitlines()[1].split()[0] == "cluster-queue"
    queues = kueue.out("get", "localqueues", "-A")
    assert "user-queue" in queues
    flavor = kueue.json("get", "resourceflavor", "default-flavor")
    assert flavor["apiVersion"] == "kueue.x-k8s.io/v1beta2"


def test_cel_rule_refuses_with_its_message(kueue: Kubectl) -> None:
    bad = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "mismatched"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory"],
                    "flavors": [
                        {
                            "name": "default-flavor",
                            "resources": [{"name": "cpu", "nominalQuota": 1}],
                        }
                    ],
                }
            ]
        },
    }
    err = kueue.fails("create", "-f", "-", stdin=json.dumps(bad))
    # kubectl words a 422 from the Status details: "The <Kind> <name> is invalid".
    assert 'The ClusterQueue "mismatched" is invalid' in err
    assert "flavors must have the same number of resources as the coveredResources" in err


def test_schema_validation_and_pruning(kueue: Kubectl) -> None:
    wrong_type = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "typed", "namespace": "default"},
        "spec": {"clusterQueue": 5},
    }
    err = kueue.fails("create", "-f", "-", stdin=json.dumps(wrong_type))
    assert 'The LocalQueue "typed" is invalid' in err
    assert "must be of type string" in err
    unknown = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "extra", "namespace": "default"},
        "spec": {"clusterQueue": "cluster-queue", "bogus": 1},
    }
    err = kueue.fails("create", "-f", "-", stdin=json.dumps(unknown))
    assert 'unknown field "spec.bogus"' in err
    kueue.out("create", "--validate=false", "-f", "-", stdin=json.dumps(unknown))
    stored = kueue.json("get", "localqueue", "extra", "-n", "default")
    assert "bogus" not in stored["spec"]
