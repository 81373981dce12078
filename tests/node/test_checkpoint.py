"""Tests of the checkpoint error tree, the atomic file store and the checkpointed-state base."""

from __future__ import annotations

import logging
from dataclasses import dataclass
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
    PolicyCheckpointedState,
)
from tests.node.checkpoint_helpers import full_disk_store, refuse_writes


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


# -- checkpointed state ----------------------------------------------------------------------


class _ListState(PolicyCheckpointedState[list[str]]):
    """A toy backend: the file is ``policy:item,item``."""

    checkpoint_name = "toy_state"

    @classmethod
    def open(cls, state_dir: Path, policy_name: str) -> _ListState:
        def restore(data: bytes | None, source: str) -> list[str]:
            if data is None:
                return []
            policy, _, items = data.decode().partition(":")
            if policy != policy_name:
                raise CheckpointRestoreError(f"policy {policy}", source=source)
            if items == "?":
                raise CheckpointDecodeError("bad items")
            return items.split(",") if items else []

        return cls._restore(state_dir, policy_name, restore)

    @classmethod
    def _restore_hint(cls, path: Path) -> str:
        return f"delete {path.name}"

    def _encode(self) -> bytes:
        return f"{self.policy_name}:{','.join(self._cache)}".encode()

    def add(self, item: str) -> None:
        self._cache.append(item)
        self._store_state()

    def items(self) -> list[str]:
        return list(self._cache)


def test_state_is_written_at_first_start_and_after_each_change(tmp_path: Path) -> None:
    """A missing file is created at once; each change rewrites it; reopening restores it."""
    state = _ListState.open(tmp_path, "p")
    assert (tmp_path / "toy_state").read_bytes() == b"p:"
    assert (state.path, state.policy_name) == (tmp_path / "toy_state", "p")
    state.add("a")
    state.add("b")
    assert (tmp_path / "toy_state").read_bytes() == b"p:a,b"
    assert _ListState.open(tmp_path, "p").items() == ["a", "b"]
    assert repr(state) == f"_ListState(path={str(tmp_path / 'toy_state')!r})"


@dataclass(frozen=True)
class OpenFailureCase:
    name: str
    content: bytes | None
    cause: str


OPEN_FAILURES = (
    OpenFailureCase("restore error is rewrapped with the hint once", b"q:a", "policy q"),
    OpenFailureCase("other checkpoint error is wrapped", b"p:?", "bad items"),
    OpenFailureCase("initial write fails", None, "write refused"),
)


@pytest.mark.parametrize("case", OPEN_FAILURES, ids=lambda c: c.name)
def test_open_failures_are_restore_errors_with_the_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: OpenFailureCase
) -> None:
    """Every failure to open is a ``CheckpointRestoreError`` naming the file; the file is kept."""
    path = tmp_path / "toy_state"
    if case.content is None:
        refuse_writes(monkeypatch)
    else:
        path.write_bytes(case.content)
    with pytest.raises(CheckpointRestoreError) as info:
        _ListState.open(tmp_path, "p")
    assert str(info.value) == (
        f"could not restore state from checkpoint: {case.cause}, delete toy_state"
    )
    assert (info.value.cause, info.value.source) == (case.cause, str(path))
    assert (path.read_bytes() if path.exists() else None) == case.content


def test_failed_write_is_logged_by_the_backend_module_and_the_change_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The log record comes from the subclass's module logger; the cache keeps the change."""
    state = _ListState(full_disk_store(tmp_path), "p", [])
    with caplog.at_level(logging.ERROR):
        state.add("a")
    assert state.items() == ["a"]
    [record] = caplog.records
    assert record.name == __name__
    assert record.getMessage().startswith(
        f"failed to store state to checkpoint {tmp_path / 'toy_state'}: write "
    )
    assert "disk full" in record.getMessage()
    assert not (tmp_path / "toy_state").exists()
