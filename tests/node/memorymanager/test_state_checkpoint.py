"""Tests of the memory manager's checkpointed state backend (``memory_manager_state``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from numaplane.node.checkpoint import CheckpointRestoreError
from numaplane.node.memorymanager import checkpoint as codec
from numaplane.node.memorymanager.checkpoint import (
    MEMORY_MANAGER_CHECKPOINT,
    MemoryManagerCheckpoint,
)
from numaplane.node.memorymanager.state import (
    Block,
    InMemoryState,
    MemoryTable,
    NUMANodeMap,
    NUMANodeState,
    State,
)
from numaplane.node.memorymanager.state_checkpoint import (
    CheckpointState,
    assignments_of,
    checkpoint_of,
    machine_state_of,
)
from tests.node.checkpoint_helpers import (
    RefusalCase,
    assert_refused,
    drain_hint,
    full_disk_store,
    refuse_writes,
)

GIB = 1 << 30
POLICY = "Static"


def _machine() -> dict[int, NUMANodeState]:
    def node(node_id: int, reserved: int) -> NUMANodeState:
        tables = {
            "memory": MemoryTable(8 * GIB, GIB, 7 * GIB, reserved, 7 * GIB - reserved),
            "hugepages-1Gi": MemoryTable(2 * GIB, 0, 2 * GIB, 0, 2 * GIB),
        }
        return NUMANodeState(1 if reserved else 0, tables, (node_id,))

    return {0: node(0, 2 * GIB), 1: node(1, 0)}


def _on_disk(directory: Path) -> MemoryManagerCheckpoint:
    """The file as the V1 codec reads it, with a valid non-zero checksum."""
    data = (directory / MEMORY_MANAGER_CHECKPOINT).read_bytes()
    checkpoint = MemoryManagerCheckpoint.from_bytes(data, source="test", version=1)
    assert checkpoint.checksum == checkpoint.compute_checksum(1) != 0
    return checkpoint


def _file_state(directory: Path) -> tuple[NUMANodeMap, dict[str, dict[str, tuple[Block, ...]]]]:
    checkpoint = _on_disk(directory)
    return machine_state_of(checkpoint.machine_state), assignments_of(checkpoint.entries)


def test_first_start_writes_the_empty_state(tmp_path: Path) -> None:
    """A missing file is a first start: an empty checkpoint of the policy is written at once."""
    state: State = CheckpointState.open(tmp_path / "new", POLICY)
    checkpoint = _on_disk(tmp_path / "new")
    assert checkpoint.policy_name == POLICY
    assert (checkpoint.machine_state, checkpoint.entries) == ({}, {})
    assert state.get_machine_state() == {}


def _seed(state: State) -> None:
    state.set_machine_state(_machine())
    state.set_memory_blocks("pod1", "app", [Block((0,), "memory", 2 * GIB)])
    state.set_memory_blocks("pod1", "side", [Block((0, 1), "hugepages-1Gi", GIB)])


def _delete_all(state: State, pod: str, containers: tuple[str, ...]) -> None:
    for container in containers:
        state.delete(pod, container)


@dataclass(frozen=True)
class MutationCase:
    name: str
    mutate: Callable[[State], None]
    pods: dict[str, tuple[str, ...]]
    nodes: tuple[int, ...] = (0, 1)


MUTATIONS = (
    MutationCase("seeded", lambda s: None, {"pod1": ("app", "side")}),
    MutationCase(
        "add a container",
        lambda s: s.set_memory_blocks("pod2", "c", [Block((1,), "memory", GIB)]),
        {"pod1": ("app", "side"), "pod2": ("c",)},
    ),
    MutationCase("delete a container", lambda s: s.delete("pod1", "side"), {"pod1": ("app",)}),
    MutationCase(
        "delete the last containers drops the pod",
        lambda s: _delete_all(s, "pod1", ("app", "side")),
        {},
    ),
    MutationCase(
        "replace the machine state",
        lambda s: s.set_machine_state({0: _machine()[0]}),
        {"pod1": ("app", "side")},
        (0,),
    ),
    MutationCase(
        "replace all assignments",
        lambda s: s.set_memory_assignments({"pod9": {"x": (Block((1,), "memory", 5),)}}),
        {"pod9": ("x",)},
    ),
    MutationCase("clear", lambda s: s.clear_state(), {}, ()),
)


@pytest.mark.parametrize("case", MUTATIONS, ids=lambda c: c.name)
def test_file_reflects_each_mutation(tmp_path: Path, case: MutationCase) -> None:
    """After a write the file on disk holds exactly the cache's state."""
    state = CheckpointState.open(tmp_path, POLICY)
    _seed(state)
    case.mutate(state)
    machine, assignments = _file_state(tmp_path)
    assert tuple(sorted(machine)) == case.nodes
    assert {pod: tuple(c) for pod, c in assignments.items()} == case.pods
    assert machine == state.get_machine_state()
    assert assignments == state.get_memory_assignments()


