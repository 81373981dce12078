"""Integration helpers: a real ``numaplane apiserver`` shared by a module, the Job controller run
in-process against it, and the kubelet's part played by the test (pods/status patched to
Running, Succeeded or Failed with containerStatuses, as upstream's integration tests do).

No node agent runs: pods stay unbound, so a deleted pod goes at once once its finalizers are
gone, as the API server does for pods never scheduled.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from numaplane.controllers.job import JobController
from numaplane.controllers.job.backoff import PodFailureBackoff
from numaplane.kube import KubeClient, load_kubeconfig

Obj = dict[str, Any]

#: Small delays so a test takes seconds: pod events coalesced for 20 ms, pod-failure backoff
#: 20 ms doubling to 80 ms.
FAST_BACKOFF = PodFailureBackoff(base_s=0.02, cap_s=0.08)
FAST_BATCH_S = 0.02
#: Bound on every wait for the controller (a failure, not a timing assertion: the tests' own
#: pytest-timeout is longer).
WAIT_S = 60.0
_namespaces = itertools.count()


def now_rfc3339() -> str:
    """Now as ``metav1.Time`` prints."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def job_body(
    name: str,
    *,
    completions: int | None = 1,
    parallelism: int | None = None,
    restart_policy: str = "Never",
    **spec: Any,
) -> Obj:
    """A batch/v1 Job running one ``busybox`` container."""
    body: Obj = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": restart_policy,
                    "containers": [{"name": "main", "image": "busybox", "command": ["true"]}],
                }
            },
            **spec,
        },
    }
    if completions is not None:
        body["spec"]["completions"] = completions
    if parallelism is not None:
        body["spec"]["parallelism"] = parallelism
    return body


class Cluster:
    """A client on the shared server, in a namespace of its own."""

    def __init__(self, client: KubeClient, namespace: str) -> None:
        self.client = client
        self.namespace = namespace

    async def create_job(self, body: Obj) -> Obj:
        """Create the Job in the test's namespace."""
        return await self.client.create("batch/v1", "jobs", body, self.namespace)

    async def job(self, name: str) -> Obj:
        """The Job as stored."""
        return await self.client.get("batch/v1", "jobs", name, self.namespace)

    async def pods(self) -> list[Obj]:
        """Every pod of the namespace."""
        items, _ = await self.client.list_all("v1", "pods", self.namespace)
        return items

    async def no_pods(self) -> bool:
        """Whether the namespace has no pod left."""
        return not await self.pods()

    async def active_pods(self) -> list[Obj]:
        """Pods neither finished nor being deleted."""
        return [
            p
            for p in await self.pods()
            if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
            and not p["metadata"].get("deletionTimestamp")
        ]

    async def events(self) -> list[Obj]:
        """The namespace's events."""
        items, _ = await self.client.list_all("v1", "events", self.namespace)
        return items

    async def wait_event(self, reason: str) -> Obj:
        """Wait for an event with ``reason`` (the recorder sends events in the background)."""

        async def probe() -> Obj | None:
            return next((e for e in await self.events() if e.get("reason") == reason), None)

        found: Obj = await self.wait_for(f"a {reason} event", probe)
        return found

    async def set_pod_phase(
        self, pod: Obj, phase: str, exit_code: int = 0, *, restarts: int = 0
    ) -> Obj:
        """Play the kubelet: the pod Running (ready) or finished with ``exit_code``."""
        stamp = now_rfc3339()
        if phase == "Running":
            state: Obj = {"running": {"startedAt": stamp}}
            ready = "True"
        else:
            state = {
                "terminated": {
                    "exitCode": exit_code,
                    "reason": "Completed" if exit_code == 0 else "Error",
                    "startedAt": stamp,
                    "finishedAt": stamp,
                }
            }
            ready = "False"
        status = {
            "phase": phase,
            "conditions": [{"type": "Ready", "status": ready, "lastTransitionTime": stamp}],
            "containerStatuses": [
                {
                    "name": "main",
                    "image": "busybox",
                    "imageID": "",
                    "ready": ready == "True",
                    "restartCount": restarts,
                    "state": state,
                }
            ],
        }
        return await self.client.patch(
            "v1",
            "pods",
            pod["metadata"]["name"],
            {"status": status},
            self.namespace,
            subresource="status",
        )

    async def wait_for(self, what: str, check: Callable[[], Awaitable[Any]]) -> Any:
        """Poll ``check`` until it returns something truthy; fail naming ``what`` after
        :data:`WAIT_S`."""
        deadline = time.monotonic() + WAIT_S
        while True:
            found = await check()
            if found:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            await asyncio.sleep(0.02)

    async def wait_job(self, name: str, what: str, check: Callable[[Obj], bool]) -> Obj:
        """Wait until the Job satisfies ``check``."""

        async def probe() -> Obj | None:
            job = await self.job(name)
            return job if check(job) else None

        found: Obj = await self.wait_for(f"job {name}: {what}", probe)
        return found


def condition(job: Obj, kind: str) -> Obj | None:
    """The Job's condition of type ``kind``."""
    for cond in (job.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return dict(cond)
    return None


def condition_types(job: Obj) -> list[tuple[str, str]]:
    """``(type, status)`` of every condition, in order."""
    return [(c["type"], c["status"]) for c in (job.get("status") or {}).get("conditions") or []]


@contextlib.asynccontextmanager
async def controller_running(kubeconfig: Path, **options: Any) -> AsyncIterator[JobController]:
    """A Job controller on its own client, fast settings, cancelled after the block."""
    options.setdefault("backoff", FAST_BACKOFF)
    options.setdefault("sync_batch_period", FAST_BATCH_S)
    async with KubeClient(load_kubeconfig(kubeconfig)) as client:
        controller = JobController(client, **options)
        task = asyncio.create_task(controller.run())
        try:
            await controller.jobs.wait_synced()
            await controller.pods.wait_synced()
            yield controller
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


@contextlib.asynccontextmanager
async def cluster(kubeconfig: Path) -> AsyncIterator[Cluster]:
    """A client and a fresh namespace on the shared server."""
    name = f"job-{next(_namespaces)}-{int(time.time() * 1000) % 100000}"
    async with KubeClient(load_kubeconfig(kubeconfig)) as client:
        await client.create("v1", "namespaces", {"metadata": {"name": name}})
        yield Cluster(client, name)
    # aiohttp closes TLS connections asynchronously: give the closing handshakes of this test's
    # clients a moment before asyncio.run closes the loop (aiohttp's graceful-shutdown advice),
    # else their sockets are collected unclosed.
    await asyncio.sleep(0.25)
