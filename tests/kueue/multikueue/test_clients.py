"""The manager's connections to its workers against a real ``numaplane apiserver``: a manager
and a worker as logical clusters of one server, the worker reached with a ServiceAccount token
kubeconfig made as Kueue's documentation makes it. Scenarios A1, A2, A4 and A5 of the
MultiKueue corpus (the ``Active`` conditions of MultiKueueClusters and the AdmissionCheck),
"break connection" by pointing the kubeconfig Secret at ``https://127.0.0.1:1`` and restoring
it (ClientConnectionFailed with attempts, ``lost_since``, reconnection), and the orphan GC.

Each test has its own manager cluster; every wait is bounded (the whole test too)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from numaplane.kube import KubeClient, load_kubeconfig
from numaplane.kube.errors import ApiError
from numaplane.testing import kueue_objects as objects
from numaplane.testing.apiserver import RunningApiServer, running_apiserver
from tests.kueue.multikueue.connworld import (
    API,
    ATTEMPTS,
    ORIGIN,
    admission_check,
    broken,
    make_worker_kubeconfig,
    manager,
    mk_cluster,
    mk_config,
    run,
    until,
    with_host,
)

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

MANAGERS = ("a1", "a2", "a4", "a5", "gc", "never")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApiServer]:
    data = tmp_path_factory.mktemp("multikueue") / "data"
    with running_apiserver(data, clusters=(*MANAGERS, "worker1")) as running:
        yield running


@pytest.fixture(scope="module")
def worker_kubeconfig(server: RunningApiServer) -> str:
    """worker1's kubeconfig for the managers."""
    return asyncio.run(make_worker_kubeconfig(server.cluster_kubeconfig("worker1")))


# ----- A1 and the connection's life --------------------------------------------------------


def test_a1_secret_kubeconfig_activeness_break_and_restore(
    server: RunningApiServer, worker_kubeconfig: str
) -> None:
    async def scenario() -> None:
        # Retries 1 s apart: the test sees the first attempt of a rotated kubeconfig.
        async with manager(server, "a1", retry_base=1.0) as m:
            await m.create(API, "admissionchecks", admission_check("testing-ac", "testing-config"))
            await m.until_condition(
                "admissionchecks",
                "testing-ac",
                (
                    "False",
                    "BadConfig",
                    "Cannot load the AdmissionChecks parameters: "
                    'MultiKueueConfig.kueue.x-k8s.io "testing-config" not found',
                ),
            )
            await m.create(API, "multikueueconfigs", mk_config("testing-config", "testing-cluster"))
            await m.until_condition(
                "admissionchecks",
                "testing-ac",
                ("False", "NoUsableClusters", "Missing clusters: [testing-cluster]"),
            )
            await m.create(
                API, "multikueueclusters", mk_cluster("testing-cluster", "testing-secret")
            )
            await m.until_condition(
                "multikueueclusters",
                "testing-cluster",
                (
                    "False",
                    "BadKubeConfig",
                    'load client config failed: Secret "testing-secret" not found',
                ),
            )
            await m.until_condition(
                "admissionchecks",
                "testing-ac",
                ("False", "NoUsableClusters", "Inactive clusters: [testing-cluster]"),
            )
            assert m.clusters.get("testing-cluster") is None  # no client without a kubeconfig

            await m.put_secret("testing-secret", worker_kubeconfig)
            await m.until_condition(
                "multikueueclusters", "testing-cluster", ("True", "Active", "Connected")
            )
            await m.until_condition(
                "admissionchecks", "testing-ac", ("True", "Active", "The admission check is active")
            )
            rc = m.clusters.get("testing-cluster")
            assert rc is not None
            assert rc.connected
            assert rc.lost_since is None
            assert rc.client is not None
            assert rc.workloads is not None
            assert rc.jobs is not None
            assert rc.workloads.synced
            assert rc.jobs.synced
            assert "testing-cluster" in m.changes

            # Break the connection: ClientConnectionFailed, attempts counted, lost_since kept
            # from the first drop while the attempts go on.
            await m.put_secret("testing-secret", broken(worker_kubeconfig))
            failed = await m.until_active(
                "multikueueclusters",
                "testing-cluster",
                lambda found: found[1] == "ClientConnectionFailed",
            )
            assert failed[0] == "False"
            first = ATTEMPTS.search(failed[2])
            assert first is not None, failed[2]
            assert first.group(1) == "1"
            assert "127.0.0.1:1" in failed[2]
            assert not rc.connected
            lost = rc.lost_since
            assert lost is not None
            await m.until_condition(
                "admissionchecks",
                "testing-ac",
                ("False", "NoUsableClusters", "Inactive clusters: [testing-cluster]"),
            )

            def retried(found: tuple[str, str, str]) -> bool:
                seen = ATTEMPTS.search(found[2])
                return seen is not None and int(seen.group(1)) >= 3

            await m.until_active("multikueueclusters", "testing-cluster", retried)
            assert rc.lost_since == lost
            assert m.clusters.get("testing-cluster") is rc

            # A rotated kubeconfig (still broken) starts the attempts over.
            await m.put_secret("testing-secret", with_host(worker_kubeconfig, "127.0.0.1:2"))

            def rotated(found: tuple[str, str, str]) -> bool:
                seen = ATTEMPTS.search(found[2])
                return "127.0.0.1:2" in found[2] and seen is not None and seen.group(1) == "1"

            await m.until_active("multikueueclusters", "testing-cluster", rotated)
            assert rc.lost_since == lost

            # Restore: connected again, the loss and the attempts forgotten.
            await m.put_secret("testing-secret", worker_kubeconfig)
            await m.until_condition(
                "multikueueclusters", "testing-cluster", ("True", "Active", "Connected")
            )
            assert rc.connected
            assert rc.lost_since is None
            assert rc.failed_attempts == 0
            await m.until_condition(
                "admissionchecks", "testing-ac", ("True", "Active", "The admission check is active")
            )

            # Deleting the MultiKueueCluster forgets its client.
            await m.client.delete(API, "multikueueclusters", "testing-cluster")

            async def forgotten() -> bool | None:
                return True if m.clusters.get("testing-cluster") is None else None

            await until(forgotten, "client forgotten")
            assert not rc.connected
            await m.until_condition(
                "admissionchecks",
                "testing-ac",
                ("False", "NoUsableClusters", "Missing clusters: [testing-cluster]"),
            )

    run(scenario())


