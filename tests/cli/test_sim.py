"""``numaplane trace generate`` and ``numaplane simulate``: outputs, exit codes, one-line errors."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from numaplane.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
KEP = str(ROOT / "examples" / "traces" / "kep6007.yaml")
MACHINE = "sockets=2,cores-per-numa=4,hugepages-1Gi-per-numa=2"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = 0
    try:
        main(list(argv))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_simulate_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "simulate", KEP)
    assert code == 0
    assert "single-numa-node+prefer-most-allocated-numa-node" in out
    assert "TopologyAffinityError 2" in out


def test_simulate_json_is_deterministic(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("simulate", KEP, "-o", "json", "--deterministic")
    _, first, _ = run(capsys, *argv)
    _, second, _ = run(capsys, *argv)
    assert first == second
    doc = json.loads(first)
    assert [r["admitted"] for r in doc["runs"]] == [3, 4]
    assert doc["nodes"] == [
        {
            "name": "worker",
            "machine": "sockets=2,cores-per-numa=8,memory-per-numa=16Gi",
            "numa": 2,
            "cpus": 16,
        }
    ]


def test_compare_overrides_the_trace_configs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "simulate", KEP, "--compare", "best-effort", "-o", "json")
    assert code == 0
    runs = json.loads(out)["runs"]
    assert [r["config"] for r in runs] == ["best-effort"]
    assert runs[0]["timing"]["admission_p50_ms"] >= 0


def test_generate_writes_a_replayable_trace(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "t.yaml"
    argv = ("trace", "generate", "--mix", "telco", "--seed", "4", "--pods", "30", "-m", MACHINE)
    code, _, _ = run(capsys, *argv, "-o", str(path))
    assert code == 0
    code, out, _ = run(capsys, *argv)
    assert out == path.read_text()
    code, out, _ = run(capsys, "simulate", str(path), "-o", "json", "--deterministic")
    assert code == 0
    assert len(json.loads(out)["runs"]) == 3


@dataclass(frozen=True)
class ErrorCase:
    name: str
    argv: tuple[str, ...]
    message: str


ERRORS = [
    ErrorCase("missing trace", ("simulate", "/no/such/trace.yaml"), "cannot read the file"),
    ErrorCase("bad shorthand", ("simulate", KEP, "--compare", "maybe-numa"), "unknown policy"),
    ErrorCase(
        "bad lifetime",
        (
            "trace",
            "generate",
            "--mix",
            "ml",
            "--seed",
            "1",
            "--pods",
            "1",
            "-m",
            MACHINE,
            "--lifetime",
            "forever",
        ),
        "--lifetime",
    ),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c.name for c in ERRORS])
def test_bad_input_is_one_error_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], case: ErrorCase
) -> None:
    code, _, err = run(capsys, *case.argv)
    assert code == 2
    assert err.startswith("error: ")
    assert err.count("\n") == 1
    assert case.message in err


def test_invalid_trace_names_the_event(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "nodes: [{name: w, machine: 'sockets=1'}]\nevents:\n  - {t: 0, pod: {template: missing}}\n"
    )
    code, _, err = run(capsys, "simulate", str(path), "--compare", "none")
    assert code == 2
    assert "events[0].pod.template: unknown template 'missing'" in err
