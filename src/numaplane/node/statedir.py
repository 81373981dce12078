"""A node's state directory: the managers' checkpoints and the admitted pods, kept together.

(Over 400 lines: the commit protocol and the files it commits are one correctness argument.)

The directory holds the kubelet-format files ``cpu_manager_state``, ``memory_manager_state`` and
``kubelet_internal_checkpoint`` side by side (the kubelet keeps the last one in its
``device-plugins`` subdirectory; numaplane keeps one flat directory per node), and
``numaplane_pods.json``, the pods they belong to.

Two ways to use it:

- ``open_node_states``: checkpointed states that rewrite their file after every change, as the
  kubelet's do (the agent, a long-running node).
- ``StateFiles``: a command that changes several pods at once (``numaplane admit``/``release``)
  reads every file into memory (holding the directory ``locked``), changes the node there, and
  writes every file back together: ``commit_files(encode_states(...))``.

A commit replaces the files as one: each new file is written beside its target
(``.NAME.numaplane-new``, fsynced), then the journal ``.numaplane-commit`` naming them is
renamed into place (the commit point), then each new file is renamed over its target and the
journal removed. ``recover`` (run before any reading) finishes a commit whose journal exists, by
renaming the new files still there, and otherwise deletes new files left by an unfinished one.
Why that is whole after a crash at any point: before the journal exists no target has changed,
and leftovers are discarded; once it exists every new file is complete on disk, a rename is
atomic, and a new file that is gone has already replaced its target, so finishing is
idempotent and yields exactly the new set. ``recover`` itself only takes those same steps.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from numaplane.api.pod import Pod
from numaplane.errors import InputError
from numaplane.node.admission import NodeStates
from numaplane.node.checkpoint import CheckpointError, CheckpointRestoreError, ContainerMap
from numaplane.node.cpumanager import checkpoint as cpu_codec
from numaplane.node.cpumanager import state as cpu_state
from numaplane.node.cpumanager.state_checkpoint import CheckpointState as CPUCheckpointState
from numaplane.node.cpumanager.state_checkpoint import restore_hint as cpu_restore_hint
from numaplane.node.devicemanager import checkpoint as device_codec
from numaplane.node.devicemanager import state as device_state
from numaplane.node.devicemanager import state_checkpoint as device_checkpoint
from numaplane.node.memorymanager import checkpoint as memory_codec
from numaplane.node.memorymanager import state as memory_state
from numaplane.node.memorymanager import state_checkpoint as memory_checkpoint
from numaplane.node.podrecords import POD_RECORDS_FILE, decode_pod_records, encode_pod_records

CPU_FILE = cpu_codec.CPU_MANAGER_CHECKPOINT
MEMORY_FILE = memory_codec.MEMORY_MANAGER_CHECKPOINT
DEVICE_FILE = device_codec.DEVICE_MANAGER_CHECKPOINT
STATE_FILES = (CPU_FILE, MEMORY_FILE, DEVICE_FILE, POD_RECORDS_FILE)
"""The files a commit writes, together."""

JOURNAL = ".numaplane-commit"
_NEW_SUFFIX = ".numaplane-new"
MAX_STATE_FILE_BYTES = 256 << 20
"""A state file larger than this is refused unread (a node's real ones are kilobytes)."""

# What a codec raises, instead of a ``CheckpointError``, for a payload it did not anticipate:
# at this boundary, damage to the file is reported as such rather than as a crash.
_DECODE_FAILURES = (
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    AttributeError,
    RecursionError,
    AssertionError,  # the CPU codec asserts on a ``null`` document
)


_S = TypeVar("_S")


class StateDirError(InputError):
    """The state directory cannot be created, read or written; ``source`` is its path."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(str(path), reason)
        self.path = path


def ensure_writable_dir(path: Path) -> None:
    """Create ``path`` if missing and prove a file can be created in it.

    A real probe rather than ``os.access``: permissions are not the only way to be refused
    (read-only mounts, root on NFS), and root passes every ``os.access`` check.
    """
    if path.exists() and not path.is_dir():
        raise StateDirError(path, "state directory is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StateDirError(path, f"cannot create state directory: {exc.strerror or exc}") from exc
    try:
        fd, probe = tempfile.mkstemp(prefix=".numaplane-probe.", dir=path)
    except OSError as exc:
        raise StateDirError(
            path, f"state directory is not writable: {exc.strerror or exc}"
        ) from exc
    os.close(fd)
    Path(probe).unlink(missing_ok=True)


def open_node_states(
    state_dir: Path,
    cpu_policy: str,
    memory_policy: str,
    *,
    initial_containers: ContainerMap | None = None,
) -> NodeStates:
    """The checkpointed states of ``state_dir`` (created if missing) for the given policies.

    ``initial_containers`` is the kubelet's container map (``checkpoint.container_map``), through
    which a CPU manager checkpoint of the V1 layout is migrated.

    An interrupted commit is finished first (``recover``). Raises ``StateDirError`` when the
    directory cannot be created or written, and the managers' ``CheckpointRestoreError`` (with
    the file in ``source``) when a CPU or memory checkpoint is corrupt or belongs to another
    policy. A bad device checkpoint is logged and ignored, as the kubelet does.
    """
    ensure_writable_dir(state_dir)
    recover(state_dir)
    return NodeStates(
        cpu=CPUCheckpointState.open(state_dir, cpu_policy, initial_containers=initial_containers),
        memory=memory_checkpoint.CheckpointState.open(state_dir, memory_policy),
        devices=device_checkpoint.CheckpointState.open(state_dir),
    )


# -- the steps that change the directory -------------------------------------------------------


class Disk:
    """Every change a commit or a recovery makes to a directory, one call per step.

    One object, so that tests can interrupt a commit at any step (``DISK``).
    """

    def write(self, path: Path, data: bytes) -> None:
        """Create or truncate ``path`` with ``data``, durably (fsync)."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)

    def rename(self, source: Path, target: Path) -> None:
        """Atomically replace ``target`` with ``source``."""
        os.replace(source, target)

    def remove(self, path: Path) -> None:
        """Delete ``path``; a missing one is no error."""
        path.unlink(missing_ok=True)

    def sync_dir(self, path: Path) -> None:
        """Make the directory's entries (renames, new files) durable, where the OS can."""
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            return
        try:
            os.fsync(fd)
        except OSError:
            pass  # some filesystems refuse fsync on directories
        finally:
            os.close(fd)


