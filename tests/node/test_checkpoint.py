"""Tests of the checkpoint error tree and the atomic file store."""

from __future__ import annotations

from pathlib import Path

import pytest

from numaplane.errors import NumaplaneError
from numaplane.node.checkpoint import (
    CheckpointDecodeError,
    CheckpointError,
    CheckpointRestoreError,
    CheckpointStore,
    CheckpointStoreError,
    CorruptCheckpointError,
)


def test_errors_are_numaplane_errors() -> None:
    """Callers can catch the whole tree as NumaplaneError."""
    assert issubclass(CheckpointError, NumaplaneError)
    for error in (CheckpointDecodeError, CheckpointStoreError, CorruptCheckpointError):
        assert issubclass(error, CheckpointError)


def test_restore_error_wording_and_source() -> None:
    """The message is upstream's wrapping; the hint follows a comma; the source is separate."""
    plain = CheckpointRestoreError("checkpoint is corrupted", source="/x/state")
    assert str(plain) == "could not restore state from checkpoint: checkpoint is corrupted"
    assert plain.cause == "checkpoint is corrupted"
    assert plain.source == "/x/state"
    hinted = CheckpointRestoreError("boom", hint="please drain")
    assert str(hinted) == "could not restore state from checkpoint: boom, please drain"


def test_corrupt_error_keeps_both_checksums() -> None:
    """The kubelet's message, with the stored and computed checksums kept for diagnostics."""
    error = CorruptCheckpointError(1, 2, source="f")
    assert str(error) == "checkpoint is corrupted"
    assert (error.actual, error.expected, error.source) == (1, 2, "f")


# -- store -----------------------------------------------------------------------------------


def test_store_round_trip_and_remove(tmp_path: Path) -> None:
    """What is written is read back; removal is idempotent; missing reads give None."""
    store = CheckpointStore(tmp_path / "state")
    assert store.read("cpu_manager_state") is None
    store.write("cpu_manager_state", b"one")
    store.write("cpu_manager_state", b"two")
    assert store.read("cpu_manager_state") == b"two"
    assert store.names() == ["cpu_manager_state"]
    store.remove("cpu_manager_state")
    store.remove("cpu_manager_state")
    assert store.read("cpu_manager_state") is None


def test_interrupted_write_keeps_old_file(tmp_path: Path) -> None:
    """A write that fails before the rename leaves the previous file and no temporary."""
    CheckpointStore(tmp_path).write("memory_manager_state", b"old")

    def failing_fsync(fd: int) -> None:
        raise OSError("disk on fire")

    store = CheckpointStore(tmp_path, _fsync=failing_fsync)
    with pytest.raises(CheckpointStoreError, match="disk on fire"):
        store.write("memory_manager_state", b"new")
    assert store.read("memory_manager_state") == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory_manager_state"]


@pytest.mark.parametrize("name", ["../x", "a/b", "", ".hidden"])
def test_store_rejects_path_like_names(tmp_path: Path, name: str) -> None:
    """Names are plain file names: no traversal out of the state directory."""
    with pytest.raises(CheckpointStoreError):
        CheckpointStore(tmp_path).write(name, b"x")
