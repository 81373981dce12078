"""The controller manager: what kube-controller-manager and kube-scheduler do for a cluster, in
one process.

Controllers are chosen by name from a registry of factories (``job``, ``ttl``,
``nodelifecycle``, ``scheduler``); a factory imports its controller's module only when called,
so the manager works with whichever controllers are installed. Controllers run in two groups,
each under its own Lease in ``kube-system``, as upstream's two binaries each hold one:
``numaplane-controller-manager`` (job, ttl, nodelifecycle) and ``numaplane-scheduler``
(scheduler). A group's controllers are built fresh each time its lease is won, run concurrently
while it is held, and are cancelled when it is lost; the group then campaigns again (upstream's
binaries exit instead and rely on being restarted: one process that keeps going is what
``numaplane up`` needs).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import socket
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from numaplane.controllers.nodelifecycle import NodeLifecycleController
from numaplane.controllers.ttlafterfinished import TTLAfterFinishedController
from numaplane.errors import NumaplaneError
from numaplane.kube.client import KubeClient
from numaplane.kube.events import EventRecorder
from numaplane.kube.leaderelection import LeaderElector

log = logging.getLogger(__name__)

CONTROLLER_MANAGER_LEASE: Final = "numaplane-controller-manager"
SCHEDULER_LEASE: Final = "numaplane-scheduler"


class ControllerManagerError(NumaplaneError):
    """A controller that does not exist or cannot be loaded: one line naming it."""


class Controller(Protocol):
    """What every controller offers: run until cancelled."""

    async def run(self) -> None:
        """Work until cancelled."""


def default_identity() -> str:
    """``hostname_<uuid>``, as kube-controller-manager names its lease holder."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@dataclass(frozen=True)
class ControllerManagerOptions:
    """What to run and how. ``controllers=None``: every registered controller that is
    installed; a name given explicitly must be installed."""

    controllers: tuple[str, ...] | None = None
    leader_elect: bool = True
    lease_namespace: str = "kube-system"
    lease_name: str = CONTROLLER_MANAGER_LEASE
    scheduler_lease_name: str = SCHEDULER_LEASE
    identity: str = field(default_factory=default_identity)
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    node_monitor_grace_period: float = 40.0
    node_monitor_period: float = 5.0
    #: Passed to the scheduler's ``SchedulerOptions`` (``numa_filter``, ``scoring_strategy``…).
    scheduler_options: Mapping[str, Any] = field(default_factory=dict)
    #: Called with (lease name, new holder identity) on every leadership change seen.
    on_leader_change: Callable[[str, str], None] | None = None


#: (client, options, recorder) → a controller.
Factory = Callable[[KubeClient, ControllerManagerOptions, EventRecorder], Controller]


@dataclass(frozen=True)
class Registration:
    """One controller the manager can run."""

    factory: Factory
    #: The module the factory imports (probed to tell whether the controller is installed).
    module: str
    #: The source component of its events (upstream's names).
    component: str
    #: Which lease it runs under: ``controller-manager`` or ``scheduler``.
    group: str = "controller-manager"


def _job(client: KubeClient, options: ControllerManagerOptions, recorder: EventRecorder) -> Any:
    # Imported by name, when asked for: the package may not be installed (see selected()).
    module: Any = importlib.import_module("numaplane.controllers.job")
    return module.JobController(client, recorder=recorder)


def _ttl(client: KubeClient, options: ControllerManagerOptions, recorder: EventRecorder) -> Any:
    return TTLAfterFinishedController(client, recorder=recorder)


def _nodelifecycle(
    client: KubeClient, options: ControllerManagerOptions, recorder: EventRecorder
) -> Any:
    return NodeLifecycleController(
        client,
        recorder=recorder,
        node_monitor_period=options.node_monitor_period,
        node_monitor_grace_period=options.node_monitor_grace_period,
    )


