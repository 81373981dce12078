"""``load_machine``: resolution order, tarballs (safely unpacked) and errors."""

from __future__ import annotations

import io
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from numaplane.errors import InputError
from numaplane.topology.discover import load_machine, unpacked_tarball
from numaplane.topology.errors import (
    HwlocXMLError,
    SyntheticSpecError,
    SysfsError,
    TarballError,
    UnknownMachineError,
)
from tests.topology.sysfs_builder import cpu_files, node_files, write_tree


def _capture(tmp_path: Path) -> Path:
    files = {**cpu_files([(0, 0, 0), (1, 0, 0)]), **node_files(0, "0-1", 64, "10")}
    return write_tree(tmp_path / "cap" / "mybox", files)


def _tar(path: Path, source: Path, extra: list[tarfile.TarInfo] = ()) -> Path:  # type: ignore[assignment]
    with tarfile.open(path, "w:bz2") as archive:
        archive.add(source, arcname=source.name)
        for info in extra:
            archive.addfile(info, io.BytesIO(b"x") if info.isfile() else None)
    return path


def test_directory_and_parent_directory_and_sys_dir(tmp_path: Path) -> None:
    root = _capture(tmp_path)
    for spec in (root, root.parent, root / "sys"):
        assert str(load_machine(str(spec)).all_cpu_ids) == "0-1"


def test_tarball_is_unpacked_outside_the_working_tree_and_removed(tmp_path: Path) -> None:
    tarball = _tar(tmp_path / "box.tar.bz2", _capture(tmp_path))
    with unpacked_tarball(tarball) as root:
        assert root.resolve().is_relative_to(Path(tempfile.gettempdir()).resolve())
        assert not root.resolve().is_relative_to(Path.cwd().resolve())
        kept = root
    assert not kept.exists()
    machine = load_machine(str(tarball))
    assert machine.name == "box"
    assert str(machine.all_cpu_ids) == "0-1"


def test_tarball_members_escaping_or_devices_are_skipped(tmp_path: Path) -> None:
    evil = tarfile.TarInfo("../../evil.txt")
    evil.size = 1
    dev = tarfile.TarInfo("mybox/dev/sda")
    dev.type = tarfile.BLKTYPE
    link = tarfile.TarInfo("mybox/sys/escape")
    link.type = tarfile.SYMTYPE
    link.linkname = "../../../../etc"
    tarball = _tar(tmp_path / "box.tar", _capture(tmp_path), [evil, dev, link])
    with unpacked_tarball(tarball) as root:
        assert not (root.parent.parent / "evil.txt").exists()
        assert not (root / "dev" / "sda").exists()
        assert not (root / "sys" / "escape").exists()


@dataclass(frozen=True)
class BadInput:
    name: str
    spec: str
    error: type[InputError]
    message: str


def _bad_inputs(tmp: Path) -> list[BadInput]:
    (tmp / "corrupt.tar.bz2").write_bytes(b"not a tarball")
    (tmp / "bad.xml").write_text("<topology><object")
    (tmp / "other.xml").write_text("<html/>")
    (tmp / "empty").mkdir()
    (tmp / "file.txt").write_text("x")
    return [
        BadInput("missing path", str(tmp / "nope.tar.bz2"), UnknownMachineError, "no such file"),
        BadInput("corrupt tarball", str(tmp / "corrupt.tar.bz2"), TarballError, "cannot unpack"),
        BadInput("malformed xml", str(tmp / "bad.xml"), HwlocXMLError, "malformed XML"),
        BadInput("not hwloc xml", str(tmp / "other.xml"), HwlocXMLError, "not an hwloc"),
        BadInput("empty directory", str(tmp / "empty"), SysfsError, "not a sysfs root"),
        BadInput("unknown file type", str(tmp / "file.txt"), UnknownMachineError, "file type"),
        BadInput("unknown preset", "no-such-preset", UnknownMachineError, "known presets"),
        BadInput("bad synthetic key", "sockets=2,wheels=4", SyntheticSpecError, "unknown key"),
        BadInput("bad synthetic value", "sockets=two", SyntheticSpecError, "integer"),
    ]


CASE_NAMES = [
    "missing path",
    "corrupt tarball",
    "malformed xml",
    "not hwloc xml",
    "empty directory",
    "unknown file type",
    "unknown preset",
    "bad synthetic key",
    "bad synthetic value",
]


@pytest.mark.parametrize("case_name", CASE_NAMES)
def test_bad_inputs_raise_input_errors_naming_the_input(tmp_path: Path, case_name: str) -> None:
    case = next(c for c in _bad_inputs(tmp_path) if c.name == case_name)
    with pytest.raises(case.error, match=case.message) as info:
        load_machine(case.spec)
    assert str(info.value).startswith(case.spec)
    assert "\n" not in str(info.value)


def test_synthetic_and_preset_resolution() -> None:
    assert load_machine("sockets=2").socket_ids == (0, 1)
    assert load_machine("dual-socket-ht").source == "preset:dual-socket-ht"
