"""Shared pieces of the tests of the managers' checkpointed state backends."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from numaplane.node.checkpoint import CheckpointRestoreError, CheckpointStore, CheckpointStoreError


def drain_hint(manager: str, path: Path) -> str:
    """The suffix the kubelet adds to a refused restore of ``manager``'s checkpoint ``path``."""
    return (
        f', please drain this node and delete the {manager} checkpoint file "{path}" '
        "before restarting Kubelet"
    )


@dataclass(frozen=True)
class RefusalCase:
    """A checkpoint file's ``content`` that a restore refuses, and the ``cause`` it gives."""

    name: str
    content: bytes
    cause: str


def assert_refused(
    open_state: Callable[[], object], path: Path, case: RefusalCase, hint: str
) -> None:
    """With ``case.content`` in ``path``, ``open_state`` raises the kubelet's whole message
    (``case.cause`` then ``hint``) naming the file in ``source``, and leaves the file untouched.
    """
    path.write_bytes(case.content)
    with pytest.raises(CheckpointRestoreError) as info:
        open_state()
    assert str(info.value) == f"could not restore state from checkpoint: {case.cause}{hint}"
    assert info.value.source == str(path)
    assert path.read_bytes() == case.content


def _failing_fsync(fd: int) -> None:
    raise OSError("disk full")


def full_disk_store(directory: Path) -> CheckpointStore:
    """A store whose every write fails with "disk full" (before the rename: no file appears)."""
    return CheckpointStore(directory, _fsync=_failing_fsync)


def refuse_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every ``CheckpointStore.write`` raise ``CheckpointStoreError("write refused")``."""

    def refuse(self: CheckpointStore, name: str, data: bytes) -> None:
        raise CheckpointStoreError("write refused")

    monkeypatch.setattr(CheckpointStore, "write", refuse)
