"""Run every conformance vector of a directory (``NUMAPLANE_VECTORS`` or ``../shared/vectors``).

Each vector is its own test case, named ``<file>::<upstream test>::<case name>#<index>``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.drivers import (
    OPEN_LATER_ISSUES,
    VectorContext,
    find_spec,
    load_driver,
)

DEFAULT_VECTORS = Path(__file__).resolve().parents[2].parent / "shared" / "vectors"


def vectors_dir() -> Path:
    """The directory under test."""
    return Path(os.environ.get("NUMAPLANE_VECTORS", str(DEFAULT_VECTORS)))


def _collect() -> list[Any]:
    root = vectors_dir()
    files = sorted(root.glob("*.json"))
    if not files:
        return [
            pytest.param(
                None,
                None,
                None,
                id="no-vector-files",
                marks=pytest.mark.xfail(reason=f"no vector files in {root}", strict=True),
            )
        ]
    params: list[Any] = []
    for path in files:
        data = json.loads(path.read_text())
        if "vectors" not in data:
            continue  # a fixture file (topologies.json) that drivers read through the context
        for index, vector in enumerate(data["vectors"]):
            test = vector.get("source", {}).get("test", "?")
            case_id = f"{path.stem}::{test}::{vector.get('name', '')}#{index}"
            params.append(pytest.param(path.name, data["area"], vector, id=case_id))
    return params


@pytest.mark.parametrize(("file", "area", "vector"), _collect())
def test_vector(file: str | None, area: str | None, vector: dict[str, Any] | None) -> None:
    """One upstream test case reproduced exactly."""
    if file is None or area is None or vector is None:
        pytest.fail(f"no vector files found in {vectors_dir()}")
    spec = find_spec(area)
    if spec is None:
        pytest.fail(f"{file}: no conformance driver for area {area!r}")
    driver = load_driver(spec)
    if driver is None:
        if spec.owner_issue in OPEN_LATER_ISSUES:
            pytest.skip(f"driver {spec.module!r} belongs to open issue #{spec.owner_issue}")
        pytest.fail(f"{file}: driver module {spec.module!r} for area {area!r} is missing")
    driver.run(vector, VectorContext(vectors_dir(), file))
