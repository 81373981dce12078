"""Resolve a ``--machine`` value to a ``Machine``.

Resolution order for a spec string:

1. ``/`` (the default) or any existing path: a directory is a sysfs root (a directory holding
   ``sys/``, a ``sys`` directory itself, or an unpacked capture with one top directory); a
   ``.tar.bz2``/``.tar.gz``/``.tgz``/``.tar.xz``/``.tar`` file is an ``hwloc-gather-topology``
   tarball, unpacked into a temporary directory; a ``.xml`` file is an hwloc XML export;
2. a string containing ``=`` is a synthetic shape (see ``numaplane.topology.synthetic``);
3. otherwise a preset name (see ``numaplane.topology.presets``);
4. otherwise ``UnknownMachineError``.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import posixpath
import re
import shutil
import tarfile
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from numaplane.topology import capture_io, presets
from numaplane.topology.errors import (
    CaptureLimitError,
    SysfsError,
    TarballError,
    UnknownMachineError,
)
from numaplane.topology.hwloc_xml import read_hwloc_xml
from numaplane.topology.model import Machine
from numaplane.topology.synthetic import parse_synthetic
from numaplane.topology.sysfs import read_sysfs

TARBALL_SUFFIXES = (".tar.bz2", ".tar.gz", ".tgz", ".tar.xz", ".tar")
HOST = "/"


def load_machine(spec: str) -> Machine:
    """The machine a ``--machine`` value names (see the module doc for the order).

    Raises a ``MachineInputError`` (an ``InputError``) naming ``spec`` on any bad input.
    """
    text = spec.strip()
    if text in ("", HOST):
        return read_sysfs(Path(HOST), name=os.uname().nodename or "localhost", source=HOST)
    # os.path, not pathlib: "~nobody-here" stays as written instead of raising, and a name too
    # long or holding NUL is no existing path instead of an OSError. expanduser itself raises on
    # "~user" holding NUL (the password-database lookup), so such text is taken as written.
    path = Path(text if "\x00" in text else os.path.expanduser(text))
    if os.path.exists(path):
        return load_path(path, source=text)
    if "=" in text:
        return parse_synthetic(text)
    if text in presets.PRESETS:
        return presets.preset(text)
    if os.sep in text or text.endswith((".xml", *TARBALL_SUFFIXES)):
        raise UnknownMachineError(text, "no such file or directory")
    raise UnknownMachineError(
        text,
        "not an existing path, a synthetic shape (key=value,...) or a preset "
        f"(known presets: {', '.join(presets.PRESETS)})",
    )


def load_path(path: Path, *, source: str | None = None) -> Machine:
    """Load a sysfs directory, a gathered tarball or an hwloc XML file."""
    label = source if source is not None else str(path)
    name = _stem(path)
    if path.is_dir():
        return read_sysfs(find_sysfs_root(path, label), name=name, source=label)
    lowered = path.name.lower()
    if lowered.endswith(TARBALL_SUFFIXES):
        with unpacked_tarball(path, label) as root:
            return read_sysfs(root, name=name, source=label)
    if lowered.endswith(".xml"):
        return read_hwloc_xml(path, name=name, source=label)
    raise UnknownMachineError(
        label, "unrecognised file type (expected a directory, .tar.bz2/.tar.gz/.tar or .xml)"
    )


def find_sysfs_root(path: Path, label: str) -> Path:
    """The directory holding ``sys/devices/system/cpu`` for a user-given directory."""
    if (path / "sys" / "devices" / "system" / "cpu").is_dir():
        return path
    if (path / "devices" / "system" / "cpu").is_dir() and path.name == "sys":
        return path.parent
    try:
        subdirs = [p for p in path.iterdir() if p.is_dir()]
    except OSError as exc:
        raise SysfsError(label, f"cannot list directory: {exc.strerror or exc}") from None
    candidates = [p for p in subdirs if (p / "sys" / "devices" / "system" / "cpu").is_dir()]
    if len(candidates) == 1:
        return candidates[0]
    raise SysfsError(label, "not a sysfs root (no sys/devices/system/cpu inside)")


@contextmanager
def unpacked_tarball(path: Path, label: str | None = None) -> Iterator[Path]:
    """Unpack a gathered tarball into a temporary directory; yield its sysfs root; clean up.

    Members escaping the directory, device files and links pointing outside are skipped, and
    absolute links are re-rooted inside the capture. The archive is bounded (members, bytes per
    member, decompressed bytes in all: see ``capture_io``); ``CaptureLimitError`` names the
    limit hit.
    """
    source = label if label is not None else str(path)
    tmp = Path(tempfile.mkdtemp(prefix="numaplane-topology-"))
    try:
        _extract(path, tmp, source)
        yield find_sysfs_root(tmp, source)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _extract(path: Path, dest: Path, source: str) -> None:
    try:
        with _decompressed(path) as raw:
            # Streamed ("r|"): the archive is read once, front to back, through the cap, so
            # neither a huge member nor a huge header is ever held or skipped past the limit.
            stream = capture_io.CappedReader(raw, capture_io.MAX_ARCHIVE_BYTES, source)
            with tarfile.open(fileobj=stream, mode="r|") as archive:  # type: ignore[call-overload]
                _extract_members(archive, dest, source)
    except CaptureLimitError:
        raise
    except tarfile.ReadError:
        raise TarballError(
            source, "cannot unpack: not a tar archive (plain, gzip, bzip2 or xz) or corrupt"
        ) from None
    except (tarfile.TarError, EOFError, OSError, ValueError, lzma.LZMAError, zlib.error) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise TarballError(source, f"cannot unpack tar archive: {reason}") from None


def _extract_members(archive: tarfile.TarFile, dest: Path, source: str) -> None:
    links: list[tuple[Path, str]] = []
    for count, member in enumerate(archive, start=1):
        if count > capture_io.MAX_MEMBERS:
            raise CaptureLimitError(
                source,
                f"the archive holds more than the limit of {capture_io.MAX_MEMBERS} members",
            )
        if member.size > capture_io.MAX_MEMBER_BYTES:
            raise CaptureLimitError(
                source,
                f"member {member.name!r} ({member.size} bytes) is larger than the limit of "
                f"{capture_io.MAX_MEMBER_BYTES >> 20} MiB for one capture file",
            )
        rel = _safe_name(member.name)
        if rel is None:
            continue
        target = dest / rel
        if member.isdir():
            target.mkdir(parents=True, exist_ok=True)
        elif not _wanted(rel, member.issym()):
            continue
        elif member.isfile():
            target.parent.mkdir(parents=True, exist_ok=True)
            extracted = archive.extractfile(member)
            if extracted is not None:
                with extracted, open(target, "wb") as out:
                    shutil.copyfileobj(extracted, out)
        elif member.issym():
            links.append((Path(rel), member.linkname))
        # hard links, devices, FIFOs: a capture's topology never needs them
    for rel_link, link_target in links:
        _make_link(dest, rel_link, link_target)


@contextmanager
def _decompressed(path: Path) -> Iterator[io.BufferedIOBase]:
    """The archive's bytes, decompressed by what its first bytes say (plain tar otherwise)."""
    with open(path, "rb") as probe:
        head = probe.read(6)
    with ExitStack() as stack:
        raw: io.BufferedIOBase
        if head.startswith(b"BZh"):
            raw = stack.enter_context(bz2.BZ2File(path))
        elif head.startswith(b"\x1f\x8b"):
            raw = stack.enter_context(gzip.GzipFile(path))
        elif head.startswith(b"\xfd7zXZ\x00"):
            raw = stack.enter_context(lzma.LZMAFile(path))
        else:
            raw = stack.enter_context(open(path, "rb"))
        yield raw


