"""A MultiKueue worker's kubeconfig made the way Kueue's documentation makes it
(``site/content/en/docs/tasks/manage/setup_multikueue.md``, ``create-multikueue-kubeconfig.sh``):
on the worker a ServiceAccount, a ClusterRole with what the manager needs on Workloads and
batch Jobs, its binding and a ``kubernetes.io/service-account-token`` Secret; the token and the
worker's CA go into a kubeconfig that is stored on the manager as Secret ``<NAME>-secret``
(key ``kubeconfig``) in Kueue's namespace, and optionally the MultiKueueCluster that refers to
it. Every step is idempotent: running it again refreshes the Secret.
"""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass
from typing import Any, Final

import yaml

from numaplane.kube.client import KubeClient
from numaplane.kube.errors import ApiError
from numaplane.kueue import constants as c
from numaplane.kueue.errors import KueueError

#: upstream's script names (``MULTIKUEUE_SA`` and the role/binding it derives).
SERVICE_ACCOUNT: Final = "multikueue-sa"
ROLE: Final = f"{SERVICE_ACCOUNT}-role"
BINDING: Final = f"{SERVICE_ACCOUNT}-crb"
SECRET_KEY: Final = "kubeconfig"
#: How long the worker may take to fill the token Secret.
TOKEN_WAIT_S: Final = 10.0

#: The verbs upstream's script grants for batch Jobs and Workloads (other job kinds are not
#: integrated in numaplane).
RULES: Final = (
    {
        "apiGroups": ["batch"],
        "resources": ["jobs"],
        "verbs": ["create", "delete", "get", "list", "watch"],
    },
    {"apiGroups": ["batch"], "resources": ["jobs/status"], "verbs": ["get"]},
    {
        "apiGroups": [c.GROUP],
        "resources": ["workloads"],
        "verbs": ["create", "delete", "get", "list", "watch", "update", "patch"],
    },
    {
        "apiGroups": [c.GROUP],
        "resources": ["workloads/status"],
        "verbs": ["get", "patch", "update"],
    },
)


def secret_name(worker: str) -> str:
    """The manager-side Secret of ``worker``'s kubeconfig (what the example's
    MultiKueueCluster names)."""
    return f"{worker}-secret"


@dataclass(frozen=True)
class WorkerAccess:
    """What :func:`add_worker` made."""

    kubeconfig: str
    secret: str
    namespace: str
    cluster_created: bool


async def _apply(client: KubeClient, api_version: str, resource: str, body: dict[str, Any]) -> None:
    """Create ``body``, or replace the existing object with it."""
    namespace = body["metadata"].get("namespace")
    try:
        await client.create(api_version, resource, body, namespace, decode=False)
        return
    except ApiError as err:
        if not err.is_conflict:
            raise
    current = await client.get(api_version, resource, body["metadata"]["name"], namespace)
    fresh = dict(body)
    fresh["metadata"] = {
        **body["metadata"],
        "resourceVersion": current["metadata"]["resourceVersion"],
    }
    await client.update(api_version, resource, fresh, namespace, decode=False)


async def _ensure_namespace(client: KubeClient, namespace: str) -> None:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    try:
        await client.create("v1", "namespaces", body, decode=False)
    except ApiError as err:
        if not err.is_conflict:
            raise


