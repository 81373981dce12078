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


GENERATE = ("trace", "generate", "--seed", "1", "--pods", "5", "-m", MACHINE)
ERRORS += [
    # Numbers that used to escape as tracebacks or be written into traces simulate refused.
    ErrorCase(
        "infinite exp mean", (*GENERATE, "--mix", "ml", "--lifetime", "exp:inf"), "--lifetime"
    ),
    ErrorCase(
        "overflowing fixed", (*GENERATE, "--mix", "ml", "--lifetime", "fixed:1e400"), "--lifetime"
    ),
    ErrorCase("nan weight", (*GENERATE, "--mix", "batch", "--size-mix", "1:nan"), "--size-mix"),
    ErrorCase(
        "infinite weight", (*GENERATE, "--mix", "batch", "--size-mix", "1:inf"), "--size-mix"
    ),
    ErrorCase("huge size", (*GENERATE, "--mix", "batch", "--size-mix", "99999999:1"), "--size-mix"),
    ErrorCase("nan rate", (*GENERATE, "--mix", "batch", "--arrival-rate", "nan"), "--arrival-rate"),
    ErrorCase("zero rate", (*GENERATE, "--mix", "batch", "--arrival-rate", "0"), "--arrival-rate"),
    ErrorCase(
        "rate so low arrivals pass the time limit",
        (*GENERATE, "--mix", "batch", "--arrival-rate", "1e-300"),
        "--arrival-rate: arrival 0's time",
    ),
    ErrorCase("text pods", (*GENERATE, "--mix", "batch", "--pods", "abc"), "--pods"),
    ErrorCase(
        "pods over the limit",
        (*GENERATE, "--mix", "batch", "--pods", "100000000"),
        "--pods: expected a whole number from 0 to 200,000",
    ),
    ErrorCase("text seed", (*GENERATE, "--mix", "batch", "--seed", "x"), "--seed"),
    ErrorCase(
        "report under /proc", ("simulate", KEP, "--report", "/proc/x"), "--report: cannot write"
    ),
    ErrorCase(
        "unwritable trace output",
        (*GENERATE, "--mix", "batch", "-o", "/proc/x/t.yaml"),
        "--output: cannot write /proc/x/t.yaml",
    ),
    ErrorCase(
        "unknown node selection",
        ("simulate", KEP, "--node-selection", "best"),
        "--node-selection: unknown value 'best' (expected first-fit, numa-aware)",
    ),
    ErrorCase(
        "config that fails only on the node names --compare",
        ("simulate", KEP, "--compare", "best-effort+prefer-most-allocated-numa-node"),
        "error: --compare: 'best-effort+prefer-most-allocated-numa-node' on node worker: option",
    ),
    ErrorCase(
        "nan time limit",
        ("simulate", KEP, "--optimum", "--optimum-time-limit", "nan"),
        "--optimum-time-limit",
    ),
    ErrorCase(
        "zero time limit",
        ("simulate", KEP, "--optimum", "--optimum-time-limit", "0"),
        "--optimum-time-limit",
    ),
    ErrorCase(
        "time limit over a day",
        ("simulate", KEP, "--optimum", "--optimum-time-limit", "1e9"),
        "--optimum-time-limit",
    ),
    ErrorCase(
        "too many configs",
        ("simulate", KEP, *[f"--compare=single-numa-node+x{i}" for i in range(65)]),
        "--compare: given 65 times, over the limit of 64",
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


@dataclass(frozen=True)
class TraceCase:
    """A trace as a user might write it, and what the one error line must say."""

    name: str
    text: str
    message: str
    suffix: str = ".yaml"


NODE = "nodes: [{name: w, machine: 'sockets=2,cores-per-numa=2'}]\n"
POD = "{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c}]}}"
TRACES = [
    TraceCase(
        "node count far over the limit",
        "nodes: [{name: w, machine: 'sockets=1', count: 100000000}]\n",
        "nodes[0].count: 100000000 is over the simulator's limit of 1,000 nodes per trace",
    ),
    TraceCase(
        "node counts over the limit together",
        "nodes: [{name: a, machine: 'sockets=1', count: 600}, "
        "{name: b, machine: 'sockets=1', count: 600}]\n",
        "nodes[1].count: 1200 is over the simulator's limit of 1,000 nodes per trace",
    ),
    TraceCase(
        "lifetime past the time limit",
        NODE + f"events: [{{t: 0, pod: {POD}, lifetime: 1.0e+13}}]\n",
        "events[0].lifetime: 1e+13 is over the limit of 1e+12 seconds",
    ),
    TraceCase(
        "nan time", NODE + f"events: [{{t: .nan, pod: {POD}}}]\n", "events[0].t: expected a finite"
    ),
    TraceCase(
        "device on a NUMA node the machine lacks",
        "nodes: [{name: w, machine: 'sockets=2', devices: {x.io/d: [{id: d0, numa: 5}]}}]\n",
        "nodes[0].devices.x.io/d[0].numa: the machine has no NUMA node 5 (NUMA nodes: 0, 1)",
    ),
    TraceCase(
        "device id given as a list in a health event",
        "nodes: [{name: w, machine: 'sockets=2', devices: {x.io/d: [{id: d0, numa: 0}]}}]\n"
        "events: [{t: 0, type: device-health, node: w, resource: x.io/d, device: [d0]}]\n",
        "events[0].device: node w has no x.io/d device a list",
    ),
    TraceCase(
        "config path that never ends",
        NODE + "configs: [{name: a, path: /dev/zero}]\n",
        "configs[0].path: not a regular file",
    ),
    TraceCase(
        "newline in a key stays on the error's one line",
        NODE + '"x\\ny": 1\n',
        "x\\ny: unknown key",
    ),
    TraceCase("integer of 5000 digits", NODE + "seed: " + "9" * 5000 + "\n", "invalid YAML"),
    TraceCase(
        "nesting too deep for JSON",
        '{"nodes": [{"name": "w", "machine": "sockets=1"}]}\n' + "[" * 100000 + "\n",
        "line 2: invalid JSON",
        ".jsonl",
    ),
    TraceCase(
        "aliases that expand exponentially are never expanded in a message",
        "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c]\n",
        "a: unknown key",
    ),
    TraceCase(
        "alias that contains itself",
        "nodes: [{name: w, machine: 'sockets=1', count: &c [[[[*c]]]]}]\n",
        "a YAML alias refers to a value that contains it",
    ),
    TraceCase(
        "alias bomb inside a pod manifest",
        NODE
        + "templates:\n  t:\n    metadata:\n      name: p\n      annotations:\n"
        + "".join(
            f"        a{i}: &a{i} [" + ", ".join([f"*a{i - 1}" if i else "x"] * 10) + "]\n"
            for i in range(9)
        )
        + "    kind: *a8\n    spec: {containers: [{name: c}]}\n",
        "YAML aliases expand the document past what its text could hold",
    ),
]


@pytest.mark.parametrize("case", TRACES, ids=[c.name for c in TRACES])
def test_bad_trace_is_one_line_naming_file_place_and_limit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, case: TraceCase
) -> None:
    path = tmp_path / f"t{case.suffix}"
    path.write_text(case.text)
    code, out, err = run(capsys, "simulate", str(path), "--compare", "none")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert err.startswith(f"error: {path}: ")
    assert case.message in err


def test_trace_file_over_the_size_limit_is_refused_unread(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("numaplane.sim.trace.MAX_TRACE_BYTES", 1000)
    code, _, err = run(capsys, "simulate", "/dev/zero")
    assert code == 2
    assert err == "error: /dev/zero: the file is over the simulator's limit of 0 MiB\n"


def test_optimum_model_over_the_size_limit_is_refused_before_the_replay(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("numaplane.sim.optimum.MAX_OPTIMUM_CELLS", 9)
    code, out, err = run(capsys, "simulate", KEP, "--optimum")
    assert (code, out) == (2, "")
    assert "--optimum: 5 pods on 2 NUMA nodes make 10 placement variables" in err


def test_rich_markup_in_names_and_reasons_is_printed_literally(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(
        "name: '[bold]t[/bold]'\n"
        "nodes: [{name: '[red]w[/red]', machine: 'sockets=1,cores-per-numa=2'}]\n"
        "configs: [{name: '[bold]cfg[/bold]', shorthand: single-numa-node}]\n"
        f"events: [{{t: 0, pod: {POD}}}]\n"
    )
    code, out, _ = run(capsys, "simulate", str(path))
    assert code == 0
    assert "trace [bold]t[/bold]: [red]w[/red]" in out
    assert "[bold]cfg[/bold]" in out


def test_names_with_line_breaks_stay_on_their_row(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(
        'nodes: [{name: "a\\nb", machine: sockets=1}]\n'
        'configs: [{name: "c\\u2028d", shorthand: none}]\n'
    )
    code, out, _ = run(capsys, "simulate", str(path))
    assert code == 0
    assert "trace t: a\\nb (1 NUMA" in out
    assert "c\\u2028d " in out
    assert len(out.splitlines()) == 3


def test_unproven_optimum_is_not_called_one(capsys: pytest.CaptureFixture[str]) -> None:
    # A time limit of a nanosecond stops CP-SAT before it can prove anything (or find a
    # placement): what is known is the trivial bound, 5 pods, and the output must say so.
    argv = ("simulate", KEP, "--optimum", "--optimum-time-limit", "1e-9", "--compare")
    code, out, err = run(capsys, *argv, "single-numa-node")
    assert code == 0
    assert "<=5, best none (>=60%)" in out
    assert "note: single-numa-node: optimum not proven (time limit reached" in err
    code, out, _ = run(capsys, *argv, "single-numa-node", "-o", "json", "--deterministic")
    run_json = json.loads(out)["runs"][0]
    assert run_json["optimum"] is None
    assert run_json["optimum_ratio"] is None
    assert run_json["optimum_bound"] == 5
    assert run_json["optimum_note"].startswith("time limit reached")


def test_proven_optimum_is_labelled_exact(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "simulate", KEP, "--optimum", "-o", "json", "--deterministic")
    assert (code, err) == (0, "")
    for run_json in json.loads(out)["runs"]:
        assert run_json["optimum"] == run_json["optimum_bound"] == run_json["optimum_best"] == 4
        assert run_json["optimum_note"] is None


def test_generated_traces_replay(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Extreme but valid options: what generate writes, simulate reads.
    path = tmp_path / "t.yaml"
    extra = ("--arrival-rate", "1e-6", "--lifetime", "uniform:1e-3-1e9", "--size-mix", "1:1e-300")
    code, _, err = run(capsys, *GENERATE, "--mix", "telco", *extra, "-o", str(path))
    assert (code, err) == (0, "")
    code, _, err = run(capsys, "simulate", str(path), "--compare", "none")
    assert (code, err) == (0, "")


def test_optimum_with_a_request_no_node_can_hold(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # cpu: 1e18 once overflowed CP-SAT's 64-bit coefficients (a TypeError traceback).
    huge = POD.replace(
        "containers: [{name: c}]",
        "containers: [{name: c, resources: {limits: {cpu: '1e18', memory: 1Gi}}}]",
    ).replace("name: p}", "name: huge}")
    path = tmp_path / "t.yaml"
    path.write_text(NODE + f"events: [{{t: 0, pod: {huge}}}, {{t: 1, pod: {POD}}}]\n")
    argv = ("simulate", str(path), "--compare", "single-numa-node", "--optimum", "-o", "json")
    code, out, err = run(capsys, *argv)
    assert (code, err) == (0, "")
    assert json.loads(out)["runs"][0]["optimum"] == 1
