"""What a MultiKueue integration test needs besides running clusters (the INT harness of the
scenario corpus, upstream's ``test/integration/multikueue``): the objects of fixture F on the
manager and on each worker, the reservation a test writes in place of a scheduler (upstream's
``util.SetQuotaReservation``), the broken kubeconfig that cuts a worker off, condition reads
and a bounded wait.

This layer sits below ``numaplane.kube`` and ``numaplane.kueue``: clients are taken as
:class:`ClientLike`, and the reservation's status comes from Kueue's own rule, reached by name
at run time (as :mod:`numaplane.testing.kueue` reaches the engine).
"""

from __future__ import annotations

import asyncio
import base64
import importlib
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import yaml

from numaplane.api.quantity import Quantity
from numaplane.testing import kueue_objects as objects
from numaplane.testing.apiserver import RunningApiServer

Obj = dict[str, Any]
T = TypeVar("T")

API = objects.API
KUEUE_NAMESPACE = "kueue-system"
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"
WORKERS = ("worker1", "worker2")
#: Fixture F's names (upstream ``setupMultiKueueFixture``).
CHECK = "ac1"
CONFIG = "multikueueconfig"
QUEUE = "q1"
FLAVOR = "default"
#: Where "break connection" points a worker's kubeconfig (nothing listens there).
BROKEN_SERVER = "https://127.0.0.1:1"
#: Upper bound of every wait of a scenario.
WAIT_S = 30.0
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


@dataclass(frozen=True)
class Clusters:
    """A test's three logical clusters (manager, worker1, worker2) of one API server."""

    server: RunningApiServer
    manager: str
    workers: tuple[str, str]

    @classmethod
    def numbered(cls, server: RunningApiServer, index: int) -> Clusters:
        """The ``index``-th set of :func:`cluster_names`."""
        manager, first, second = cluster_names(index)
        return cls(server, manager, (first, second))

    def names(self) -> tuple[str, str, str]:
        """Manager, worker1, worker2."""
        return (self.manager, *self.workers)

    def kubeconfig(self, name: str) -> Path:
        """The admin kubeconfig of cluster ``name``."""
        return self.server.cluster_kubeconfig(name)


@dataclass(frozen=True)
class SeparateServers:
    """A manager and two workers, each the default cluster of its own API server (the INT
    harness's other setting, and how workers that are other clusters are reached)."""

    servers: tuple[RunningApiServer, RunningApiServer, RunningApiServer]
    manager: str = "manager"
    workers: tuple[str, str] = WORKERS

    def names(self) -> tuple[str, str, str]:
        """Manager, worker1, worker2."""
        return (self.manager, *self.workers)

    def kubeconfig(self, name: str) -> Path:
        """The admin kubeconfig of the server of cluster ``name``."""
        return self.servers[self.names().index(name)].kubeconfig


def cluster_names(index: int) -> tuple[str, str, str]:
    """The logical clusters of the ``index``-th world of a server (start it with them)."""
    return (f"m{index}", f"m{index}-w1", f"m{index}-w2")


class ClientLike(Protocol):
    """What the helpers use of ``numaplane.kube.KubeClient``."""

    async def get(
        self, api_version: str, resource: str, name: str, namespace: str | None = None
    ) -> Obj: ...

    async def update(
        self,
        api_version: str,
        resource: str,
        body: Obj,
        namespace: str | None = None,
        *,
        subresource: str = "",
    ) -> Obj: ...


def secret_name(worker: str) -> str:
    """The kubeconfig Secret of worker ``worker`` (``worker1`` → ``multikueue1``)."""
    return "multikueue" + worker.removeprefix("worker")


def kubeconfig_secret(name: str, kubeconfig: str) -> Obj:
    """A Secret in Kueue's namespace holding ``kubeconfig`` under key ``kubeconfig``."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": KUEUE_NAMESPACE},
        "data": {"kubeconfig": base64.b64encode(kubeconfig.encode()).decode()},
    }


def broken_kubeconfig(kubeconfig: str) -> str:
    """``kubeconfig`` with every cluster's server moved to :data:`BROKEN_SERVER`."""
    doc = yaml.safe_load(kubeconfig)
    for entry in doc.get("clusters") or []:
        entry["cluster"]["server"] = BROKEN_SERVER
    return str(yaml.safe_dump(doc))


