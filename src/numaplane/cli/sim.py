"""``numaplane trace generate`` and ``numaplane simulate``: workload traces and their replay.

Exit status: 0 on success, 2 on bad input (one ``error:`` line).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from numaplane.cli.options import MACHINE_HELP
from numaplane.errors import InputError
from numaplane.sim.configs import resolve_compare
from numaplane.sim.engine import Progress, add_optimum, optimum_applies
from numaplane.sim.engine import simulate as run_trace
from numaplane.sim.generate import (
    DEFAULT_LIFETIME,
    DEFAULT_SIZE_MIX,
    MIXES,
    Lifetime,
    dump_trace,
    parse_size_mix,
)
from numaplane.sim.generate import generate as generate_trace
from numaplane.sim.nodeselect import NODE_SELECTION
from numaplane.sim.results import Results
from numaplane.sim.trace import ARRIVE, Trace, load_trace
from numaplane.topology.discover import load_machine


@click.group()
def trace() -> None:
    """Workload traces for `numaplane simulate` (format: docs/traces.md)."""


@trace.command(
    epilog="""\b
Examples:
  numaplane trace generate --mix telco --seed 1 --pods 500 -m sockets=2,numa-per-socket=2 -o t.yaml
  numaplane trace generate --mix ml --seed 7 --pods 200 -m 16amd64-8n2c.tar.bz2 --lifetime none
  numaplane trace generate --mix batch --seed 3 --pods 1000 -m dual-socket-ht \\
      --arrival-rate 5 --lifetime uniform:60-600 --size-mix 1:1,2:2,4:1 -o batch.yaml
"""
)
@click.option("--mix", type=click.Choice(MIXES), required=True, help="The workload mix.")
@click.option("--seed", type=int, required=True, help="Seed: the same seed gives the same bytes.")
@click.option("--pods", type=click.IntRange(min=0), required=True, help="Number of arrivals.")
@click.option(
    "--machine",
    "-m",
    "machine_spec",
    default="/",
    show_default=True,
    envvar="NUMAPLANE_MACHINE",
    help=MACHINE_HELP + " Written into the trace as given.",
)
@click.option(
    "--arrival-rate",
    type=float,
    default=1.0,
    show_default=True,
    help="Poisson arrivals per second.",
)
@click.option(
    "--lifetime",
    help="Pod lifetime: none, exp:MEAN, fixed:SECONDS or uniform:LOW-HIGH. Default per mix: "
    + ", ".join(f"{k} {v}" for k, v in DEFAULT_LIFETIME.items())
    + ".",
)
@click.option(
    "--size-mix",
    help="SIZE:WEIGHT,... (CPUs per pod; GPUs per pod for ml). Default per mix: "
    + "; ".join(f"{k} {v}" for k, v in DEFAULT_SIZE_MIX.items())
    + ".",
)
@click.option(
    "--output",
    "-o",
    "output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the trace here (default: stdout).",
)
def generate(
    mix: str,
    seed: int,
    pods: int,
    machine_spec: str,
    arrival_rate: float,
    lifetime: str | None,
    size_mix: str | None,
    output: Path | None,
) -> None:
    """Write a seeded trace: --pods arrivals of a workload --mix on one node of --machine.

    The trace names the machine as given, so replay it where that value resolves the same.
    """
    document = generate_trace(
        mix,
        seed=seed,
        pods=pods,
        machine_spec=machine_spec,
        machine=load_machine(machine_spec),
        arrival_rate=arrival_rate,
        lifetime=Lifetime.parse(lifetime) if lifetime else None,
        size_mix=parse_size_mix(size_mix) if size_mix else None,
    )
    text = dump_trace(document)
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as err:
        raise InputError(str(output), err.strerror or str(err)) from err


@click.command(
    epilog="""\b
Examples:
  numaplane simulate examples/traces/kep6007.yaml
  numaplane simulate t.yaml --compare best-effort --compare single-numa-node \\
      --compare single-numa-node+prefer-most-allocated-numa-node --optimum -o json
  numaplane simulate t.yaml --compare kubelet.yaml --node-selection numa-aware --report out/