DISK = Disk()


def _new_path(state_dir: Path, name: str) -> Path:
    return state_dir / f".{name}{_NEW_SUFFIX}"


def commit_files(state_dir: Path, files: Mapping[str, bytes]) -> None:
    """Replace ``files`` (names in ``STATE_FILES``) in ``state_dir`` all together.

    Raises ``StateDirError`` if it cannot; before the commit point nothing has changed, after
    it the next ``recover`` completes the change.
    """
    names = sorted(files)
    unknown = set(names) - set(STATE_FILES)
    if unknown:
        raise ValueError(f"not state files: {sorted(unknown)}")
    journal, journal_new = state_dir / JOURNAL, _new_path(state_dir, JOURNAL)
    written: list[Path] = []
    try:
        for name in names:
            written.append(_new_path(state_dir, name))
            DISK.write(written[-1], files[name])
        written.append(journal_new)
        DISK.write(journal_new, json.dumps(names).encode())
        DISK.sync_dir(state_dir)
        DISK.rename(journal_new, journal)  # the commit point
    except OSError as exc:
        for path in written:
            with contextlib.suppress(OSError):
                DISK.remove(path)
        raise StateDirError(state_dir, f"cannot write the state: {exc.strerror or exc}") from exc
    DISK.sync_dir(state_dir)
    _finish(state_dir, names)


def _finish(state_dir: Path, names: Sequence[str]) -> None:
    try:
        for name in names:
            new = _new_path(state_dir, name)
            if new.exists():
                DISK.rename(new, state_dir / name)
        DISK.sync_dir(state_dir)
        DISK.remove(state_dir / JOURNAL)
        DISK.sync_dir(state_dir)
    except OSError as exc:
        raise StateDirError(
            state_dir,
            f"cannot finish writing the state ({exc.strerror or exc}); "
            "the next numaplane command on this directory completes it",
        ) from exc


