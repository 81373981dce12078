"""The default admission chain on new Pods: ServiceAccount, Priority, DefaultTolerationSeconds."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest

from numaplane.apiserver.errors import StatusError
from numaplane.apiserver.kinds.admission import (
    admit_pod,
    admit_pod_default_tolerations,
    admit_pod_service_account,
    token_volume,
)

MOUNT = {
    "name": "kube-api-access-abcde",
    "readOnly": True,
    "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
}


def pod(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec},
    }


@dataclass(frozen=True)
class AccountCase:
    name: str
    spec: dict[str, Any]
    account: dict[str, Any]
    mounts: list[dict[str, Any]]
    volumes: list[dict[str, Any]]
    pull_secrets: list[dict[str, Any]] | None = None
    account_name: str = "default"


ACCOUNT_CASES = [
    AccountCase(
        "default account, token mounted",
        {},
        {},
        [MOUNT],
        [token_volume("kube-api-access-abcde")],
    ),
    AccountCase(
        "pod opts out",
        {"automountServiceAccountToken": False},
        {},
        [],
        [],
    ),
    AccountCase(
        "account opts out",
        {},
        {"automountServiceAccountToken": False},
        [],
        [],
    ),
    AccountCase(
        "pod's choice wins over the account's",
        {"automountServiceAccountToken": True},
        {"automountServiceAccountToken": False},
        [MOUNT],
        [token_volume("kube-api-access-abcde")],
    ),
    AccountCase(
        "named account's pull secrets",
        {"serviceAccountName": "builder"},
        {"imagePullSecrets": [{"name": "regcred"}]},
        [MOUNT],
        [token_volume("kube-api-access-abcde")],
        [{"name": "regcred"}],
        "builder",
    ),
]


@pytest.mark.parametrize("case", ACCOUNT_CASES, ids=lambda c: c.name)
def test_service_account_plugin(case: AccountCase) -> None:
    obj = pod(**copy.deepcopy(case.spec))
    admit_pod_service_account(obj, "ns", case.account, "abcde")
    spec = obj["spec"]
    assert spec["serviceAccountName"] == case.account_name
    assert spec["containers"][0].get("volumeMounts", []) == case.mounts
    assert spec.get("volumes", []) == case.volumes
    assert spec.get("imagePullSecrets") == case.pull_secrets


def test_missing_account_is_forbidden() -> None:
    with pytest.raises(StatusError) as caught:
        admit_pod_service_account(pod(), "ns", None, "abcde")
    assert (caught.value.code, caught.value.message) == (
        403,
        'pods "p" is forbidden: error looking up service account ns/default: serviceaccount '
        '"default" not found',
    )


@dataclass(frozen=True)
class TolerationCase:
    name: str
    tolerations: list[dict[str, Any]]
    added_keys: tuple[str, ...]
    kept: int = field(default=0)


TOLERATION_CASES = [
    TolerationCase(
        "none given",
        [],
        ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"),
    ),
    TolerationCase(
        "tolerates everything",
        [{"operator": "Exists"}],
        (),
        1,
    ),
    TolerationCase(
        "tolerates not-ready already",
        [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}],
        ("node.kubernetes.io/unreachable",),
        1,
    ),
    TolerationCase(
        "a NoSchedule toleration does not count",
        [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}],
        ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"),
        1,
    ),
]


@pytest.mark.parametrize("case", TOLERATION_CASES, ids=lambda c: c.name)
def test_default_toleration_seconds(case: TolerationCase) -> None:
    obj = pod(tolerations=copy.deepcopy(case.tolerations))
    admit_pod_default_tolerations(obj)
    added = obj["spec"]["tolerations"][case.kept :]
    assert tuple(t["key"] for t in added) == case.added_keys
    for toleration in added:
        assert toleration == {
            "key": toleration["key"],
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        }


def test_admission_chain() -> None:
    obj = pod(priorityClassName="system-node-critical")
    classes = [{"metadata": {"name": "system-node-critical"}, "value": 2000001000}]
    admit_pod(obj, "ns", service_account={}, priority_classes=classes, token_volume_suffix="x1y2z")
    spec = obj["spec"]
    assert spec["priority"] == 2000001000
    assert spec["volumes"][0]["name"] == "kube-api-access-x1y2z"
    assert len(spec["tolerations"]) == 2