"""
)
@click.argument("trace_path", metavar="TRACE", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--compare",
    "compare",
    multiple=True,
    metavar="CONFIG",
    help="A kubelet configuration to replay under; repeatable. A trace config name, a "
    "KubeletConfiguration file, or POLICY[/SCOPE][+OPTION[=VALUE]]... on the base config "
    "(e.g. single-numa-node+prefer-most-allocated-numa-node). Default: the trace's configs.",
)
@click.option(
    "--node-selection",
    type=click.Choice(tuple(NODE_SELECTION)),
    default="first-fit",
    show_default=True,
    help="How a pod picks one of several nodes.",
)
@click.option("--output", "-o", type=click.Choice(("table", "json")), default="table")
@click.option(
    "--report",
    "report_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Also write an HTML report with plots to this directory.",
)
@click.option("--optimum", is_flag=True, help="Compute the exact optimum (CP-SAT) per config.")
@click.option(
    "--optimum-time-limit", type=float, default=30.0, show_default=True, help="Seconds per solve."
)
@click.option(
    "--deterministic",
    is_flag=True,
    help="Leave the wall-clock admission timing out of the JSON (byte-identical reruns).",
)
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a TTY).")
def simulate(
    trace_path: Path,
    compare: tuple[str, ...],
    node_selection: str,
    output: str,
    report_dir: Path | None,
    optimum: bool,
    optimum_time_limit: float,
    deterministic: bool,
    progress: bool | None,
) -> None:
    """Replay TRACE through the kubelet's resource managers under each --compare config.

    Prints per config: pods admitted and rejected (by reason), stranded CPUs, alignment,
    admission time and, with --optimum, the exact optimum. Definitions: docs/traces.md.
    """
    loaded = load_trace(trace_path)
    configs = resolve_compare(compare, loaded.configs, loaded.base_config)
    show = progress if progress is not None else sys.stderr.isatty()
    with _progress_bar(show, _event_total(loaded) * len(configs)) as advance:
        results = run_trace(loaded, configs, node_selection=node_selection, progress=advance)
    if optimum:
        if not optimum_applies(loaded):
            click.echo(
                "note: --optimum needs an arrival-only trace (no ends, lifetimes or device "
                "health changes); optimum left empty",
                err=True,
            )
        results = add_optimum(loaded, configs, results, time_limit_s=optimum_time_limit)
    if report_dir is not None:
        from numaplane.sim import report  # plotting is heavy: import it only when asked

        report.write_report(results.to_json(deterministic=deterministic), report_dir)
    if output == "json":
        click.echo(results.dumps(deterministic=deterministic))
    else:
        _print_table(results)


def _event_total(loaded: Trace) -> int:
    lifetimes = sum(1 for e in loaded.events if e.type == ARRIVE and e.lifetime is not None)
    return len(loaded.events) + lifetimes


@contextmanager
def _progress_bar(show: bool, total: int) -> Iterator[Progress | None]:
    if not show:
        yield None
        return
    from rich.progress import Progress as Bar

    with Bar(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("replaying", total=total)
        pending = 0

        def advance(n: int) -> None:
            nonlocal pending
            pending += n
            if pending >= 500:
                bar.advance(task, pending)
                pending = 0

        yield advance


def _print_table(results: Results) -> None:
    console = Console(highlight=False, soft_wrap=True)
    if not console.is_terminal:
        # Piped output is read by people too: never squeeze columns to 80 characters.
        console = Console(highlight=False, soft_wrap=True, width=200)
    nodes = ", ".join(f"{n.name} ({n.numa} NUMA, {n.cpus} CPUs)" for n in results.nodes)
    console.print(f"trace {results.trace}: {nodes}")
    table = Table(show_edge=False, pad_edge=False, box=None, padding=(0, 2, 0, 0))
    for column in (
        "config",
        "admitted",
        "rejected",
        "reasons",
        "stranded",
        "aligned",
        "optimum",
        "p50 ms",
        "p99 ms",
    ):
        table.add_column(column, no_wrap=True)
    for run in results.runs:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(run.rejected_by_reason.items()))
        optimum = "-" if run.optimum is None else f"{run.optimum} ({run.optimum_ratio or 0:.0%})"
        timing = run.timing
        table.add_row(
            run.config,
            str(run.admitted),
            str(run.rejected),
            reasons or "-",
            str(run.stranded_cpus),
            f"{run.alignment:.0%}",
            optimum,
            "-" if timing is None else f"{timing.admission_p50_ms:.2f}",
            "-" if timing is None else f"{timing.admission_p99_ms:.2f}",
        )
    console.print(table)