def recover(state_dir: Path) -> None:
    """Finish or discard a commit a crash interrupted (see the module doc); a no-op otherwise."""
    if not state_dir.is_dir():
        return
    journal = state_dir / JOURNAL
    if journal.exists():
        try:
            names = json.loads(journal.read_bytes())
        except (OSError, ValueError) as exc:
            raise InputError(str(journal), f"unreadable commit journal: {exc}") from exc
        if not isinstance(names, list) or not set(names) <= set(STATE_FILES):
            raise InputError(str(journal), "not a numaplane commit journal")
        _finish(state_dir, names)
    leftovers = [_new_path(state_dir, name) for name in (*STATE_FILES, JOURNAL)]
    try:
        for path in leftovers:
            if path.exists():
                DISK.remove(path)
    except OSError as exc:
        raise StateDirError(
            state_dir, f"cannot remove an unfinished write: {exc.strerror or exc}"
        ) from exc


@contextlib.contextmanager
def locked(state_dir: Path) -> Iterator[None]:
    """Hold ``state_dir`` for this process; ``StateDirError`` if another process holds it.

    An advisory ``flock`` on the directory itself: no lock file to leave behind, and the lock
    goes when the process ends, however it ends.
    """
    try:
        fd = os.open(state_dir, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise StateDirError(state_dir, f"cannot open the state directory: {exc.strerror}") from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise StateDirError(
                state_dir, "the state directory is in use by another numaplane process"
            ) from exc
        yield
    finally:
        os.close(fd)


# -- a whole directory, in memory ------------------------------------------------------------


def _read(state_dir: Path, name: str) -> bytes | None:
    path = state_dir / name
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_STATE_FILE_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(str(path), f"cannot read the file: {exc.strerror or exc}") from exc
    if len(data) > MAX_STATE_FILE_BYTES:
        raise InputError(str(path), f"larger than {MAX_STATE_FILE_BYTES >> 20} MiB")
    return data


@dataclass(frozen=True)
class StateFiles:
    """The bytes of a state directory's files (``None``: absent), as read at one moment."""

    state_dir: Path
    data: Mapping[str, bytes | None]

    @classmethod
    def read(cls, state_dir: Path) -> StateFiles:
        """Read every state file of ``state_dir`` (finishing an interrupted commit first)."""
        recover(state_dir)
        return cls(state_dir, {name: _read(state_dir, name) for name in STATE_FILES})

    def path(self, name: str) -> str:
        """A file's path, for messages."""
        return str(self.state_dir / name)

    def pods(self) -> list[Pod]:
        """The recorded pods, in admission order."""
        return decode_pod_records(self.data[POD_RECORDS_FILE], self.path(POD_RECORDS_FILE))

    def node_states(
        self,
        cpu_policy: str,
        memory_policy: str,
        *,
        only: str | None = None,
        containers: ContainerMap | None = None,
    ) -> NodeStates:
        """Fresh in-memory states restored from the files (every call restores anew).

        ``only`` restores just that file and leaves the other states empty: to find which file
        a node refuses. ``containers`` is the kubelet's container map, through which a CPU
        checkpoint of the V1 layout is migrated. Errors are the kubelet's restore errors,
        ``source`` the file.
        """
        states = NodeStates()
        if only in (None, CPU_FILE):
            states.cpu = self._restore(
                CPU_FILE, lambda data, src: _cpu(data, src, cpu_policy, containers)
            )
        if only in (None, MEMORY_FILE):
            states.memory = self._restore(
                MEMORY_FILE, lambda data, src: _memory(data, src, memory_policy)
            )
        if only in (None, DEVICE_FILE):
            states.devices = self._restore(DEVICE_FILE, _devices)
        return states

    def _restore(self, name: str, restore: Callable[[bytes | None, str], _S]) -> _S:
        path = self.path(name)
        try:
            if name == CPU_FILE:
                _check_cpu_ranges(self.data[name])
            return restore(self.data[name], path)
        except CheckpointError as exc:
            if name == DEVICE_FILE:
                exc.source = exc.source or path
                raise
            # As the kubelet's restore: every refusal carries the manager's advice once.
            cause = exc.cause if isinstance(exc, CheckpointRestoreError) else str(exc)
            raise CheckpointRestoreError(cause, hint=_hint(name, path), source=path) from exc
        except _DECODE_FAILURES as exc:
            # A payload the codec did not anticipate: refused as damage, not a crash.
            raise CheckpointRestoreError(
                f"unreadable checkpoint ({type(exc).__name__}: {exc})",
                hint=_hint(name, path) if name != DEVICE_FILE else None,
                source=path,
            ) from exc


MAX_CPU_RANGE = 1 << 16
"""The widest CPU range a checkpoint may hold (the largest machine numaplane models)."""

_RANGE = re.compile(r"\s*\+?(\d+)\s*-\s*\+?(\d+)\s*")


def _check_cpu_ranges(data: bytes | None) -> None:
    """Refuse a CPU set such as ``0-9223372036854775807`` before it is expanded CPU by CPU
    (which would take all memory): every string value of the file is looked at."""
    if data is None:
        return
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        return  # the codec says what is wrong with it
    pending = [document]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, str):
            for item in value.split(","):
                match = _RANGE.fullmatch(item)
                if match and int(match[2]) - int(match[1]) >= MAX_CPU_RANGE:
                    raise CheckpointError(
                        f"CPU range {item.strip()!r} spans more than {MAX_CPU_RANGE} CPUs"
                    )


