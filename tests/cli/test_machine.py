"""``numaplane machine show`` / ``presets`` through the real entry point."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from numaplane.cli.main import main
from numaplane.testing.fixtures import fixture_path, linux_fixture_names


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = 0
    try:
        main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_show_json_of_a_preset(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "machine", "show", "--machine", "dual-socket-ht", "-o", "json")
    assert code == 0
    doc = json.loads(out)
    assert [n["cpus"] for n in doc["numa_nodes"]] == ["0,2,4,6,8,10", "1,3,5,7,9,11"]
    assert len(doc["cpus"]) == 12


@pytest.mark.shared_captures
def test_show_tree_of_a_capture(capsys: pytest.CaptureFixture[str]) -> None:
    if "16amd64-8n2c" not in linux_fixture_names():
        pytest.skip("captures are not present")
    code, out, _ = _run(capsys, "machine", "show", "-m", str(fixture_path("16amd64-8n2c")))
    assert code == 0
    assert "socket 7" in out
    assert "NUMA node 7" in out


def test_show_yaml_of_a_synthetic_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "machine", "show", "-m", "sockets=2,gpus-per-numa=1", "-o", "yaml")
    assert code == 0
    assert "class: '0x030200'" in out


def test_show_help_has_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "machine", "show", "--help")
    assert code == 0
    assert "--machine" in out
    assert "numaplane machine show -m dual-socket-multi-numa -o json" in out


def test_presets_lists_every_preset(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "machine", "presets", "-o", "json")
    assert code == 0
    names = [p["name"] for p in json.loads(out)]
    assert "single-socket-ht" in names
    assert "dual-socket-multi-numa" in names


@dataclass(frozen=True)
class BadMachine:
    name: str
    words: str


def _bad(tmp: Path) -> dict[str, str]:
    (tmp / "corrupt.tar.bz2").write_bytes(b"\x00" * 64)
    (tmp / "bad.xml").write_text("<topology>")
    return {
        "missing path": str(tmp / "missing.tar.bz2"),
        "corrupt tarball": str(tmp / "corrupt.tar.bz2"),
        "malformed xml": str(tmp / "bad.xml"),
        "unknown preset": "octo-socket",
        "bad synthetic": "sockets=2,cores-per-numa=x",
    }


BAD = (
    BadMachine("missing path", "no such file"),
    BadMachine("corrupt tarball", "cannot unpack"),
    BadMachine("malformed xml", "malformed XML"),
    BadMachine("unknown preset", "known presets"),
    BadMachine("bad synthetic", "cores-per-numa"),
)


@pytest.mark.parametrize("case", BAD, ids=lambda c: c.name)
def test_bad_machine_is_one_error_line_and_status_2(
    case: BadMachine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _bad(tmp_path)[case.name]
    code, out, err = _run(capsys, "machine", "show", "--machine", spec)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: {spec}: ")
    assert case.words in lines[0]
    assert "Traceback" not in err
