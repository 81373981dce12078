"""``numaplane apiserver``: serve the Kubernetes API over HTTPS from a SQLite data directory."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import click

from numaplane.apiserver.server import ServerConfig, ServerError, check_cluster_name, start_server
from numaplane.cli.gctune import freeze_startup_objects, tune_gc
from numaplane.cli.serving import stop_on_signals

CLUSTER_PREFIX = "cluster-"
MAX_CLUSTERS = 1000


def cluster_names(count: int | None, names: tuple[str, ...]) -> tuple[str, ...]:
    """The logical clusters to serve besides the default one: ``--clusters N`` names them
    ``cluster-1`` .. ``cluster-N``; ``--cluster NAME`` (repeatable) names them. Not both."""
    if count is not None and names:
        raise ServerError("--clusters and --cluster: give one or the other")
    if count is not None:
        if not 0 <= count <= MAX_CLUSTERS:
            raise ServerError(f"--clusters {count}: must be between 0 and {MAX_CLUSTERS}")
        return tuple(f"{CLUSTER_PREFIX}{i}" for i in range(1, count + 1))
    seen: set[str] = set()
    for name in names:
        check_cluster_name(name)
        if name in seen:
            raise ServerError(f"--cluster {name}: named twice")
        seen.add(name)
    return names


async def _serve(config: ServerConfig) -> None:
    handle = await start_server(config)
    stop = stop_on_signals()
    click.echo(f"numaplane apiserver: serving {handle.url} (data in {handle.data_dir})")
    click.echo(f"kubeconfig: {handle.kubeconfig}")
    for name, path in handle.cluster_kubeconfigs.items():
        click.echo(f"cluster {name}: {handle.url}/clusters/{name}  kubeconfig: {path}")
    click.echo(f"try: kubectl --kubeconfig {handle.kubeconfig} get namespaces")
    sys.stdout.flush()
    try:
        await stop.wait()
    finally:
        click.echo("numaplane apiserver: shutting down", err=True)
        await handle.stop()


@click.command(
    epilog="""\b
Examples:
  numaplane apiserver --data-dir ./cluster
  kubectl --kubeconfig ./cluster/admin.kubeconfig get namespaces
  numaplane apiserver --data-dir ./many --clusters 3     # + /clusters/cluster-1 .. cluster-3
  numaplane apiserver --data-dir ./mk --cluster manager --cluster worker1
  numaplane apiserver --data-dir ./c --token-auth-file tokens.csv   # token,user,uid,"g1,g2"
"""
)
@click.option(
    "--data-dir",
    "data_dir",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Where the cluster lives: SQLite databases, the CA and certificates (pki/), and the "
    "kubeconfigs. Created when missing; a restart with the same directory keeps everything.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=6443,
    show_default=True,
    help="HTTPS port (0: any free port, shown on start and written in the kubeconfigs).",
)
@click.option(
    "--bind",
    "bind",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; the serving certificate covers it, 127.0.0.1 and localhost.",
)
@click.option(
    "--clusters",
    "count",
    type=int,
    default=None,
    help="Also serve N independent logical clusters, cluster-1 .. cluster-N, each under "
    "/clusters/NAME with its own objects, CRDs, RBAC and DIR/NAME.kubeconfig.",
)
@click.option(
    "--cluster",
    "names",
    multiple=True,
    metavar="NAME",
    help="Also serve a logical cluster called NAME (repeatable; instead of --clusters).",
)
@click.option(
    "--token-auth-file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help='Static bearer tokens, kube-apiserver\'s CSV format: token,user,uid,"group1,group2".',
)
@click.option(
    "--kueue-job-defaulting",
    is_flag=True,
    help="Run Kueue's Job webhook on creates: a batch/v1 Job with the "
    "kueue.x-k8s.io/queue-name label is created suspended (spec.suspend: true) until Kueue "
    "admits it.",
)
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Log at INFO level to stderr (internal errors are always logged, with their trace).",
)
def apiserver(
    data_dir: Path,
    port: int,
    bind: str,
    count: int | None,
    names: tuple[str, ...],
    token_auth_file: Path | None,
    kueue_job_defaulting: bool,
    verbose: bool,
) -> None:
    """Serve the Kubernetes API over HTTPS, stored in SQLite under --data-dir.

    On first start it creates a CA, a serving certificate and an admin client certificate
    (user kubernetes-admin, group system:masters), and writes DIR/admin.kubeconfig, so that
    kubectl and the official clients work with no other setup. Writes are acknowledged once
    durable; Ctrl-C or SIGTERM shuts down cleanly (watches end, the store is flushed).
    """
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    clusters = cluster_names(count, names)
    config = ServerConfig(
        data_dir=data_dir,
        bind=bind,
        port=port,
        clusters=clusters,
        token_auth_file=token_auth_file,
        kueue_job_defaulting=kueue_job_defaulting,
    )
    # A server lives long and decodes many small objects: the collector's defaults cost it
    # seconds per thousand writes (numaplane.cli.gctune).
    tune_gc()
    freeze_startup_objects()
    try:
        asyncio.run(_serve(config))
    except KeyboardInterrupt:
        # Ctrl-C before the signal handlers are in place (while the clusters open).
        click.echo("numaplane apiserver: interrupted while starting", err=True)
        sys.exit(130)
