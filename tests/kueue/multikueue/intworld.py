"""The INT harness of the MultiKueue corpus (over 400 lines: one World class of the reads, writes
and waits every scenario shares): a manager and two workers (``worker1``, ``worker2``) as three
fresh logical clusters of one ``numaplane apiserver`` (or each the default cluster of its own
server: ``multikueue_int.SeparateServers``), Kueue's controllers (:class:`KueueRuntime` without
its scheduler) running in this process on each, and MultiKueue on the manager, with fixture F
created and its check ``Active``. The test reserves quota itself
(:func:`numaplane.testing.multikueue_int.reserve`) and writes the workers' Job statuses; nothing
runs pods.

Timing knobs (upstream's integration suite): workerLostTimeout 3s, gcInterval 2s, remote
events batched 250ms, dispatcher AllAtOnce unless a test says otherwise."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from numaplane.kube import KubeClient, load_kubeconfig
from numaplane.kube.errors import ApiError
from numaplane.kueue.config import KueueConfig, MultiKueueConfig
from numaplane.kueue.configvalues import DISPATCHER_ALL_AT_ONCE
from numaplane.kueue.runtime.install import install_kueue_crds
from numaplane.kueue.runtime.multikueue.manager import MultiKueue
from numaplane.kueue.runtime.runtime import WORKLOAD_SOURCE, KueueRuntime
from numaplane.testing import multikueue_int as mk
from numaplane.testing.multikueue_int import Clusters, SeparateServers

Obj = dict[str, Any]
#: A whole scenario's bound (each wait inside is bounded by ``mk.WAIT_S``).
SCENARIO_S = 120.0


@dataclass(frozen=True)
class Knobs:
    """The INT timing knobs and the dispatcher."""

    worker_lost_timeout: float = 3.0
    gc_interval: float = 2.0
    events_batch_period: float = 0.25
    dispatcher: str = DISPATCHER_ALL_AT_ONCE
    step_size: int | None = None
    #: The manager's Configuration featureGates.
    feature_gates: tuple[tuple[str, bool], ...] = ()

    def config(self) -> KueueConfig:
        """The manager's Kueue configuration."""
        section = MultiKueueConfig(
            gc_interval=self.gc_interval,
            worker_lost_timeout=self.worker_lost_timeout,
            dispatcher_name=self.dispatcher,
            incremental_step_size=self.step_size,
        )
        return dataclasses.replace(
            KueueConfig(), multi_kueue=section, feature_gates=dict(self.feature_gates)
        )


@dataclass
class Node:
    """One logical cluster: its client and the Kueue running on it."""

    name: str
    client: KubeClient
    kubeconfig: str
    runtime: KueueRuntime | None = None
    multikueue: MultiKueue | None = None
    task: asyncio.Future[Any] | None = None
    mk_task: asyncio.Future[Any] | None = None


