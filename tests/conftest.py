"""Shared pytest fixtures: where the shared material lives."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"
TOPOLOGIES = SHARED / "topologies"


@pytest.fixture(scope="session")
def topologies_dir() -> Path:
    """``../shared/topologies`` (hwloc captures and XML exports)."""
    if not TOPOLOGIES.is_dir():
        pytest.skip(f"{TOPOLOGIES} is not present")
    return TOPOLOGIES
