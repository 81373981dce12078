"""``numaplane up --multikueue-workers N``: the MultiKueue workers of a manager brought up by
``numaplane up`` (logical clusters ``worker1`` .. ``workerN`` of its API server): each worker's
children, and its CRDs and kubeconfig Secret on the manager once the API server answers."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from numaplane.agent.cluster.nrtcrd import ensure_nrt_crd
from numaplane.cli.supervisor import Component
from numaplane.kube import KubeClient
from numaplane.kube.config import load_kubeconfig
from numaplane.kueue.config import KueueConfig, load_config
from numaplane.kueue.runtime import DEFAULT_NAMESPACE
from numaplane.kueue.runtime.install import install_kueue_crds
from numaplane.kueue.runtime.workeraccess import add_worker

#: The MultiKueue workers' logical cluster names: ``worker1`` ...
WORKER_PREFIX = "worker"
#: The simulated nodes' agent name prefix (``worker1-sim-0`` ...).
SIM_PREFIX = "sim"


class WorkerOptions(Protocol):
    """What of ``numaplane up``'s options the workers use (``UpOptions``)."""

    @property
    def data_dir(self) -> Path: ...
    @property
    def kubeconfig(self) -> Path: ...
    @property
    def kubelet_config(self) -> Path | None: ...
    @property
    def machines(self) -> tuple[str, ...]: ...
    @property
    def numa_filter(self) -> bool: ...
    @property
    def verbose(self) -> bool: ...
    @property
    def kueue_config(self) -> Path | None: ...
    @property
    def worker_simulated_nodes(self) -> int: ...
    @property
    def workers(self) -> tuple[str, ...]: ...
    def worker_kubeconfig(self, worker: str) -> Path: ...


def numaplane_argv(*args: str) -> tuple[str, ...]:
    """A ``numaplane`` command line run by the same interpreter (and so the same installation
    and PYTHONPATH) as this process."""
    return (sys.executable, "-m", "numaplane.cli.main", *args)


def worker_components(options: WorkerOptions, worker: str) -> list[Component]:
    """A MultiKueue worker's children: its controllers, its Kueue (upstream's defaults: a
    worker runs a plain Kueue) and its simulated nodes."""
    kubeconfig = str(options.worker_kubeconfig(worker))
    verbose = ("-v",) if options.verbose else ()
    controllers = ["controllers", "--kubeconfig", kubeconfig, *verbose]
    if not options.numa_filter:
        controllers.append("--no-numa-filter")
    found = [
        Component(f"{worker}-controllers", numaplane_argv(*controllers)),
        Component(f"{worker}-kueue", numaplane_argv("kueue", "--kubeconfig", kubeconfig, *verbose)),
    ]
    if options.worker_simulated_nodes:
        config = ("-c", str(options.kubelet_config)) if options.kubelet_config else ()
        prefix = f"{worker}-{SIM_PREFIX}"
        argv = (
            "agent",
            "--simulate",
            "--kubeconfig",
            kubeconfig,
            "--machine",
            (options.machines or ("dual-socket-ht",))[0],
            "--nodes",
            str(options.worker_simulated_nodes),
            "--node-name",
            prefix,
            *config,
            "--state-dir",
            str(options.data_dir / prefix),
        )
        found.append(Component(prefix, numaplane_argv(*argv)))
    return found


async def set_up_workers(options: WorkerOptions, say: Callable[[str], None]) -> None:
    """The workers' CRDs, then each one's kubeconfig Secret in the manager's Kueue
    namespace."""
    config = load_config(options.kueue_config) if options.kueue_config else KueueConfig()
    namespace = config.namespace or DEFAULT_NAMESPACE
    async with KubeClient(load_kubeconfig(options.kubeconfig)) as manager:
        for worker in options.workers:
            path = options.worker_kubeconfig(worker)
            async with KubeClient(load_kubeconfig(path)) as client:
                await ensure_nrt_crd(client)
                await install_kueue_crds(client)
                made = await add_worker(manager, client, worker, namespace=namespace)
            say(
                f"numaplane up: worker {worker}: kubeconfig {path}, secret "
                f"{namespace}/{made.secret} on the manager"
            )
