"""Tests of the CPU manager's checkpointed state backend (``cpu_manager_state``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from numaplane.node.checkpoint import CheckpointRestoreError
from numaplane.node.cpumanager.checkpoint import (
    CPU_MANAGER_CHECKPOINT,
    CPUManagerCheckpoint,
    CPUManagerCheckpointV1,
    restore_state,
)
from numaplane.node.cpumanager.state import InMemoryState, State
from numaplane.node.cpumanager.state_checkpoint import CheckpointState
from numaplane.topology.cpuset import CPUSet
from tests.node.checkpoint_helpers import (
    RefusalCase,
    assert_refused,
    drain_hint,
    full_disk_store,
    refuse_writes,
)


def _on_disk(tmp_path: Path) -> CPUManagerCheckpoint:
    """The file as the codec reads it, checksum verified."""
    data = (tmp_path / CPU_MANAGER_CHECKPOINT).read_bytes()
    checkpoint = CPUManagerCheckpoint.from_bytes(data, source="test")
    assert checkpoint.checksum == checkpoint.compute_checksum() != 0
    return checkpoint


def _assert_file_matches(tmp_path: Path, state: State, policy: str) -> None:
    restored = restore_state(
        (tmp_path / CPU_MANAGER_CHECKPOINT).read_bytes(), policy_name=policy, source="test"
    )
    assert restored.default_cpu_set == state.get_default_cpu_set()
    assert restored.assignments == state.get_cpu_assignments()


def test_first_start_writes_the_empty_state(tmp_path: Path) -> None:
    """A missing file is a first start: an empty checkpoint of the policy is written at once."""
    state: State = CheckpointState.open(tmp_path / "new", "static")
    checkpoint = _on_disk(tmp_path / "new")
    assert (checkpoint.policy_name, checkpoint.default_cpu_set, checkpoint.entries) == (
        "static",
        "",
        {},
    )
    assert state.get_cpu_assignments() == {}
    assert state.get_default_cpu_set() == CPUSet()


@dataclass(frozen=True)
class MutationCase:
    name: str
    mutate: Callable[[State], None]
    default: str
    assignments: dict[str, dict[str, str]]


def _seed(state: State) -> None:
    state.set_default_cpu_set(CPUSet.parse("0-1,6-7"))
    state.set_cpu_set("pod1", "app", CPUSet.parse("2-3"))
    state.set_cpu_set("pod1", "side", CPUSet.parse("4"))
    state.set_cpu_set("pod2", "app", CPUSet.parse("5"))


MUTATIONS = (
    MutationCase(
        "seeded",
        lambda s: None,
        "0-1,6-7",
        {"pod1": {"app": "2-3", "side": "4"}, "pod2": {"app": "5"}},
    ),
    MutationCase(
        "set default",
        lambda s: s.set_default_cpu_set(CPUSet.parse("0-7")),
        "0-7",
        {"pod1": {"app": "2-3", "side": "4"}, "pod2": {"app": "5"}},
    ),
    MutationCase(
        "replace a container's cpus",
        lambda s: s.set_cpu_set("pod1", "app", CPUSet.parse("1")),
        "0-1,6-7",
        {"pod1": {"app": "1", "side": "4"}, "pod2": {"app": "5"}},
    ),
    MutationCase(
        "delete the last container drops the pod",
        lambda s: s.delete("pod2", "app"),
        "0-1,6-7",
        {"pod1": {"app": "2-3", "side": "4"}},
    ),
    MutationCase(
        "delete an unknown container still writes the same state",
        lambda s: s.delete("nope", "app"),
        "0-1,6-7",
        {"pod1": {"app": "2-3", "side": "4"}, "pod2": {"app": "5"}},
    ),
    MutationCase(
        "replace all assignments",
        lambda s: s.set_cpu_assignments({"pod3": {"c": CPUSet.parse("8-9")}}),
        "0-1,6-7",
        {"pod3": {"c": "8-9"}},
    ),
    MutationCase("clear", lambda s: s.clear_state(), "", {}),
)


@pytest.mark.parametrize("case", MUTATIONS, ids=lambda c: c.name)
def test_file_reflects_each_mutation(tmp_path: Path, case: MutationCase) -> None:
    """After a write the file on disk holds the new state, with a valid checksum."""
    state = CheckpointState.open(tmp_path, "static")
    _seed(state)
    case.mutate(state)
    checkpoint = _on_disk(tmp_path)
    assert checkpoint.default_cpu_set == case.default
    assert checkpoint.entries == case.assignments
    _assert_file_matches(tmp_path, state, "static")


def test_reopen_gives_the_same_state(tmp_path: Path) -> None:
    """A state written then reopened from the same directory equals the original."""
    state = CheckpointState.open(tmp_path, "static")
    _seed(state)
    reopened = CheckpointState.open(tmp_path, "static")
    assert reopened.get_default_cpu_set() == state.get_default_cpu_set()
    assert reopened.get_cpu_assignments() == state.get_cpu_assignments()
    assert reopened.get_cpu_set_or_default("pod1", "side") == CPUSet.parse("4")
    assert reopened.get_cpu_set_or_default("pod9", "x") == CPUSet.parse("0-1,6-7")


_CPUSETS = st.frozensets(st.integers(0, 127), max_size=12).map(CPUSet)
_NAMES = st.text("abcdef0123456789-", min_size=1, max_size=8)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    default=_CPUSETS,
    assignments=st.dictionaries(
        _NAMES, st.dictionaries(_NAMES, _CPUSETS, min_size=1, max_size=3), max_size=4
    ),
)
def test_reopen_law(
    tmp_path_factory: pytest.TempPathFactory,
    default: CPUSet,
    assignments: dict[str, dict[str, CPUSet]],
) -> None:
    """For any state, open → write → reopen is the identity."""
    directory = tmp_path_factory.mktemp("law")
    state = CheckpointState.open(directory, "static")
    state.set_default_cpu_set(default)
    state.set_cpu_assignments(assignments)
    reopened = CheckpointState.open(directory, "static")
    assert reopened.get_default_cpu_set() == default
    assert reopened.get_cpu_assignments() == assignments


REFUSALS = (
    RefusalCase(
        "checksum mismatch",
        b'{"policyName":"static","defaultCpuSet":"4-6","checksum":1337}',
        "checkpoint is corrupted",
    ),
    RefusalCase(
        "policy mismatch",
        CPUManagerCheckpoint("none", "0-7").to_bytes(),
        'configured policy "static" differs from state checkpoint policy "none"',
    ),
    RefusalCase("truncated", b'{"policyName":"sta', "unexpected end of JSON input"),
    RefusalCase(
        "unparsable cpu set",
        CPUManagerCheckpoint("static", "0-", {}).to_bytes(),
        'could not parse default cpu set "0-": strconv.Atoi: parsing "": invalid syntax',
    ),
)


@pytest.mark.parametrize("case", REFUSALS, ids=lambda c: c.name)
def test_unusable_file_is_refused_with_the_kubelet_message(
    tmp_path: Path, case: RefusalCase
) -> None:
    """The kubelet's whole message, the file named in it and in ``source``; file untouched."""
    path = tmp_path / CPU_MANAGER_CHECKPOINT
    hint = drain_hint("CPU manager", path)
    assert_refused(lambda: CheckpointState.open(tmp_path, "static"), path, case, hint)