def multikueue_check(name: str, config: str) -> Obj:
    """An AdmissionCheck of MultiKueue's controller with MultiKueueConfig ``config``."""
    return {
        "apiVersion": API,
        "kind": "AdmissionCheck",
        "metadata": {"name": name},
        "spec": {
            "controllerName": MULTIKUEUE_CONTROLLER,
            "parameters": {
                "apiGroup": "kueue.x-k8s.io",
                "kind": "MultiKueueConfig",
                "name": config,
            },
        },
    }


def plain_check(name: str, controller: str = "example.com/check") -> Obj:
    """An AdmissionCheck of some other controller (its state is set by the test)."""
    return {
        "apiVersion": API,
        "kind": "AdmissionCheck",
        "metadata": {"name": name},
        "spec": {"controllerName": controller},
    }


def multikueue_config(name: str, clusters: Sequence[str]) -> Obj:
    """A MultiKueueConfig listing ``clusters``."""
    return {
        "apiVersion": API,
        "kind": "MultiKueueConfig",
        "metadata": {"name": name},
        "spec": {"clusters": list(clusters)},
    }


def multikueue_cluster(name: str, secret: str) -> Obj:
    """A MultiKueueCluster reading its kubeconfig from Secret ``secret``."""
    location = {"location": secret, "locationType": "Secret"}
    return {
        "apiVersion": API,
        "kind": "MultiKueueCluster",
        "metadata": {"name": name},
        "spec": {"clusterSource": {"kubeConfig": location}},
    }


def worker_objects(namespace: str, cpu: str = "5") -> list[Obj]:
    """Fixture F on a worker: namespace, flavor ``default``, ClusterQueue ``q1`` {cpu},
    LocalQueue ``q1``."""
    return [
        objects.namespace(namespace),
        objects.resource_flavor(FLAVOR),
        objects.cluster_queue(QUEUE, {FLAVOR: {"cpu": cpu}}),
        objects.local_queue(namespace, QUEUE, QUEUE),
    ]


def manager_objects(
    namespace: str,
    kubeconfigs: Mapping[str, str],
    *,
    config_clusters: Sequence[str] | None = None,
    extra_checks: Sequence[str] = (),
) -> list[Obj]:
    """Fixture F on the manager, in creation order: Kueue's namespace, one kubeconfig Secret and
    MultiKueueCluster per worker of ``kubeconfigs``, the config (``config_clusters``, all the
    workers by default), the check ``ac1``, flavor ``default``, ClusterQueue ``q1`` {cpu 5}
    with ``ac1`` (then ``extra_checks``), the namespace and LocalQueue ``q1``."""
    found: list[Obj] = [objects.namespace(KUEUE_NAMESPACE)]
    for worker, text in kubeconfigs.items():
        found.append(kubeconfig_secret(secret_name(worker), text))
        found.append(multikueue_cluster(worker, secret_name(worker)))
    clusters = list(kubeconfigs) if config_clusters is None else list(config_clusters)
    found.append(multikueue_config(CONFIG, clusters))
    found.append(multikueue_check(CHECK, CONFIG))
    found.extend(plain_check(name) for name in extra_checks)
    found.append(objects.resource_flavor(FLAVOR))
    checks = [CHECK, *extra_checks]
    found.append(objects.cluster_queue(QUEUE, {FLAVOR: {"cpu": "5"}}, admissionChecks=checks))
    found.append(objects.namespace(namespace))
    found.append(objects.local_queue(namespace, QUEUE, QUEUE))
    return found


def batch_job(
    namespace: str,
    name: str,
    queue: str = QUEUE,
    *,
    cpu: str = "1",
    managed_by: str | None = None,
    labels: Mapping[str, str] | None = None,
) -> Obj:
    """A batch/v1 Job of one pod requesting ``cpu``, in LocalQueue ``queue``."""
    spec: Obj = {
        "parallelism": 1,
        "completions": 1,
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}
                ],
            }
        },
    }
    if managed_by is not None:
        spec["managedBy"] = managed_by
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "namespace": namespace,
            "name": name,
            "labels": {QUEUE_LABEL: queue, **(labels or {})},
        },
        "spec": spec,
    }


def admission(workload: Obj, cluster_queue: str, flavors: Mapping[str, str]) -> Obj:
    """``status.admission`` giving every podSet of ``workload`` its requests from ``flavors``
    (resource → flavor), as upstream's tests build it."""
    assignments = []
    for pod_set in (workload.get("spec") or {}).get("podSets") or []:
        count = int(pod_set.get("count", 1))
        totals: dict[str, Quantity] = {}
        for container in pod_set["template"]["spec"].get("containers") or []:
            requests = (container.get("resources") or {}).get("requests") or {}
            for resource, value in requests.items():
                totals[resource] = totals.get(resource, Quantity.zero()) + Quantity.parse(value)
        assignments.append(
            {
                "name": pod_set["name"],
                "flavors": {r: flavors[r] for r in totals if r in flavors},
                "resourceUsage": {r: str(q * count) for r, q in totals.items()},
                "count": count,
            }
        )
    return {"clusterQueue": cluster_queue, "podSetAssignments": assignments}


