"""``numaplane admit`` / ``release``: decisions, exit status, state directories, bad input."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from numaplane.cli.main import main

REPO = Path(__file__).resolve().parents[2]
WORKED = REPO / "examples" / "worked"
PODS = str(WORKED / "pods.yaml")
BEST_EFFORT = str(WORKED / "kubelet-best-effort.yaml")
SINGLE_NUMA = str(WORKED / "kubelet-single-numa-node.yaml")

ONE_CPU_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: extra}
spec:
  containers: [{name: c, resources: {limits: {cpu: "1", memory: 1Gi}}}]
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run the CLI in-process; return (exit status, stdout, stderr)."""
    code: int | str | None = 0
    try:
        main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return (code if isinstance(code, int) else 0), out, err


def admit_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run(capsys, "admit", *argv, "-o", "json")
    doc: dict[str, Any] = json.loads(out)
    return code, doc


def test_worked_example_best_effort_admits_both_pods_across_numa(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, doc = admit_json(capsys, PODS, "-m", "dual-socket-ht", "-c", BEST_EFFORT)
    assert code == 0
    web, db = doc["pods"]
    assert web["admitted"]
    assert db["admitted"]
    assert web["containers"][0]["numa_affinity"] == {"numa": [0], "preferred": True}
    assert web["containers"][0]["exclusive_cpus"] == "2,4,8"
    # 7 CPUs fit no single NUMA node (6 each): best-effort spreads over both.
    assert db["containers"][0]["numa_affinity"] == {"numa": [0, 1], "preferred": True}
    assert db["containers"][0]["exclusive_cpus"] == "1,3,5,7,9-11"


def test_worked_example_single_numa_node_rejects_the_wide_pod(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, doc = admit_json(capsys, PODS, "-m", "dual-socket-ht", "-c", SINGLE_NUMA, "--explain")
    assert code == 1
    web, db = doc["pods"]
    assert web["admitted"]
    assert not db["admitted"]
    assert db["reason"] == "TopologyAffinityError"
    assert db["message"] == "Resources cannot be allocated with Topology locality"
    assert db["containers"] == []
    (decision,) = db["explanation"]["decisions"]
    assert decision["merged"] == {"numa": None, "preferred": False}


def test_table_output_and_explain(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "admit", PODS, "-m", "dual-socket-ht", "-c", SINGLE_NUMA, "--explain"
    )
    assert code == 1
    assert "pod default/web: admitted" in out
    assert "pod default/db: rejected" in out
    assert "TopologyAffinityError" in out
    assert "policy single-numa-node" in out


def test_state_dir_continues_and_release_frees_cpus(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    state = tmp_path / "state"
    extra = tmp_path / "extra.yaml"
    extra.write_text(ONE_CPU_POD)
    common = ("-m", "dual-socket-ht", "-c", BEST_EFFORT, "--state-dir", str(state))
    assert admit_json(capsys, PODS, *common)[0] == 0
    checkpoint = json.loads((state / "cpu_manager_state").read_text())
    assert checkpoint["policyName"] == "static"
    assert checkpoint["defaultCpuSet"] == "0,6"  # only the reserved CPUs stay shared
    # Every CPU is taken: the next pod is refused by the CPU manager.
    code, doc = admit_json(capsys, str(extra), *common)
    assert code == 1
    assert doc["pods"][0]["reason"] == "UnexpectedAdmissionError"
    assert "not enough cpus available" in doc["pods"][0]["message"]
    code, out, _ = run(capsys, "release", "default/db", *common)
    assert code == 0
    assert "released default/db" in out
    code, doc = admit_json(capsys, str(extra), *common)
    assert code == 0
    # NUMA 0 (one free CPU, 10) and NUMA 1 both fit; the narrower-value mask, NUMA 0, wins.
    assert doc["pods"][0]["containers"][0]["exclusive_cpus"] == "10"


@dataclass(frozen=True)
class BadInput:
    """A command line that must fail with one clear line and exit status 2."""

    name: str
    argv: tuple[str, ...]
    files: tuple[tuple[str, str], ...]
    expected: str


BAD_INPUTS = (
    BadInput(
        "manifest typo in a quantity",
        ("admit", "{tmp}/bad.yaml", "-m", "dual-socket-ht"),
        (("bad.yaml", ONE_CPU_POD.replace('"1"', '"1x"')),),
        "bad.yaml: spec.containers[0].resources.limits.cpu: invalid quantity '1x'",
    ),
    BadInput(
        "machine file does not exist",
        ("admit", PODS, "-m", "{tmp}/missing.xml"),
        (),
        "missing.xml: no such file or directory",
    ),
    BadInput(
        "static CPU policy without a reservation",
        ("admit", PODS, "-m", "dual-socket-ht", "-c", "{tmp}/k.yaml"),
        (("k.yaml", "kind: KubeletConfiguration\ncpuManagerPolicy: static\n"),),
        "k.yaml: cpuManagerPolicy: [cpumanager] unable to determine reserved CPU resources",
    ),
    BadInput(
        "alpha option without its feature gate",
        ("admit", PODS, "-m", "dual-socket-ht", "-c", "{tmp}/k.yaml"),
        (
            (
                "k.yaml",
                "kind: KubeletConfiguration\ntopologyManagerPolicy: single-numa-node\n"
                'topologyManagerPolicyOptions: {prefer-most-allocated-numa-node: "true"}\n',
            ),
        ),
        'alpha-level options not enabled, but option "prefer-most-allocated-numa-node"',
    ),
    BadInput(
        "more NUMA nodes than max-allowable-numa-nodes",
        ("admit", PODS, "-m", "sockets=2,numa-per-socket=5,cores-per-numa=1", "-c", "{tmp}/k"),
        (("k", "kind: KubeletConfiguration\ntopologyManagerPolicy: best-effort\n"),),
        "unsupported on machines with more than 8 NUMA Nodes",
    ),
    BadInput(
        "corrupt checkpoint in the state directory",
        ("admit", PODS, "-m", "dual-socket-ht", "-c", BEST_EFFORT, "--state-dir", "{tmp}/s"),
        (("s/cpu_manager_state", "garbage"),),
        'please drain this node and delete the CPU manager checkpoint file "',
    ),
    BadInput(
        "the same pod twice",
        ("admit", PODS, PODS, "-m", "dual-socket-ht"),
        (),
        "pod default/web is given twice",
    ),
    BadInput(
        "release from a state directory that does not exist",
        ("release", "nope", "-m", "dual-socket-ht", "-c", BEST_EFFORT, "--state-dir", "{tmp}/s"),
        (),
        "s: no such state directory",
    ),
    BadInput(
        "release of an unknown pod",
        ("release", "nope", "-m", "dual-socket-ht", "-c", BEST_EFFORT, "--state-dir", "{tmp}/s"),
        (("s/numaplane_pods.json", '{"pods": []}'),),
        "no admitted pod 'nope'",
    ),
)


@pytest.mark.parametrize("case", BAD_INPUTS, ids=lambda c: c.name)
def test_bad_input_gives_one_line_and_exit_2(
    case: BadInput, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for name, text in case.files:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in case.argv]
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert case.expected in err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