def _hint(name: str, path: str) -> str:
    if name == CPU_FILE:
        return cpu_restore_hint(Path(path))
    return memory_checkpoint.restore_hint(Path(path))


def _cpu(
    data: bytes | None, source: str, policy: str, containers: ContainerMap | None
) -> cpu_state.InMemoryState:
    restored = cpu_codec.restore_state(
        data, policy_name=policy, source=source, containers=containers
    )
    return cpu_state.InMemoryState(dict(restored.assignments), restored.default_cpu_set)


def _memory(data: bytes | None, source: str, policy: str) -> memory_state.InMemoryState:
    restored = memory_codec.restore_state(data, policy_name=policy, source=source)
    return memory_state.InMemoryState(
        memory_checkpoint.machine_state_of(restored.machine_state),
        memory_checkpoint.assignments_of(restored.assignments),
    )


def _devices(data: bytes | None, source: str) -> device_state.InMemoryState:
    # Stricter than the kubelet, which forgets a damaged device checkpoint and goes on: the
    # recorded pods would keep devices the node no longer counts as theirs.
    if data is None:
        return device_state.InMemoryState()
    checkpoint = device_codec.load_checkpoint(data, source=source)
    # An entry naming no device holds nothing; the in-memory state's bookkeeping cannot
    # release two of them for one resource (KeyError), so they are not restored.
    entries = tuple(e for e in checkpoint.pod_device_entries or () if any(e.device_ids.values()))
    return device_checkpoint.state_of(
        device_codec.DeviceManagerCheckpoint(entries, checkpoint.registered_devices)
    )


def device_checkpoint_of(states: NodeStates) -> device_codec.DeviceManagerCheckpoint:
    """The device manager's checkpoint of ``states``, with the checksum the kubelet writes."""
    unsummed = device_checkpoint.checkpoint_of(
        states.devices.entries(), states.devices.registered_devices()
    )
    return device_codec.DeviceManagerCheckpoint(
        unsummed.pod_device_entries,
        unsummed.registered_devices,
        checksum=unsummed.compute_checksum(),
    )


def encode_states(
    states: NodeStates, pods: Sequence[Pod], cpu_policy: str, memory_policy: str
) -> dict[str, bytes]:
    """Every state file's content for ``states`` and the admitted ``pods``."""
    cpu = cpu_codec.checkpoint_of(
        cpu_policy, states.cpu.get_default_cpu_set(), states.cpu.get_cpu_assignments()
    )
    memory = memory_checkpoint.checkpoint_of(
        memory_policy, states.memory.get_machine_state(), states.memory.get_memory_assignments()
    )
    devices = device_checkpoint_of(states)
    return {
        CPU_FILE: cpu.to_bytes(),
        MEMORY_FILE: memory.to_bytes(1),
        DEVICE_FILE: devices.to_bytes(),
        POD_RECORDS_FILE: encode_pod_records(pods),
    }


__all__ = [
    "DISK",
    "STATE_FILES",
    "Disk",
    "StateDirError",
    "StateFiles",
    "commit_files",
    "device_checkpoint_of",
    "encode_states",
    "ensure_writable_dir",
    "locked",
    "open_node_states",
    "recover",
]