async def reserve(
    client: ClientLike,
    workload: Obj,
    cluster_queue: str = QUEUE,
    flavors: Mapping[str, str] | None = None,
) -> Obj:
    """Upstream ``util.SetQuotaReservation``: the latest ``workload`` gets ``status.admission``
    and ``QuotaReserved=True`` (Evicted/Preempted reset) through the status subresource,
    retried on conflicts; the object written."""
    rules: Any = importlib.import_module("numaplane.kueue.workload.reservation")
    meta = workload["metadata"]
    flavors = {"cpu": FLAVOR} if flavors is None else flavors

    async def attempt() -> Obj | None:
        latest = await client.get(API, "workloads", meta["name"], meta["namespace"])
        status = rules.reserve_quota(latest, admission(latest, cluster_queue, flavors), time.time())
        return await write_status(client, {**latest, "status": status})

    return await retry_conflicts(attempt)


async def write_status(client: ClientLike, obj: Obj) -> Obj | None:
    """``obj``'s status written (None on a conflict: the caller reads again)."""
    meta = obj["metadata"]
    resource = "workloads" if obj.get("kind") == "Workload" else obj["kind"].lower() + "s"
    try:
        return await client.update(
            obj["apiVersion"], resource, obj, meta.get("namespace"), subresource="status"
        )
    except Exception as err:  # the kube layer's ApiError, unnamed here
        if getattr(err, "is_conflict", False):
            return None
        raise


async def retry_conflicts(attempt: Callable[[], Awaitable[T | None]]) -> T:
    """``attempt`` until it answers something (it answers None on a conflict)."""
    return await wait_for(attempt, what="a write without conflict")


async def wait_for(
    probe: Callable[[], Awaitable[T | None]], timeout: float = WAIT_S, what: str = "condition"
) -> T:
    """Poll ``probe`` until it answers something other than None or False; AssertionError
    after ``timeout`` seconds naming ``what`` and the last answer."""
    deadline = time.monotonic() + timeout
    while True:
        found = await probe()
        if found is not None and found is not False:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not seen in {timeout:.0f}s")
        await asyncio.sleep(0.05)


async def consistently(
    probe: Callable[[], Awaitable[T]], want: T, seconds: float = 1.0, what: str = "state"
) -> None:
    """Upstream's ``Consistently``: ``probe`` answers ``want`` at every look for ``seconds``
    (what must NOT happen is watched for a while, as upstream's tests do)."""
    deadline = time.monotonic() + seconds
    while True:
        found = await probe()
        assert found == want, f"{what}: expected {want!r} throughout, got {found!r}"
        if time.monotonic() > deadline:
            return
        await asyncio.sleep(0.05)


def now_rfc3339() -> str:
    """The current time as the API writes it (whole seconds, UTC)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def workload_ref(namespace: str, name: str) -> Obj:
    """A reference to Workload ``name`` (enough to read or write it)."""
    return {
        "apiVersion": API,
        "kind": "Workload",
        "metadata": {"namespace": namespace, "name": name},
    }


def condition(obj: Obj | None, kind: str) -> tuple[str, str, str] | None:
    """``(status, reason, message)`` of condition ``kind`` of ``obj``."""
    for cond in ((obj or {}).get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return (str(cond["status"]), str(cond.get("reason", "")), str(cond.get("message", "")))
    return None


def check_state(workload: Obj | None, check: str = CHECK) -> Obj | None:
    """The admission check state ``check`` of ``workload``."""
    for state in ((workload or {}).get("status") or {}).get("admissionChecks") or []:
        if state.get("name") == check:
            return dict(state)
    return None


def cluster_name(workload: Obj | None) -> str | None:
    """``status.clusterName`` of ``workload``."""
    return ((workload or {}).get("status") or {}).get("clusterName")


def nominated(workload: Obj | None) -> list[str] | None:
    """``status.nominatedClusterNames`` of ``workload`` (None when unset or empty)."""
    found = ((workload or {}).get("status") or {}).get("nominatedClusterNames")
    return list(found) if found else None
