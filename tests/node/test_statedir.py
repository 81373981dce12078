"""Tests of ``open_node_states``: the three checkpointed states of one state directory."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from numaplane.errors import InputError, NumaplaneError
from numaplane.node.checkpoint import CheckpointRestoreError
from numaplane.node.cpumanager import state_checkpoint as cpu
from numaplane.node.cpumanager.checkpoint import CPU_MANAGER_CHECKPOINT, CPUManagerCheckpoint
from numaplane.node.devicemanager import state_checkpoint as devices
from numaplane.node.devicemanager.checkpoint import DEVICE_MANAGER_CHECKPOINT
from numaplane.node.devicemanager.state import DeviceAllocation
from numaplane.node.memorymanager import state_checkpoint as memory
from numaplane.node.memorymanager.checkpoint import MEMORY_MANAGER_CHECKPOINT
from numaplane.node.memorymanager.state import Block
from numaplane.node.statedir import StateDirError, open_node_states
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
