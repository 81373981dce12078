"""The I/O edge: informers feed the core, decisions are written through the Kubernetes API.

:func:`run_kueue` is what ``numaplane kueue`` runs: it checks that the cluster serves Kueue's
API, then runs a :class:`KueueRuntime` while this process holds the Lease
``c1f6bfd2.kueue.x-k8s.io`` in Kueue's namespace (upstream's leader election ID), so two copies
never both admit; a lost lease stops the runtime and the process campaigns again. When the
cluster serves MultiKueue's CRDs, MultiKueue runs beside it (:mod:`.multikueue.manager`).
"""

from __future__ import annotations

import asyncio
import logging
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from numaplane.kube.client import KubeClient
from numaplane.kube.errors import ApiError, KubeError
from numaplane.kube.leaderelection import LeaderElector
from numaplane.kueue.config import KueueConfig
from numaplane.kueue.engine import KINDS
from numaplane.kueue.errors import KueueError
from numaplane.kueue.runtime.multikueue.manager import MultiKueue, multikueue_served
from numaplane.kueue.runtime.runtime import WORKLOAD_SOURCE, KueueRuntime

__all__ = ["LEASE_NAME", "KueueRunOptions", "KueueRuntime", "check_api", "run_kueue"]

log = logging.getLogger(__name__)

#: upstream's ``LeaderElectionID`` (``config/components/manager/controller_manager_config.yaml``).
LEASE_NAME: Final = "c1f6bfd2.kueue.x-k8s.io"
DEFAULT_NAMESPACE: Final = "kueue-system"
#: How long to wait for the Kueue API to be served (CRDs installed just before, say).
API_WAIT_S: Final = 5.0


def default_identity() -> str:
    """``hostname_<uuid>``, as controller-runtime names a lease holder."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@dataclass(frozen=True)
class KueueRunOptions:
    """How ``numaplane kueue`` runs."""

    config: KueueConfig = field(default_factory=KueueConfig)
    leader_elect: bool = True
    identity: str = field(default_factory=default_identity)
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    workers: int = 4
    freeze_gc_after_sync: bool = False
    #: Called with the new holder's identity on every leadership change seen.
    on_leader_change: Callable[[str], None] | None = None
    #: Run MultiKueue when the cluster serves its CRDs (upstream's gate is on by default).
    multikueue: bool = True
    #: How long remote changes are batched before a workload is reconciled (upstream's
    #: ``UpdatesBatchPeriod``; tests use 0.25 s).
    multikueue_events_batch_period: float = 1.0

    @property
    def namespace(self) -> str:
        """Where the Lease lives: the configuration's ``leaderElection.resourceNamespace``,
        else Kueue's own namespace."""
        election = self.config.leader_election
        return election.resource_namespace or self.config.namespace or DEFAULT_NAMESPACE

    @property
    def lease_name(self) -> str:
        """The Lease's name (``leaderElection.resourceName``, upstream's ID by default)."""
        return self.config.leader_election.resource_name or LEASE_NAME


#: The ``groupKindConcurrency`` key of the MultiKueue workload controller (built For Workload).
WORKLOAD_GROUP_KIND: Final = "Workload.kueue.x-k8s.io"


async def check_api(client: KubeClient, wait_s: float = API_WAIT_S) -> None:
    """Return once every resource Kueue watches is served; :class:`KueueError` naming the
    first that is not after ``wait_s`` (the Kueue CRDs are not installed)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    for info in KINDS.values():
        while True:
            try:
                await client.list(info.api_version, info.resource, limit=1)
                break
            except ApiError as err:
                if not err.is_not_found or loop.time() > deadline:
                    raise KueueError(
                        f"{info.api_version} {info.resource}: not served by the cluster "
                        f"({err.message}); install the Kueue CRDs first"
                    ) from None
            await asyncio.sleep(0.5)


async def _ensure_namespace(client: KubeClient, namespace: str) -> None:
    # Kueue's installation creates its namespace; against a bare cluster the Lease needs it.
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    try:
        await client.create("v1", "namespaces", body, decode=False)
    except ApiError as err:
        if not (err.is_conflict or err.code == 403):
            raise


async def run_kueue(client: KubeClient, options: KueueRunOptions) -> None:
    """Check the API, then run Kueue (under leader election unless disabled) until
    cancelled."""
    await check_api(client)

    async def work() -> None:
        runtime = KueueRuntime(
            client,
            options.config,
            workers=options.workers,
            freeze_gc_after_sync=options.freeze_gc_after_sync,
        )
        if not (options.multikueue and await multikueue_served(client)):
            await runtime.run()
            return
        multikueue = MultiKueue(
            client,
            runtime.informers,
            runtime.recorders[WORKLOAD_SOURCE],
            options.config.multi_kueue,
            namespace=options.config.namespace or DEFAULT_NAMESPACE,
            clock=runtime.clock,
            events_batch_period=options.multikueue_events_batch_period,
            # Its passes wait on workers' round trips rather than on this loop, so it takes
            # the configured Workload concurrency, not the runtime's own worker count.
            workers=options.config.concurrency(WORKLOAD_GROUP_KIND),
            feature_gates=options.config.feature_gates,
        )
        # Either stopping (an error, or cancellation on SIGTERM or a lost lease) stops both.
        async with asyncio.TaskGroup() as group:
            group.create_task(runtime.run(), name="kueue")
            group.create_task(multikueue.run(), name="multikueue")

    if not options.leader_elect:
        await work()
        return
    try:
        await _ensure_namespace(client, options.namespace)
    except KubeError as err:
        log.warning("namespace %s not created: %s", options.namespace, err)
    while True:
        elector = LeaderElector(
            client,
            options.namespace,
            options.lease_name,
            options.identity,
            lease_duration=options.lease_duration,
            renew_deadline=options.renew_deadline,
            retry_period=options.retry_period,
            release_on_cancel=True,
            on_new_leader=options.on_leader_change,
        )
        await elector.run(work)
        log.warning("lost lease %s/%s; campaigning again", options.namespace, options.lease_name)
        if options.on_leader_change is not None:
            options.on_leader_change("")
