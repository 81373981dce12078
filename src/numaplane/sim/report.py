"""The simulator's report: a self-contained HTML page with plots, and a terminal table.

``write_report(results, out_dir)`` reads the results document of ``numaplane.sim.results``
(checked key by key: a missing or mistyped key raises ``InputError`` naming it) and writes
``out_dir/index.html`` with the summary table and three plots, plus each plot as a PNG file
beside it. The page embeds the plots as ``data:`` URIs and references nothing outside itself
(no scripts, fonts or style sheets to fetch), so it opens offline. Every string from the input
is HTML-escaped. The same input gives the same bytes.

``render_table(results)`` gives the summary as a ``rich`` table for the terminal.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from numaplane.errors import InputError
from numaplane.sim.limits import printable
from numaplane.sim.report_plots import Heat, Series, heatmap_png, rejections_png, timeline_png

__all__ = ["Report", "Run", "parse_results", "render_table", "write_report"]

PLOTS = ("timeline.png", "utilization.png", "rejections.png")


@dataclass(frozen=True)
class Run:
    """One configuration's results, as the report reads them."""

    config: str
    admitted: int
    rejected: int
    rejected_by_reason: Mapping[str, int]
    timeline: tuple[tuple[float, int], ...]
    numa_utilization: Mapping[str, tuple[float, float]]
    stranded_cpus: int
    alignment: float
    optimum: int | None
    optimum_ratio: float | None
    p50_ms: float | None
    p99_ms: float | None
    optimum_bound: int | None = None
    optimum_best: int | None = None
    optimum_note: str | None = None


@dataclass(frozen=True)
class Report:
    """The checked results document."""

    trace: str
    seed: int | None
    nodes: tuple[tuple[str, str, int, int], ...]
    runs: tuple[Run, ...]


# -- input --------------------------------------------------------------------------------


