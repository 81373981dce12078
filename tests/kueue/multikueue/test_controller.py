"""The MultiKueue workload controller against real clusters (one API server: the manager and
logical clusters ``worker1`` and ``worker2``, each with its own Kueue runtime in this process;
no Job controller, so the test writes the worker Job's status as the INT harness does): a
manager Job is copied to both workers, runs on the one whose Kueue admits it first, only there,
and its final status comes back; the manager's Workload finishes and the copies go."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from numaplane.kube import KubeClient, load_kubeconfig
from numaplane.kube.errors import ApiError
from numaplane.kueue import constants as c
from numaplane.kueue.configvalues import KueueConfig, MultiKueueConfig
from numaplane.kueue.multikueue import constants as mkc
from numaplane.kueue.runtime.install import install_kueue_crds
from numaplane.kueue.runtime.multikueue.manager import MultiKueue
from numaplane.kueue.runtime.runtime import WORKLOAD_SOURCE, KueueRuntime
from numaplane.kueue.runtime.workeraccess import add_worker
from numaplane.testing import kueue as k
from numaplane.testing.apiserver import RunningApiServer, running_apiserver

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

API = c.API_VERSION
WORKERS = ("worker1", "worker2")
WAIT_S = 60.0
NS = "default"
MK_CONFIG = MultiKueueConfig(gc_interval=2.0, worker_lost_timeout=3.0)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApiServer]:
    """The manager (default cluster, Kueue's Job defaulting on) and two workers."""
    data = tmp_path_factory.mktemp("mkctl") / "data"
    with running_apiserver(data, clusters=WORKERS, extra_args=("--kueue-job-defaulting",)) as s:
        yield s


async def _create(client: KubeClient, api_version: str, resource: str, obj: Any) -> None:
    try:
        await client.create(api_version, resource, obj, obj["metadata"].get("namespace"))
    except ApiError as err:
        if not err.is_conflict:
            raise


async def _queues(client: KubeClient, *, check: bool) -> None:
    await install_kueue_crds(client)
    await _create(client, API, "resourceflavors", k.resource_flavor("default-flavor"))
    extra: dict[str, Any] = {"admissionChecks": ["mk"]} if check else {}
    cq = k.cluster_queue("cluster-queue", {"default-flavor": {"cpu": "4"}}, **extra)
    await _create(client, API, "clusterqueues", cq)
    await _create(client, API, "localqueues", k.local_queue(NS, "user-queue", "cluster-queue"))


async def _manager_objects(manager: KubeClient, server: RunningApiServer) -> None:
    await install_kueue_crds(manager)
    for worker in WORKERS:
        path = server.cluster_kubeconfig(worker)
        async with KubeClient(load_kubeconfig(path)) as client:
            await _queues(client, check=False)
            await add_worker(manager, client, worker, namespace="kueue-system")
        cluster = {
            "apiVersion": API,
            "kind": "MultiKueueCluster",
            "metadata": {"name": worker},
            "spec": {
                "clusterSource": {
                    "kubeConfig": {"locationType": "Secret", "location": f"{worker}-secret"}
                }
            },
        }
        await _create(manager, API, "multikueueclusters", cluster)
    config = {
        "apiVersion": API,
        "kind": "MultiKueueConfig",
        "metadata": {"name": "config"},
        "spec": {"clusters": list(WORKERS)},
    }
    await _create(manager, API, "multikueueconfigs", config)
    check = {
        "apiVersion": API,
        "kind": "AdmissionCheck",
        "metadata": {"name": "mk"},
        "spec": {
            "controllerName": c.MULTIKUEUE_CONTROLLER,
            "parameters": {"apiGroup": c.GROUP, "kind": "MultiKueueConfig", "name": "config"},
        },
    }
    await _create(manager, API, "admissionchecks", check)
    await _queues(manager, check=True)


@dataclass
class World:
    """The clients and the running manager side."""

    manager: KubeClient
    workers: dict[str, KubeClient]
    multikueue: MultiKueue


@contextlib.asynccontextmanager
async def _world(server: RunningApiServer) -> AsyncIterator[World]:
    async with contextlib.AsyncExitStack() as stack:
        manager = await stack.enter_async_context(KubeClient(load_kubeconfig(server.kubeconfig)))
        workers = {
            name: await stack.enter_async_context(
                KubeClient(load_kubeconfig(server.cluster_kubeconfig(name)))
            )
            for name in WORKERS
        }
        await _manager_objects(manager, server)
        runtimes = [KueueRuntime(client) for client in workers.values()]
        local = KueueRuntime(manager, KueueConfig(multi_kueue=MK_CONFIG))
        multikueue = MultiKueue(
            manager,
            local.informers,
            local.recorders[WORKLOAD_SOURCE],
            MK_CONFIG,
            namespace="kueue-system",
            events_batch_period=0.25,
        )
        tasks = [asyncio.create_task(r.run()) for r in [*runtimes, local]]
        tasks.append(asyncio.create_task(multikueue.run()))
        try:
            yield World(manager, workers, multikueue)
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task


async def _until(what: str, probe: Callable[[], Awaitable[Any]]) -> Any:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while True:
        found = await probe()
        if found:
            return found
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.2)