def test_v1_file_is_migrated_and_rewritten_as_v2_on_first_change(tmp_path: Path) -> None:
    """A legacy file restores through the container map and is left alone until a write."""
    legacy = CPUManagerCheckpointV1("static", "0-1", {"cid1": "2-3"})
    path = tmp_path / CPU_MANAGER_CHECKPOINT
    path.write_bytes(legacy.to_bytes())
    state = CheckpointState.open(tmp_path, "static", initial_containers={"cid1": ("pod", "app")})
    assert state.get_cpu_assignments() == {"pod": {"app": CPUSet.parse("2-3")}}
    assert path.read_bytes() == legacy.to_bytes()
    state.set_default_cpu_set(CPUSet.parse("0-1"))
    assert _on_disk(tmp_path).entries == {"pod": {"app": "2-3"}}


def test_failed_write_is_logged_and_the_change_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """As upstream: the cache stays authoritative when the file cannot be written."""
    state = CheckpointState(full_disk_store(tmp_path), "static", InMemoryState())
    with caplog.at_level(logging.ERROR):
        state.set_cpu_set("pod", "app", CPUSet.parse("1"))
    assert state.get_cpu_set("pod", "app") == CPUSet.parse("1")
    assert "disk full" in caplog.text
    assert not (tmp_path / CPU_MANAGER_CHECKPOINT).exists()


def test_unreadable_directory_is_a_restore_error(tmp_path: Path) -> None:
    """A state "directory" that is a file cannot be read: refused, naming the file."""
    blocker = tmp_path / "file"
    blocker.write_bytes(b"")
    with pytest.raises(CheckpointRestoreError) as info:
        CheckpointState.open(blocker, "none")
    assert str(info.value).startswith("could not restore state from checkpoint: read ")
    assert info.value.source == str(blocker / CPU_MANAGER_CHECKPOINT)


def test_unwritable_initial_checkpoint_is_a_restore_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """First start cannot write its file: refused, as upstream's restoreState returns the error."""
    refuse_writes(monkeypatch)
    with pytest.raises(CheckpointRestoreError) as info:
        CheckpointState.open(tmp_path, "none")
    assert str(info.value).startswith("could not restore state from checkpoint: write refused, ")
    assert info.value.source == str(tmp_path / CPU_MANAGER_CHECKPOINT)
