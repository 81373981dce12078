"""TTLAfterFinishedController (pure: when a Job expires; against a real apiserver: a finished
Job past its TTL is deleted, its pods go with it, a Job not yet due stays), the controller
manager (its controllers under the Lease numaplane-controller-manager) and the
``numaplane controllers`` command (errors, leadership line, SIGTERM exits 0)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from numaplane.controllers.manager import (
    ControllerManagerError,
    ControllerManagerOptions,
    run_controller_manager,
    selected,
)
from numaplane.controllers.ttlafterfinished import TTLAfterFinishedController, expires_at
from numaplane.kube import ApiError, KubeClient, load_kubeconfig
from numaplane.kube.events import rfc3339
from numaplane.testing.apiserver import ENTRY, RunningApiServer, running_apiserver
from tests.kube.client_support import kube_client

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

T0 = 1_700_000_000.0


def job_dict(
    name: str, ttl: int | None, finished: float | None, *, kind: str = "Complete"
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "sleep", "command": ["true"]}],
            }
        }
    }
    if ttl is not None:
        spec["ttlSecondsAfterFinished"] = ttl
    job: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }
    if finished is not None:
        job["status"] = {
            "conditions": [
                {"type": kind, "status": "True", "lastTransitionTime": rfc3339(finished)}
            ]
        }
    return job


@dataclass(frozen=True)
class ExpiryCase:
    name: str
    job: dict[str, Any]
    expires: float | None


EXPIRY_CASES = [
    ExpiryCase("no ttl", job_dict("j", None, T0), None),
    ExpiryCase("running", job_dict("j", 10, None), None),
    ExpiryCase("complete", job_dict("j", 10, T0), T0 + 10),
    ExpiryCase("failed", job_dict("j", 0, T0, kind="Failed"), T0),
    ExpiryCase("suspended is not finished", job_dict("j", 10, T0, kind="Suspended"), None),
    ExpiryCase(
        "being deleted",
        {**job_dict("j", 10, T0), "metadata": {"name": "j", "deletionTimestamp": "x"}},
        None,
    ),
]


@pytest.mark.parametrize("case", EXPIRY_CASES, ids=lambda c: c.name)
def test_expires_at(case: ExpiryCase) -> None:
    assert expires_at(case.job) == case.expires


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApiServer]:
    with running_apiserver(tmp_path_factory.mktemp("ctl") / "data") as running:
        yield running


async def create_finished_job(client: KubeClient, name: str, ttl: int, finished: float) -> str:
    """A Job whose status says it completed at ``finished``; its uid."""
    job = job_dict(name, ttl, None)
    made = await client.create("batch/v1", "jobs", job, "default")
    now = rfc3339(finished)
    made["status"] = {
        "startTime": now,
        "completionTime": now,
        "succeeded": 1,
        "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": now},
            {"type": "Complete", "status": "True", "lastTransitionTime": now},
        ],
    }
    await client.update("batch/v1", "jobs", made, "default", subresource="status")
    return str(made["metadata"]["uid"])


async def gone(client: KubeClient, resource: str, name: str, api: str = "v1") -> bool:
    try:
        await client.get(api, resource, name, "default")
    except ApiError as err:
        if err.is_not_found:
            return True
        raise
    return False


async def until(check: Callable[[], Any], timeout: float = 60.0) -> None:
    async def wait() -> None:
        while not await check():
            await asyncio.sleep(0.05)

    await asyncio.wait_for(wait(), timeout)


def test_ttl_deletes_a_finished_job_in_the_background(server: RunningApiServer) -> None:
    config = load_kubeconfig(server.kubeconfig)

    async def body() -> None:
        async with kube_client(config) as client:
            now = time.time()
            uid = await create_finished_job(client, "done", 5, now - 60)
            await create_finished_job(client, "later", 3600, now - 60)
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": "done-pod",
                    "namespace": "default",
                    "ownerReferences": [
                        {
                            "apiVersion": "batch/v1",
                            "kind": "Job",
                            "name": "done",
                            "uid": uid,
                            "controller": True,
                            "blockOwnerDeletion": True,
                        }
                    ],
                },
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]},
            }
            await client.create("v1", "pods", pod, "default")
            controller = TTLAfterFinishedController(client)
            task = asyncio.ensure_future(controller.run())
            await until(lambda: gone(client, "jobs", "done", "batch/v1"))
            # Background propagation: the garbage collector removes the Job's pods after it.
            await until(lambda: gone(client, "pods", "done-pod"))
            # Processed (its requeue is an hour away) and kept.
            await until(lambda: _waiting(controller))
            assert not await gone(client, "jobs", "later", "batch/v1")
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    asyncio.run(body())


async def _waiting(controller: TTLAfterFinishedController) -> bool:
    return "default/later" in controller._queue._waiting


def test_manager_runs_its_controllers_under_the_lease(server: RunningApiServer) -> None:
    config = load_kubeconfig(server.kubeconfig)
    changes: list[tuple[str, str]] = []
    options = ControllerManagerOptions(
        controllers=("ttl", "nodelifecycle"),
        identity="cm-1",
        lease_duration=3.0,
        renew_deadline=2.0,
        retry_period=0.5,
        on_leader_change=lambda lease, holder: changes.append((lease, holder)),
    )

    async def body() -> None:
        async with kube_client(config) as client:
            await create_finished_job(client, "managed", 0, time.time() - 10)
            task = asyncio.ensure_future(run_controller_manager(client, options))
            await until(lambda: gone(client, "jobs", "managed", "batch/v1"))
            lease = await client.get(
                "coordination.k8s.io/v1", "leases", "numaplane-controller-manager", "kube-system"
            )
            assert lease["spec"]["holderIdentity"] == "cm-1"
            with pytest.raises(ApiError) as no_scheduler_lease:
                await client.get(
                    "coordination.k8s.io/v1", "leases", "numaplane-scheduler", "kube-system"
                )
            assert no_scheduler_lease.value.is_not_found
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            # Stopped: the lease was released for the next manager.
            lease = await client.get(
                "coordination.k8s.io/v1", "leases", "numaplane-controller-manager", "kube-system"
            )
            assert lease["spec"]["holderIdentity"] == ""

    asyncio.run(body())
    assert changes == [("numaplane-controller-manager", "cm-1")]


def test_selected_controllers() -> None:
    assert selected(ControllerManagerOptions(controllers=("nodelifecycle", "ttl"))) == [
        "ttl",
        "nodelifecycle",
    ]
    with pytest.raises(ControllerManagerError, match="unknown controller 'nope'"):
        selected(ControllerManagerOptions(controllers=("nope",)))
    everything = selected(ControllerManagerOptions())
    assert {"ttl", "nodelifecycle"} <= set(everything)


def cli(*args: str) -> list[str]:
    return [sys.executable, "-c", ENTRY, "controllers", *args]


@dataclass(frozen=True)
class ErrorCase:
    name: str
    args: tuple[str, ...]
    message: str


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.kubeconfig"
    broken.write_text("clusters: [\n")
    cases = [
        ErrorCase("missing kubeconfig", ("--kubeconfig", str(tmp_path / "nope")), "nope: "),
        ErrorCase("broken kubeconfig", ("--kubeconfig", str(broken)), str(broken)),
        ErrorCase(
            "unknown controller",
            ("--kubeconfig", str(broken), "--controllers", "job,bogus"),
            "--controllers: unknown controller 'bogus'",
        ),
        ErrorCase(
            "bad period",
            ("--kubeconfig", str(broken), "--node-monitor-grace-period", "40"),
            "--node-monitor-grace-period 40: time: missing unit",
        ),
    ]
    for case in cases:
        done = subprocess.run(cli(*case.args), capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, case.name
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, (case.name, done.stderr)
        assert lines[0].startswith("error: "), case.name
        assert case.message in lines[0], (case.name, lines[0])


def test_cli_leads_and_stops_on_sigterm(server: RunningApiServer, tmp_path: Path) -> None:
    log = tmp_path / "controllers.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            cli("--kubeconfig", str(server.kubeconfig), "--controllers", "ttl,nodelifecycle"),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while "(this process)" not in log.read_text():
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    text = log.read_text()
    assert "numaplane controllers: running ttl, nodelifecycle against https://" in text
    leader_lines = [line for line in text.splitlines() if "leader" in line]
    assert len(leader_lines) == 1
    assert "lease kube-system/numaplane-controller-manager: leader " in leader_lines[0]
    assert text.strip().endswith("numaplane controllers: stopped")
