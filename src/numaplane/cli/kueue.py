"""``numaplane kueue``: Kueue's controllers and scheduler against a cluster given by kubeconfig."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import click

from numaplane.cli.gctune import freeze_startup_objects, tune_gc
from numaplane.cli.serving import run_until_stopped, stop_on_signals
from numaplane.kube import KubeClient, KubeConfig, load_kubeconfig
from numaplane.kueue.config import KueueConfig, load_config
from numaplane.kueue.runtime import LEASE_NAME, KueueRunOptions, default_identity, run_kueue


async def _serve(config: KubeConfig, options: KueueRunOptions) -> None:
    stop = stop_on_signals()
    async with KubeClient(config) as client:
        click.echo(
            f"numaplane kueue: running against {config.server} as {options.identity}", err=True
        )
        await run_until_stopped(run_kueue(client, options), stop)
    click.echo("numaplane kueue: stopped", err=True)


@click.command(
    epilog="""\b
Examples:
  numaplane kueue --kubeconfig ./cluster/admin.kubeconfig
  numaplane kueue --kubeconfig K --config kueue-config.yaml -v
  numaplane kueue --kubeconfig K --no-leader-elect
"""
)
@click.option(
    "--kubeconfig",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="The cluster to run Kueue for (its current context); it must serve Kueue's CRDs.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Kueue's Configuration (config.kueue.x-k8s.io/v1beta2 YAML); default: upstream's "
    "defaults.",
)
@click.option(
    "--no-leader-elect",
    is_flag=True,
    help=f"Act at once, without the Lease {LEASE_NAME} in Kueue's namespace (only when no "
    "other Kueue runs against the cluster).",
)
@click.option("-v", "--verbose", is_flag=True, help="Log at INFO level to stderr.")
def kueue(kubeconfig: Path, config_file: Path | None, no_leader_elect: bool, verbose: bool) -> None:
    """Run Kueue: queue, admit and preempt Workloads and batch/v1 Jobs by ClusterQueue quota.

    Watches ResourceFlavors, ClusterQueues, Cohorts, LocalQueues, Workloads, AdmissionChecks,
    WorkloadPriorityClasses and Jobs; writes Workload, ClusterQueue and LocalQueue status and
    suspends/unsuspends Jobs as upstream Kueue does. When the cluster serves MultiKueue's CRDs
    it also runs MultiKueue: Workloads whose ClusterQueue has a kueue.x-k8s.io/multikueue
    AdmissionCheck are dispatched to the worker clusters of its MultiKueueConfig (kubeconfig
    Secrets in Kueue's namespace; see numaplane multikueue add-worker). Runs only while this
    process holds Kueue's Lease, so two copies never both admit. Ctrl-C or SIGTERM stops
    cleanly.
    """
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    # Inputs first: a bad file is one line and status 2, before anything starts.
    kube = load_kubeconfig(kubeconfig)
    config = load_config(config_file) if config_file is not None else KueueConfig()
    identity = default_identity()
    where = KueueRunOptions(config=config)
    lease = f"{where.namespace}/{where.lease_name}"

    def leader_changed(holder: str) -> None:
        who = holder or "none"
        mine = " (this process)" if holder == identity else ""
        click.echo(f"numaplane kueue: lease {lease}: leader {who}{mine}", err=True)

    election = config.leader_election
    options = KueueRunOptions(
        config=config,
        leader_elect=election.leader_elect and not no_leader_elect,
        identity=identity,
        lease_duration=election.lease_duration,
        renew_deadline=election.renew_deadline,
        retry_period=election.retry_period,
        freeze_gc_after_sync=True,
        on_leader_change=leader_changed,
    )
    tune_gc()
    freeze_startup_objects()
    asyncio.run(_serve(kube, options))
