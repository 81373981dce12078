"""Tests of ``cpu_manager_state`` encoding, checksums, versions and restore."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.gofmt import go_parse_cpuset
from numaplane.node.checkpoint import (
    CheckpointDecodeError,
    CheckpointRestoreError,
    CorruptCheckpointError,
)
from numaplane.node.cpumanager.checkpoint import (
    CPUManagerCheckpoint,
    CPUManagerCheckpointV1,
    checkpoint_of,
    load_checkpoint,
    restore_state,
)
from numaplane.topology.cpuset import CPUSet

OBSERVED = (
    b'{"policyName":"static","defaultCpuSet":"0,20-27","entries":{'
    b'"9388acc6-a396-4f03-a353-ce153da46aaf":{"app":"1-13,17-19"},'
    b'"f21fe02b-e6e2-4d04-9a4a-9e57367fa324":{"app":"14-16"}},"checksum":4055801500}'
)


def test_observed_file_round_trips_byte_for_byte() -> None:
    """A kubelet-written file decodes, verifies and encodes to the same bytes."""
    checkpoint = CPUManagerCheckpoint.from_bytes(OBSERVED, source="f")
    assert checkpoint.checksum == 4055801500
    assert checkpoint.to_bytes() == OBSERVED


def test_empty_entries_are_omitted_and_hash_as_empty_map() -> None:
    """omitempty drops entries; the checksum is of an empty (not nil) map."""
    checkpoint = CPUManagerCheckpoint("none", "4-6")
    assert (
        checkpoint.to_bytes() == b'{"policyName":"none","defaultCpuSet":"4-6","checksum":354655845}'
    )
    assert checkpoint.hashed_payload().endswith(
        "Entries:(map[string]map[string]string)map[] Checksum:(checksum.Checksum)0}"
    )


def test_legacy_key_spelling_loads() -> None:
    """Go matches keys case-insensitively: defaultCPUSet loads as defaultCpuSet."""
    data = b'{"policyName":"none","defaultCPUSet":"1-3","checksum":0}'
    assert CPUManagerCheckpoint.from_bytes(data, source="f").default_cpu_set == "1-3"


def test_corrupted_checksum_is_refused_and_zero_accepted() -> None:
    """A wrong checksum raises; 0 means "not recorded" and is accepted."""
    bad = b'{"policyName":"none","defaultCpuSet":"4-6","checksum":1337}'
    with pytest.raises(CorruptCheckpointError, match="checkpoint is corrupted"):
        CPUManagerCheckpoint.from_bytes(bad, source="f")
    zero = b'{"policyName":"none","defaultCpuSet":"4-6","checksum":0}'
    assert CPUManagerCheckpoint.from_bytes(zero, source="f").policy_name == "none"


def test_truncated_file_is_a_decode_error() -> None:
    """Half a file reads as Go's "unexpected end of JSON input"."""
    with pytest.raises(CheckpointDecodeError, match="unexpected end of JSON input"):
        CPUManagerCheckpoint.from_bytes(OBSERVED[:40], source="f")


def test_v1_file_is_migrated_through_the_container_map() -> None:
    """V1 entries keyed by container ID become pod/container entries."""
    legacy = CPUManagerCheckpointV1("none", "1-3", {"containerID1": "4-6", "containerID2": "1-3"})
    assert legacy.compute_checksum() == 3680390589  # upstream "Restore checkpoint with migration"
    containers = {"containerID1": ("pod", "c1"), "containerID2": ("pod", "c2")}
    loaded = load_checkpoint(legacy.to_bytes(), source="f", containers=containers)
    assert loaded.entries == {"pod": {"c1": "4-6", "c2": "1-3"}}


def test_v1_migration_with_unknown_container_fails() -> None:
    """A container ID missing from the runtime's map cannot be migrated."""
    data = CPUManagerCheckpointV1("none", "1-3", {"cid1": "4-6"}).to_bytes()
    with pytest.raises(
        CheckpointRestoreError, match="containerID 'cid1' not found in initial containers"
    ):
        restore_state(data, policy_name="none", source="f")


