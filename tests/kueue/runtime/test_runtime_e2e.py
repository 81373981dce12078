"""``numaplane kueue`` as a process against a real ``numaplane apiserver``: a Workload created
with the client gets QuotaReserved and Admitted, the one that does not fit stays pending with
upstream's message, and the ClusterQueue and LocalQueue statuses count them."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from numaplane.kube import KubeClient, load_kubeconfig
from numaplane.kube.errors import ApiError
from numaplane.kueue.runtime.install import install_kueue_crds
from numaplane.testing import kueue as k
from numaplane.testing.apiserver import ENTRY, RunningApiServer, running_apiserver

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

API = "kueue.x-k8s.io/v1beta2"
WAIT_S = 90.0
T = TypeVar("T")


def _run(kubeconfig: Path, work: Callable[[KubeClient], Awaitable[T]]) -> T:
    async def go() -> T:
        async with KubeClient(load_kubeconfig(kubeconfig)) as client:
            return await work(client)

    return asyncio.run(go())


def _create(kubeconfig: Path, *objects: dict[str, Any]) -> None:
    plural = {
        "Namespace": ("v1", "namespaces"),
        "ResourceFlavor": (API, "resourceflavors"),
        "ClusterQueue": (API, "clusterqueues"),
        "LocalQueue": (API, "localqueues"),
        "Workload": (API, "workloads"),
    }

    async def work(client: KubeClient) -> None:
        for obj in objects:
            api_version, resource = plural[obj["kind"]]
            namespace = obj["metadata"].get("namespace")
            try:
                await client.create(api_version, resource, obj, namespace)
            except ApiError as err:
                if not err.is_conflict:
                    raise

    _run(kubeconfig, work)


def _get(kubeconfig: Path, resource: str, name: str, namespace: str | None = None) -> Any:
    async def work(client: KubeClient) -> Any:
        return await client.get(API, resource, name, namespace)

    return _run(kubeconfig, work)


def _condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            found: dict[str, Any] = cond
            return found
    return None


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApiServer]:
    with running_apiserver(tmp_path_factory.mktemp("kueue-e2e") / "data") as running:

        async def install(client: KubeClient) -> list[str]:
            return await install_kueue_crds(client)

        _run(running.kubeconfig, install)
        yield running


@pytest.fixture(scope="module")
def kueue(server: RunningApiServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    log_path = tmp_path_factory.mktemp("kueue-log") / "kueue.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-c", ENTRY, "kueue", "--kubeconfig", str(server.kubeconfig), "-v"],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        yield log_path
    finally:
        process.terminate()
        try:
            code = process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
        assert code == 0, log_path.read_text()


def _wait(what: str, probe: Callable[[], T | None], log: Path) -> T:
    deadline = time.monotonic() + WAIT_S
    while True:
        found = probe()
        if found is not None:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not seen in {WAIT_S:.0f}s; kueue log:\n{log.read_text()}")
        time.sleep(0.2)


def test_a_workload_is_reserved_admitted_and_counted(server: RunningApiServer, kueue: Path) -> None:
    kc = server.kubeconfig
    _create(
        kc,
        k.namespace("team-a"),
        k.resource_flavor("default-flavor"),
        k.cluster_queue("cluster-queue", {"default-flavor": {"cpu": "2", "memory": "2Gi"}}),
        k.local_queue("team-a", "user-queue", "cluster-queue"),
        k.workload("team-a", "first", "user-queue", {"cpu": "2", "memory": "1Gi"}),
    )

    def admitted() -> dict[str, Any] | None:
        wl = _get(kc, "workloads", "first", "team-a")
        cond = _condition(wl, "Admitted")
        return wl if cond is not None and cond["status"] == "True" else None

    wl = _wait("Admitted=True on team-a/first", admitted, kueue)
    reserved = _condition(wl, "QuotaReserved")
    assert reserved is not None
    assert (reserved["status"], reserved["reason"]) == ("True", "QuotaReserved")
    assert reserved["message"] == "Quota reserved in ClusterQueue cluster-queue"
    assert wl["status"]["admission"]["clusterQueue"] == "cluster-queue"
    flavors = wl["status"]["admission"]["podSetAssignments"][0]["flavors"]
    assert flavors == {"cpu": "default-flavor", "memory": "default-flavor"}

    # A second one does not fit: it stays pending with the flavor assigner's message.
    _create(kc, k.workload("team-a", "second", "user-queue", {"cpu": "1"}))

    def pending() -> dict[str, Any] | None:
        # The workload controller's "pending evaluation" comes first, the scheduler's verdict
        # after its cycle.
        cond = _condition(_get(kc, "workloads", "second", "team-a"), "QuotaReserved")
        found = cond is not None and cond["message"].startswith("couldn't assign")
        return cond if found else None

    cond = _wait("the scheduler's QuotaReserved=False on team-a/second", pending, kueue)
    assert (cond["status"], cond["message"]) == (
        "False",
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
        "flavor default-flavor, 1 more needed",
    )

    def counted() -> dict[str, Any] | None:
        status = _get(kc, "clusterqueues", "cluster-queue").get("status") or {}
        want = (1, 1, 1)
        got = tuple(
            status.get(f) for f in ("admittedWorkloads", "reservingWorkloads", "pendingWorkloads")
        )
        return status if got == want else None

    status = _wait("ClusterQueue counts (1 admitted, 1 reserving, 1 pending)", counted, kueue)
    active = _condition(status and {"status": status}, "Active")
    assert active is not None
    assert (active["status"], active["reason"], active["message"]) == (
        "True",
        "Ready",
        "Can admit new workloads",
    )
    usage = {
        (row["name"], r["name"]): r["total"]
        for row in status["flavorsReservation"]
        for r in row["resources"]
    }
    assert usage == {("default-flavor", "cpu"): "2", ("default-flavor", "memory"): "1Gi"}

    def lq_counted() -> dict[str, Any] | None:
        lq = _get(kc, "localqueues", "user-queue", "team-a").get("status") or {}
        return lq if (lq.get("admittedWorkloads"), lq.get("pendingWorkloads")) == (1, 1) else None

    lq = _wait("LocalQueue counts", lq_counted, kueue)
    lq_active = _condition({"status": lq}, "Active")
    assert lq_active is not None
    assert (lq_active["status"], lq_active["message"]) == (
        "True",
        "Can submit new workloads to localQueue",
    )


def test_a_cluster_without_the_kueue_crds_is_one_line_and_status_2(tmp_path: Path) -> None:
    with running_apiserver(tmp_path / "bare") as bare:
        done = subprocess.run(
            [sys.executable, "-c", ENTRY, "kueue", "--kubeconfig", str(bare.kubeconfig)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [
        "error: kueue.x-k8s.io/v1beta2 resourceflavors: not served by the cluster "
        "(the server could not find the requested resource); install the Kueue CRDs first"
    ], done.stderr


def _leader_line(log: Path) -> str:
    lines = [
        line
        for line in log.read_text(errors="replace").splitlines()
        if "lease kueue-system/c1f6bfd2.kueue.x-k8s.io: leader" in line
    ]
    return lines[-1] if lines else ""


def test_two_copies_elect_one_leader_and_the_other_takes_over(tmp_path: Path) -> None:
    with running_apiserver(tmp_path / "api") as server:

        async def install(client: KubeClient) -> list[str]:
            return await install_kueue_crds(client)

        _run(server.kubeconfig, install)
        logs = [tmp_path / "first.log", tmp_path / "second.log"]
        processes: list[subprocess.Popen[bytes]] = []
        try:
            for log_path in logs:
                with log_path.open("wb") as log:
                    processes.append(
                        subprocess.Popen(
                            [
                                sys.executable,
                                "-c",
                                ENTRY,
                                "kueue",
                                "--kubeconfig",
                                str(server.kubeconfig),
                            ],
                            stdout=log,
                            stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL,
                        )
                    )
                if log_path == logs[0]:
                    _wait(
                        "the first copy leading",
                        lambda: _leader_line(logs[0]).endswith("(this process)") or None,
                        logs[0],
                    )
            # The second sees the first as leader and does not lead.
            _wait(
                "the second copy seeing the leader", lambda: _leader_line(logs[1]) or None, logs[1]
            )
            assert not _leader_line(logs[1]).endswith("(this process)")
            processes[0].terminate()
            assert processes[0].wait(timeout=30) == 0
            # The first released the Lease on its way out: the second takes it.
            _wait(
                "the second copy leading",
                lambda: _leader_line(logs[1]).endswith("(this process)") or None,
                logs[1],
            )
        finally:
            for process in processes:
                if process.poll() is None:
                    process.terminate()
                    try:
                        process.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        process.kill()
                        process.wait()
