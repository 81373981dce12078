"""What the tests of the manager's connections to its workers share: worker kubeconfigs made
with a ServiceAccount token, MultiKueue objects, a running :class:`RemoteClusters` on a manager
cluster and bounded waits."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from numaplane.kube import KubeClient, load_kubeconfig
from numaplane.kube.errors import ApiError
from numaplane.kube.events import EventRecorder
from numaplane.kueue.runtime.install import install_kueue_crds
from numaplane.kueue.runtime.multikueue import RemoteClusters
from numaplane.testing import kueue_objects as objects
from numaplane.testing.apiserver import RunningApiServer

API = "kueue.x-k8s.io/v1beta2"
NAMESPACE = "kueue-system"
ORIGIN = "multikueue"
WAIT_S = 60.0
SA = "multikueue-sa"
T = TypeVar("T")
ATTEMPTS = re.compile(
    r"; connection attempts: (\d+), next connection attempt: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"
)


async def _install(server: RunningApiServer, cluster: str) -> None:
    async with KubeClient(load_kubeconfig(server.cluster_kubeconfig(cluster))) as client:
        await install_kueue_crds(client)


async def make_worker_kubeconfig(path: Path) -> str:
    """The kubeconfig for the manager of the worker whose admin kubeconfig is ``path``: the
    CA, and the token of a ServiceAccount bound to a ClusterRole on Workloads and Jobs (what
    Kueue's documented ``create-multikueue-kubeconfig`` script makes)."""
    config = load_kubeconfig(path)
    async with KubeClient(config) as client:
        await install_kueue_crds(client)
        await client.create("v1", "namespaces", objects.namespace(NAMESPACE))
        sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": SA}}
        await client.create("v1", "serviceaccounts", sa, NAMESPACE)
        rules = [
            {
                "apiGroups": ["batch"],
                "resources": ["jobs", "jobs/status"],
                "verbs": ["create", "delete", "get", "list", "watch", "update", "patch"],
            },
            {
                "apiGroups": ["kueue.x-k8s.io"],
                "resources": ["workloads", "workloads/status"],
                "verbs": ["create", "delete", "get", "list", "watch", "update", "patch"],
            },
        ]
        role = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "multikueue-role"},
            "rules": rules,
        }
        await client.create("rbac.authorization.k8s.io/v1", "clusterroles", role)
        binding = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "multikueue-crb"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "multikueue-role",
            },
            "subjects": [{"kind": "ServiceAccount", "name": SA, "namespace": NAMESPACE}],
        }
        await client.create("rbac.authorization.k8s.io/v1", "clusterrolebindings", binding)
        request = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "metadata": {"name": SA},
            "spec": {"expirationSeconds": 86400},
        }
        answer = await client.create(
            "v1", "serviceaccounts", request, NAMESPACE, subresource="token"
        )
    assert config.ca_pem is not None
    return kubeconfig_text(config.server, config.ca_pem, str(answer["status"]["token"]))


def kubeconfig_text(server: str, ca_pem: bytes, token: str) -> str:
    """A kubeconfig with the CA inline and a bearer token."""
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "worker1",
                "cluster": {
                    "server": server,
                    "certificate-authority-data": base64.b64encode(ca_pem).decode(),
                },
            }
        ],
        "users": [{"name": SA, "user": {"token": token}}],
        "contexts": [{"name": "ctx", "context": {"cluster": "worker1", "user": SA}}],
        "current-context": "ctx",
    }
    return yaml.safe_dump(doc)


def with_host(text: str, host: str) -> str:
    """``text`` with its server's ``host:port`` replaced (the path kept)."""
    doc = yaml.safe_load(text)
    server = doc["clusters"][0]["cluster"]["server"]
    doc["clusters"][0]["cluster"]["server"] = re.sub(r"https://[^/]+", f"https://{host}", server)
    return str(yaml.safe_dump(doc))


def broken(text: str) -> str:
    """``text`` with its server moved to a port nothing listens on (upstream's way)."""
    return with_host(text, "127.0.0.1:1")


def secret(name: str, text: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "data": {"kubeconfig": base64.b64encode(text.encode()).decode()},
    }


