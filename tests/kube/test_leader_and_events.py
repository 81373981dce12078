"""LeaderElector and EventRecorder against a real ``numaplane apiserver``: of two candidates on
one Lease only one leads; the other takes over once the first stops renewing (its
leaseTransitions counted); a released lease is taken at once. Identical events aggregate into
one Event whose count grows; a different message is a new Event."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from numaplane.kube import KubeClient, KubeConfig, load_kubeconfig
from numaplane.kube.events import EventRecorder
from numaplane.kube.leaderelection import LeaderElector
from numaplane.testing.apiserver import running_apiserver
from tests.kube.client_support import kube_client

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def elector(
    client: KubeClient,
    name: str,
    identity: str,
    *,
    release_on_cancel: bool = False,
    on_new_leader: Callable[[str], None] | None = None,
) -> LeaderElector:
    """A candidate with short durations (3 s lease, 2 s renew deadline, 0.2 s retries): short
    for the test, long enough that a loaded machine does not miss renewals."""
    return LeaderElector(
        client,
        "kube-system",
        name,
        identity,
        lease_duration=3.0,
        renew_deadline=2.0,
        retry_period=0.2,
        release_on_cancel=release_on_cancel,
        on_new_leader=on_new_leader,
    )


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeConfig]:
    data: Path = tmp_path_factory.mktemp("leader") / "data"
    with running_apiserver(data) as server:
        yield load_kubeconfig(server.kubeconfig)


def test_bad_durations_are_refused() -> None:
    client = KubeClient(KubeConfig(server="https://127.0.0.1:1"))
    with pytest.raises(ValueError, match="lease_duration"):
        LeaderElector(client, "kube-system", "x", "a", lease_duration=5, renew_deadline=10)


def test_only_one_leads_and_the_other_takes_over(config: KubeConfig) -> None:
    async def body() -> None:
        async with kube_client(config) as client:
            leading: list[str] = []
            stop_a = asyncio.Event()
            seen_by_b: list[str] = []

            async def lead_a() -> None:
                leading.append("a")
                await stop_a.wait()

            async def lead_b() -> None:
                leading.append("b")
                await asyncio.Event().wait()

            a = elector(client, "le-test", "a")
            b = elector(client, "le-test", "b", on_new_leader=seen_by_b.append)
            run_a = asyncio.ensure_future(a.run(lead_a))
            while not leading:
                await asyncio.sleep(0.05)
            run_b = asyncio.ensure_future(b.run(lead_b))
            # b keeps trying for several lease durations' worth of retries while a renews.
            for _ in range(20):
                await asyncio.sleep(0.2)
                assert leading == ["a"]
            assert b.leader == "a"
            assert not b.is_leader
            lease = await client.get("coordination.k8s.io/v1", "leases", "le-test", "kube-system")
            assert lease["spec"]["holderIdentity"] == "a"
            assert lease["spec"]["leaseTransitions"] == 0
            assert lease["spec"]["leaseDurationSeconds"] == 3

            # a stops renewing (its process dies: cancel without release): b takes over.
            run_a.cancel()
            with pytest.raises(asyncio.CancelledError):
                await run_a
            while leading == ["a"]:
                await asyncio.sleep(0.05)
            assert leading == ["a", "b"]
            assert seen_by_b == ["a", "b"]
            lease = await client.get("coordination.k8s.io/v1", "leases", "le-test", "kube-system")
            assert lease["spec"]["holderIdentity"] == "b"
            assert lease["spec"]["leaseTransitions"] == 1
            run_b.cancel()
            with pytest.raises(asyncio.CancelledError):
                await run_b

    asyncio.run(body())


def test_leadership_lost_cancels_the_work_and_release_hands_over(config: KubeConfig) -> None:
    async def body() -> None:
        async with kube_client(config) as client:
            started = asyncio.Event()
            cancelled = asyncio.Event()

            async def lead() -> None:
                started.set()
                try:
                    await asyncio.Event().wait()
                finally:
                    cancelled.set()

            a = elector(client, "le-lost", "a")
            run_a = asyncio.ensure_future(a.run(lead))
            await started.wait()
            # Someone else overwrites the lease: a's renewals fail (the holder is not a and the
            # record is fresh), so after renew_deadline it has lost and run() returns.
            lease = await client.get("coordination.k8s.io/v1", "leases", "le-lost", "kube-system")
            lease["spec"]["holderIdentity"] = "intruder"
            lease["spec"]["leaseDurationSeconds"] = 3600
            await client.update("coordination.k8s.io/v1", "leases", lease, "kube-system")
            await asyncio.wait_for(run_a, 30)
            assert cancelled.is_set()
            assert not a.is_leader

            # A leader with release_on_cancel clears the holder: the next takes it at once.
            lease = await client.get("coordination.k8s.io/v1", "leases", "le-lost", "kube-system")
            lease["spec"]["holderIdentity"] = ""
            await client.update("coordination.k8s.io/v1", "leases", lease, "kube-system")
            c = elector(client, "le-lost", "c", release_on_cancel=True)
            c_started = asyncio.Event()

            async def lead_c() -> None:
                c_started.set()
                await asyncio.Event().wait()

            run_c = asyncio.ensure_future(c.run(lead_c))
            await asyncio.wait_for(c_started.wait(), 10)
            run_c.cancel()
            with pytest.raises(asyncio.CancelledError):
                await run_c
            lease = await client.get("coordination.k8s.io/v1", "leases", "le-lost", "kube-system")
            assert lease["spec"]["holderIdentity"] == ""
            assert lease["spec"]["leaseDurationSeconds"] == 1

    asyncio.run(body())


def test_identical_events_aggregate(config: KubeConfig) -> None:
    async def body() -> None:
        async with kube_client(config) as client:
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p", "namespace": "default", "uid": "u-1"},
            }
            node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "uid": "u-2"}}
            times = iter([1000.0, 1005.0, 1010.0, 1020.0])
            recorder = EventRecorder(client, "test-scheduler", host="h1", clock=lambda: next(times))
            recorder.event(pod, "Warning", "FailedScheduling", "0/1 nodes are available.")
            recorder.event(pod, "Warning", "FailedScheduling", "0/1 nodes are available.")
            recorder.event(pod, "Warning", "FailedScheduling", "0/2 nodes are available.")
            recorder.event(node, "Normal", "NodeNotReady", "Node n1 status is now: NodeNotReady")
            await recorder.close()
            listed = await client.list("v1", "events", "default")
            events = sorted(listed["items"], key=lambda e: (e["message"], e["count"]))
            summary = [
                (
                    e["involvedObject"]["kind"],
                    e["involvedObject"]["name"],
                    e["type"],
                    e["reason"],
                    e["message"],
                    e["count"],
                    e["firstTimestamp"],
                    e["lastTimestamp"],
                    e["source"],
                    e["reportingComponent"],
                )
                for e in events
            ]
            source = {"component": "test-scheduler", "host": "h1"}
            assert summary == [
                (
                    "Pod",
                    "p",
                    "Warning",
                    "FailedScheduling",
                    "0/1 nodes are available.",
                    2,
                    "1970-01-01T00:16:40Z",
                    "1970-01-01T00:16:45Z",
                    source,
                    "test-scheduler",
                ),
                (
                    "Pod",
                    "p",
                    "Warning",
                    "FailedScheduling",
                    "0/2 nodes are available.",
                    1,
                    "1970-01-01T00:16:50Z",
                    "1970-01-01T00:16:50Z",
                    source,
                    "test-scheduler",
                ),
                (
                    "Node",
                    "n1",
                    "Normal",
                    "NodeNotReady",
                    "Node n1 status is now: NodeNotReady",
                    1,
                    "1970-01-01T00:17:00Z",
                    "1970-01-01T00:17:00Z",
                    source,
                    "test-scheduler",
                ),
            ]
            assert events[0]["involvedObject"]["uid"] == "u-1"

    asyncio.run(body())


def test_close_with_a_timeout_drops_what_a_silent_server_never_took(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A stopping controller is not held by its event backlog: ``close(timeout=...)`` gives up
    on a server that never answers and says how many events were dropped."""

    async def body() -> None:
        accepted: list[asyncio.StreamWriter] = []

        async def hold(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted.append(writer)  # read nothing, answer nothing

        server = await asyncio.start_server(hold, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            async with KubeClient(KubeConfig(server=f"http://127.0.0.1:{port}")) as client:
                recorder = EventRecorder(client, "test-kueue")
                pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "default"}}
                for i in range(3):
                    recorder.event(pod, "Normal", "Started", f"event {i}")
                await asyncio.wait_for(recorder.close(timeout=0.2), 10)
        finally:
            for writer in accepted:
                writer.close()
            server.close()
            await server.wait_closed()

    with caplog.at_level("WARNING", logger="numaplane.kube.events"):
        asyncio.run(body())
    assert "queued event(s) not recorded" in caplog.text
