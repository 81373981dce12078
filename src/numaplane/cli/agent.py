"""``numaplane agent`` (run pods from a manifest directory and/or the pods a cluster binds to
the node, on pinned CPUs) and ``numaplane pods`` (what a running agent reports)."""

from __future__ import annotations

import http.client
import json
import logging
import math
import os
import signal
import socket
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from types import FrameType
from typing import Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from numaplane.agent.agent import Agent, AgentOptions
from numaplane.agent.cluster.heartbeat import NodeHeartbeat
from numaplane.agent.cluster.podsource import ApiPodSource
from numaplane.agent.cluster.sync import ClusterSide
from numaplane.agent.crash import CRASH_AT_ENV, install_crash_point
from numaplane.agent.http import DEFAULT_LISTEN, AgentHTTPServer, parse_listen
from numaplane.agent.images import ImageTable, load_image_table
from numaplane.api.kubeletconfig import KubeletConfiguration, load_kubelet_config
from numaplane.cli.agent_simulate import run_simulate
from numaplane.cli.options import MACHINE, MACHINE_HELP
from numaplane.errors import InputError
from numaplane.kube.client import KubeClient
from numaplane.kube.config import KubeConfig, load_kubeconfig
from numaplane.topology.model import Machine


def _finite(param: click.Parameter, value: float) -> float:
    """Refuse ``nan`` (which every range check lets through): a NaN poll would spin."""
    if not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number", param=param)
    return value


