"""``numaplane agent --simulate``: simulated nodes in this process until SIGTERM or SIGINT (see
``numaplane.agent.simulated``)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from pathlib import Path

import click

from numaplane.agent.simulated import SimulatedNodes, SimulatedOptions, node_names
from numaplane.api.kubeletconfig import KubeletConfiguration
from numaplane.cli.gctune import freeze_startup_objects, tune_gc
from numaplane.cli.serving import stop_on_signals
from numaplane.errors import InputError
from numaplane.kube import KubeClient, load_kubeconfig
from numaplane.topology.discover import load_machine
from numaplane.topology.model import Machine

__all__ = ["run_simulate"]

#: aiohttp's graceful-shutdown pause: TLS connections finish closing after their session.
_SSL_SHUTDOWN_PAUSE_S = 0.25


def run_simulate(
    kubeconfig: Path | None,
    node_name: str,
    nodes: int,
    machines: Sequence[Machine],
    config: KubeletConfiguration,
    state_dir: Path | None,
    address: str,
) -> None:
    """Run ``nodes`` simulated nodes ``node_name-i`` joined to the cluster of ``kubeconfig``."""
    if kubeconfig is None:
        raise InputError("--simulate", "needs --kubeconfig (the cluster the nodes join)")
    kube = load_kubeconfig(kubeconfig)
    options = SimulatedOptions(
        node_name,
        nodes,
        tuple(machines) if machines else (load_machine("/"),),
        config,
        state_dir=state_dir,
        address=address,
    )

    async def serve() -> None:
        stop = stop_on_signals()
        async with KubeClient(kube) as client:
            simulated = SimulatedNodes(client, options)
            running = asyncio.ensure_future(simulated.run())
            stopping = asyncio.ensure_future(stop.wait())
            ready = asyncio.ensure_future(simulated.wait_ready())
            names = node_names(node_name, nodes)
            shown = ", ".join(names[:3]) + (f" ... {names[-1]}" if nodes > 3 else "")
            await asyncio.wait({running, ready}, return_when=asyncio.FIRST_COMPLETED)
            if ready.done():
                # The nodes are built and registered: what they hold lives as long as we do.
                freeze_startup_objects()
                click.echo(f"numaplane agent: {nodes} simulated nodes ready: {shown}", err=True)
            await asyncio.wait({running, stopping}, return_when=asyncio.FIRST_COMPLETED)
            for task in (running, stopping, ready):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running
        await asyncio.sleep(_SSL_SHUTDOWN_PAUSE_S)

    tune_gc()
    asyncio.run(serve())
