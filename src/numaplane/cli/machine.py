"""``numaplane machine``: show the machine a ``--machine`` value names, list presets."""

from __future__ import annotations

import json

import click
import yaml
from rich.table import Table

from numaplane.cli.options import machine_option
from numaplane.cli.render import console
from numaplane.topology.model import Machine
from numaplane.topology.presets import PRESETS
from numaplane.topology.render import machine_tree, render_json, render_yaml

OUTPUTS = ("text", "json", "yaml")


@click.group()
def machine() -> None:
    """Inspect machines: this host, captured topologies, hwloc XML, synthetic shapes."""


@machine.command(
    "show",
    epilog=(
        "Examples:\n\n"
        "  numaplane machine show\n\n"
        "  numaplane machine show -m dual-socket-multi-numa -o json\n\n"
        "  numaplane machine show -m 'sockets=2,numa-per-socket=2,cores-per-numa=8,"
        "threads-per-core=2,memory-per-numa=64Gi,gpus-per-numa=1'\n\n"
        "  numaplane machine show -m capture.tar.bz2"
    ),
)
@machine_option()
@click.option(
    "--output",
    "-o",
    type=click.Choice(OUTPUTS),
    default="text",
    show_default=True,
    help="text: a tree; json/yaml: a stable document with cpus, numa_nodes and devices.",
)
def show(machine: Machine, output: str) -> None:
    """Show sockets, NUMA nodes (memory, hugepages, distances), cores and devices."""
    if output == "json":
        click.echo(render_json(machine))
    elif output == "yaml":
        click.echo(render_yaml(machine), nl=False)
    else:
        console().print(machine_tree(machine))


@machine.command(
    "presets",
    epilog="""\b
Examples:
  numaplane machine presets
  numaplane machine presets -o json
  numaplane machine show -m dual-socket-multi-numa""",
)
@click.option(
    "--output",
    "-o",
    type=click.Choice(OUTPUTS),
    default="text",
    show_default=True,
    help="text: a table; json/yaml: a list of {name, shape, description, fixture}.",
)
def presets(output: str) -> None:
    """List the named synthetic machines usable as --machine NAME."""
    rows = [
        {
            "name": p.name,
            "shape": p.shape.to_spec(),
            "description": p.description,
            "fixture": p.fixture,
        }
        for p in PRESETS.values()
    ]
    if output == "json":
        click.echo(json.dumps(rows, indent=2))
    elif output == "yaml":
        click.echo(yaml.safe_dump(rows, sort_keys=False), nl=False)
    else:
        # Two columns, the fixture under the description: three no-wrap columns left the
        # description no room at 80 columns (a pipe, a small terminal).
        table = Table()
        table.add_column("name", no_wrap=True)
        table.add_column("description (kubelet test fixture)", ratio=1)
        for row in rows:
            fixture = f"\n({row['fixture']})" if row["fixture"] else ""
            table.add_row(row["name"], f"{row['description']}{fixture}")
        console().print(table)
