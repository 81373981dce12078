"""A capture is read within limits, and a limit hit is one line naming the input and the limit.

The blow-up cases are real (a ``.tar.bz2`` of a few KiB expanding to a 1 GiB file) and run
through the CLI in a child process whose address space is capped well below what reading them
whole would take.
"""

from __future__ import annotations

import bz2
import os
import resource
import subprocess
import sys
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from numaplane.testing.sysfs_tree import TreeSpec, write_capture_tarball, write_sysfs_tree
from numaplane.topology import capture_io, hwloc_xml
from numaplane.topology.discover import load_machine
from numaplane.topology.errors import CaptureLimitError
from tests.topology.test_generated_trees import grid

REPO = Path(__file__).resolve().parents[2]
GIB = 1 << 30
CHUNK = 8 << 20  # the per-member limit; a multiple of the tar block size


def _small_tree() -> TreeSpec:
    cpus, nodes = grid(1, 2, 2, 1)
    return TreeSpec(cpus, nodes)


def _bomb(path: Path, members: list[tuple[str, int]]) -> Path:
    """A ``.tar.bz2`` whose members are zeros: concatenated bz2 streams, a few bytes per 8 MiB."""
    zeros = bz2.compress(bytes(CHUNK))
    with open(path, "wb") as out:
        for name, size in members:
            assert size % CHUNK == 0
            info = tarfile.TarInfo(name)
            info.size = size
            out.write(bz2.compress(info.tobuf(format=tarfile.GNU_FORMAT)))
            for _ in range(size // CHUNK):
                out.write(zeros)
        out.write(bz2.compress(bytes(2 * tarfile.BLOCKSIZE)))
    return path


@dataclass(frozen=True)
class LimitCase:
    """A capture that hits a limit, and the words of the limit in the one-line error."""

    name: str
    make: Callable[[Path], Path]
    message: str


def _huge_meminfo(tmp: Path) -> Path:
    root = write_sysfs_tree(tmp / "box", _small_tree())
    meminfo = root / "sys/devices/system/node/node0/meminfo"
    with open(meminfo, "wb") as out:  # sparse: 1 GiB that takes no disk
        out.truncate(GIB)
    return root


def _cpulist_of_billions(tmp: Path) -> Path:
    root = write_sysfs_tree(tmp / "box", _small_tree())
    (root / "sys/devices/system/node/node1/cpulist").write_text("2-4294967295\n")
    return root


def _mask_past_the_limit(tmp: Path) -> Path:
    root = write_sysfs_tree(tmp / "box", _small_tree())
    node = root / "sys/devices/system/node/node1"
    (node / "cpulist").unlink()
    (node / "cpumap").write_text("1" + ",00000000" * 3000 + "\n")
    return root


def _cpu_directory_past_the_limit(tmp: Path) -> Path:
    root = write_sysfs_tree(tmp / "box", _small_tree())
    (root / "sys/devices/system/cpu/cpu70000").mkdir()
    return root


def _member_of_a_gibibyte(tmp: Path) -> Path:
    return _bomb(tmp / "bomb.tar.bz2", [("bomb/sys/devices/system/node/node0/meminfo", GIB)])


LIMIT_CASES = (
    LimitCase(
        "a 1 GiB sysfs file",
        _huge_meminfo,
        "sys/devices/system/node/node0/meminfo: larger than the limit of 1 MiB for one capture",
    ),
    LimitCase(
        "a CPU list naming billions of CPUs",
        _cpulist_of_billions,
        "sys/devices/system/node/node1/cpulist: CPU id 4294967295 is above the limit of 65535",
    ),
    LimitCase(
        "a CPU mask with a bit past the limit",
        _mask_past_the_limit,
        "sys/devices/system/node/node1/cpumap: CPU id 96000 is above the limit of 65535",
    ),
    LimitCase(
        "a CPU directory past the limit",
        _cpu_directory_past_the_limit,
        "sys/devices/system/cpu/cpu70000: CPU id 70000 is above the limit of 65535",
    ),
    LimitCase(
        "a tarball member of 1 GiB",
        _member_of_a_gibibyte,
        "member 'bomb/sys/devices/system/node/node0/meminfo' (1073741824 bytes) is larger than "
        "the limit of 8 MiB for one capture file",
    ),
)


@pytest.mark.parametrize("case", LIMIT_CASES, ids=lambda c: c.name)
def test_limit_hit_is_one_line_naming_capture_and_limit(tmp_path: Path, case: LimitCase) -> None:
    spec = str(case.make(tmp_path))
    with pytest.raises(CaptureLimitError) as caught:
        load_machine(spec)
    message = str(caught.value)
    assert message.startswith(f"{spec}: ")
    assert case.message in message
    assert "\n" not in message


def test_files_read_in_all_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_sysfs_tree(tmp_path / "box", _small_tree())
    assert load_machine(str(root)).numa_ids == (0, 1)
    monkeypatch.setattr(capture_io, "MAX_READ_BYTES", 200)
    with pytest.raises(CaptureLimitError, match="add up to more than the limit of 200 bytes"):
        load_machine(str(root))


def test_archive_members_are_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tarball = write_capture_tarball(tmp_path / "box.tar.bz2", _small_tree())
    assert load_machine(str(tarball)).numa_ids == (0, 1)
    monkeypatch.setattr(capture_io, "MAX_MEMBERS", 20)
    with pytest.raises(CaptureLimitError, match="more than the limit of 20 members"):
        load_machine(str(tarball))


def test_archive_expansion_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Members within the per-member limit, but more of them than the archive limit allows;
    # they are not even files discovery reads, and still count (they must be read through).
    monkeypatch.setattr(capture_io, "MAX_ARCHIVE_BYTES", 2 * CHUNK)
    tarball = _bomb(tmp_path / "wide.tar.bz2", [(f"wide/junk{i}", CHUNK) for i in range(3)])
    with pytest.raises(CaptureLimitError, match="expands to more than the limit of 16 MiB"):
        load_machine(str(tarball))


def test_xml_export_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    export = tmp_path / "big.xml"
    export.write_text("<topology>" + " " * 4096 + "</topology>")
    monkeypatch.setattr(hwloc_xml, "MAX_XML_BYTES", 1024)
    with pytest.raises(CaptureLimitError, match="larger than the limit"):
        load_machine(str(export))


def _limit_memory() -> None:
    # Half a GiB of address space: the interpreter and numaplane need about 250 MiB; reading
    # any of these captures whole would need more than a GiB.
    resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))


@pytest.mark.parametrize(
    "members",
    [
        pytest.param([("bomb/sys/devices/system/node/node0/meminfo", GIB)], id="one 1 GiB file"),
        pytest.param(
            [(f"bomb/proc/junk{i}", CHUNK) for i in range(128)], id="1 GiB in 8 MiB files"
        ),
    ],
)
def test_bomb_through_the_cli_in_bounded_memory(
    tmp_path: Path, members: list[tuple[str, int]]
) -> None:
    bomb = _bomb(tmp_path / "bomb.tar.bz2", members)
    assert bomb.stat().st_size < 64 << 10
    result = subprocess.run(
        [sys.executable, "-m", "numaplane.cli.main", "machine", "show", "-m", str(bomb)],
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        capture_output=True,
        text=True,
        preexec_fn=_limit_memory,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert str(bomb) in lines[0]
    assert "limit" in lines[0]
    assert "Traceback" not in result.stderr
