"""Run every conformance vector of a directory: ``tests/data/vectors`` or ``NUMAPLANE_VECTORS``.

Each vector is its own test case, named ``<file>::<upstream test>::<case name>#<index>``. The
vectors are the repository's own test data, so a directory that is missing or holds no vector
file is a failing test (never a skip): a run that checked nothing must not look green.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.drivers import (
    VectorContext,
    find_spec,
    load_driver,
)

DEFAULT_VECTORS = Path(__file__).resolve().parents[1] / "data" / "vectors"
"""The repository's copy of the vectors (``tests/data/vectors``)."""


def vectors_dir() -> Path:
    """The directory under test."""
    return Path(os.environ.get("NUMAPLANE_VECTORS", str(DEFAULT_VECTORS)))


def missing_reason(root: Path) -> str:
    """One line saying why ``root`` gave no vector to run, naming it and where it came from."""
    source = "NUMAPLANE_VECTORS" if "NUMAPLANE_VECTORS" in os.environ else "the default"
    if not root.is_dir():
        return f"vectors directory {root} ({source}) does not exist"
    return f"vectors directory {root} ({source}) holds no vector file (*.json with 'vectors')"


def _collect() -> list[Any]:
    root = vectors_dir()
    params: list[Any] = []
    for path in sorted(root.glob("*.json")) if root.is_dir() else ():
        data = json.loads(path.read_text())
        if "vectors" not in data:
            continue  # a fixture file (topologies.json) that drivers read through the context
        for index, vector in enumerate(data["vectors"]):
            test = vector.get("source", {}).get("test", "?")
            case_id = f"{path.stem}::{test}::{vector.get('name', '')}#{index}"
            params.append(pytest.param(path.name, data["area"], vector, id=case_id))
    if not params:
        # One case that fails with the reason, so that the run is red and says why.
        return [pytest.param(None, None, None, id="no-vector-files")]
    return params


@pytest.mark.parametrize(("file", "area", "vector"), _collect())
def test_vector(file: str | None, area: str | None, vector: dict[str, Any] | None) -> None:
    """One upstream test case reproduced exactly."""
    if file is None or area is None or vector is None:
        pytest.fail(missing_reason(vectors_dir()))
    spec = find_spec(area)
    if spec is None:
        pytest.fail(f"{file}: no conformance driver for area {area!r}")
    driver = load_driver(spec)
    driver.run(vector, VectorContext(vectors_dir(), file))
