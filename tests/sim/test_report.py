"""The HTML report and the terminal table."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from numaplane.errors import InputError
from numaplane.sim.report import PLOTS, render_table, write_report


def _run(
    config: str, admitted: int, reasons: dict[str, int], optimum: int | None
) -> dict[str, Any]:
    return {
        "config": config,
        "admitted": admitted,
        "rejected": sum(reasons.values()),
        "rejected_by_reason": reasons,
        "timeline": [
            {"t": 0.0, "admitted_pods": 0, "exclusive_cpus": 0, "memory_bytes": 0},
            {"t": 1.5, "admitted_pods": admitted // 2, "exclusive_cpus": 4, "memory_bytes": 1},
            {"t": 3.0, "admitted_pods": admitted, "exclusive_cpus": 8, "memory_bytes": 2},
        ],
        "numa_utilization": {
            "n1/0": {"cpu": 0.5, "memory": 0.25},
            "n1/1": {"cpu": 1.0, "memory": 0.75},
            "n1/10": {"cpu": 0.0, "memory": 0.0},
        },
        "stranded_cpus": 3,
        "alignment": 1.0,
        "optimum": optimum,
        "optimum_ratio": None if optimum is None else admitted / optimum,
        "timing": {"admission_p50_ms": 0.25, "admission_p99_ms": 1.5},
    }


def _results() -> dict[str, Any]:
    return {
        "trace": "burst <script>alert(1)</script>",
        "seed": 7,
        "nodes": [{"name": "n1", "machine": "dual-socket", "numa": 3, "cpus": 16}],
        "runs": [
            _run("single-numa-node", 10, {"TopologyAffinityError": 4, "OutOfcpu": 1}, 12),
            _run("best-effort/pod", 12, {"OutOfmemory": 3}, None) | {"timing": None},
        ],
    }


def test_page_is_written_with_plots(tmp_path: Path) -> None:
    index = write_report(_results(), tmp_path / "out")
    assert index == tmp_path / "out" / "index.html"
    for name in PLOTS:
        assert (tmp_path / "out" / name).read_bytes().startswith(b"\x89PNG")
    page = index.read_text(encoding="utf-8")
    for text in ("single-numa-node", "best-effort/pod", "TopologyAffinityError", "OutOfcpu"):
        assert text in page
    assert "OutOfmemory" in page
    assert page.count("data:image/png;base64,") == len(PLOTS)


def test_page_is_self_contained(tmp_path: Path) -> None:
    page = write_report(_results(), tmp_path).read_text(encoding="utf-8")
    assert "http://" not in page
    assert "https://" not in page
    assert not re.search(r"<(script|link)\b", page)
    assert not re.search(r'src="(?!data:)', page)


def test_input_strings_are_escaped(tmp_path: Path) -> None:
    page = write_report(_results(), tmp_path).read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_same_input_same_bytes(tmp_path: Path) -> None:
    first = write_report(_results(), tmp_path / "a")
    second = write_report(copy.deepcopy(_results()), tmp_path / "b")
    assert first.read_bytes() == second.read_bytes()
    for name in PLOTS:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_table_lists_every_run() -> None:
    console = Console(width=200, record=True, color_system=None)
    console.print(render_table(_results()))
    text = console.export_text()
    assert "single-numa-node" in text
    assert "best-effort/pod" in text
    assert "TopologyAffinityError: 4" in text
    assert "0.833" in text  # 10 / 12


@dataclass(frozen=True)
class Bad:
    """A malformed results document and the place the error must name."""

    name: str
    edit: str
    where: str


def _broken(edit: str) -> dict[str, Any]:
    doc = _results()
    run = doc["runs"][0]
    if edit == "no runs":
        del doc["runs"]
    elif edit == "runs not a list":
        doc["runs"] = {"a": 1}
    elif edit == "admitted is text":
        run["admitted"] = "ten"
    elif edit == "no config":
        del run["config"]
    elif edit == "timeline point without t":
        del run["timeline"][1]["t"]
    elif edit == "utilization cell not an object":
        run["numa_utilization"]["n1/0"] = 0.5
    elif edit == "bad reason count":
        run["rejected_by_reason"]["OutOfcpu"] = 1.5
    elif edit == "node without cpus":
        del doc["nodes"][0]["cpus"]
    return doc


BAD = (
    Bad("missing runs", "no runs", "the document"),
    Bad("runs not a list", "runs not a list", "runs"),
    Bad("admitted not an integer", "admitted is text", "runs[0].admitted"),
    Bad("missing config", "no config", "runs[0]"),
    Bad("timeline point missing t", "timeline point without t", "runs[0].timeline[1]"),
    Bad("utilization not an object", "utilization cell not an object", "numa_utilization"),
    Bad("reason count not an integer", "bad reason count", "rejected_by_reason"),
    Bad("node missing cpus", "node without cpus", "nodes[0]"),
)


@pytest.mark.parametrize("bad", BAD, ids=lambda b: b.name)
def test_bad_input_is_refused(bad: Bad, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=re.escape(bad.where)):
        write_report(_broken(bad.edit), tmp_path / "out")
    assert not (tmp_path / "out").exists()
    with pytest.raises(InputError):
        render_table(_broken(bad.edit))


def _unproven() -> dict[str, Any]:
    doc = _results()
    doc["runs"][0] |= {
        "optimum": None,
        "optimum_ratio": None,
        "optimum_bound": 400,
        "optimum_best": 170,
        "optimum_note": "time limit reached before the best placement found was proven",
    }
    doc["runs"][1] |= {"optimum_bound": 12, "optimum_best": 12, "optimum": 12}
    return doc


def test_unproven_optimum_shows_bound_and_best_in_page_and_table(tmp_path: Path) -> None:
    page = write_report(_unproven(), tmp_path).read_text(encoding="utf-8")
    assert "not proven: at most 400, best placement 170; time limit reached" in page
    assert "&gt;= 0.025" in page  # 10 admitted / the bound 400: a floor of the ratio
    assert "12 (proven)" in page
    console = Console(width=300, record=True, color_system=None)
    console.print(render_table(_unproven()))
    text = console.export_text()
    assert "not proven: at most 400, best placement 170" in text
    assert "12 (proven)" in text


def test_page_labels_say_what_is_measured(tmp_path: Path) -> None:
    page = write_report(_results(), tmp_path).read_text(encoding="utf-8")
    # Utilization is taken at peak load (engine), not at the end of the trace.
    assert "Per-NUMA utilization at peak load" in page
    assert "at the end" not in page
    # The timeline counts pods running at each instant, not the admissions so far.
    assert "Running pods over time" in page
    assert "stranded CPUs (most at once)" in page


def test_markup_and_mathtext_in_names_are_shown_literally(tmp_path: Path) -> None:
    doc = _results()
    # "$\\frac$" is a mathtext syntax error: drawn as mathtext, it fails the whole report.
    doc["runs"][0]["config"] = "[bold]cfg[/bold] $\\frac$"
    doc["runs"][1]["config"] = "_hidden"
    doc["runs"][0]["rejected_by_reason"] = {"[memorymanager] no room": 2}
    page = write_report(doc, tmp_path).read_text(encoding="utf-8")
    assert "[bold]cfg[/bold] $\\frac$" in page
    console = Console(width=300, record=True, color_system=None)
    console.print(render_table(doc))
    text = console.export_text()
    assert "[bold]cfg[/bold]" in text
    assert "[memorymanager] no room: 2" in text


def test_unwritable_report_directory_is_one_error_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError, match=r"--report: cannot write .*file"):
        write_report(_results(), blocker / "out", source="--report")
