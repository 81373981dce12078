"""Fuzzing pod manifests: pods, or one ``ManifestError`` line naming the file; never more.

Three sources of input: random YAML/JSON documents (any shape, including scalars of every YAML
type, huge numbers and control characters), random text, and mutations of valid manifests (a
field deleted, replaced by a value of another type, or wrapped in a list). The parse functions
run in-process; a handful of bad files, and a pod record file that is no record, go through the
CLI, which must exit 2 with one line.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from numaplane.api.manifest import ManifestError, pod_from_dict, pods_from_text
from numaplane.api.pod import Pod

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**60), max_value=10**60),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(
        ["", "Pod", "List", "PodList", "1Gi", "-1", "500m", "2x", "Always", "\n", "{x}"]
    ),
)
_keys = st.one_of(
    st.sampled_from(
        [
            "kind",
            "metadata",
            "name",
            "namespace",
            "uid",
            "labels",
            "spec",
            "containers",
            "initContainers",
            "resources",
            "requests",
            "limits",
            "cpu",
            "memory",
            "items",
            "env",
            "args",
            "restartPolicy",
            "status",
            "qosClass",
            "overhead",
        ]
    ),
    st.text(max_size=6),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=5)),
    max_leaves=25,
)


def _outcome(parse: Any, *args: Any) -> list[Pod] | Pod | ManifestError:
    try:
        result: list[Pod] | Pod = parse(*args)
    except ManifestError as error:
        return error
    return result


def _assert_one_line_naming(outcome: object, source: str) -> None:
    if not isinstance(outcome, ManifestError):
        return
    message = str(outcome)
    assert len(message.splitlines()) == 1, message
    assert outcome.source == source
    assert message.startswith(f"{source}: "), message


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=_values, as_json=st.booleans())
@example(document={"pods": [1, 2]}, as_json=True)
@example(document={"kind": "Pod", "metadata": {"name": "a\nb"}, "spec": {}}, as_json=False)
def test_random_documents(document: object, as_json: bool) -> None:
    source = "fuzz.json" if as_json else "fuzz.yaml"
    try:
        text = json.dumps(document) if as_json else yaml.safe_dump(document)
    except (ValueError, TypeError):  # NaN in strict JSON and the like: not an input
        return
    _assert_one_line_naming(_outcome(pods_from_text, text, source), source)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200), as_json=st.booleans())
@example(text="x: 2024-13-45\n", as_json=False)
@example(text="[" * 5000, as_json=False)
@example(text="[" * 100000 + "]" * 100000, as_json=True)
@example(text="a: " + "9" * 5000, as_json=False)
@example(text="kind: Pod\nmetadata: {name: !!python/object:os.system x}\n", as_json=False)
def test_random_text(text: str, as_json: bool) -> None:
    source = "fuzz.json" if as_json else "fuzz.yaml"
    _assert_one_line_naming(_outcome(pods_from_text, text, source), source)


def _valid_manifests() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in sorted(DATA.glob("*.yaml")):
        try:
            loaded = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
        except yaml.YAMLError:
            continue
        for doc in loaded:
            if isinstance(doc, dict) and doc.get("kind") == "Pod":
                try:
                    pod_from_dict(doc, path.name)
                except ManifestError:
                    continue
                docs.append(doc)
    return docs


VALID = _valid_manifests()


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, (*prefix, index))
    return found


@st.composite
def mutated_manifests(draw: st.DrawFn) -> object:
    """A valid manifest with one to three places deleted, replaced or wrapped in a list."""
    doc: Any = copy.deepcopy(draw(st.sampled_from(VALID)))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["delete", "replace", "wrap"]))
        if action == "delete":
            del parent[path[-1]]
        elif action == "replace":
            parent[path[-1]] = draw(_values)
        else:
            parent[path[-1]] = [parent[path[-1]]]
    return doc


def test_there_are_valid_manifests_to_mutate() -> None:
    assert len(VALID) >= 3


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=mutated_manifests())
def test_mutated_manifests(document: object) -> None:
    outcome = _outcome(pod_from_dict, document, "mutated.yaml", "items[2].")
    _assert_one_line_naming(outcome, "mutated.yaml")
    if isinstance(outcome, ManifestError):
        assert outcome.field is None or outcome.field.startswith("items[2]"), str(outcome)


_CLI_CASES = [
    ("binary.yaml", b"\xff\xfe\x00kind: Pod"),
    ("deep.yaml", b"[" * 5000),
    (
        "newline.yaml",
        b'kind: Pod\nmetadata: {name: "a\\nb"}\nspec: {containers: [{name: c}]}\n'
        b'---\nkind: Pod\nmetadata: {name: "a\\nb"}\nspec: {containers: [{name: c}]}\n',
    ),
    ("pods.json", b'{"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": 7}}'),
]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "numaplane.cli.main", *args],
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(("name", "content"), _CLI_CASES, ids=[c[0] for c in _CLI_CASES])
def test_cli_admit_refuses_bad_manifests_in_one_line(
    tmp_path: Path, name: str, content: bytes
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    result = _run("admit", "-m", "sockets=1", str(path))
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert str(path) in lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("command", ["admit", "release"])
def test_cli_refuses_a_pod_record_file_holding_no_pods(tmp_path: Path, command: str) -> None:
    """``{"pods": [1, 2]}`` in a state directory: one line naming the file and the field."""
    state = tmp_path / "state"
    state.mkdir()
    records = state / "numaplane_pods.json"
    records.write_text('{"pods": [1, 2]}')
    pod = tmp_path / "pod.yaml"
    pod.write_text("kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n")
    target = str(pod) if command == "admit" else "p"
    result = _run(command, "-m", "sockets=1", "--state-dir", str(state), target)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    # The state directory's reader names the record before the manifest parser sees it.
    assert f"{records}: pods[0]: expected a pod manifest, got int" in lines[0]
