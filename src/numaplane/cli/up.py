"""``numaplane up``: a whole cluster in one command, as a supervisor of the commands users can
also run alone: ``numaplane apiserver``, then (once it answers ``/readyz`` and the
NodeResourceTopology and Kueue CRDs are installed) ``numaplane controllers``, ``numaplane
kueue``, a node agent for this host and the simulated nodes' agents.
(Over 400 lines: the command's options, their checks and the supervisor loop read as one.)

With ``--multikueue-workers N`` the API server also serves logical clusters ``worker1`` ..
``workerN``, each with its own controllers, Kueue and (``--worker-simulated-nodes``) simulated
nodes: the MultiKueue workers of this manager. Each worker's kubeconfig is made as
``numaplane multikueue add-worker`` makes it and stored in the manager's Kueue namespace as
Secret ``workerK-secret``; the MultiKueueConfig and MultiKueueClusters are left to the user.

A child that dies is reported in one line and restarted with backoff (1 s doubling to 30 s);
one that exits with status 2 (an input error: a bad flag or file, which a restart cannot mend)
stops ``up`` with that line and status 2. Ctrl-C or SIGTERM stops the children (SIGTERM, SIGKILL
after a grace period) and ``up`` exits 0; running it again with the same ``--data-dir`` resumes
the cluster (objects, the agents' state) where it was.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import signal
import socket
import ssl
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import click

from numaplane.agent.cluster.nrtcrd import ensure_nrt_crd
from numaplane.cli.supervisor import Child, Component, Supervisor, last_line
from numaplane.cli.upworkers import (
    WORKER_PREFIX,
    numaplane_argv,
    set_up_workers,
    worker_components,
)
from numaplane.errors import InputError, NumaplaneError
from numaplane.kube import KubeClient
from numaplane.kube.config import load_kubeconfig
from numaplane.kueue.config import load_config
from numaplane.kueue.runtime.install import install_kueue_crds

#: How long the API server may take to answer ``/readyz`` on start.
READY_TIMEOUT_S = 120.0
POLL_S = 0.2
#: The simulated nodes' agent name prefix (``sim-0`` ... with one machine).
SIM_PREFIX = "sim"


@dataclass(frozen=True)
class UpOptions:
    """What ``numaplane up`` was asked to run."""

    data_dir: Path
    port: int = 6443
    bind: str = "127.0.0.1"
    kubelet_config: Path | None = None
    node: str = "host"
    node_name: str = ""
    simulated_nodes: int = 0
    machines: tuple[str, ...] = ()
    numa_filter: bool = True
    verbose: bool = False
    #: Run Kueue (its CRDs installed on start, Job defaulting in the API server).
    kueue: bool = True
    kueue_config: Path | None = None
    #: MultiKueue workers (logical clusters ``worker1`` ...) and each one's simulated nodes.
    multikueue_workers: int = 0
    worker_simulated_nodes: int = 0

    @property
    def kubeconfig(self) -> Path:
        """The admin kubeconfig the API server writes."""
        return self.data_dir / "admin.kubeconfig"

    @property
    def workers(self) -> tuple[str, ...]:
        """The MultiKueue workers' logical cluster names."""
        return tuple(f"{WORKER_PREFIX}{i}" for i in range(1, self.multikueue_workers + 1))

    def worker_kubeconfig(self, worker: str) -> Path:
        """The admin kubeconfig the API server writes for logical cluster ``worker``."""
        return self.data_dir / f"{worker}.kubeconfig"


def _numaplane(*args: str) -> tuple[str, ...]:
    return numaplane_argv(*args)


def split_nodes(total: int, machines: int) -> list[int]:
    """``total`` simulated nodes spread over ``machines`` agents as evenly as possible, the
    first agents taking the remainder (10 over 3: 4, 3, 3)."""
    base, extra = divmod(total, machines)
    return [base + (1 if i < extra else 0) for i in range(machines)]


