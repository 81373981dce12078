"""The executor against real logical clusters: remote actions on distinct workers go at once,
and a failure stops what follows it without undoing what landed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import pytest

from numaplane.kube import KubeClient, load_kubeconfig
from numaplane.kube.errors import ApiError
from numaplane.kube.events import EventRecorder
from numaplane.kueue.errors import KueueError
from numaplane.kueue.multikueue import CreateRemoteJob, UpdateLocalJobStatus
from numaplane.kueue.runtime.multikueue.execute import Executor
from numaplane.testing.multikueue_int import Clusters, batch_job

pytestmark = [pytest.mark.timeout(60)]

NAMESPACE = "default"


class InFlight:
    """Counts the creates in flight on the clients it wraps (the calls go to the real
    server)."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0

    def wrap(self, client: KubeClient) -> KubeClient:
        real = client.create

        async def create(*args: Any, **kwargs: Any) -> Any:
            self.now += 1
            self.most = max(self.most, self.now)
            try:
                # Let every action of the batch start before this one's request goes out.
                await asyncio.sleep(0.05)
                return await real(*args, **kwargs)
            finally:
                self.now -= 1

        client.create = create  # type: ignore[method-assign]
        return client


@asynccontextmanager
async def clients(clusters: Clusters) -> AsyncIterator[dict[str, KubeClient]]:
    async with AsyncExitStack() as stack:
        out = {}
        for name in clusters.names():
            config = load_kubeconfig(clusters.server.cluster_kubeconfig(name))
            out[name] = await stack.enter_async_context(KubeClient(config))
        yield out


async def job_names(client: KubeClient) -> set[str]:
    jobs, _ = await client.list_all("batch/v1", "jobs", NAMESPACE)
    return {job["metadata"]["name"] for job in jobs}


def test_remote_creates_on_distinct_workers_go_at_once(int_clusters: Clusters) -> None:
    async def scenario() -> None:
        async with clients(int_clusters) as by_name:
            manager = by_name[int_clusters.manager]
            spy = InFlight()
            remote = {name: spy.wrap(by_name[name]) for name in int_clusters.workers}
            executor = Executor(
                manager,
                lambda name: remote.get(name),
                EventRecorder(manager, "test"),
                origin="multikueue",
            )
            first, second = int_clusters.workers
            await executor.run(
                [
                    CreateRemoteJob(first, batch_job(NAMESPACE, "a")),
                    CreateRemoteJob(second, batch_job(NAMESPACE, "a")),
                    # The same cluster again: it waits for the first one's create.
                    CreateRemoteJob(first, batch_job(NAMESPACE, "b")),
                ],
                check="ac1",
                local_workload=None,
                job_key=None,
                local_job=None,
            )
            assert spy.most == 2
            assert await job_names(remote[first]) == {"a", "b"}
            assert await job_names(remote[second]) == {"a"}
            assert dict(executor.jobs_created) == {first: 2, second: 1}

    asyncio.run(scenario())


def test_a_failed_remote_action_stops_the_local_write_after_it(int_clusters: Clusters) -> None:
    async def scenario() -> None:
        async with clients(int_clusters) as by_name:
            manager = by_name[int_clusters.manager]
            local = await manager.create("batch/v1", "jobs", batch_job(NAMESPACE, "j"), NAMESPACE)
            first = int_clusters.workers[0]
            reachable = {first: by_name[first]}
            executor = Executor(
                manager,
                lambda name: reachable.get(name),
                EventRecorder(manager, "test"),
                origin="o",
            )
            changed = {**local, "status": {"active": 1}}
            with pytest.raises(KueueError, match="'gone'"):
                await executor.run(
                    [
                        CreateRemoteJob(first, batch_job(NAMESPACE, "j")),
                        CreateRemoteJob("gone", batch_job(NAMESPACE, "j")),
                        UpdateLocalJobStatus(changed),
                    ],
                    check="ac1",
                    local_workload=None,
                    job_key=None,
                    local_job=None,
                )
            # What landed stays (the next pass reads it); the local write was not made.
            assert await job_names(by_name[first]) == {"j"}
            now = await manager.get("batch/v1", "jobs", "j", NAMESPACE)
            assert not (now.get("status") or {}).get("active")
            # A conflict on the worker (already there) is not a failure: the pass goes on.
            await executor.run(
                [CreateRemoteJob(first, batch_job(NAMESPACE, "j")), UpdateLocalJobStatus(changed)],
                check="ac1",
                local_workload=None,
                job_key=None,
                local_job=None,
            )
            now = await manager.get("batch/v1", "jobs", "j", NAMESPACE)
            assert now["status"]["active"] == 1
            with pytest.raises(ApiError):
                # The same resourceVersion again: a conflict on the manager fails the pass.
                await executor.run(
                    [UpdateLocalJobStatus(changed)],
                    check="ac1",
                    local_workload=None,
                    job_key=None,
                    local_job=None,
                )

    asyncio.run(scenario())