@click.command(
    epilog="""\b
Examples:
  numaplane agent --config kubelet.yaml --pod-manifest-path ./pods --state-dir ./state
  numaplane agent -c kubelet.yaml --pod-manifest-path /etc/numaplane/pods \\
      --state-dir /var/lib/numaplane --listen 127.0.0.1:10255
  numaplane agent --kubeconfig admin.kubeconfig --node-name node-a -c kubelet.yaml \\
      --state-dir ./state --image-table images.yaml

\b
Image table (--image-table FILE, YAML), for containers without a command:
  images:
    registry.example.com/team/worker: ["/opt/worker/run"]   # the image's ENTRYPOINT
    busybox: {command: [], args: ["sh"]}                     # ENTRYPOINT and CMD
A key without a tag applies to every tag; the container's args replace the entry's.
Built in: the Kueue examples' images (agnhost, the perf-tests sleep image), pause,
busybox, alpine, ubuntu, debian, bash, python. An unknown image leaves the container
waiting with reason ErrImagePull.
"""
)
@click.option(
    "--config",
    "-c",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="KubeletConfiguration YAML. Default: kubelet defaults (every policy none).",
)
@click.option(
    "--pod-manifest-path",
    "manifest_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Directory of Pod manifests (*.yaml, *.yml, *.json): each pod in it runs here.",
)
@click.option(
    "--kubeconfig",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Join the cluster of this kubeconfig: register the Node and run the pods bound to it.",
)
@click.option(
    "--node-name",
    default=socket.gethostname(),
    show_default="the hostname",
    help="The Node's name in the cluster (with --kubeconfig).",
)
@click.option(
    "--node-ip",
    default="127.0.0.1",
    show_default=True,
    help="The Node's InternalIP, the pods' hostIP and podIP (with --kubeconfig).",
)
@click.option(
    "--image-table",
    type=click.Path(path_type=Path, dir_okay=False),
    help="YAML image table: what runs for a container with an image but no command (below).",
)
@click.option(
    "--state-dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Checkpoints, pod and process records, logs and the device-plugin sockets "
    "(required unless --simulate).",
)
@click.option(
    "--machine",
    "-m",
    "machines",
    type=MACHINE,
    multiple=True,
    envvar="NUMAPLANE_MACHINE",
    help=MACHINE_HELP + " Default: /. Repeated with --simulate: the machines cycle over the nodes.",
)
@click.option(
    "--simulate",
    is_flag=True,
    help="Simulated nodes NODE_NAME-0 ... (with --kubeconfig): pods are admitted by the node "
    "engine, run nothing, last their numaplane.io/simulated-duration annotation, then succeed.",
)
@click.option(
    "--nodes",
    type=click.IntRange(min=1, max=10_000),
    default=1,
    show_default=True,
    help="How many simulated nodes (with --simulate).",
)
@click.option(
    "--cgroup-root",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("/sys/fs/cgroup"),
    show_default=True,
    help="Where the cgroup hierarchies are mounted.",
)
@click.option("--cgroup-parent", default="numaplane", show_default=True, hidden=True)
@click.option("--listen", default=DEFAULT_LISTEN, show_default=True, help="HOST:PORT of the API.")
@click.option(
    "--poll-interval",
    type=click.FloatRange(min=0.05, max=3600.0),
    callback=lambda ctx, param, value: _finite(param, value),
    default=1.0,
    show_default=True,
    help="Seconds between scans of the manifest directory.",
)
@click.option(
    "--reset-state",
    is_flag=True,
    help="Stop the processes the state directory records and discard its checkpoints and "
    "records before starting.",
)
@click.option(
    "--stop-pods-on-exit",
    is_flag=True,
    help="Stop and release every pod when the agent exits (default: they keep running and "
    "the next agent adopts them).",
)
@click.option("--once", is_flag=True, hidden=True, help="One scan, then exit (tests).")
@click.option("--verbose", "-v", is_flag=True, help="Log every decision.")
def agent(
    config_path: Path | None,
    manifest_dir: Path | None,
    kubeconfig: Path | None,
    node_name: str,
    node_ip: str,
    image_table: Path | None,
    state_dir: Path | None,
    machines: tuple[Machine, ...],
    simulate: bool,
    nodes: int,
    cgroup_root: Path,
    cgroup_parent: str,
    listen: str,
    poll_interval: float,
    reset_state: bool,
    stop_pods_on_exit: bool,
    once: bool,
    verbose: bool,
) -> None:
    """Run the pods of a manifest directory, and the pods a cluster binds to this node, as
    processes on the CPUs, memory nodes and devices the kubelet's resource managers give them.

    A new manifest is admitted (or rejected with the kubelet's reason) and started; a removed
    one is stopped and its resources released; a changed one is restarted. With --kubeconfig
    the agent registers its Node (lease, NodeResourceTopology), runs the pods bound to it in
    bind order and reports their status as the kubelet; a deleted pod is stopped gracefully.
    State survives restarts: a restarted agent adopts the running processes. Runs until
    SIGTERM or SIGINT.
    """
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    crash_at = os.environ.get(CRASH_AT_ENV)
    if crash_at:
        install_crash_point(int(crash_at))
    config = (
        load_kubelet_config(config_path)
        if config_path is not None
        else KubeletConfiguration.default()
    )
    if simulate:
        run_simulate(kubeconfig, node_name, nodes, machines, config, state_dir, node_ip)
        return
    if len(machines) > 1:
        raise InputError("--machine", "one machine (several only with --simulate)")
    machine = machines[0] if machines else MACHINE.convert("/", None, None)
    if state_dir is None:
        raise InputError("numaplane agent", "--state-dir is required (unless --simulate)")
    address = parse_listen(listen)
    if manifest_dir is None and kubeconfig is None:
        raise InputError(
            "numaplane agent", "no pod source: give --pod-manifest-path, --kubeconfig or both"
        )
    if manifest_dir is not None and not manifest_dir.is_dir():
        raise InputError(str(manifest_dir), "the pod manifest directory does not exist")
    kube = load_kubeconfig(kubeconfig) if kubeconfig is not None else None
    source = ApiPodSource(node_name, host_ip=node_ip) if kube is not None else None
    options = AgentOptions(
        machine=machine,
        config=config,
        manifest_dir=manifest_dir,
        state_dir=state_dir,
        cgroup_root=cgroup_root,
        cgroup_parent=cgroup_parent,
        poll_interval=poll_interval,
        reset_state=reset_state,
        images=load_image_table(image_table) if image_table is not None else ImageTable(),
    )
    node_agent = Agent(
        options,
        warn=lambda m: click.echo(f"warning: {m}", err=True),
        sources=[source] if source is not None else [],
    )
    try:
        server = AgentHTTPServer(node_agent, address)
    except (OSError, ValueError, OverflowError) as err:
        # The restored pods are not adopted yet: leave without writing any record (the lock
        # goes with the process).
        reason = getattr(err, "strerror", None) or str(err)
        raise InputError("--listen", f"cannot listen on {listen}: {reason}") from err
    node_agent.start()
    if once:
        node_agent.sync()
        node_agent.save_processes()
        sys.stdout.flush()
        # Leave as a crash would, pods running: the next run must adopt them.
        os._exit(0)
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()
        node_agent.wake()

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, on_signal)
    server.start()
    host, port = server.address
    click.echo(f"numaplane agent: serving on http://{host}:{port}", err=True)
    side = None
    if kube is not None and source is not None:
        side = _join(node_agent, source, kube, node_name, node_ip, port)
        click.echo(f"numaplane agent: node {node_name} joins {kube.server}", err=True)
    try:
        node_agent.run(stop)
    finally:
        if side is not None:
            side.stop()
        server.stop()
        if stop_pods_on_exit:
            node_agent.stop_all_pods()
        node_agent.close()


def _join(
    node_agent: Agent, source: ApiPodSource, kube: KubeConfig, name: str, ip: str, port: int
) -> ClusterSide:
    """Start the cluster side: the Node (its kubelet endpoint: the agent's HTTP port), its
    lease and NRT, the pods bound to it and their status."""

    def heartbeat(client: KubeClient) -> NodeHeartbeat:
        return NodeHeartbeat(
            client, name, node_agent.node, node_agent.lock, address=ip, kubelet_port=port
        )

    side = ClusterSide(node_agent, source, kube, host_ip=ip, heartbeat=heartbeat)
    side.start()
    return side