def components(options: UpOptions) -> list[Component]:
    """The children after the API server, in start order."""
    kubeconfig = str(options.kubeconfig)
    config = ("-c", str(options.kubelet_config)) if options.kubelet_config else ()
    controllers = ["controllers", "--kubeconfig", kubeconfig]
    if not options.numa_filter:
        controllers.append("--no-numa-filter")
    if options.verbose:
        controllers.append("-v")
    found = [Component("controllers", _numaplane(*controllers))]
    if options.kueue:
        kueue = ["kueue", "--kubeconfig", kubeconfig]
        if options.kueue_config is not None:
            kueue += ["--config", str(options.kueue_config)]
        if options.verbose:
            kueue.append("-v")
        found.append(Component("kueue", _numaplane(*kueue)))
    if options.node == "host":
        name = options.node_name or socket.gethostname().lower()
        argv = (
            "agent",
            "--kubeconfig",
            kubeconfig,
            "--node-name",
            name,
            *config,
            "--state-dir",
            str(options.data_dir / "agent"),
            # Any free port: the Node publishes it, and several agents may share a host.
            "--listen",
            "127.0.0.1:0",
        )
        found.append(Component("agent", _numaplane(*argv)))
    machines = options.machines or ("dual-socket-ht",)
    counts = split_nodes(options.simulated_nodes, len(machines))
    several = len(machines) > 1
    for index, (machine, count) in enumerate(zip(machines, counts, strict=True)):
        if count == 0:
            continue
        prefix = f"{SIM_PREFIX}{index}" if several else SIM_PREFIX
        argv = (
            "agent",
            "--simulate",
            "--kubeconfig",
            kubeconfig,
            "--machine",
            machine,
            "--nodes",
            str(count),
            "--node-name",
            prefix,
            *config,
            "--state-dir",
            str(options.data_dir / prefix),
        )
        found.append(Component(prefix, _numaplane(*argv)))
    for worker in options.workers:
        found += worker_components(options, worker)
    return found


def apiserver_component(options: UpOptions) -> Component:
    """The API server child."""
    argv = ["apiserver", "--data-dir", str(options.data_dir), "--port", str(options.port)]
    argv += ["--bind", options.bind]
    if options.kueue:
        # Kueue's Job webhook: a Job with a queue-name label is created suspended.
        argv.append("--kueue-job-defaulting")
    for worker in options.workers:
        argv += ["--cluster", worker]
    if options.verbose:
        argv.append("-v")
    return Component("apiserver", _numaplane(*argv))


class _StopRequestedError(Exception):
    """SIGINT or SIGTERM arrived."""


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    del signum, frame
    raise _StopRequestedError