def _job(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": NS,
            "labels": {"kueue.x-k8s.io/queue-name": "user-queue"},
        },
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
                    ],
                }
            },
        },
    }


async def _items(client: KubeClient, api_version: str, resource: str) -> list[dict[str, Any]]:
    items, _ = await client.list_all(api_version, resource, NS)
    return items


def _condition(obj: dict[str, Any], kind: str) -> str | None:
    for cond in (obj.get("status") or {}).get("conditions") or ():
        if cond.get("type") == kind:
            return str(cond.get("status"))
    return None


async def _complete_remote_job(client: KubeClient, job: dict[str, Any]) -> None:
    """What the worker's Job controller would write once the pod succeeded."""
    now = k.format_time(1_700_000_100)
    fresh = await client.get("batch/v1", "jobs", job["metadata"]["name"], NS)
    fresh["status"] = {
        "startTime": now,
        "completionTime": now,
        "succeeded": 1,
        "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached"},
            {"type": "Complete", "status": "True", "reason": "CompletionsReached"},
        ],
    }
    await client.update("batch/v1", "jobs", fresh, NS, subresource="status")


def test_a_job_runs_once_on_the_first_worker_that_admits_it(server: RunningApiServer) -> None:
    async def scenario() -> None:
        async with _world(server) as world:
            created = await world.manager.create("batch/v1", "jobs", _job("sample"), NS)
            assert created["spec"]["managedBy"] == c.MULTIKUEUE_CONTROLLER

            async def admitted() -> dict[str, Any] | None:
                for wl in await _items(world.manager, API, "workloads"):
                    if _condition(wl, "Admitted") == "True":
                        return wl
                return None

            wl = await _until("the manager workload admitted", admitted)
            winner = wl["status"]["clusterName"]
            assert winner in WORKERS
            (state,) = wl["status"]["admissionChecks"]
            assert state["state"] == "Ready"
            assert state["message"] == mkc.admitted_on(winner)

            async def remote_job() -> list[dict[str, Any]]:
                return await _items(world.workers[winner], "batch/v1", "jobs")

            (job,) = await _until("the remote job", remote_job)
            labels = job["metadata"]["labels"]
            assert labels[c.PREBUILT_WORKLOAD_LABEL] == wl["metadata"]["name"]
            assert labels[c.MULTIKUEUE_ORIGIN_LABEL] == "multikueue"
            assert "managedBy" not in job["spec"]
            loser = next(w for w in WORKERS if w != winner)

            async def loser_clean() -> bool:
                return not await _items(world.workers[loser], API, "workloads")

            await _until("the other copy removed", loser_clean)
            assert await _items(world.workers[loser], "batch/v1", "jobs") == []
            await _complete_remote_job(world.workers[winner], job)

            async def local_complete() -> bool:
                local = await world.manager.get("batch/v1", "jobs", "sample", NS)
                return _condition(local, "Complete") == "True"

            await _until("the manager job Complete", local_complete)

            async def finished() -> bool:
                wls = await _items(world.manager, API, "workloads")
                return len(wls) == 1 and _condition(wls[0], "Finished") == "True"

            await _until("the manager workload Finished", finished)

            async def remote_clean() -> bool:
                return not await _items(world.workers[winner], API, "workloads")

            await _until("the winner's copy removed", remote_clean)
            executor = world.multikueue.controller.executor
            assert executor.jobs_created == {winner: 1}
            assert executor.count(mkc.METRIC_ADMITTED, cluster=winner) == 1

    asyncio.run(scenario())