@dataclass
class World:
    """A running manager and its workers (see the module doc)."""

    manager: Node
    workers: dict[str, Node]
    namespace: str
    knobs: Knobs
    #: Every MultiKueueCluster name a scenario used.
    cluster_names: set[str] = field(default_factory=lambda: set(mk.WORKERS))
    #: Whether Kueue's scheduler runs (the SCHED harness, schedworld); INT reserves by hand.
    scheduler: bool = False

    # ----- Kueue on the clusters -----------------------------------------------------------

    async def start_manager(self) -> None:
        """Kueue (its scheduler only in the SCHED harness) and MultiKueue on the manager."""
        node = self.manager
        config = self.knobs.config()
        runtime = KueueRuntime(
            node.client, config, scheduler=self.scheduler, status_batch_period=0.25
        )
        node.runtime = runtime
        node.multikueue = MultiKueue(
            node.client,
            runtime.informers,
            runtime.recorders[WORKLOAD_SOURCE],
            config.multi_kueue,
            namespace=mk.KUEUE_NAMESPACE,
            clock=runtime.clock,
            events_batch_period=self.knobs.events_batch_period,
            workers=2,
            feature_gates=config.feature_gates,
        )
        node.task = asyncio.ensure_future(runtime.run())
        node.mk_task = asyncio.ensure_future(node.multikueue.run())

    async def stop_manager(self) -> None:
        """Stop the manager's Kueue (what a restart loses: every cache and in-memory state)."""
        await _stop(self.manager)
        if self.manager.multikueue is not None:
            # A second cancellation reaches RemoteClusters.run while it closes its clients
            # (MultiKueue.run cancels its tasks again once its gather gave up): whatever it
            # left open is closed here.
            for name in self.cluster_names:
                remote = self.manager.multikueue.remotes.get(name)
                if remote is not None:
                    await remote.stop_watchers()
        self.manager.runtime = None
        self.manager.multikueue = None

    async def restart_manager(self) -> None:
        """The manager's Kueue stopped and started afresh."""
        await self.stop_manager()
        await self.start_manager()

    def admitted_total(self) -> int:
        """``multikueue_workloads_admitted_total`` of this manager's run."""
        assert self.manager.multikueue is not None
        executor = self.manager.multikueue.controller.executor
        return executor.count("multikueue_workloads_admitted_total")

    # ----- API reads and writes -----------------------------------------------------------

    def client(self, cluster: str) -> KubeClient:
        """The client of ``manager``, ``worker1`` or ``worker2``."""
        return self.manager.client if cluster == "manager" else self.workers[cluster].client

    async def create(self, cluster: str, obj: Obj) -> Obj:
        """Create ``obj`` on ``cluster``."""
        resource = _resource(obj)
        namespace = obj["metadata"].get("namespace")
        return await self.client(cluster).create(obj["apiVersion"], resource, obj, namespace)

    async def get(self, cluster: str, obj: Obj) -> Obj | None:
        """The object named like ``obj`` on ``cluster`` (None when absent)."""
        meta = obj["metadata"]
        try:
            return await self.client(cluster).get(
                obj["apiVersion"], _resource(obj), meta["name"], meta.get("namespace")
            )
        except ApiError as err:
            if err.is_not_found:
                return None
            raise

    async def workload(self, cluster: str, name: str) -> Obj | None:
        """Workload ``name`` of the test namespace on ``cluster``."""
        return await self.get(cluster, _ref(mk.API, "Workload", name, self.namespace))

    async def job(self, cluster: str, name: str) -> Obj | None:
        """batch/v1 Job ``name`` of the test namespace on ``cluster``."""
        return await self.get(cluster, _ref("batch/v1", "Job", name, self.namespace))

    async def workload_of_job(self, job: Obj) -> Obj:
        """The manager's Workload of ``job`` (Kueue's job reconciler makes it)."""
        uid = job["metadata"]["uid"]

        async def probe() -> Obj | None:
            items, _ = await self.manager.client.list_all(mk.API, "workloads", self.namespace)
            for item in items:
                owners = item["metadata"].get("ownerReferences") or []
                if any(o.get("uid") == uid for o in owners):
                    return item
            return None

        return await mk.wait_for(probe, what=f"the workload of job {job['metadata']['name']}")

    async def update(self, cluster: str, obj: Obj, *, status: bool = False) -> Obj:
        """Write ``obj`` (its status with ``status``) on ``cluster``, as read (conditional)."""
        return await self.client(cluster).update(
            obj["apiVersion"],
            _resource(obj),
            obj,
            obj["metadata"].get("namespace"),
            subresource="status" if status else "",
        )

    async def change(
        self, cluster: str, obj: Obj, edit: Callable[[Obj], None], *, status: bool = False
    ) -> Obj:
        """Read ``obj`` afresh on ``cluster``, ``edit`` it and write it back, retried on
        conflicts."""

        async def attempt() -> Obj | None:
            latest = await self.get(cluster, obj)
            assert latest is not None, f"{obj['kind']} {obj['metadata']['name']} is gone"
            edit(latest)
            try:
                return await self.update(cluster, latest, status=status)
            except ApiError as err:
                if err.is_conflict:
                    return None
                raise

        return await mk.retry_conflicts(attempt)

    async def delete(self, cluster: str, obj: Obj, *, background: bool = True) -> None:
        """Delete ``obj`` on ``cluster`` (background propagation, as kubectl)."""
        meta = obj["metadata"]
        try:
            await self.client(cluster).delete(
                obj["apiVersion"],
                _resource(obj),
                meta["name"],
                meta.get("namespace"),
                propagation_policy="Background" if background else None,
            )
        except ApiError as err:
            if not err.is_not_found:  # already gone (an owner's deletion took it)
                raise

    async def until(
        self, probe: Callable[[], Awaitable[Any]], what: str, timeout: float = mk.WAIT_S
    ) -> Any:
        """:func:`mk.wait_for`."""
        return await mk.wait_for(probe, timeout, what)

    async def until_workload(
        self, cluster: str, name: str, check: Callable[[Obj | None], bool], what: str
    ) -> Obj | None:
        """Wait until Workload ``name`` on ``cluster`` passes ``check`` (None: absent)."""
        seen: list[Obj | None] = [None]

        async def probe() -> bool:
            seen[0] = await self.workload(cluster, name)
            return check(seen[0])

        try:
            await mk.wait_for(probe, what=f"{cluster}: workload {name} {what}")
        except AssertionError as err:
            raise AssertionError(f"{err}; last seen: {seen[0]}") from None
        return seen[0]

    async def copies(self, name: str) -> set[str]:
        """The workers holding a copy of Workload ``name``."""
        return {w for w in self.workers if await self.workload(w, name) is not None}

    async def until_copies(self, name: str, want: set[str]) -> None:
        """Wait until exactly the workers ``want`` hold a copy of ``name``."""

        async def probe() -> bool:
            return await self.copies(name) == want

        await mk.wait_for(probe, what=f"copies of {name} on {sorted(want)}")

    async def keeps_copies(self, name: str, want: set[str], seconds: float = 1.0) -> None:
        """Exactly the workers ``want`` hold a copy of ``name`` for ``seconds``."""
        await mk.consistently(lambda: self.copies(name), want, seconds, f"copies of {name}")

    # ----- connections --------------------------------------------------------------------

    async def put_kubeconfig(self, worker: str, text: str) -> None:
        """Rewrite worker ``worker``'s kubeconfig Secret."""
        secret = mk.kubeconfig_secret(mk.secret_name(worker), text)

        def edit(obj: Obj) -> None:
            obj["data"] = secret["data"]

        await self.change("manager", secret, edit)

    async def cluster_active(self, worker: str) -> tuple[str, str, str] | None:
        """The MultiKueueCluster's ``Active`` condition."""
        found = await self.get("manager", mk.multikueue_cluster(worker, ""))
        return mk.condition(found, "Active")

    async def until_cluster(self, worker: str, status: str, reason: str) -> None:
        """Wait until MultiKueueCluster ``worker`` is ``Active=status`` with ``reason``."""

        async def probe() -> bool:
            found = await self.cluster_active(worker)
            return found is not None and found[:2] == (status, reason)

        await mk.wait_for(probe, what=f"MultiKueueCluster {worker} Active={status} {reason}")

    async def break_connection(self, worker: str) -> None:
        """Point ``worker``'s kubeconfig at a closed port; wait for ClientConnectionFailed."""
        await self.put_kubeconfig(worker, mk.broken_kubeconfig(self.workers[worker].kubeconfig))
        await self.until_cluster(worker, "False", "ClientConnectionFailed")

    async def restore_connection(self, worker: str) -> None:
        """Put ``worker``'s kubeconfig back; wait for ``Active=True``."""
        await self.put_kubeconfig(worker, self.workers[worker].kubeconfig)
        await self.until_cluster(worker, "True", "Active")

    # ----- jobs on workers ----------------------------------------------------------------

    async def finish_job(self, cluster: str, name: str, *, succeeded: bool = True) -> None:
        """Write a finished status on Job ``name`` of ``cluster`` (what the Job controller
        would: SuccessCriteriaMet + Complete, or FailureTarget + Failed)."""
        now = _now()

        def edit(job: Obj) -> None:
            status = job.setdefault("status", {})
            status.setdefault("startTime", now)
            status["active"] = 0
            status["ready"] = 0
            if succeeded:
                status["succeeded"] = 1
                status["completionTime"] = now
                kinds = [
                    (
                        "SuccessCriteriaMet",
                        "CompletionsReached",
                        "Reached expected number of succeeded pods",
                    ),
                    ("Complete", "CompletionsReached", "Job finished successfully"),
                ]
            else:
                status["failed"] = 1
                kinds = [
                    (
                        "FailureTarget",
                        "BackoffLimitExceeded",
                        "Job has reached the specified backoff limit",
                    ),
                    (
                        "Failed",
                        "BackoffLimitExceeded",
                        "Job has reached the specified backoff limit",
                    ),
                ]
            status["conditions"] = [
                {
                    "type": kind,
                    "status": "True",
                    "reason": reason,
                    "message": message,
                    "lastProbeTime": now,
                    "lastTransitionTime": now,
                }
                for kind, reason, message in kinds
            ]

        await self.change(cluster, _ref("batch/v1", "Job", name, self.namespace), edit, status=True)