def _serving_url(child: Child) -> str | None:
    """The URL the API server printed it serves, in this run's part of its log."""
    try:
        with child.log_path.open("rb") as log:
            log.seek(child.log_offset)
            text = log.read().decode(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if "serving https://" in line:
            return line.split("serving ", 1)[1].split()[0]
    return None


def _ready(kubeconfig: Path, url: str) -> bool:
    """Whether ``url/readyz`` answers ``ok`` to the admin."""
    try:
        config = load_kubeconfig(kubeconfig)
        context: ssl.SSLContext | None = config.ssl_context()
        with urllib.request.urlopen(f"{url}/readyz", context=context, timeout=5) as resp:
            return bool(resp.status == 200 and resp.read() == b"ok")
    except (OSError, urllib.error.URLError, ValueError, NumaplaneError):
        # Not listening yet, or its kubeconfig half-written: try again shortly.
        return False


def wait_ready(supervisor: Supervisor, child: Child, kubeconfig: Path) -> str:
    """Wait for the API server to answer ``/readyz``; its URL. Raises :class:`InputError` when
    it exits first (its last log line says why) or does not come up in time."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        assert child.process is not None
        code = child.process.poll()
        if code is not None:
            why = last_line(child.log_path, child.log_offset)
            raise InputError("apiserver", f"exited with status {code}: {why}")
        url = _serving_url(child)
        if url is not None and _ready(kubeconfig, url):
            return url
        time.sleep(POLL_S)
    raise InputError("apiserver", f"not ready in {READY_TIMEOUT_S:.0f}s (log: {child.log_path})")


def _lock(data_dir: Path) -> int:
    """Hold ``DIR/up.lock`` for this process's life: one ``up`` per data directory."""
    fd = os.open(data_dir / "up.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as err:
        os.close(fd)
        raise InputError(
            "--data-dir", f"{data_dir}: another numaplane up is running on it"
        ) from err
    return fd


def run_up(options: UpOptions, say: Callable[[str], None] = click.echo) -> int:
    """Run the cluster until SIGINT/SIGTERM; the exit status."""
    data_dir = options.data_dir
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError("--data-dir", f"{data_dir}: {err.strerror}") from err
    lock = _lock(data_dir)
    supervisor = Supervisor(data_dir / "logs", say=lambda line: say(f"numaplane up: {line}"))
    previous = {sig: signal.signal(sig, _raise_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        api = supervisor.start(apiserver_component(options))
        url = wait_ready(supervisor, api, options.kubeconfig)
        # The NodeResourceTopology CRD is there before the scheduler starts: a scheduler that
        # found no NRTs would place pods on nodes without their NUMA view until the agents'
        # own installation of it landed.
        try:
            asyncio.run(_install_crds(options.kubeconfig))
        except NumaplaneError as err:
            say(
                f"numaplane up: cannot install the NodeResourceTopology CRD now ({err}); "
                "the node agents install it when they join"
            )
        if options.kueue:
            # As Kueue's installation does: its CRDs before its controller starts.
            asyncio.run(_install_crds(options.kubeconfig, kueue=True))
        if options.workers:
            asyncio.run(set_up_workers(options, say))
        say(f"numaplane up: serving {url} (data in {data_dir})")
        say(f"kubeconfig: {options.kubeconfig}")
        say(f"export KUBECONFIG={options.kubeconfig}")
        for component in components(options):
            supervisor.start(component)
            say(
                f"numaplane up: started {component.name} (log: {supervisor.log_dir}/"
                f"{component.name}.log)"
            )
        sys.stdout.flush()
        while True:
            failed = supervisor.check()
            if failed is not None:
                return 2
            time.sleep(POLL_S)
    except _StopRequestedError:
        return 0
    finally:
        # A second Ctrl-C while stopping must not leave children behind half-stopped.
        for sig in previous:
            signal.signal(sig, signal.SIG_IGN)
        supervisor.stop_all()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        os.close(lock)


async def _install_crds(kubeconfig: Path, *, kueue: bool = False) -> None:
    async with KubeClient(load_kubeconfig(kubeconfig)) as client:
        await (install_kueue_crds(client) if kueue else ensure_nrt_crd(client))


def _absolute(path: Path) -> Path:
    return Path(os.path.abspath(path))


@click.command(
    epilog="""\b
Examples:
  numaplane up --data-dir ./cluster                     # API server, controllers, this host
  export KUBECONFIG=./cluster/admin.kubeconfig; kubectl get nodes
  numaplane up --data-dir ./c -c kubelet.yaml --node none --simulated-nodes 3 \\
      --machine dual-socket-ht
  numaplane up --data-dir ./b --node none --simulated-nodes 100 --port 0 \\
      --machine dual-socket-multi-numa --machine dual-socket-multi-numa-large
  numaplane up --data-dir ./mk --node none --multikueue-workers 2 --worker-simulated-nodes 1
"""
)
@click.option(
    "--data-dir",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Where the cluster lives: the API server's data, the agents' state, logs/ (one log "
    "per component) and admin.kubeconfig. Running up again on it resumes the cluster.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=6443,
    show_default=True,
    help="The API server's HTTPS port (0: any free port).",
)
@click.option(
    "--bind", default="127.0.0.1", show_default=True, help="The API server's listen address."
)
@click.option(
    "--config",
    "-c",
    "kubelet_config",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="KubeletConfiguration YAML of the nodes (default: kubelet defaults).",
)
@click.option(
    "--node",
    type=click.Choice(["host", "none"]),
    default="host",
    show_default=True,
    help="host: run a node agent for this machine; none: no host node (several "
    "clusters may then share the machine).",
)
@click.option("--node-name", default="", help="This host's Node name (default: the hostname).")
@click.option(
    "--simulated-nodes",
    type=click.IntRange(0, 10_000),
    default=0,
    show_default=True,
    help="Simulated nodes (real admission decisions, no processes), spread over the "
    "--machine shapes.",
)
@click.option(
    "--machine",
    "machines",
    multiple=True,
    metavar="M",
    help="Shape of the simulated nodes (preset, synthetic, capture); repeat to mix "
    "shapes (one simulated agent per shape). Default: dual-socket-ht.",
)
@click.option(
    "--no-numa-filter",
    is_flag=True,
    help="Schedule without the NUMA filter (to compare: the kubelet then rejects).",
)
@click.option(
    "--no-kueue",
    is_flag=True,
    help="Run without Kueue (no Kueue CRDs installed, no numaplane kueue, Jobs with a "
    "queue-name label are not suspended).",
)
@click.option(
    "--kueue-config",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Kueue's Configuration YAML for numaplane kueue (default: upstream's defaults).",
)
@click.option(
    "--multikueue-workers",
    type=click.IntRange(0, 100),
    default=0,
    show_default=True,
    help="MultiKueue workers: logical clusters worker1..N of the same API server, each with "
    "its controllers and Kueue; Secret workerK-secret in the manager's Kueue namespace holds "
    "each one's kubeconfig.",
)
@click.option(
    "--worker-simulated-nodes",
    type=click.IntRange(0, 10_000),
    default=0,
    show_default=True,
    help="Simulated nodes of each MultiKueue worker (the first --machine shape).",
)
@click.option(
    "-v", "--verbose", is_flag=True, help="The API server and controllers log at INFO level."
)
def up(
    data_dir: Path,
    port: int,
    bind: str,
    kubelet_config: Path | None,
    node: str,
    node_name: str,
    simulated_nodes: int,
    machines: tuple[str, ...],
    no_numa_filter: bool,
    no_kueue: bool,
    kueue_config: Path | None,
    multikueue_workers: int,
    worker_simulated_nodes: int,
    verbose: bool,
) -> None:
    """Start a whole cluster: API server, controllers (scheduler, Job controller), Kueue, this
    host's node agent and simulated nodes; print the kubeconfig. Ctrl-C stops it all."""
    if kubelet_config is not None and not kubelet_config.is_file():
        raise InputError("-c", f"{kubelet_config}: no such file")
    if kueue_config is not None:
        if no_kueue:
            raise InputError("--kueue-config", "given with --no-kueue")
        # Read now, so that a bad file stops up at once with its one-line error.
        load_config(kueue_config)
    if multikueue_workers and no_kueue:
        raise InputError("--multikueue-workers", "given with --no-kueue")
    if worker_simulated_nodes and not multikueue_workers:
        raise InputError("--worker-simulated-nodes", "given without --multikueue-workers")
    options = UpOptions(
        data_dir=_absolute(data_dir),
        port=port,
        bind=bind,
        kubelet_config=_absolute(kubelet_config) if kubelet_config else None,
        node=node,
        node_name=node_name,
        simulated_nodes=simulated_nodes,
        machines=machines,
        numa_filter=not no_numa_filter,
        verbose=verbose,
        kueue=not no_kueue,
        kueue_config=_absolute(kueue_config) if kueue_config else None,
        multikueue_workers=multikueue_workers,
        worker_simulated_nodes=worker_simulated_nodes,
    )
    sys.exit(run_up(options))