def _get(obj: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise InputError("results", f"missing key {key!r}", where)
    return obj[key]


def _map(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError("results", f"must be an object, got {type(value).__name__}", where)
    return value


def _list(value: Any, where: str) -> Sequence[Any]:
    if not isinstance(value, list | tuple):
        raise InputError("results", f"must be a list, got {type(value).__name__}", where)
    return value


def _int(value: Any, where: str, *, nullable: bool = False) -> Any:
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError("results", f"must be an integer, got {value!r}", where)
    return value


def _num(value: Any, where: str, *, nullable: bool = False) -> Any:
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError("results", f"must be a number, got {value!r}", where)
    return float(value)


def _str(value: Any, where: str, *, nullable: bool = False) -> Any:
    if value is None and nullable:
        return None
    if not isinstance(value, str):
        raise InputError("results", f"must be a string, got {value!r}", where)
    return value


def parse_results(results: Mapping[str, Any]) -> Report:
    """Check the results document and read it; ``InputError`` names the first bad key."""
    doc = _map(results, "the document")
    nodes = []
    for i, raw in enumerate(_list(_get(doc, "nodes", "the document"), "nodes")):
        where = f"nodes[{i}]"
        node = _map(raw, where)
        nodes.append(
            (
                _str(_get(node, "name", where), f"{where}.name"),
                _str(_get(node, "machine", where), f"{where}.machine"),
                _int(_get(node, "numa", where), f"{where}.numa"),
                _int(_get(node, "cpus", where), f"{where}.cpus"),
            )
        )
    runs = tuple(
        _run(_map(raw, f"runs[{i}]"), f"runs[{i}]")
        for i, raw in enumerate(_list(_get(doc, "runs", "the document"), "runs"))
    )
    return Report(
        trace=_str(_get(doc, "trace", "the document"), "trace"),
        seed=_int(_get(doc, "seed", "the document"), "seed", nullable=True),
        nodes=tuple(nodes),
        runs=runs,
    )


def _run(run: Mapping[str, Any], where: str) -> Run:
    reasons_raw = _map(_get(run, "rejected_by_reason", where), f"{where}.rejected_by_reason")
    reasons = {
        _str(k, f"{where}.rejected_by_reason key"): _int(v, f"{where}.rejected_by_reason[{k!r}]")
        for k, v in reasons_raw.items()
    }
    timeline = []
    for j, raw in enumerate(_list(_get(run, "timeline", where), f"{where}.timeline")):
        point = _map(raw, f"{where}.timeline[{j}]")
        timeline.append(
            (
                _num(_get(point, "t", f"{where}.timeline[{j}]"), f"{where}.timeline[{j}].t"),
                _int(
                    _get(point, "admitted_pods", f"{where}.timeline[{j}]"),
                    f"{where}.timeline[{j}].admitted_pods",
                ),
            )
        )
    util_raw = _map(_get(run, "numa_utilization", where), f"{where}.numa_utilization")
    util: dict[str, tuple[float, float]] = {}
    for key, raw in util_raw.items():
        at = f"{where}.numa_utilization[{key!r}]"
        cell = _map(raw, at)
        util[_str(key, at)] = (
            _num(_get(cell, "cpu", at), f"{at}.cpu"),
            _num(_get(cell, "memory", at), f"{at}.memory"),
        )
    timing_raw = _get(run, "timing", where)
    p50 = p99 = None
    if timing_raw is not None:
        timing = _map(timing_raw, f"{where}.timing")
        p50 = _num(_get(timing, "admission_p50_ms", f"{where}.timing"), f"{where}.timing.p50")
        p99 = _num(_get(timing, "admission_p99_ms", f"{where}.timing"), f"{where}.timing.p99")
    return Run(
        config=_str(_get(run, "config", where), f"{where}.config"),
        admitted=_int(_get(run, "admitted", where), f"{where}.admitted"),
        rejected=_int(_get(run, "rejected", where), f"{where}.rejected"),
        rejected_by_reason=dict(sorted(reasons.items())),
        timeline=tuple(timeline),
        numa_utilization=util,
        stranded_cpus=_int(_get(run, "stranded_cpus", where), f"{where}.stranded_cpus"),
        alignment=_num(_get(run, "alignment", where), f"{where}.alignment"),
        optimum=_int(_get(run, "optimum", where), f"{where}.optimum", nullable=True),
        optimum_ratio=_num(
            _get(run, "optimum_ratio", where), f"{where}.optimum_ratio", nullable=True
        ),
        p50_ms=p50,
        p99_ms=p99,
        # Optional: documents from before the unproven optimum was reported lack them.
        optimum_bound=_int(run.get("optimum_bound"), f"{where}.optimum_bound", nullable=True),
        optimum_best=_int(run.get("optimum_best"), f"{where}.optimum_best", nullable=True),
        optimum_note=_str(run.get("optimum_note"), f"{where}.optimum_note", nullable=True),
    )


# -- summary rows ---------------------------------------------------------------------------

COLUMNS = (
    "config",
    "admitted",
    "rejected",
    "rejected by reason",
    "stranded CPUs (most at once)",
    "aligned containers",
    "optimum",
    "admitted / optimum",
    "admission p50 / p99 (ms)",
)


def _reasons_text(reasons: Mapping[str, int]) -> str:
    return ", ".join(f"{reason}: {count}" for reason, count in reasons.items()) or "-"


def _rows(report: Report) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for run in report.runs:
        timing = "-" if run.p50_ms is None else f"{run.p50_ms:.3f} / {run.p99_ms:.3f}"
        rows.append(
            (
                run.config,
                str(run.admitted),
                str(run.rejected),
                _reasons_text(run.rejected_by_reason),
                str(run.stranded_cpus),
                f"{run.alignment:.1%}",
                _optimum_text(run),
                _ratio_text(run),
                timing,
            )
        )
    return rows


def _optimum_text(run: Run) -> str:
    # The optimum is called one only when the solver proved it; otherwise both ends of what
    # is known are shown, with the solver's reason.
    if run.optimum is not None:
        return f"{run.optimum} (proven)"
    if run.optimum_bound is None:
        return "-"
    best = "none found" if run.optimum_best is None else str(run.optimum_best)
    note = f"; {run.optimum_note}" if run.optimum_note else ""
    return f"not proven: at most {run.optimum_bound}, best placement {best}{note}"


def _ratio_text(run: Run) -> str:
    if run.optimum_ratio is not None:
        return f"{run.optimum_ratio:.3f}"
    if run.optimum is None and run.optimum_bound:
        return f">= {run.admitted / run.optimum_bound:.3f}"
    return "-"


def render_table(results: Mapping[str, Any]) -> Table:
    """The summary table for the terminal (``InputError`` on a malformed document)."""
    report = parse_results(results)
    table = Table(title=escape(printable(f"simulation of {report.trace}")))
    for column in COLUMNS:
        table.add_column(
            column, justify="left" if column.startswith(("config", "rej")) else "right"
        )
    for row in _rows(report):
        # Config names and reasons are user data: escaped, not read as rich markup.
        table.add_row(*(escape(printable(cell)) for cell in row))
    return table


# -- HTML -----------------------------------------------------------------------------------


def _plots(report: Report) -> dict[str, bytes]:
    series = [
        Series(run.config, tuple(t for t, _ in run.timeline), tuple(n for _, n in run.timeline))
        for run in report.runs
    ]
    columns = sorted({k for run in report.runs for k in run.numa_utilization}, key=_numa_key)
    heat = Heat(
        rows=tuple(run.config for run in report.runs),
        columns=tuple(columns),
        cpu=tuple(
            tuple(run.numa_utilization.get(c, (0.0, 0.0))[0] for c in columns)
            for run in report.runs
        ),
        memory=tuple(
            tuple(run.numa_utilization.get(c, (0.0, 0.0))[1] for c in columns)
            for run in report.runs
        ),
    )
    reasons = sorted({r for run in report.runs for r in run.rejected_by_reason})
    counts = [[run.rejected_by_reason.get(r, 0) for r in reasons] for run in report.runs]
    configs = [run.config for run in report.runs]
    return {
        PLOTS[0]: timeline_png(series),
        PLOTS[1]: heatmap_png(heat),
        PLOTS[2]: rejections_png(configs, reasons, counts),
    }


def _numa_key(key: str) -> tuple[str, int, str]:
    # "<node>/<numa>": nodes by name, NUMA ids numerically.
    node, _, numa = key.rpartition("/")
    return (node, int(numa), "") if numa.isdigit() else (node, -1, numa)


_STYLE = """
body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #bbb; padding: 4px 8px; text-align: right; }
th { background: #eee; }
td.text { text-align: left; }
img { max-width: 100%; display: block; margin: 1em 0; }
"""


def render_html(results: Mapping[str, Any], plots: Mapping[str, bytes] | None = None) -> str:
    """The report page as a string (``plots`` as ``write_report`` draws them, else drawn)."""
    report = parse_results(results)
    images = plots if plots is not None else _plots(report)
    esc = html.escape
    lines = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        '<head><meta charset="utf-8">',
        f"<title>numaplane simulation: {esc(report.trace)}</title>",
        f"<style>{_STYLE}</style></head>",
        "<body>",
        f"<h1>Simulation of {esc(report.trace)}</h1>",
        f"<p>seed: {esc('none' if report.seed is None else str(report.seed))}</p>",
        "<h2>Nodes</h2>",
        "<table><tr><th>name</th><th>machine</th><th>NUMA nodes</th><th>CPUs</th></tr>",
    ]
    for name, machine, numa, cpus in report.nodes:
        lines.append(
            f'<tr><td class="text">{esc(name)}</td><td class="text">{esc(machine)}</td>'
            f"<td>{numa}</td><td>{cpus}</td></tr>"
        )
    lines += ["</table>", "<h2>Summary</h2>", "<table><tr>"]
    lines.append("".join(f"<th>{esc(c)}</th>" for c in COLUMNS) + "</tr>")
    for row in _rows(report):
        cells = [
            f'<td class="text">{esc(v)}</td>' if i in (0, 3) else f"<td>{esc(v)}</td>"
            for i, v in enumerate(row)
        ]
        lines.append("<tr>" + "".join(cells) + "</tr>")
    lines.append("</table>")
    titles = {
        PLOTS[0]: "Running pods over time (admitted and not yet ended)",
        PLOTS[1]: "Per-NUMA utilization at peak load",
        PLOTS[2]: "Rejections by reason",
    }
    for name in PLOTS:
        data = base64.b64encode(images[name]).decode("ascii")
        lines.append(f"<h2>{titles[name]}</h2>")
        lines.append(f'<img alt="{titles[name]}" src="data:image/png;base64,{data}">')
    lines += ["</body>", "</html>", ""]
    return "\n".join(lines)


def write_report(results: Mapping[str, Any], out_dir: Path, *, source: str = "report") -> Path:
    """Write ``out_dir/index.html`` and the plots as PNG files; returns the page's path.

    Raises ``InputError`` on a malformed document (before writing anything), and ``InputError``
    naming ``source`` and the path when the directory or a file cannot be written.
    """
    report = parse_results(results)
    plots = _plots(report)
    page = render_html(results, plots)
    index = out_dir / "index.html"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, data in plots.items():
            (out_dir / name).write_bytes(data)
        index.write_text(page, encoding="utf-8")
    except OSError as err:
        where = err.filename if isinstance(err.filename, str) else str(out_dir)
        raise InputError(
            source, f"cannot write {where}: {err.strerror or type(err).__name__}"
        ) from None
    return index
