"""``numaplane up --multikueue-workers``: which children run and with which arguments (the
processes themselves are exercised by tests/kueue/multikueue/test_up_multikueue.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from numaplane.cli.up import UpOptions, apiserver_component, components, up


def _names(options: UpOptions) -> list[str]:
    return [c.name for c in components(options)]


def test_without_workers_up_runs_what_it_always_ran(tmp_path: Path) -> None:
    options = UpOptions(data_dir=tmp_path, node="none")
    assert _names(options) == ["controllers", "kueue"]
    assert "--cluster" not in apiserver_component(options).argv


def test_each_worker_is_a_logical_cluster_with_its_own_controllers_kueue_and_nodes(
    tmp_path: Path,
) -> None:
    options = UpOptions(
        data_dir=tmp_path, node="none", multikueue_workers=2, worker_simulated_nodes=3
    )
    assert _names(options) == [
        "controllers",
        "kueue",
        "worker1-controllers",
        "worker1-kueue",
        "worker1-sim",
        "worker2-controllers",
        "worker2-kueue",
        "worker2-sim",
    ]
    argv = list(apiserver_component(options).argv)
    assert argv[-4:] == ["--cluster", "worker1", "--cluster", "worker2"]
    by_name = {c.name: list(c.argv) for c in components(options)}
    worker2 = str(tmp_path / "worker2.kubeconfig")
    assert by_name["worker2-kueue"][-3:] == ["kueue", "--kubeconfig", worker2]
    sim = by_name["worker2-sim"]
    assert sim[sim.index("--kubeconfig") + 1] == worker2
    assert sim[sim.index("--nodes") + 1] == "3"
    assert sim[sim.index("--node-name") + 1] == "worker2-sim"


@dataclass(frozen=True)
class FlagCase:
    name: str
    args: tuple[str, ...]
    error: str


FLAG_CASES = (
    FlagCase(
        "workers need kueue",
        ("--multikueue-workers", "1", "--no-kueue"),
        "--multikueue-workers: given with --no-kueue",
    ),
    FlagCase(
        "worker nodes need workers",
        ("--worker-simulated-nodes", "2"),
        "--worker-simulated-nodes: given without --multikueue-workers",
    ),
)


@pytest.mark.parametrize("case", FLAG_CASES, ids=[c.name for c in FLAG_CASES])
def test_inconsistent_flags_are_refused(case: FlagCase, tmp_path: Path) -> None:
    result = CliRunner().invoke(up, ["--data-dir", str(tmp_path), *case.args])
    assert result.exit_code != 0
    assert case.error in str(result.exception)
