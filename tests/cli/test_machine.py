"""``numaplane machine show`` / ``presets`` through the real entry point."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from numaplane.cli.main import main
from numaplane.testing.fixtures import fixture_path, linux_fixture_names, xml_fixture_names
from numaplane.topology.presets import PRESETS


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


def test_presets_table_fits_80_columns_with_every_description(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Piped at 80 columns (`COLUMNS=80 numaplane machine presets | cat`), the description
    column used to be squeezed to nothing."""
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = _run(capsys, "machine", "presets")
    assert code == 0
    assert max(len(line) for line in out.splitlines()) <= 80
    words = set(out.replace("│", " ").split())
    for preset in PRESETS.values():
        assert preset.name in words
        assert set(preset.description.split()) <= words, preset.name
        if preset.fixture:
            assert f"({preset.fixture})" in words


@pytest.mark.shared_captures
def test_show_prints_a_path_with_brackets_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rich markup in a file name (``[bold]``) is text, not a style to swallow."""
    if "24em64t-2n6c2t-pci" not in xml_fixture_names():
        pytest.skip("XML exports are not present")
    folder = tmp_path / "[bold]x"
    folder.mkdir()
    export = folder / "m.xml"
    shutil.copy(fixture_path("24em64t-2n6c2t-pci"), export)
    code, out, _ = _run(capsys, "machine", "show", "-m", str(export))
    assert code == 0
    assert f"({export})" in out.replace("\n", "")