@click.command(
    epilog="""\b
Examples:
  numaplane pods
  numaplane pods --listen 127.0.0.1:10255 -o json
"""
)
@click.option("--listen", default=DEFAULT_LISTEN, show_default=True, help="The agent's HOST:PORT.")
@click.option("--output", "-o", type=click.Choice(("table", "json")), default="table")
def pods(listen: str, output: str) -> None:
    """List the pods a running agent reports: phase, containers, CPUs, NUMA nodes, devices."""
    host, port = parse_listen(listen)
    url = f"http://{host}:{port}/pods"
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            body = answer.read(_MAX_ANSWER + 1)
    except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as err:
        reason = getattr(err, "reason", err)
        raise InputError(url, f"no agent answers: {reason}") from err
    doc = _pods_document(url, body)
    if output == "json":
        click.echo(json.dumps(doc, indent=2))
        return
    # Piped output keeps whole values (pod names, CPU lists) rather than a terminal's width.
    width = None if sys.stdout.isatty() else 240
    print_pods(doc, Console(highlight=False, width=width))


#: The largest ``/pods`` answer read (a runaway or foreign server must not exhaust memory).
_MAX_ANSWER = 256 << 20


def _pods_document(url: str, body: bytes) -> list[dict[str, Any]]:
    """The ``/pods`` answer, checked to be a list of pod objects; ``InputError`` otherwise
    (whatever answers may not be an agent)."""
    if len(body) > _MAX_ANSWER:
        raise InputError(url, f"the answer is larger than {_MAX_ANSWER >> 20} MiB")
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError) as err:
        raise InputError(url, f"not an agent's /pods answer: {err}") from err
    if not isinstance(doc, list) or not all(
        isinstance(p, dict)
        and isinstance(p.get("name"), str)
        and isinstance(p.get("containers"), list)
        and all(isinstance(c, dict) for c in p["containers"])
        for p in doc
    ):
        raise InputError(url, "not an agent's /pods answer: expected a list of pods")
    return doc


def _cell(value: Any) -> Text:
    """A table cell showing ``value`` as is: text from pods and the engine may hold square
    brackets, which the renderer would otherwise take for markup."""
    return Text("" if value is None else str(value))


#: Container reasons that say all there is: no message shown beside them.
_PLAIN_REASONS = frozenset({"Completed", "ContainerCreating", "PodInitializing"})


def print_pods(doc: list[dict[str, Any]], console: Console) -> None:
    """A table of ``/pods``: one row per container (one per pod when it has none).

    The REASON column shows the pod's reason and message on its first row, and beside each
    container that is not running the container's message (why it failed to start, say).
    """
    table = Table(box=None, pad_edge=False, padding=(0, 2, 0, 0))
    for column in (
        "POD",
        "PHASE",
        "CONTAINER",
        "STATE",
        "RESTARTS",
        "CPUS",
        "NUMA",
        "DEVICES",
        "REASON",
    ):
        table.add_column(column)
    for pod in doc:
        name = pod["name"] if pod.get("namespace") is None else f"{pod['namespace']}/{pod['name']}"
        reason = pod.get("reason") or ""
        if pod.get("message") and pod.get("phase") == "Failed":
            reason = f"{reason}: {pod['message']}" if reason else pod["message"]
        containers = pod.get("containers") or [{}]
        for index, c in enumerate(containers):
            numa = c.get("memoryNumaNodes")
            affinity = c.get("numaAffinity")
            if numa is None and isinstance(affinity, dict):
                numa = affinity.get("numa")
            held = c.get("devices")
            devices = ", ".join(
                f"{r}: {' '.join(map(str, ids)) if isinstance(ids, list) else ids}"
                for r, ids in (held.items() if isinstance(held, dict) else ())
            )
            cpus = f"{c['cpus']} ({c.get('cpuKind')})" if c.get("cpus") else "-"
            row_reason = reason if index == 0 else ""
            if c.get("message") and c.get("reason") not in _PLAIN_REASONS:
                cause = f"{c.get('name')}: {c['message']}"
                row_reason = f"{row_reason}; {cause}" if row_reason else cause
            restarts = c.get("restartCount")
            table.add_row(
                *map(
                    _cell,
                    (
                        name if index == 0 else "",
                        pod.get("phase", "") if index == 0 else "",
                        c.get("name") or "-",
                        f"{c.get('state') or '-'}"
                        + (f" ({c['reason']})" if c.get("reason") else ""),
                        "-" if restarts is None else restarts,
                        cpus,
                        ",".join(map(str, numa)) if isinstance(numa, list) and numa else "-",
                        devices or "-",
                        row_reason,
                    ),
                )
            )
    console.print(table)
