"""``numaplane controllers``: the controller manager (Job, TTL-after-finished, node lifecycle
controllers and the scheduler) against a cluster given by kubeconfig."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import click

from numaplane.api.kubeletvalues import parse_go_duration
from numaplane.cli.gctune import freeze_startup_objects, tune_gc
from numaplane.cli.serving import run_until_stopped, stop_on_signals
from numaplane.controllers.manager import (
    REGISTRY,
    ControllerManagerError,
    ControllerManagerOptions,
    default_identity,
    run_controller_manager,
    selected,
)
from numaplane.kube import KubeClient, load_kubeconfig

SCORING_STRATEGIES = ("LeastAllocated", "MostAllocated")


def parse_controllers(text: str) -> tuple[str, ...]:
    """``job,ttl`` → ``("job", "ttl")``; every name must be a known controller."""
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise ControllerManagerError("--controllers: empty list")
    for name in names:
        if name not in REGISTRY:
            raise ControllerManagerError(
                f"--controllers: unknown controller {name!r} (known: {', '.join(REGISTRY)})"
            )
    return names


def parse_period(flag: str, text: str) -> float:
    """A positive Go duration in seconds."""
    try:
        seconds = parse_go_duration(text).total_seconds()
    except ValueError as err:
        raise ControllerManagerError(f"{flag} {text}: {err}") from None
    if seconds <= 0:
        raise ControllerManagerError(f"{flag} {text}: must be positive")
    return seconds


async def _serve(kubeconfig: Path, options: ControllerManagerOptions) -> None:
    config = load_kubeconfig(kubeconfig)
    names = selected(options)
    stop = stop_on_signals()
    async with KubeClient(config) as client:
        click.echo(
            f"numaplane controllers: running {', '.join(names)} against {config.server} "
            f"as {options.identity}",
            err=True,
        )
        await run_until_stopped(run_controller_manager(client, options), stop)
    click.echo("numaplane controllers: stopped", err=True)


@click.command(
    epilog="""\b
Examples:
  numaplane controllers --kubeconfig ./cluster/admin.kubeconfig
  numaplane controllers --kubeconfig K --controllers scheduler --no-numa-filter
  numaplane controllers --kubeconfig K --controllers job,ttl --no-leader-elect
"""
)
@click.option(
    "--kubeconfig",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="The cluster to control (its current context).",
)
@click.option(
    "--controllers",
    "controllers",
    default=None,
    metavar="LIST",
    help=f"Comma-separated controllers to run (default: all installed: {','.join(REGISTRY)}).",
)
@click.option(
    "--no-leader-elect",
    is_flag=True,
    help="Act at once, without the Leases numaplane-controller-manager and numaplane-scheduler "
    "in kube-system (only when no other controller manager runs against the cluster).",
)
@click.option(
    "--node-monitor-grace-period",
    default="40s",
    show_default=True,
    help="How long a node may go without a heartbeat before it is marked Unknown.",
)
@click.option(
    "--no-numa-filter",
    is_flag=True,
    help="Schedule without predicting the nodes' Topology Manager admission.",
)
@click.option(
    "--scoring-strategy",
    type=click.Choice(SCORING_STRATEGIES),
    default="LeastAllocated",
    show_default=True,
    help="The scheduler's NodeResourcesFit scoring.",
)
@click.option("-v", "--verbose", is_flag=True, help="Log at INFO level to stderr.")
def controllers(
    kubeconfig: Path,
    controllers: str | None,
    no_leader_elect: bool,
    node_monitor_grace_period: str,
    no_numa_filter: bool,
    scoring_strategy: str,
    verbose: bool,
) -> None:
    """Run the cluster's controllers: the Job controller, the TTL-after-finished controller,
    the node lifecycle controller and the NUMA-aware scheduler.

    Each group runs only while this process holds its Lease in kube-system
    (numaplane-controller-manager; numaplane-scheduler), so two copies never both act; one
    line is printed at every change of leader. Ctrl-C or SIGTERM stops cleanly.
    """
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    identity = default_identity()

    def leader_changed(lease: str, holder: str) -> None:
        who = holder or "none"
        mine = " (this process)" if holder == identity else ""
        click.echo(
            f"numaplane controllers: lease kube-system/{lease}: leader {who}{mine}", err=True
        )

    options = ControllerManagerOptions(
        controllers=parse_controllers(controllers) if controllers is not None else None,
        leader_elect=not no_leader_elect,
        identity=identity,
        node_monitor_grace_period=parse_period(
            "--node-monitor-grace-period", node_monitor_grace_period
        ),
        scheduler_options={
            "numa_filter": not no_numa_filter,
            "scoring_strategy": scoring_strategy,
            "freeze_gc_after_sync": True,
        },
        on_leader_change=leader_changed,
    )
    tune_gc()
    freeze_startup_objects()
    asyncio.run(_serve(kubeconfig, options))