def test_reopen_gives_the_same_state(tmp_path: Path) -> None:
    """A state written then reopened from the same directory equals the original."""
    state = CheckpointState.open(tmp_path, POLICY)
    _seed(state)
    reopened = CheckpointState.open(tmp_path, POLICY)
    assert reopened.get_machine_state() == state.get_machine_state() == _machine()
    assert reopened.get_memory_assignments() == state.get_memory_assignments()
    assert reopened.get_memory_blocks("pod1", "side") == (Block((0, 1), "hugepages-1Gi", GIB),)


_SIZES = st.integers(0, 1 << 40)
_TABLES = st.builds(MemoryTable, _SIZES, _SIZES, _SIZES, _SIZES, _SIZES)
_NODES = st.builds(
    NUMANodeState,
    st.integers(0, 5),
    st.dictionaries(st.sampled_from(["memory", "hugepages-2Mi", "hugepages-1Gi"]), _TABLES),
    st.lists(st.integers(0, 7), max_size=3).map(tuple),
)
_BLOCKS = st.lists(
    st.builds(
        Block,
        st.lists(st.integers(0, 7), min_size=1, max_size=2).map(tuple),
        st.just("memory"),
        _SIZES,
    ),
    min_size=1,
    max_size=2,
).map(tuple)
_NAMES = st.text("abc123-", min_size=1, max_size=6)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    machine=st.dictionaries(st.integers(0, 7), _NODES, max_size=3),
    assignments=st.dictionaries(
        _NAMES, st.dictionaries(_NAMES, _BLOCKS, min_size=1, max_size=2), max_size=3
    ),
)
def test_reopen_law(
    tmp_path_factory: pytest.TempPathFactory,
    machine: dict[int, NUMANodeState],
    assignments: dict[str, dict[str, tuple[Block, ...]]],
) -> None:
    """For any state, open → write → reopen is the identity."""
    directory = tmp_path_factory.mktemp("law")
    state = CheckpointState.open(directory, POLICY)
    state.set_machine_state(machine)
    state.set_memory_assignments(assignments)
    reopened = CheckpointState.open(directory, POLICY)
    assert reopened.get_machine_state() == machine
    assert reopened.get_memory_assignments() == assignments


def test_newer_layouts_restore(tmp_path: Path) -> None:
    """A file a newer kubelet wrote (V3: ``data`` + ``dataChecksum``) restores the same state."""
    checkpoint = checkpoint_of(POLICY, _machine(), {"pod": {"c": (Block((1,), "memory", 7),)}})
    (tmp_path / MEMORY_MANAGER_CHECKPOINT).write_bytes(checkpoint.to_bytes(3))
    state = CheckpointState.open(tmp_path, POLICY)
    assert state.get_machine_state() == _machine()
    assert state.get_memory_blocks("pod", "c") == (Block((1,), "memory", 7),)


def test_nil_cells_read_as_empty(tmp_path: Path) -> None:
    """Go's nil ``cells`` (JSON null) restores as an empty tuple."""
    node = codec.NUMANodeState(0, {"memory": codec.MemoryTable(1, 0, 1, 0, 1)}, None)
    data = MemoryManagerCheckpoint(POLICY, {0: node}).to_bytes(1)
    (tmp_path / MEMORY_MANAGER_CHECKPOINT).write_bytes(data)
    assert CheckpointState.open(tmp_path, POLICY).get_machine_state()[0].cells == ()


def _hint(path: Path) -> str:
    return drain_hint("memory manager", path)


REFUSALS = (
    RefusalCase(
        "checksum mismatch",
        b'{"policyName":"Static","machineState":{},"checksum":1337}',
        "checkpoint is corrupted",
    ),
    RefusalCase(
        "policy mismatch",
        MemoryManagerCheckpoint("None").to_bytes(1),
        '[memorymanager] configured policy "Static" differs from state checkpoint policy "None"',
    ),
    RefusalCase("truncated", b'{"policyName":"Sta', "unexpected end of JSON input"),
)


@pytest.mark.parametrize("case", REFUSALS, ids=lambda c: c.name)
def test_unusable_file_is_refused_with_the_kubelet_message(
    tmp_path: Path, case: RefusalCase
) -> None:
    """The kubelet's whole message, the file named in it and in ``source``; file untouched."""
    path = tmp_path / MEMORY_MANAGER_CHECKPOINT
    assert_refused(lambda: CheckpointState.open(tmp_path, POLICY), path, case, _hint(path))


def test_unwritable_initial_checkpoint_is_a_restore_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """First start cannot write its file: refused with the same advice."""
    refuse_writes(monkeypatch)
    path = tmp_path / MEMORY_MANAGER_CHECKPOINT
    with pytest.raises(CheckpointRestoreError) as info:
        CheckpointState.open(tmp_path, POLICY)
    assert str(info.value) == f"could not restore state from checkpoint: write refused{_hint(path)}"
    assert info.value.source == str(path)


def test_failed_write_is_logged_and_the_change_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """As upstream: the cache stays authoritative when the file cannot be written."""
    state = CheckpointState(full_disk_store(tmp_path), POLICY, InMemoryState())
    with caplog.at_level(logging.ERROR):
        state.set_machine_state(_machine())
    assert state.get_machine_state() == _machine()
    assert "disk full" in caplog.text
    assert not (tmp_path / MEMORY_MANAGER_CHECKPOINT).exists()
