"""The conformance runner itself: where it looks, and that finding nothing is a failure."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conformance import test_vectors
from tests.conformance.drivers import DRIVERS, find_spec


@dataclass(frozen=True)
class EmptyCase:
    """A vectors directory that gives nothing to run, and what the failure must say."""

    name: str
    files: dict[str, object]
    create: bool
    says: str


EMPTY_CASES = [
    EmptyCase("missing directory", {}, create=False, says="does not exist"),
    EmptyCase("empty directory", {}, create=True, says="holds no vector file"),
    EmptyCase(
        "fixtures only",
        {"topologies.json": {"area": "fixtures", "topologies": {}}},
        create=True,
        says="holds no vector file",
    ),
]


@pytest.mark.parametrize("case", EMPTY_CASES, ids=[c.name for c in EMPTY_CASES])
def test_nothing_to_run_is_a_failing_case(
    case: EmptyCase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "vectors"
    if case.create:
        root.mkdir()
        for name, content in case.files.items():
            (root / name).write_text(json.dumps(content))
    monkeypatch.setenv("NUMAPLANE_VECTORS", str(root))
    params = test_vectors._collect()
    assert [p.id for p in params] == ["no-vector-files"]
    assert not params[0].marks, "the empty run must fail, not be skipped or expected to fail"
    with pytest.raises(pytest.fail.Exception) as failure:
        test_vectors.test_vector(*params[0].values)
    message = str(failure.value)
    assert str(root) in message
    assert case.says in message
    assert "NUMAPLANE_VECTORS" in message


def test_default_is_the_repository_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NUMAPLANE_VECTORS", raising=False)
    root = Path(__file__).resolve().parents[1] / "data" / "vectors"
    assert test_vectors.vectors_dir() == root
    assert (root / "README.md").is_file()
    assert len(test_vectors._collect()) >= 373


def test_every_vector_file_has_a_driver() -> None:
    root = Path(__file__).resolve().parents[1] / "data" / "vectors"
    areas = [
        data["area"]
        for data in (json.loads(p.read_text()) for p in sorted(root.glob("*.json")))
        if "vectors" in data
    ]
    claimed = {spec.module for area in areas if (spec := find_spec(area)) is not None}
    assert len(claimed) == len(areas) == len(DRIVERS)