def test_a_never_connected_cluster_is_lost_since_its_client_was_made(
    server: RunningApiServer, worker_kubeconfig: str
) -> None:
    async def scenario() -> None:
        async with manager(server, "never") as m:
            await m.put_secret("w", broken(worker_kubeconfig))
            before = time.time()
            await m.create(API, "multikueueclusters", mk_cluster("w", "w"))
            await m.until_active(
                "multikueueclusters", "w", lambda f: f[1] == "ClientConnectionFailed"
            )
            rc = m.clusters.get("w")
            assert rc is not None
            assert not rc.connected
            assert rc.lost_since is not None
            assert before <= rc.lost_since <= time.time()
            # Never connected: no change of connectivity to report.
            assert "w" not in m.changes

    run(scenario())


# ----- A2 / A4: kubeconfig files ------------------------------------------------------------


def test_a2_a4_kubeconfig_files_missing_written_and_insecure(
    server: RunningApiServer, worker_kubeconfig: str, tmp_path: Path
) -> None:
    good = tmp_path / "worker1.kubeconfig"
    insecure = tmp_path / "insecure.kubeconfig"

    async def scenario() -> None:
        async with manager(server, "a2", validate_paths=False) as m:
            await m.create(API, "admissionchecks", admission_check("ac", "cfg"))
            await m.create(API, "multikueueconfigs", mk_config("cfg", "file-cluster", "insecure"))
            await m.create(API, "multikueueclusters", mk_cluster("file-cluster", str(good), "Path"))
            await m.until_condition(
                "multikueueclusters",
                "file-cluster",
                (
                    "False",
                    "BadKubeConfig",
                    f"load client config failed: open {good}: no such file or directory",
                ),
            )

            # Without path validation, upstream warns on the cluster (deprecated behaviour).
            async def warned() -> bool | None:
                events = (await m.client.list("v1", "events"))["items"]
                return (
                    True
                    if any(
                        e.get("reason") == "DeprecatedPathUsage"
                        and e["involvedObject"].get("name") == "file-cluster"
                        and e["involvedObject"].get("kind") == "MultiKueueCluster"
                        and e.get("type") == "Warning"
                        for e in events
                    )
                    else None
                )

            await until(warned, "DeprecatedPathUsage event")
            # The file appears: no object changed, the file watch reconciles the cluster.
            good.write_text(worker_kubeconfig)
            await m.until_condition(
                "multikueueclusters", "file-cluster", ("True", "Active", "Connected")
            )
            await m.until_condition(
                "admissionchecks",
                "ac",
                ("True", "SomeActiveClusters", "Missing clusters: [insecure]"),
            )

            # A4: a kubeconfig reading its token from a file is refused.
            doc = yaml.safe_load(worker_kubeconfig)
            del doc["users"][0]["user"]["token"]
            doc["users"][0]["user"]["tokenFile"] = str(tmp_path / "token")
            insecure.write_text(yaml.safe_dump(doc))
            await m.create(API, "multikueueclusters", mk_cluster("insecure", str(insecure), "Path"))
            await m.until_condition(
                "multikueueclusters",
                "insecure",
                (
                    "False",
                    "InsecureKubeConfig",
                    "load client config failed: tokenFile is not allowed",
                ),
            )
            await m.until_condition(
                "admissionchecks",
                "ac",
                ("True", "SomeActiveClusters", "Inactive clusters: [insecure]"),
            )

            # Rotating the file to a broken server, then back.
            rc = m.clusters.get("file-cluster")
            assert rc is not None
            good.write_text(broken(worker_kubeconfig))
            await m.until_active(
                "multikueueclusters", "file-cluster", lambda f: f[1] == "ClientConnectionFailed"
            )
            assert not rc.connected
            good.write_text(worker_kubeconfig)
            await m.until_condition(
                "multikueueclusters", "file-cluster", ("True", "Active", "Connected")
            )
            assert rc.connected

    run(scenario())