def _now() -> str:
    import datetime

    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _ref(api_version: str, kind: str, name: str, namespace: str | None = None) -> Obj:
    meta: Obj = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


_RESOURCES = {
    "AdmissionCheck": "admissionchecks",
    "ClusterQueue": "clusterqueues",
    "Job": "jobs",
    "LocalQueue": "localqueues",
    "MultiKueueCluster": "multikueueclusters",
    "MultiKueueConfig": "multikueueconfigs",
    "Namespace": "namespaces",
    "ResourceFlavor": "resourceflavors",
    "Secret": "secrets",
    "Workload": "workloads",
    "WorkloadPriorityClass": "workloadpriorityclasses",
}


def _resource(obj: Obj) -> str:
    return _RESOURCES[obj["kind"]]


async def _stop(node: Node) -> None:
    # MultiKueue first (its connections closed), then the runtime whose informers it reads.
    for task in (node.mk_task, node.task):
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    node.task = node.mk_task = None


# ----- the world's life ---------------------------------------------------------------------


@contextlib.asynccontextmanager
async def world(
    clusters: Clusters | SeparateServers,
    knobs: Knobs = Knobs(),
    *,
    config_clusters: Sequence[str] | None = None,
    extra_checks: Sequence[str] = (),
    worker_cpu: str = "5",
    wait_active: bool = True,
    scheduler: bool = False,
    objects: Callable[[str, list[Obj]], list[Obj]] | None = None,
) -> AsyncIterator[World]:
    """Fixture F on ``clusters``, Kueue running on the workers and the manager; the check
    ``ac1`` Active (unless ``wait_active`` is False) on exit of the setup. ``scheduler`` runs
    Kueue's scheduler everywhere (the SCHED harness) instead of the test reserving quota;
    ``objects(role, fixture_objects)`` gives what to create on ``role`` instead of fixture F's
    own objects."""
    namespace = f"ns-{clusters.manager}"
    async with contextlib.AsyncExitStack() as stack:
        nodes: dict[str, Node] = {}
        for role, name in zip(("manager", *mk.WORKERS), clusters.names(), strict=True):
            path = clusters.kubeconfig(name)
            client = await stack.enter_async_context(KubeClient(load_kubeconfig(path)))
            await install_kueue_crds(client)
            nodes[role] = Node(name, client, path.read_text())
        workers = {w: nodes[w] for w in mk.WORKERS}
        w = World(nodes["manager"], workers, namespace, knobs, scheduler=scheduler)

        def chosen(role: str, fixture: list[Obj]) -> list[Obj]:
            return fixture if objects is None else objects(role, fixture)

        for worker in workers:
            for obj in chosen(worker, mk.worker_objects(namespace, worker_cpu)):
                await w.create(worker, obj)
        kubeconfigs = {name: node.kubeconfig for name, node in workers.items()}
        manager_objects = mk.manager_objects(
            namespace, kubeconfigs, config_clusters=config_clusters, extra_checks=extra_checks
        )
        for obj in chosen("manager", manager_objects):
            await w.create("manager", obj)
        try:
            for node in workers.values():
                runtime = KueueRuntime(node.client, scheduler=scheduler, status_batch_period=0.25)
                node.runtime = runtime
                node.task = asyncio.ensure_future(runtime.run())
            await w.start_manager()
            if wait_active:
                check = mk.multikueue_check(mk.CHECK, mk.CONFIG)

                async def active() -> bool:
                    found = mk.condition(await w.get("manager", check), "Active")
                    return found is not None and found[0] == "True"

                await mk.wait_for(active, what="AdmissionCheck ac1 Active")
            yield w
            if not scheduler:
                # The INT harness's premise: only the test reserved quota.
                nodes_run = [n.runtime for n in (w.manager, *workers.values()) if n.runtime]
                assert [r.cycles for r in nodes_run] == [0, 0, 0]
        finally:
            await w.stop_manager()
            for node in workers.values():
                await _stop(node)
    await asyncio.sleep(0.25)  # TLS shutdown of the closed connections


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    """Run an async scenario, bounded by :data:`SCENARIO_S`."""

    async def bounded() -> None:
        await asyncio.wait_for(scenario(), SCENARIO_S)

    asyncio.run(bounded())