# Captures hold thousands of files discovery never reads; unpacking only the ones it reads
# (by base name) keeps loading fast. Keep in step with ``sysfs.read_sysfs``.
_WANTED_FILES = frozenset(
    {
        "core_id",
        "physical_package_id",
        "die_id",
        "online",
        "possible",
        "level",
        "id",
        "type",
        "shared_cpu_list",
        "shared_cpu_map",
        "cpulist",
        "cpumap",
        "meminfo",
        "distance",
        "nr_hugepages",
        "free_hugepages",
        "numa_node",
        "vendor",
        "device",
        "class",
        "cpuinfo",
    }
)
_WANTED_LINK = re.compile(r"driver|physfn|virtfn\d+|node\d+|cpu\d+|\d{4}:[0-9a-f]{2}:.*")


def _wanted(rel: str, is_link: bool) -> bool:
    base = posixpath.basename(rel)
    if is_link:
        return _WANTED_LINK.fullmatch(base) is not None
    return base in _WANTED_FILES


def _safe_name(name: str) -> str | None:
    norm = posixpath.normpath(name.lstrip("/"))
    if norm in (".", "") or norm.startswith("../") or norm == "..":
        return None
    return norm


def _make_link(dest: Path, rel_link: Path, link_target: str) -> None:
    top = rel_link.parts[0] if len(rel_link.parts) > 1 else ""
    if link_target.startswith("/"):
        # Absolute links in a capture mean the captured machine's root: the top directory.
        resolved = posixpath.normpath(posixpath.join(top, link_target.lstrip("/")))
    else:
        resolved = posixpath.normpath(posixpath.join(str(rel_link.parent), link_target))
    if resolved.startswith("../") or resolved == "..":
        return
    link = dest / rel_link
    link.parent.mkdir(parents=True, exist_ok=True)
    relative = os.path.relpath(dest / resolved, link.parent)
    if not link.exists() and not link.is_symlink():
        os.symlink(relative, link)


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (*TARBALL_SUFFIXES, ".xml"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name or str(path)
