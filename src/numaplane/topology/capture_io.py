"""Bounded reading of machine captures: the small-file readers of discovery and their limits.

A capture is user input (a directory, a gathered tarball, an XML export), and a hostile or broken
one can hold a huge file: a small ``.tar.bz2`` may expand to gigabytes. Nothing here reads more
than it must, and every limit is checked before the bytes or objects it guards exist:

- one file of a sysfs tree: ``MAX_FILE_BYTES`` (the largest file discovery reads, a node's
  ``meminfo`` or ``distance``, is a few KiB even on the largest machines);
- all files read by one discovery: ``MAX_READ_BYTES``;
- CPU ids in CPU lists, masks and directory names: at most ``MAX_CPU_ID`` (as synthetic shapes);
- a tarball: ``MAX_MEMBERS`` members, ``MAX_MEMBER_BYTES`` per member, ``MAX_ARCHIVE_BYTES``
  of decompressed archive in all (headers included);
- an hwloc XML export: ``MAX_XML_BYTES``.

A limit hit raises ``CaptureLimitError`` saying which limit, and where.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Protocol

from numaplane.topology.cpuset import CPUSet, CPUSetParseError
from numaplane.topology.errors import CaptureLimitError
from numaplane.topology.synthetic import MAX_CPUS

MAX_FILE_BYTES = 1 << 20
MAX_READ_BYTES = 64 << 20
MAX_CPU_ID = MAX_CPUS - 1
MAX_MEMBERS = 200_000
MAX_MEMBER_BYTES = 8 << 20
MAX_ARCHIVE_BYTES = 128 << 20
MAX_XML_BYTES = 64 << 20

_NUMBER = re.compile(r"[0-9]+")


def _mib(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n} bytes"


class _ReadBudget:
    """What one discovery may still read in all; shared by every read it makes."""

    def __init__(self, limit: int) -> None:
        self.left = limit
        self.limit = limit

    def charge(self, path: Path, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise CaptureLimitError(
                str(path),
                f"the capture's files add up to more than the limit of {_mib(self.limit)} "
                "read in all",
            )


_BUDGET: ContextVar[_ReadBudget | None] = ContextVar("numaplane_capture_budget", default=None)


@contextmanager
def read_budget(limit: int | None = None) -> Iterator[None]:
    """Within the block, the small-file readers read at most ``limit`` bytes in all.

    ``None`` means ``MAX_READ_BYTES``.
    """
    token = _BUDGET.set(_ReadBudget(MAX_READ_BYTES if limit is None else limit))
    try:
        yield
    finally:
        _BUDGET.reset(token)


def read_text(path: Path) -> str | None:
    """The stripped text of a file, or ``None`` when it cannot be read.

    Raises ``CaptureLimitError`` (naming the file) when it holds more than ``MAX_FILE_BYTES``
    or the discovery's budget is spent; only ``MAX_FILE_BYTES + 1`` bytes are ever read.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except (OSError, ValueError):
        return None
    if len(data) > MAX_FILE_BYTES:
        raise CaptureLimitError(
            str(path), f"larger than the limit of {_mib(MAX_FILE_BYTES)} for one capture file"
        )
    budget = _BUDGET.get()
    if budget is not None:
        budget.charge(path, len(data))
    try:
        return data.decode("utf-8", errors="strict").strip()
    except UnicodeDecodeError:
        return None


def read_int(path: Path) -> int | None:
    """A file holding one integer, or ``None``."""
    text = read_text(path)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:  # not a number, or more digits than Python converts
        return None


def check_cpu_id(cpu_id: int, where: str) -> None:
    """``CaptureLimitError`` when ``cpu_id`` is above ``MAX_CPU_ID``."""
    if cpu_id > MAX_CPU_ID:
        raise CaptureLimitError(where, f"CPU id {cpu_id} is above the limit of {MAX_CPU_ID}")


def read_cpu_list(path: Path) -> CPUSet | None:
    """A file in the kernel's list syntax (``0-3,8``), or ``None``.

    The ids are checked before the ranges are expanded (``0-4294967295`` names 4 billion CPUs).
    """
    text = read_text(path)
    if text is None:
        return None
    for number in _NUMBER.findall(text):
        if len(number) > 20:
            raise CaptureLimitError(
                str(path), f"a CPU id of {len(number)} digits is above the limit of {MAX_CPU_ID}"
            )
        check_cpu_id(int(number), str(path))
    try:
        return CPUSet.parse(text)
    except CPUSetParseError:
        return None


class CPUIdLimitError(ValueError):
    """A CPU mask sets a bit above ``MAX_CPU_ID``."""


def parse_cpu_mask(text: str) -> CPUSet:
    """The kernel's hex mask syntax (``00000000,00000101``: 32-bit words, most significant first).

    Raises ``ValueError`` on anything else, ``CPUIdLimitError`` (a ``ValueError``) when a set bit
    is above ``MAX_CPU_ID``.
    """
    words = text.strip().split(",")
    value = 0
    for word in words:
        value = (value << 32) | (int(word, 16) if word else 0)
    if value.bit_length() > MAX_CPU_ID + 1:
        raise CPUIdLimitError(f"CPU id {value.bit_length() - 1} is above the limit of {MAX_CPU_ID}")
    return CPUSet(i for i in range(value.bit_length()) if value >> i & 1)


def cpu_file(directory: Path, list_name: str, mask_name: str) -> CPUSet | None:
    """The CPU set of ``directory/list_name`` (list syntax), else of ``mask_name`` (mask)."""
    listed = read_cpu_list(directory / list_name)
    if listed is not None:
        return listed
    text = read_text(directory / mask_name)
    if text is None:
        return None
    try:
        return parse_cpu_mask(text)
    except CPUIdLimitError as err:
        # A set bit above the limit is a limit hit, not a malformed file to pass over.
        raise CaptureLimitError(str(directory / mask_name), str(err)) from None
    except ValueError:
        return None


def entries(directory: Path) -> Iterable[Path]:
    """The entries of a directory (none when it cannot be listed)."""
    try:
        return list(directory.iterdir())
    except OSError:
        return []


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class CappedReader:
    """A read-only stream that refuses to yield more than ``limit`` bytes in all.

    Wraps a decompressed archive: the archive reader never holds or skips past more than the
    limit, whatever the headers claim.
    """

    def __init__(self, raw: _Readable, limit: int, source: str) -> None:
        self._raw = raw
        self._left = limit
        self._limit = limit
        self._source = source

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes; ``CaptureLimitError`` once the limit is passed."""
        want = self._left + 1 if size is None or size < 0 else min(size, self._left + 1)
        data = self._raw.read(want)
        self._left -= len(data)
        if self._left < 0:
            raise CaptureLimitError(
                self._source,
                f"the archive expands to more than the limit of {_mib(self._limit)}",
            )
        return data
