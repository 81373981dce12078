"""Tests of ``statedir``: the checkpointed states of one directory, and whole-set commits."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from numaplane.errors import InputError, NumaplaneError
from numaplane.node import statedir
from numaplane.node.checkpoint import CheckpointRestoreError
from numaplane.node.cpumanager import state_checkpoint as cpu
from numaplane.node.cpumanager.checkpoint import CPU_MANAGER_CHECKPOINT, CPUManagerCheckpoint
from numaplane.node.devicemanager import state_checkpoint as devices
from numaplane.node.devicemanager.checkpoint import DEVICE_MANAGER_CHECKPOINT
from numaplane.node.devicemanager.state import DeviceAllocation
from numaplane.node.memorymanager import state_checkpoint as memory
from numaplane.node.memorymanager.checkpoint import MEMORY_MANAGER_CHECKPOINT
from numaplane.node.memorymanager.state import Block
from numaplane.node.statedir import (
    JOURNAL,
    STATE_FILES,
    StateDirError,
    StateFiles,
    commit_files,
    locked,
    open_node_states,
    recover,
)
from numaplane.topology.cpuset import CPUSet


def test_missing_directory_is_created_with_the_initial_checkpoints(tmp_path: Path) -> None:
    """A fresh directory gets the CPU and memory files at once; devices wait for a change."""
    state_dir = tmp_path / "a" / "b"
    states = open_node_states(state_dir, "static", "Static")
    assert isinstance(states.cpu, cpu.CheckpointState)
    assert isinstance(states.memory, memory.CheckpointState)
    assert isinstance(states.devices, devices.CheckpointState)
    names = sorted(p.name for p in state_dir.iterdir())
    assert names == [CPU_MANAGER_CHECKPOINT, MEMORY_MANAGER_CHECKPOINT]


def test_states_survive_a_reopen(tmp_path: Path) -> None:
    """Changes made through the states are there when the directory is opened again."""
    states = open_node_states(tmp_path, "static", "Static")
    states.cpu.set_cpu_set("pod", "app", CPUSet.parse("2-3"))
    states.memory.set_memory_blocks("pod", "app", [Block((0,), "memory", 1024)])
    states.devices.set_allocation("pod", "app", "gpu", DeviceAllocation.of({0: ["g0"]}))
    assert (tmp_path / DEVICE_MANAGER_CHECKPOINT).exists()
    again = open_node_states(tmp_path, "static", "Static")
    assert again.cpu.get_cpu_set("pod", "app") == CPUSet.parse("2-3")
    assert again.memory.get_memory_blocks("pod", "app") == (Block((0,), "memory", 1024),)
    assert again.devices.container_devices("pod", "app", "gpu") == frozenset({"g0"})


def test_policy_change_is_refused_naming_the_file(tmp_path: Path) -> None:
    """Restarting with another CPU policy is the kubelet's restore error, file in ``source``."""
    open_node_states(tmp_path, "none", "None")
    with pytest.raises(CheckpointRestoreError) as info:
        open_node_states(tmp_path, "static", "None")
    assert 'configured policy "static" differs from state checkpoint policy "none"' in str(
        info.value
    )
    assert info.value.source == str(tmp_path / CPU_MANAGER_CHECKPOINT)


def test_corrupt_memory_file_is_refused(tmp_path: Path) -> None:
    """A corrupt memory checkpoint stops the node with the drain-and-delete advice."""
    (tmp_path / CPU_MANAGER_CHECKPOINT).write_bytes(CPUManagerCheckpoint("none", "").to_bytes())
    (tmp_path / MEMORY_MANAGER_CHECKPOINT).write_bytes(
        b'{"policyName":"None","machineState":{},"checksum":7}'
    )
    with pytest.raises(CheckpointRestoreError, match="please drain this node") as info:
        open_node_states(tmp_path, "none", "None")
    assert info.value.source == str(tmp_path / MEMORY_MANAGER_CHECKPOINT)


@dataclass(frozen=True)
class BadDirCase:
    name: str
    relative: str
    reason: str


BAD_DIRS = (
    BadDirCase("a file where the directory should be", "file", "not a directory"),
    BadDirCase("a file as a parent", "file/sub", "cannot create state directory"),
)


@pytest.mark.parametrize("case", BAD_DIRS, ids=lambda c: c.name)
def test_unusable_directory_is_a_clear_error(tmp_path: Path, case: BadDirCase) -> None:
    """The error names the path and says why; it is input the user can fix."""
    (tmp_path / "file").write_bytes(b"")
    target = tmp_path / case.relative
    with pytest.raises(StateDirError) as info:
        open_node_states(target, "none", "None")
    assert isinstance(info.value, InputError)
    assert isinstance(info.value, NumaplaneError)
    assert info.value.path == target
    assert str(info.value).startswith(f"{target}: ")
    assert case.reason in str(info.value)