@dataclass(frozen=True)
class RestoreErrorCase:
    name: str
    checkpoint: CPUManagerCheckpoint
    policy: str
    message: str


RESTORE_ERRORS = (
    RestoreErrorCase(
        "policy mismatch",
        CPUManagerCheckpoint("other", "1-3"),
        "none",
        'configured policy "none" differs from state checkpoint policy "other"',
    ),
    RestoreErrorCase(
        "bad default set",
        CPUManagerCheckpoint("none", "1.3"),
        "none",
        'could not parse default cpu set "1.3": strconv.Atoi: parsing "1.3": invalid syntax',
    ),
    RestoreErrorCase(
        "bad entry",
        CPUManagerCheckpoint("static", "0", {"pod": {"c": "3-1"}}),
        "static",
        'could not parse cpuset "3-1" for container "c" in pod "pod": invalid range "3-1" (3 > 1)',
    ),
)


@pytest.mark.parametrize("case", RESTORE_ERRORS, ids=lambda c: c.name)
def test_restore_errors_have_upstream_wording(case: RestoreErrorCase) -> None:
    """Validation failures are wrapped in "could not restore state from checkpoint: "."""
    with pytest.raises(CheckpointRestoreError) as info:
        restore_state(case.checkpoint.to_bytes(), policy_name=case.policy, source="f")
    assert str(info.value) == f"could not restore state from checkpoint: {case.message}"


def test_restore_without_file_is_empty() -> None:
    """No file: empty default set and no assignments."""
    state = restore_state(None, policy_name="static", source="f")
    assert state.default_cpu_set == CPUSet()
    assert state.assignments == {}


def test_restore_of_stored_state_gives_it_back() -> None:
    """checkpoint_of then restore is the identity on the state."""
    assignments = {"pod": {"c": CPUSet.parse("2-5")}}
    data = checkpoint_of("static", CPUSet.parse("0-1,6"), assignments).to_bytes()
    state = restore_state(data, policy_name="static", source="f")
    assert state.default_cpu_set == CPUSet.parse("0-1,6")
    assert state.assignments == assignments


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("1.3", 'strconv.Atoi: parsing "1.3": invalid syntax'),
        ("1,,2", 'strconv.Atoi: parsing "": invalid syntax'),
        (
            "99999999999999999999",
            'strconv.Atoi: parsing "99999999999999999999": value out of range',
        ),
    ],
)
def test_go_cpuset_parse_errors(text: str, error: str) -> None:
    """cpuset.Parse errors are strconv.Atoi's."""
    with pytest.raises(ValueError, match=r"strconv\.Atoi") as info:
        go_parse_cpuset(text)
    assert str(info.value) == error


names = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8)
cpusets = st.frozensets(st.integers(0, 64), max_size=10).map(lambda ids: str(CPUSet(ids)))
checkpoints = st.builds(
    CPUManagerCheckpoint,
    policy_name=names,
    default_cpu_set=cpusets,
    entries=st.dictionaries(names, st.dictionaries(names, cpusets, max_size=3), max_size=3),
)


@given(checkpoints)
def test_encode_decode_identity(checkpoint: CPUManagerCheckpoint) -> None:
    """Decoding an encoded checkpoint gives the content back, sealed with its checksum."""
    decoded = CPUManagerCheckpoint.from_bytes(checkpoint.to_bytes(), source="f")
    assert decoded.policy_name == checkpoint.policy_name
    assert decoded.default_cpu_set == checkpoint.default_cpu_set
    assert decoded.entries == checkpoint.entries
    assert decoded.checksum == checkpoint.compute_checksum()
    assert decoded.to_bytes() == checkpoint.to_bytes()


@given(checkpoints)
def test_checksum_ignores_stored_checksum_and_key_order(checkpoint: CPUManagerCheckpoint) -> None:
    """The checksum depends on content only: not on the stored value, nor on map order."""
    reordered = CPUManagerCheckpoint(
        checkpoint.policy_name,
        checkpoint.default_cpu_set,
        dict(reversed(list(checkpoint.entries.items()))),
        checksum=12345,
    )
    assert reordered.compute_checksum() == checkpoint.compute_checksum()