# ----- A5: path validation ------------------------------------------------------------------


@dataclass(frozen=True)
class PathCase:
    name: str
    location: str  # "{prefix}" and "{tmp}" are replaced
    contains: str


NOT_UNDER = "kubeconfig path is not under the allowed prefix"
PATHS = [
    PathCase("outside", "{tmp}/outside.kubeconfig", NOT_UNDER),
    PathCase("relative", "relative/w.kubeconfig", "path must be absolute"),
    PathCase("dot-dot", "{prefix}/../outside.kubeconfig", NOT_UNDER),
]


def test_a5_path_validation(
    server: RunningApiServer, worker_kubeconfig: str, tmp_path: Path
) -> None:
    prefix = tmp_path / "kubeconfigs"
    prefix.mkdir()
    (tmp_path / "outside.kubeconfig").write_text(worker_kubeconfig)
    (prefix / "inside.kubeconfig").write_text(worker_kubeconfig)

    async def scenario() -> None:
        async with manager(server, "a5", path_prefix=str(prefix)) as m:
            for case in PATHS:
                location = case.location.format(prefix=prefix, tmp=tmp_path)
                await m.create(API, "multikueueclusters", mk_cluster(case.name, location, "Path"))
            await m.create(
                API,
                "multikueueclusters",
                mk_cluster("inside", str(prefix / "inside.kubeconfig"), "Path"),
            )
            for case in PATHS:
                found = await m.until_active(
                    "multikueueclusters", case.name, lambda f: f[1] == "BadKubeConfig"
                )
                assert found[0] == "False"
                assert found[2].startswith("load client config failed: ")
                assert case.contains in found[2], (case.name, found)
            await m.until_condition("multikueueclusters", "inside", ("True", "Active", "Connected"))

    run(scenario())


# ----- orphan GC ----------------------------------------------------------------------------


def remote_job(name: str, *, origin: str | None, workload: str | None = None) -> dict[str, Any]:
    labels = {}
    if origin is not None:
        labels["kueue.x-k8s.io/multikueue-origin"] = origin
    if workload is not None:
        labels["kueue.x-k8s.io/prebuilt-workload-name"] = workload
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "gc-ns", "labels": labels},
        "spec": {
            "suspend": True,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}],
                }
            },
        },
    }


def remote_workload(name: str, owner: dict[str, Any] | None) -> dict[str, Any]:
    wl = objects.workload("gc-ns", name, "q1", {"cpu": "1"})
    wl["metadata"]["labels"] = {"kueue.x-k8s.io/multikueue-origin": ORIGIN}
    wl["metadata"]["finalizers"] = ["kueue.x-k8s.io/resource-in-use"]
    if owner is not None:
        wl["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
            }
        ]
    return wl


def test_gc_deletes_orphans_and_their_jobs_but_no_foreign_job(
    server: RunningApiServer, worker_kubeconfig: str
) -> None:
    async def scenario() -> None:
        worker_config = load_kubeconfig(server.cluster_kubeconfig("worker1"))
        async with KubeClient(worker_config) as worker:
            with contextlib.suppress(ApiError):
                await worker.create("v1", "namespaces", objects.namespace("gc-ns"))
            job = await worker.create(
                "batch/v1",
                "jobs",
                remote_job("orphan-job", origin=ORIGIN, workload="orphan"),
                "gc-ns",
            )
            await worker.create(API, "workloads", remote_workload("orphan", job), "gc-ns")
            await worker.create(API, "workloads", remote_workload("kept", None), "gc-ns")
            # A plain Job of the worker (no origin label) whose name an orphan's owner names.
            foreign = await worker.create(
                "batch/v1", "jobs", remote_job("foreign", origin=None), "gc-ns"
            )
            await worker.create(
                API, "workloads", remote_workload("orphan-of-foreign", foreign), "gc-ns"
            )

            gone = {"gc-ns/orphan", "gc-ns/orphan-of-foreign"}
            async with manager(server, "gc", gc_interval=0.3) as m:
                m.clusters.is_local_gone = lambda key: key in gone
                await m.put_secret("w1", worker_kubeconfig)
                await m.create(API, "multikueueclusters", mk_cluster("worker1", "w1"))

                async def collected() -> bool | None:
                    names = {
                        o["metadata"]["name"]
                        for o in (await worker.list(API, "workloads", "gc-ns"))["items"]
                    }
                    return True if names == {"kept"} else None

                await until(collected, "orphans collected")
                jobs = {
                    o["metadata"]["name"]: o
                    for o in (await worker.list("batch/v1", "jobs", "gc-ns"))["items"]
                    if not o["metadata"].get("deletionTimestamp")
                }
                assert "orphan-job" not in jobs
                assert jobs["foreign"]["metadata"]["uid"] == foreign["metadata"]["uid"]
                # The remote objects were announced with their local workload's key, jobs
                # through their prebuilt-workload label.
                assert ("worker1", "gc-ns/kept") in m.remote_changes
                assert ("worker1", "gc-ns/orphan") in m.remote_changes

    run(scenario())