def admission_check(name: str, config: str) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "AdmissionCheck",
        "metadata": {"name": name},
        "spec": {
            "controllerName": "kueue.x-k8s.io/multikueue",
            "parameters": {
                "apiGroup": "kueue.x-k8s.io",
                "kind": "MultiKueueConfig",
                "name": config,
            },
        },
    }


def mk_config(name: str, *clusters: str) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "MultiKueueConfig",
        "metadata": {"name": name},
        "spec": {"clusters": list(clusters)},
    }


def mk_cluster(name: str, location: str, location_type: str = "Secret") -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "MultiKueueCluster",
        "metadata": {"name": name},
        "spec": {
            "clusterSource": {"kubeConfig": {"location": location, "locationType": location_type}}
        },
    }


def active(obj: dict[str, Any] | None) -> tuple[str, str, str] | None:
    for cond in ((obj or {}).get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Active":
            return (cond["status"], cond["reason"], cond["message"])
    return None


@dataclass
class Manager:
    """A manager cluster's client and a running :class:`RemoteClusters`."""

    client: KubeClient
    clusters: RemoteClusters
    changes: list[str] = field(default_factory=list)
    remote_changes: list[tuple[str, str]] = field(default_factory=list)

    async def create(self, api_version: str, resource: str, obj: dict[str, Any]) -> None:
        namespace = obj["metadata"].get("namespace")
        await self.client.create(api_version, resource, obj, namespace)

    async def put_secret(self, name: str, text: str) -> None:
        try:
            current = await self.client.get("v1", "secrets", name, NAMESPACE)
        except ApiError as err:
            if not err.is_not_found:
                raise
            await self.create("v1", "secrets", secret(name, text))
            return
        body = secret(name, text)
        body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        await self.client.update("v1", "secrets", body, NAMESPACE)

    async def active_of(self, resource: str, name: str) -> tuple[str, str, str] | None:
        try:
            return active(await self.client.get(API, resource, name))
        except ApiError as err:
            if not err.is_not_found:
                raise
            return None

    async def until_active(
        self, resource: str, name: str, check: Callable[[tuple[str, str, str]], bool]
    ) -> tuple[str, str, str]:
        async def probe() -> tuple[str, str, str] | None:
            found = await self.active_of(resource, name)
            return found if found is not None and check(found) else None

        return await until(probe, f"{resource}/{name} Active as wanted")

    async def until_condition(self, resource: str, name: str, wanted: tuple[str, str, str]) -> None:
        await self.until_active(resource, name, lambda found: found == wanted)


async def until(probe: Callable[[], Awaitable[T | None]], what: str) -> T:
    """Poll ``probe`` until it answers something; fail after ``WAIT_S``."""
    deadline = time.monotonic() + WAIT_S
    while True:
        found = await probe()
        if found is not None:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not seen in {WAIT_S:.0f}s")
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def manager(server: RunningApiServer, cluster: str, **options: Any) -> AsyncIterator[Manager]:
    """Cluster ``cluster`` as a manager: the Kueue CRDs, Kueue's namespace and RemoteClusters
    running with the INT timing knobs (shortened retry base)."""
    await _install(server, cluster)
    async with KubeClient(load_kubeconfig(server.cluster_kubeconfig(cluster))) as client:
        with contextlib.suppress(ApiError):
            await client.create("v1", "namespaces", objects.namespace(NAMESPACE))
        changes: list[str] = []
        remote_changes: list[tuple[str, str]] = []
        recorder = EventRecorder(client, "multikueue-test")
        defaults: dict[str, Any] = {
            "recorder": recorder,
            "origin": ORIGIN,
            "gc_interval": 0.0,
            "retry_base": 0.2,
            "file_poll_interval": 0.1,
            "on_cluster_change": changes.append,
            "on_remote_change": lambda c, k: remote_changes.append((c, k)),
        }
        clusters = RemoteClusters(client, namespace=NAMESPACE, **{**defaults, **options})
        handle = Manager(client, clusters, changes, remote_changes)
        task = asyncio.ensure_future(handle.clusters.run())
        try:
            yield handle
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await recorder.close(timeout=2.0)
    await asyncio.sleep(0.25)  # TLS shutdown of the closed connections


def run(work: Awaitable[None]) -> None:
    async def bounded() -> None:
        await asyncio.wait_for(work, 200)

    asyncio.run(bounded())
