"""The MultiKueue worker account, end to end through the auth package: a ServiceAccount, a
ClusterRole for Jobs (and their status) and Pods bound to it, a service-account-token Secret
filled by the tokens controller; the Secret's token authenticates as the account, in its own
logical cluster only, and may do what the ClusterRole allows and nothing more."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.apiserver.auth.authn import Authenticator
from numaplane.apiserver.auth.bootstrap import bootstrap_policy
from numaplane.apiserver.auth.pki import Pki, ensure_pki
from numaplane.apiserver.auth.rbac import (
    CLUSTER_ROLE_BINDINGS,
    CLUSTER_ROLES,
    Attributes,
    RBACAuthorizer,
)
from numaplane.apiserver.auth.serviceaccount import TokenSigner
from numaplane.apiserver.auth.tokenrequest import fill_service_account_token_secret
from numaplane.apiserver.user import UserInfo

Object = dict[str, Any]
NS = "kueue-system"


@dataclass
class Worker:
    pki: Pki
    signer: TokenSigner
    objects: dict[tuple[str, str, str], Object]
    token: str

    def lookup(self, resource: str, namespace: str, name: str) -> Object | None:
        return self.objects.get((resource, namespace, name))

    def listing(self, resource: str) -> list[Object]:
        return [o for (r, _, _), o in sorted(self.objects.items()) if r == resource]


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Worker:
    pki = ensure_pki(tmp_path_factory.mktemp("data"), [])
    signer = TokenSigner(pki.sa_key_pem)
    sa = {"metadata": {"name": "multikueue-sa", "namespace": NS, "uid": "sa-uid"}}
    role = {
        "kind": "ClusterRole",
        "metadata": {"name": "multikueue-sa-role"},
        "rules": [
            {
                "apiGroups": ["batch"],
                "resources": ["jobs"],
                "verbs": ["create", "delete", "get", "list", "watch"],
            },
            {"apiGroups": ["batch"], "resources": ["jobs/status"], "verbs": ["get"]},
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
        ],
    }
    binding = {
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "multikueue-sa-crb"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "multikueue-sa-role",
        },
        "subjects": [{"kind": "ServiceAccount", "name": "multikueue-sa", "namespace": NS}],
    }
    secret = {
        "kind": "Secret",
        "type": "kubernetes.io/service-account-token",
        "metadata": {
            "name": "multikueue-sa",
            "namespace": NS,
            "uid": "secret-uid",
            "annotations": {"kubernetes.io/service-account.name": "multikueue-sa"},
        },
    }
    filled = fill_service_account_token_secret(
        secret, sa, pki.ca_cert_pem, NS, signer=signer, cluster="worker1"
    )
    objects: dict[tuple[str, str, str], Object] = {
        ("serviceaccounts", NS, "multikueue-sa"): sa,
        ("secrets", NS, "multikueue-sa"): filled,
        (CLUSTER_ROLES, "", "multikueue-sa-role"): role,
        (CLUSTER_ROLE_BINDINGS, "", "multikueue-sa-crb"): binding,
    }
    for resource, obj in bootstrap_policy():
        objects[(resource, "", obj["metadata"]["name"])] = obj
    token = base64.b64decode(filled["data"]["token"]).decode()
    return Worker(pki, signer, objects, token)


def _user(worker: Worker, cluster: str = "worker1") -> UserInfo | None:
    auth = Authenticator.create(worker.pki.ca_cert_pem, signer=worker.signer)
    return auth.authenticate(None, f"Bearer {worker.token}", cluster, worker.lookup)


def test_the_secret_carries_what_the_kubeconfig_needs(worker: Worker) -> None:
    data = worker.objects[("secrets", NS, "multikueue-sa")]["data"]
    assert base64.b64decode(data["ca.crt"]) == worker.pki.ca_cert_pem
    assert _user(worker) == UserInfo(
        "system:serviceaccount:kueue-system:multikueue-sa",
        ("system:serviceaccounts", "system:serviceaccounts:kueue-system", "system:authenticated"),
        "sa-uid",
    )


def test_the_token_is_worthless_in_another_logical_cluster(worker: Worker) -> None:
    assert _user(worker, "worker2") is None


@dataclass(frozen=True)
class Case:
    name: str
    verb: str
    resource: str
    group: str = ""
    subresource: str = ""
    namespace: str = "default"
    allowed: bool = True


CASES = [
    Case("create jobs", "create", "jobs", "batch"),
    Case("watch jobs in any namespace", "watch", "jobs", "batch", namespace="team-a"),
    Case("list jobs across namespaces", "list", "jobs", "batch", namespace=""),
    Case("read job status", "get", "jobs", "batch", "status"),
    Case("list pods", "list", "pods"),
    Case("no job updates", "update", "jobs", "batch", allowed=False),
    Case("no job status writes", "update", "jobs", "batch", "status", allowed=False),
    Case("no pod logs", "get", "pods", subresource="log", allowed=False),
    Case("no secrets", "get", "secrets", allowed=False),
    Case(
        "no cluster queues", "list", "clusterqueues", "kueue.x-k8s.io", namespace="", allowed=False
    ),
    Case(
        "no RBAC",
        "create",
        "clusterrolebindings",
        "rbac.authorization.k8s.io",
        namespace="",
        allowed=False,
    ),
    Case(
        "can ask what it can do",
        "create",
        "selfsubjectaccessreviews",
        "authorization.k8s.io",
        namespace="",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_account_may_do_what_its_role_allows_and_nothing_more(
    worker: Worker, case: Case
) -> None:
    user = _user(worker)
    assert user is not None
    attrs = Attributes(
        user,
        case.verb,
        case.namespace,
        case.group,
        resource=case.resource,
        subresource=case.subresource,
    )
    assert RBACAuthorizer(worker.listing).authorize(attrs).allowed is case.allowed