def _scheduler(
    client: KubeClient, options: ControllerManagerOptions, recorder: EventRecorder
) -> Any:
    module: Any = importlib.import_module("numaplane.controllers.scheduler")
    scheduler_options = module.SchedulerOptions(**dict(options.scheduler_options))
    return module.Scheduler(client, scheduler_options, recorder=recorder)


#: Every controller by the name ``--controllers`` takes, in start order.
REGISTRY: dict[str, Registration] = {
    "job": Registration(_job, "numaplane.controllers.job", "job-controller"),
    "ttl": Registration(
        _ttl, "numaplane.controllers.ttlafterfinished", "ttl-after-finished-controller"
    ),
    "nodelifecycle": Registration(
        _nodelifecycle, "numaplane.controllers.nodelifecycle", "node-controller"
    ),
    "scheduler": Registration(
        _scheduler, "numaplane.controllers.scheduler", "default-scheduler", group="scheduler"
    ),
}


def _import_error(name: str) -> str | None:
    """Why ``name``'s module cannot be imported (``None``: it can)."""
    try:
        importlib.import_module(REGISTRY[name].module)
    except ImportError as err:
        return str(err)
    return None


def selected(options: ControllerManagerOptions) -> list[str]:
    """The controllers to run: the ones asked for (each must exist and be installed), or
    every installed one."""
    if options.controllers is None:
        names = []
        for name in REGISTRY:
            why = _import_error(name)
            if why is None:
                names.append(name)
            else:
                log.warning("controller %s is not installed (%s): not started", name, why)
        return names
    unknown = [n for n in options.controllers if n not in REGISTRY]
    if unknown:
        raise ControllerManagerError(
            f"--controllers: unknown controller {unknown[0]!r} (known: {', '.join(REGISTRY)})"
        )
    for name in options.controllers:
        why = _import_error(name)
        if why is not None:
            raise ControllerManagerError(
                f"--controllers: controller {name!r} is not installed: {why}"
            )
    return [n for n in REGISTRY if n in options.controllers]


async def _run_group(
    client: KubeClient, options: ControllerManagerOptions, names: list[str]
) -> None:
    """Build the group's controllers and run them concurrently until cancelled."""
    recorders = [EventRecorder(client, REGISTRY[n].component) for n in names]
    controllers = [
        REGISTRY[n].factory(client, options, rec) for n, rec in zip(names, recorders, strict=True)
    ]
    log.info("starting controllers: %s", ", ".join(names))
    try:
        await asyncio.gather(*(c.run() for c in controllers))
    finally:
        for recorder in recorders:
            with contextlib.suppress(Exception):
                await recorder.close()


async def _elected(
    client: KubeClient,
    options: ControllerManagerOptions,
    lease: str,
    work: Callable[[], Awaitable[None]],
) -> None:
    """Campaign for ``lease`` and run ``work`` while it is held, campaigning again after a
    loss, until cancelled."""

    def changed(holder: str) -> None:
        if options.on_leader_change is not None:
            options.on_leader_change(lease, holder)

    while True:
        elector = LeaderElector(
            client,
            options.lease_namespace,
            lease,
            options.identity,
            lease_duration=options.lease_duration,
            renew_deadline=options.renew_deadline,
            retry_period=options.retry_period,
            release_on_cancel=True,
            on_new_leader=changed,
        )
        await elector.run(work)
        log.warning("lost lease %s/%s; campaigning again", options.lease_namespace, lease)
        changed("")


async def run_controller_manager(client: KubeClient, options: ControllerManagerOptions) -> None:
    """Leader election, then run the controllers concurrently, until cancelled."""
    names = selected(options)
    if not names:
        raise ControllerManagerError("no controller to run")
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(REGISTRY[name].group, []).append(name)
    leases = {"controller-manager": options.lease_name, "scheduler": options.scheduler_lease_name}
    tasks = []
    for group, members in groups.items():

        def work(members: list[str] = members) -> Awaitable[None]:
            return _run_group(client, options, members)

        if options.leader_elect:
            tasks.append(asyncio.ensure_future(_elected(client, options, leases[group], work)))
        else:
            tasks.append(asyncio.ensure_future(work()))
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