async def _break_secret(manager: KubeClient, worker: str) -> None:
    """Point the worker's kubeconfig at a closed port (upstream's tests break the server)."""
    secret = await manager.get("v1", "secrets", f"{worker}-secret", "kueue-system")
    text = base64.b64decode(secret["data"]["kubeconfig"]).decode()
    config = yaml.safe_load(text)
    config["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:1/clusters/{worker}"
    secret["data"]["kubeconfig"] = base64.b64encode(yaml.safe_dump(config).encode()).decode()
    await manager.update("v1", "secrets", secret, "kueue-system")


def test_a_lost_admitting_worker_releases_the_quota_and_the_job_moves(
    server: RunningApiServer,
) -> None:
    """SPEC §3.14 and its divergence: after ``workerLostTimeout`` the check goes Retry
    ("Admitting remote lost"), the manager's Job, whose mirrored status still said a pod
    runs, counts as inactive, so the Workload is requeued and dispatched to the other
    worker."""

    async def scenario() -> None:
        async with _world(server) as world:
            await world.manager.create("batch/v1", "jobs", _job("moving"), NS)

            async def admitted_on() -> Any:
                for wl in await _items(world.manager, API, "workloads"):
                    owners = wl["metadata"].get("ownerReferences") or ()
                    # An evicted Workload stays Admitted until its quota is released, but
                    # without a clusterName.
                    if any(r["name"] == "moving" for r in owners) and (
                        _condition(wl, "Admitted") == "True"
                    ):
                        return wl["status"].get("clusterName")
                return None

            first = await _until("the first admission", admitted_on)

            async def remote_job() -> dict[str, Any] | None:
                jobs = await _items(world.workers[first], "batch/v1", "jobs")
                return next((j for j in jobs if j["metadata"]["name"] == "moving"), None)

            job = await _until("the remote job", remote_job)
            job["status"] = {"startTime": k.format_time(1_700_000_100), "active": 1, "ready": 1}
            await world.workers[first].update("batch/v1", "jobs", job, NS, subresource="status")

            async def mirrored() -> bool:
                local = await world.manager.get("batch/v1", "jobs", "moving", NS)
                return (local.get("status") or {}).get("active") == 1

            await _until("the running status mirrored", mirrored)
            await _break_secret(world.manager, first)
            other = next(w for w in WORKERS if w != first)

            async def moved() -> bool:
                return bool(await admitted_on() == other)

            await _until("the workload admitted on the other worker", moved)
            executor = world.multikueue.controller.executor
            assert executor.jobs_created == {first: 1, other: 1}
            wls = await _items(world.manager, API, "workloads")
            (wl,) = [w for w in wls if w["metadata"]["name"].startswith("job-moving-")]
            (state,) = wl["status"]["admissionChecks"]
            assert state["message"] == mkc.admitted_on(other)

    asyncio.run(scenario())


def test_deleting_the_manager_job_removes_its_objects_on_the_worker(
    server: RunningApiServer,
) -> None:
    """R0: the local Workload goes with its Job; from its last copy the controller deletes
    the remote Job (ours: origin label) and the remote Workload."""

    async def scenario() -> None:
        async with _world(server) as world:
            await world.manager.create("batch/v1", "jobs", _job("doomed"), NS)

            async def remote_job() -> str | None:
                for worker, client in world.workers.items():
                    jobs = await _items(client, "batch/v1", "jobs")
                    if any(j["metadata"]["name"] == "doomed" for j in jobs):
                        return worker
                return None

            winner = await _until("the remote job", remote_job)
            await world.manager.delete(
                "batch/v1", "jobs", "doomed", NS, propagation_policy="Foreground"
            )

            async def gone() -> bool:
                client = world.workers[winner]
                jobs = await _items(client, "batch/v1", "jobs")
                wls = await _items(client, API, "workloads")
                return not any(j["metadata"]["name"] == "doomed" for j in jobs) and not any(
                    w["metadata"]["name"].startswith("job-doomed-") for w in wls
                )

            await _until("the remote objects removed", gone)
            controller = world.multikueue.controller

            async def forgotten() -> bool:
                return not controller.deleted

            # The last copy is kept only until its remote objects are gone.
            await _until("the last copy dropped", forgotten)

    asyncio.run(scenario())
