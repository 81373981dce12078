"""Kubelet-compatible checkpoint files: the error tree and the atomic file store.

The resource managers persist their state as JSON files in the kubelet's formats (the codecs
are ``gocodec``/``gojson`` and each manager's ``checkpoint`` module); this module holds what
they share: the errors, worded as upstream, and ``CheckpointStore``, which writes a file
atomically (temporary file in the same directory, fsync, rename, fsync of the directory).
The rest of ``numaplane.node`` stays pure: what persists state (the managers'
``state_checkpoint`` backends, ``statedir``, ``podrecords``) goes through ``CheckpointStore``.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from numaplane.errors import NumaplaneError

# -- errors ----------------------------------------------------------------------------------


class CheckpointError(NumaplaneError):
    """A checkpoint cannot be read, verified, restored or written.

    ``source`` names the file (or other origin) when known; it is not part of the message,
    which keeps the kubelet's wording.
    """

    def __init__(self, message: str, *, source: str | None = None) -> None:
        super().__init__(message)
        self.source = source


class CheckpointNotFoundError(CheckpointError):
    """No checkpoint is stored under the name (upstream ``ErrCheckpointNotFound``)."""

    def __init__(self, *, source: str | None = None) -> None:
        super().__init__("checkpoint is not found", source=source)


class CorruptCheckpointError(CheckpointError):
    """The stored checksum does not match the content (upstream ``CorruptCheckpointError``)."""

    def __init__(self, actual: int, expected: int, *, source: str | None = None) -> None:
        super().__init__("checkpoint is corrupted", source=source)
        self.actual = actual
        self.expected = expected


class CheckpointDecodeError(CheckpointError):
    """The content is not JSON of the expected shape; the message is Go's ``encoding/json``'s."""


class CheckpointRestoreError(CheckpointError):
    """A manager could not restore its state: "could not restore state from checkpoint: …"."""

    def __init__(self, cause: str, *, hint: str | None = None, source: str | None = None) -> None:
        message = f"could not restore state from checkpoint: {cause}"
        if hint:
            message = f"{message}, {hint}"
        super().__init__(message, source=source)
        self.cause = cause


class CheckpointStoreError(CheckpointError):
    """The state directory could not be read or written."""


# -- the file store --------------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z0-9]+([._-][A-Za-z0-9]+)*\Z")


@dataclass(frozen=True)
class CheckpointStore:
    """Checkpoint files in one state directory (the kubelet's ``--root-dir`` layout).

    ``write`` is atomic: a reader sees the old file or the new one, never a mix, even if the
    process dies mid-write.
    """

    state_dir: Path
    _fsync: Callable[[int], None] = field(default=os.fsync, repr=False, compare=False)

    def path(self, name: str) -> Path:
        """Where checkpoint ``name`` lives; the name must be a plain file name."""
        if not _NAME.match(name):
            raise CheckpointStoreError(f"invalid checkpoint name {name!r}")
        return self.state_dir / name

    def read(self, name: str) -> bytes | None:
        """The checkpoint's bytes, or ``None`` if there is none."""
        path = self.path(name)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise CheckpointStoreError(f"read {path}: {exc}", source=str(path)) from exc

    def write(self, name: str, data: bytes) -> None:
        """Replace checkpoint ``name`` with ``data`` atomically and durably."""
        path = self.path(name)
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", dir=self.state_dir)
        except OSError as exc:
            raise CheckpointStoreError(f"write {path}: {exc}", source=str(path)) from exc
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                self._fsync(handle.fileno())
            os.replace(tmp_name, path)
        except BaseException as exc:
            Path(tmp_name).unlink(missing_ok=True)
            if isinstance(exc, OSError):
                raise CheckpointStoreError(f"write {path}: {exc}", source=str(path)) from exc
            raise
        self._sync_dir()

    def remove(self, name: str) -> None:
        """Delete checkpoint ``name``; a missing one is not an error."""
        path = self.path(name)
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            raise CheckpointStoreError(f"remove {path}: {exc}", source=str(path)) from exc

    def names(self) -> list[str]:
        """The checkpoints present, sorted (temporary files of unfinished writes excluded)."""
        if not self.state_dir.is_dir():
            return []
        return sorted(p.name for p in self.state_dir.iterdir() if _NAME.match(p.name))

    def _sync_dir(self) -> None:
        try:
            fd = os.open(self.state_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            return  # directories cannot be opened on every platform; the rename is done
        try:
            self._fsync(fd)
        except OSError:
            pass  # some filesystems refuse fsync on directories
        finally:
            os.close(fd)
