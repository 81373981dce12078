"""Kubelet-compatible checkpoint files: the error tree and the atomic file store.

The resource managers persist their state as JSON files in the kubelet's formats (the codecs
are ``gocodec``/``gojson`` and each manager's ``checkpoint`` module); this module holds what
they share: the errors, worded as upstream, and ``CheckpointStore``, which writes a file
atomically (temporary file in the same directory, fsync, rename, fsync of the directory),
and ``CheckpointedState``/``PolicyCheckpointedState``, the mechanics of the managers'
``state_checkpoint`` backends (an in-memory cache mirrored to one file after every change),
and the kubelet's container map, through which an old CPU manager checkpoint is migrated.
The rest of ``numaplane.node`` stays pure: what persists state (the managers'
``state_checkpoint`` backends, ``statedir``, ``podrecords``) goes through ``CheckpointStore``.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Generic, Self, TypeVar

from numaplane.api.pod import Pod
from numaplane.errors import NumaplaneError
from numaplane.gofmt import go_quote

# -- errors ----------------------------------------------------------------------------------


class CheckpointError(NumaplaneError):
    """A checkpoint cannot be read, verified, restored or written.

    ``source`` names the file (or other origin) when known; it is not part of the message,
    which keeps the kubelet's wording.
    """

    def __init__(self, message: str, *, source: str | None = None) -> None:
        super().__init__(message)
        self.source = source


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


# -- checkpointed manager state --------------------------------------------------------------

_C = TypeVar("_C")


class CheckpointedState(ABC, Generic[_C]):
    """An in-memory cache ``_C`` mirrored to checkpoint file ``checkpoint_name`` (upstream's
    ``stateCheckpoint``): reads go to the cache; each change updates the cache, then rewrites
    the whole file.

    A subclass names its file, encodes its cache (``_encode``) and calls ``_store_state`` after
    each change. A failed write is logged, under the subclass's module logger, and the change
    kept, as upstream: the cache stays authoritative and the next successful write catches the
    file up.
    """

    checkpoint_name: ClassVar[str]
    """The file's name in the state directory."""

    _write_failure_log: ClassVar[str] = "failed to store state to checkpoint %s: %s"
    """The ``%``-format (file, error) logged when a write after a change fails."""

    def __init__(self, store: CheckpointStore, cache: _C) -> None:
        """Mirror ``cache`` to ``store``; nothing is read or written yet."""
        self._store = store
        self._cache = cache

    @property
    def path(self) -> Path:
        """The checkpoint file."""
        return self._store.path(self.checkpoint_name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(path={str(self.path)!r})"

    @abstractmethod
    def _encode(self) -> bytes:
        """The checkpoint file's content for the current cache."""

    def _write(self) -> None:
        self._store.write(self.checkpoint_name, self._encode())

    def _store_state(self) -> None:
        try:
            self._write()
        except CheckpointError as exc:
            logging.getLogger(type(self).__module__).error(self._write_failure_log, self.path, exc)


class PolicyCheckpointedState(CheckpointedState[_C]):
    """A checkpointed state that belongs to one policy and is restored strictly (the CPU and
    memory managers): an unusable file is refused with the kubelet's advice (``_restore_hint``),
    and a missing one is a first start, written at once.
    """

    def __init__(self, store: CheckpointStore, policy_name: str, cache: _C) -> None:
        """Wrap ``cache``; use the subclass's ``open`` to restore from (or create) the file."""
        super().__init__(store, cache)
        self._policy_name = policy_name

    @property
    def policy_name(self) -> str:
        """The policy this state belongs to (written into every checkpoint)."""
        return self._policy_name

    @classmethod
    @abstractmethod
    def _restore_hint(cls, path: Path) -> str:
        """What the kubelet tells the operator when ``path`` is unusable."""

    @classmethod
    def _restore(
        cls,
        state_dir: Path,
        policy_name: str,
        restore: Callable[[bytes | None, str], _C],
    ) -> Self:
        """Open the state of ``policy_name`` in ``state_dir`` (upstream ``NewCheckpointState``).

        ``restore`` turns the file's bytes (``None``: no file) and its path into the cache, and
        raises ``CheckpointError`` on an unusable file. Every failure, the initial write's
        included, is raised as ``CheckpointRestoreError`` with the hint and ``source`` = the file.
        """
        store = CheckpointStore(state_dir)
        path = store.path(cls.checkpoint_name)
        try:
            data = store.read(cls.checkpoint_name)
            opened = cls(store, policy_name, restore(data, str(path)))
            if data is None:
                opened._write()
        except CheckpointError as exc:
            # A codec's restore error is rewrapped from its cause, so that every refusal carries
            # this manager's hint exactly once.
            cause = exc.cause if isinstance(exc, CheckpointRestoreError) else str(exc)
            raise CheckpointRestoreError(
                cause, hint=cls._restore_hint(path), source=str(path)
            ) from exc
        return opened


def drain_hint(manager: str, path: str) -> str:
    """The kubelet's advice when a manager's checkpoint is unusable (``manager``: "CPU manager",
    "memory manager"), naming the file as Go's ``%q`` does."""
    return (
        f"please drain this node and delete the {manager} checkpoint file "
        f"{go_quote(path)} before restarting Kubelet"
    )


# -- the container map -----------------------------------------------------------------------

ContainerMap = Mapping[str, tuple[str, str]]
"""The kubelet's ``containermap.ContainerMap``: runtime container ID → (pod UID, container name)."""


def container_map(pods: Iterable[Pod]) -> dict[str, tuple[str, str]]:
    """The container map the kubelet builds from its runtime at start, from the pods' status.

    Upstream (``buildContainerMapAndRunningSetFromRuntime``) maps every container the runtime
    knows; numaplane has no runtime to ask, so the IDs are those the pods' status reports
    (``Pod.container_ids``), keyed without their ``<type>://`` prefix as the runtime names them.
    This is the map a CPU manager checkpoint of the V1 layout is migrated through.
    """
    result: dict[str, tuple[str, str]] = {}
    for pod in pods:
        for name, container_id in pod.container_ids.items():
            result[container_id.partition("://")[2] or container_id] = (pod.uid, name)
    return result
