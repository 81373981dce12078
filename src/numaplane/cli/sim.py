"""``numaplane trace generate`` and ``numaplane simulate``: workload traces and their replay.

Exit status: 0 on success, 2 on bad input (one ``error:`` line).
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from numaplane.cli.options import MACHINE_HELP
from numaplane.errors import InputError, NumaplaneError
from numaplane.sim.configs import resolve_compare
from numaplane.sim.engine import Progress, add_optimum, check_optimum_size, optimum_applies
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
from numaplane.sim.limits import MAX_CONFIGS, MAX_EVENTS, MAX_SOLVE_SECONDS, printable
from numaplane.sim.nodeselect import NODE_SELECTION
from numaplane.sim.results import Results, RunResult
from numaplane.sim.trace import ARRIVE, Trace, load_trace
from numaplane.topology.discover import load_machine


class _RefusalError(NumaplaneError):
    """A refusal whose message had to be made printable (see ``_one_line``)."""


P = ParamSpec("P")
R = TypeVar("R")


def _one_line(command: Callable[P, R]) -> Callable[P, R]:
    """Every refusal of ``command`` is one printable line, whatever names it quotes.

    A trace key, node or config name may hold a newline; the message must not break there.
    """

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except NumaplaneError as err:
            text = str(err)
            if text.isprintable():
                raise
            raise _RefusalError(printable(text)) from None

    return run


class _Number(click.ParamType[float]):
    """A number option checked here, refused as one ``error: --OPTION: ...`` line (exit 2).

    Raising ``InputError`` (not click's ``BadParameter``) keeps a typo to the one line every
    other refusal prints, instead of click's usage block.
    """

    def __init__(self, kind: str, *, low: float, high: float, low_open: bool = False) -> None:
        self.name = kind
        self.low, self.high, self.low_open = low, high, low_open

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        option = param.opts[0] if param is not None and param.opts else self.name
        text = str(value).strip()
        try:
            number: float = int(text) if self.name == "integer" else float(text)
        except ValueError:
            shown = repr(text[:40] + "...") if len(text) > 40 else repr(text)
            raise InputError(option, f"expected {self._range()}, got {shown}") from None
        below = number <= self.low if self.low_open else number < self.low
        if not math.isfinite(number) or below or number > self.high:
            raise InputError(option, f"expected {self._range()}, got {number!r}")
        return number

    def _range(self) -> str:
        if self.name == "integer":
            return f"a whole number from {int(self.low):,} to {int(self.high):,}"
        low = f"above {self.low:g}" if self.low_open else f"from {self.low:g}"
        high = "" if math.isinf(self.high) else f" up to {self.high:g}"
        return f"a finite number {low}{high}"


class _Choice(click.Choice):  # type: ignore[type-arg]
    """``click.Choice`` refused as one ``error: --OPTION: ...`` line, like ``_Number``."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value in self.choices:
            return value
        option = param.opts[0] if param is not None and param.opts else "choice"
        text = str(value)
        shown = repr(text[:40] + "...") if len(text) > 40 else repr(text)
        expected = ", ".join(str(c) for c in self.choices)
        raise InputError(option, f"unknown value {shown} (expected {expected})")


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
@click.option("--mix", type=_Choice(MIXES), required=True, help="The workload mix.")
@click.option(
    "--seed",
    type=_Number("integer", low=-(2**63), high=2**63 - 1),
    required=True,
    help="Seed (a 64-bit integer): the same seed gives the same bytes.",
)
@click.option(
    "--pods",
    type=_Number("integer", low=0, high=MAX_EVENTS),
    required=True,
    help=f"Number of arrivals (at most {MAX_EVENTS:,}).",
)
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
    type=_Number("float", low=0, high=math.inf, low_open=True),
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
@_one_line
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
    lifetime_value = Lifetime.parse(lifetime) if lifetime else None
    sizes = parse_size_mix(size_mix) if size_mix else None
    document = generate_trace(
        mix,
        seed=seed,
        pods=pods,
        machine_spec=machine_spec,
        machine=load_machine(machine_spec),
        arrival_rate=arrival_rate,
        lifetime=lifetime_value,
        size_mix=sizes,
    )
    text = dump_trace(document)
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise InputError("--output", f"cannot write {output}: {reason}") from None


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
    type=_Choice(tuple(NODE_SELECTION)),
    default="first-fit",
    show_default=True,
    help="How a pod picks one of several nodes.",
)
@click.option("--output", "-o", type=_Choice(("table", "json")), default="table")
@click.option(
    "--report",
    "report_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Also write an HTML report with plots to this directory.",
)
@click.option(
    "--optimum",
    is_flag=True,
    help="Compute the optimum (CP-SAT) per config; unproven within the time limit, the "
    "bound and the best placement found are shown instead.",
)
@click.option(
    "--optimum-time-limit",
    type=_Number("float", low=0, high=MAX_SOLVE_SECONDS, low_open=True),
    default=30.0,
    show_default=True,
    help=f"Seconds per solve (at most {MAX_SOLVE_SECONDS:g}).",
)
@click.option(
    "--deterministic",
    is_flag=True,
    help="Leave the wall-clock admission timing out of the JSON (byte-identical reruns).",
)
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a TTY).")
@_one_line
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
    admission time and, with --optimum, the optimum: exact when the solver proved it within
    --optimum-time-limit, else its bound and best placement found. Definitions: docs/traces.md.
    """
    if len(compare) > MAX_CONFIGS:
        raise InputError(
            "--compare", f"given {len(compare)} times, over the limit of {MAX_CONFIGS}"
        )
    loaded = load_trace(trace_path)
    configs = resolve_compare(compare, loaded.configs, loaded.base_config)
    if optimum and optimum_applies(loaded):
        check_optimum_size(loaded)  # before the replay, not after it
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
        for run in results.runs:
            if run.optimum is None and run.optimum_bound is not None:
                click.echo(
                    (
                        f"note: {run.config}: optimum not proven ({run.optimum_note}): at most "
                        f"{run.optimum_bound} pods, best placement found "
                        f"{_best(run.optimum_best)}; a --optimum-time-limit above "
                        f"{optimum_time_limit:g}s may prove it"
                    ),
                    err=True,
                )
    if report_dir is not None:
        from numaplane.sim import report  # plotting is heavy: import it only when asked

        report.write_report(
            results.to_json(deterministic=deterministic), report_dir, source="--report"
        )
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
    # Names come from the trace and reasons from the engine: escaped, so text in square
    # brackets is printed, not taken for rich markup.
    console.print(escape(printable(f"trace {results.trace}: {nodes}")))
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
        timing = run.timing
        table.add_row(
            escape(printable(run.config)),
            str(run.admitted),
            str(run.rejected),
            escape(printable(reasons or "-")),
            str(run.stranded_cpus),
            f"{run.alignment:.0%}",
            escape(_optimum_cell(run)),
            "-" if timing is None else f"{timing.admission_p50_ms:.2f}",
            "-" if timing is None else f"{timing.admission_p99_ms:.2f}",
        )
    console.print(table)


def _best(best: int | None) -> str:
    return "none" if best is None else str(best)


def _optimum_cell(run: RunResult) -> str:
    """``5 (60%)`` for a proven optimum; ``<=400, best 170 (>=28%)`` for an unproven one."""
    if run.optimum is not None:
        return f"{run.optimum} ({run.optimum_ratio or 0:.0%})"
    if run.optimum_bound is None:
        return "-"
    floor = run.optimum_ratio_at_least
    ratio = "" if floor is None else f" (>={floor:.0%})"
    return f"<={run.optimum_bound}, best {_best(run.optimum_best)}{ratio}"
