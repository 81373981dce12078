"""``numaplane multikueue``: set up MultiKueue between a manager cluster and its workers."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from numaplane.errors import InputError
from numaplane.kube import KubeClient, load_kubeconfig
from numaplane.kube.errors import KubeError
from numaplane.kueue.config import KueueConfig, load_config
from numaplane.kueue.runtime import DEFAULT_NAMESPACE
from numaplane.kueue.runtime.workeraccess import SERVICE_ACCOUNT, add_worker


@click.group()
def multikueue() -> None:
    """Set up MultiKueue: workers the manager's Kueue dispatches Workloads to."""


@multikueue.command(
    "add-worker",
    epilog="""\b
Examples:
  numaplane multikueue add-worker worker1 --worker-kubeconfig ./cluster/worker1.kubeconfig \\
      --kubeconfig ./cluster/admin.kubeconfig
  numaplane multikueue add-worker multikueue-test-worker1 --worker-kubeconfig w1.kubeconfig \\
      --create-cluster
""",
)
@click.argument("name")
@click.option(
    "--worker-kubeconfig",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="An admin kubeconfig of the worker (used once, to make the ServiceAccount).",
)
@click.option(
    "--kubeconfig",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="The manager cluster (default: $KUBECONFIG, else ~/.kube/config).",
)
@click.option(
    "--namespace",
    default=None,
    help=f"Kueue's namespace on the manager, and the ServiceAccount's on the worker (default: "
    f"the --kueue-config's namespace, else {DEFAULT_NAMESPACE}).",
)
@click.option(
    "--kueue-config",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="The manager Kueue's Configuration, for its namespace.",
)
@click.option(
    "--create-cluster",
    is_flag=True,
    help="Also create the MultiKueueCluster NAME that uses the Secret.",
)
def add_worker_command(
    name: str,
    worker_kubeconfig: Path,
    kubeconfig: Path | None,
    namespace: str | None,
    kueue_config: Path | None,
    create_cluster: bool,
) -> None:
    """Give the manager access to worker NAME as Kueue's documentation does: a ServiceAccount
    with a ClusterRole on Workloads and Jobs on the worker, its token in a kubeconfig stored as
    Secret NAME-secret (key kubeconfig) in Kueue's namespace on the manager."""
    worker_config = load_kubeconfig(worker_kubeconfig)
    manager_config = load_kubeconfig(kubeconfig)
    config = load_config(kueue_config) if kueue_config is not None else KueueConfig()
    where = namespace or config.namespace or DEFAULT_NAMESPACE

    async def main() -> None:
        async with KubeClient(manager_config) as manager, KubeClient(worker_config) as worker:
            made = await add_worker(
                manager, worker, name, namespace=where, create_cluster=create_cluster
            )
        click.echo(f"secret/{made.secret} in {where}: kubeconfig of {SERVICE_ACCOUNT} on {name}")
        if made.cluster_created:
            click.echo(f"multikueuecluster/{name} created")

    try:
        asyncio.run(main())
    except KubeError as err:
        raise InputError(name, str(err)) from None
