"""``numaplane agent`` refusing to start: one line on stderr, exit status 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.agent.agent_fixtures import write_config


def _agent(tmp_path: Path, state: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    manifests = tmp_path / "pods"
    manifests.mkdir(exist_ok=True)
    config = write_config(tmp_path / "kubelet.yaml")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "numaplane.cli.main",
            "agent",
            "--config",
            str(config),
            "--pod-manifest-path",
            str(manifests),
            "--state-dir",
            str(state),
            "--machine",
            "sockets=1,numa-per-socket=1,cores-per-numa=2,threads-per-core=1",
            "--listen",
            "127.0.0.1:0",
            "--once",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_unwritable_state_directory_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = _agent(tmp_path, blocker / "state")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert str(blocker / "state") in lines[0]


def test_corrupt_checkpoint_is_one_line_naming_the_file(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "cpu_manager_state").write_text('{"policyName":"static","checksum":1}')
    result = _agent(tmp_path, state)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {state / 'cpu_manager_state'}: ")
    assert "--reset-state" in lines[0]


def test_no_pod_source_is_one_line(tmp_path: Path) -> None:
    config = write_config(tmp_path / "kubelet.yaml")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "numaplane.cli.main",
            "agent",
            "--config",
            str(config),
            "--state-dir",
            str(tmp_path / "state"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "--pod-manifest-path, --kubeconfig or both" in lines[0]


def test_a_bad_image_table_is_one_line_naming_it(tmp_path: Path) -> None:
    table = tmp_path / "images.yaml"
    table.write_text("images:\n  busybox: 3\n")
    result = _agent(tmp_path, tmp_path / "state", "--image-table", str(table))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {table}: images.busybox: ")
