"""Without ``../shared/topologies`` the real-capture group is skipped with one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_absent_captures_skip_the_group_with_one_line(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "NUMAPLANE_SHARED_TOPOLOGIES": str(tmp_path / "absent"),
        "PYTHONPATH": str(REPO / "src"),
    }
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-ra",
            "tests/topology/test_fixtures_linux.py",
            "tests/topology/test_fixtures_xml.py",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    skipped = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skipped) == 1, result.stdout
    assert "../shared/topologies not found" in skipped[0]
    assert "real-capture tests skipped" in skipped[0]
    # The one test there that needs no capture still runs.
    assert "1 passed" in result.stdout