async def _token(client: KubeClient, namespace: str, wait_s: float) -> tuple[str, str]:
    """The token Secret's token and base64 CA once the worker filled them."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    while True:
        secret = await client.get("v1", "secrets", SERVICE_ACCOUNT, namespace)
        data = secret.get("data") or {}
        if data.get("token") and data.get("ca.crt"):
            return base64.b64decode(data["token"]).decode(), str(data["ca.crt"])
        if loop.time() > deadline:
            raise KueueError(
                f"secret {namespace}/{SERVICE_ACCOUNT} on the worker: no token after "
                f"{wait_s:.0f}s (does the worker issue service account tokens?)"
            )
        await asyncio.sleep(0.2)


async def worker_kubeconfig(
    worker: KubeClient, *, namespace: str, wait_s: float = TOKEN_WAIT_S
) -> str:
    """Make the ServiceAccount, role, binding and token Secret on ``worker``; the kubeconfig
    (YAML) that reaches it as that ServiceAccount."""
    await _ensure_namespace(worker, namespace)
    meta = {"name": SERVICE_ACCOUNT, "namespace": namespace}
    await _apply(
        worker,
        "v1",
        "serviceaccounts",
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta},
    )
    rbac = "rbac.authorization.k8s.io/v1"
    role = {
        "apiVersion": rbac,
        "kind": "ClusterRole",
        "metadata": {"name": ROLE},
        "rules": list(RULES),
    }
    await _apply(worker, rbac, "clusterroles", role)
    binding = {
        "apiVersion": rbac,
        "kind": "ClusterRoleBinding",
        "metadata": {"name": BINDING},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ROLE},
        "subjects": [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": namespace}],
    }
    await _apply(worker, rbac, "clusterrolebindings", binding)
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/service-account-token",
        "metadata": {
            **meta,
            "annotations": {"kubernetes.io/service-account.name": SERVICE_ACCOUNT},
        },
    }
    try:
        await worker.create("v1", "secrets", secret, namespace, decode=False)
    except ApiError as err:
        # An existing token Secret keeps its token: the kubeconfig is made again from it.
        if not err.is_conflict:
            raise
    token, ca_b64 = await _token(worker, namespace, wait_s)
    cluster = worker.config.context or "worker"
    user = f"{cluster}-{SERVICE_ACCOUNT}"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": cluster,
                "cluster": {"certificate-authority-data": ca_b64, "server": worker.config.server},
            }
        ],
        "contexts": [{"name": cluster, "context": {"cluster": cluster, "user": user}}],
        "current-context": cluster,
        "users": [{"name": user, "user": {"token": token}}],
    }
    return str(yaml.safe_dump(config, sort_keys=False))


async def store_worker_kubeconfig(
    manager: KubeClient,
    name: str,
    kubeconfig: str,
    *,
    namespace: str,
    create_cluster: bool = False,
) -> bool:
    """Store ``kubeconfig`` as Secret ``<name>-secret`` in ``namespace`` on ``manager``; with
    ``create_cluster`` also the MultiKueueCluster ``name`` that uses it (left as it is when it
    exists). Whether the MultiKueueCluster was created."""
    await _ensure_namespace(manager, namespace)
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {"name": secret_name(name), "namespace": namespace},
        "data": {SECRET_KEY: base64.b64encode(kubeconfig.encode()).decode()},
    }
    await _apply(manager, "v1", "secrets", secret)
    if not create_cluster:
        return False
    cluster = {
        "apiVersion": c.API_VERSION,
        "kind": "MultiKueueCluster",
        "metadata": {"name": name},
        "spec": {
            "clusterSource": {
                "kubeConfig": {"locationType": "Secret", "location": secret_name(name)}
            }
        },
    }
    try:
        await manager.create(c.API_VERSION, "multikueueclusters", cluster, decode=False)
    except ApiError as err:
        if not err.is_conflict:
            raise
        return False
    return True


async def add_worker(
    manager: KubeClient,
    worker: KubeClient,
    name: str,
    *,
    namespace: str,
    create_cluster: bool = False,
    wait_s: float = TOKEN_WAIT_S,
) -> WorkerAccess:
    """:func:`worker_kubeconfig` then :func:`store_worker_kubeconfig`."""
    text = await worker_kubeconfig(worker, namespace=namespace, wait_s=wait_s)
    created = await store_worker_kubeconfig(
        manager, name, text, namespace=namespace, create_cluster=create_cluster
    )
    return WorkerAccess(text, secret_name(name), namespace, created)