def test_unwritable_directory_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory that refuses new files is reported before any checkpoint is read."""

    def refuse(*args: object, **kwargs: object) -> tuple[int, str]:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(StateDirError, match="not writable: Permission denied") as info:
        open_node_states(tmp_path, "none", "None")
    assert str(tmp_path) in str(info.value)


def test_probe_leaves_no_file_behind(tmp_path: Path) -> None:
    """The writability probe is removed; only checkpoints remain."""
    open_node_states(tmp_path, "none", "None")
    assert all(not p.name.startswith(".") for p in tmp_path.iterdir())


# -- committing several files as one ---------------------------------------------------------


def _contents(state_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in state_dir.iterdir()}


OLD = {name: f"old {name}".encode() for name in STATE_FILES}
NEW = {name: f"new {name}".encode() for name in STATE_FILES}


def test_commit_replaces_every_file_and_leaves_nothing_else(tmp_path: Path) -> None:
    commit_files(tmp_path, OLD)
    commit_files(tmp_path, NEW)
    assert _contents(tmp_path) == NEW


@dataclass(frozen=True)
class Interrupted:
    """A directory as a crash left it: ``done`` of the new files already renamed over their
    targets, the others still beside them, and the journal there or not."""

    name: str
    journal: bool
    done: int
    expected: dict[str, bytes]


INTERRUPTED = (
    Interrupted("new files written, no journal: discarded", False, 0, OLD),
    Interrupted("journal written, nothing renamed: finished", True, 0, NEW),
    Interrupted("journal written, two renamed: finished", True, 2, NEW),
    Interrupted("every file renamed, journal left: finished", True, len(STATE_FILES), NEW),
)


@pytest.mark.parametrize("case", INTERRUPTED, ids=lambda c: c.name)
def test_recover_finishes_or_discards_an_interrupted_commit(
    case: Interrupted, tmp_path: Path
) -> None:
    commit_files(tmp_path, OLD)
    for index, name in enumerate(sorted(STATE_FILES)):
        target = tmp_path / name if index < case.done else tmp_path / f".{name}.numaplane-new"
        target.write_bytes(NEW[name])
    if case.journal:
        (tmp_path / JOURNAL).write_text(json.dumps(sorted(STATE_FILES)))
    recover(tmp_path)
    assert _contents(tmp_path) == case.expected
    recover(tmp_path)  # a second recovery changes nothing
    assert _contents(tmp_path) == case.expected


def test_open_node_states_recovers_first(tmp_path: Path) -> None:
    """The agent reads what an interrupted ``admit`` committed."""
    open_node_states(tmp_path, "none", "None")
    checkpoint = CPUManagerCheckpoint("none", "0-3")
    (tmp_path / f".{CPU_MANAGER_CHECKPOINT}.numaplane-new").write_bytes(
        CPUManagerCheckpoint("none", "0-3", {}, checkpoint.compute_checksum()).to_bytes()
    )
    (tmp_path / JOURNAL).write_text(json.dumps([CPU_MANAGER_CHECKPOINT]))
    states = open_node_states(tmp_path, "none", "None")
    assert states.cpu.get_default_cpu_set() == CPUSet.parse("0-3")
    assert not (tmp_path / JOURNAL).exists()


@pytest.mark.parametrize(
    "journal", [b"\x00garbage", b'{"not": "a list"}', b'["../../etc/passwd"]'], ids=repr
)
def test_a_journal_not_written_by_numaplane_is_refused_untouched(
    journal: bytes, tmp_path: Path
) -> None:
    commit_files(tmp_path, OLD)
    (tmp_path / JOURNAL).write_bytes(journal)
    with pytest.raises(InputError) as info:
        StateFiles.read(tmp_path)
    assert str(info.value).startswith(f"{tmp_path / JOURNAL}: ")
    assert _contents(tmp_path) == {**OLD, JOURNAL: journal}


def test_a_failed_write_before_the_commit_point_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit_files(tmp_path, OLD)
    real_rename = statedir.DISK.rename

    def refuse(source: Path, target: Path) -> None:
        if target.name == JOURNAL:
            raise OSError(28, "No space left on device")
        real_rename(source, target)

    monkeypatch.setattr(statedir.DISK, "rename", refuse)
    with pytest.raises(StateDirError, match="cannot write the state: No space left on device"):
        commit_files(tmp_path, NEW)
    assert _contents(tmp_path) == OLD


def test_a_held_directory_is_refused(tmp_path: Path) -> None:
    with (
        locked(tmp_path),
        pytest.raises(StateDirError, match="in use by another"),
        locked(tmp_path),
    ):
        pass
    with locked(tmp_path):  # released on exit
        pass
