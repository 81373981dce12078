"""Tests of ``memory_manager_state`` layouts V1, V2, V3, checksums and restore."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.node.checkpoint import CheckpointRestoreError, CorruptCheckpointError
from numaplane.node.memorymanager.checkpoint import (
    Block,
    MemoryManagerCheckpoint,
    MemoryTable,
    NUMANodeState,
    data_checksum,
    load_checkpoint,
    restore_state,
)

NODE = NUMANodeState(0, {"memory": MemoryTable(2048, 512, 1536, 512, 1024)}, ())
BLOCK = Block((0,), "memory", 512)
UPSTREAM = MemoryManagerCheckpoint(
    "static", {0: NODE}, {"pod": {"container1": (BLOCK,)}}, {"pod": (BLOCK,)}
)


def test_upstream_checksums() -> None:
    """V1 and V2 checksums and V3 dataChecksum match upstream's test files."""
    assert UPSTREAM.compute_checksum(1) == 4215593881
    assert UPSTREAM.compute_checksum(2) == 1278640530
    assert data_checksum(UPSTREAM.data_json()) == 637296054


def test_v1_file_layout() -> None:
    """V1 writes the four keys, MemoryTable fields in Go order."""
    assert UPSTREAM.to_bytes(1) == (
        b'{"policyName":"static","machineState":{"0":{"numberOfAssignments":0,"memoryMap":'
        b'{"memory":{"total":2048,"systemReserved":512,"allocatable":1536,"reserved":512,'
        b'"free":1024}},"cells":[]}},"entries":{"pod":{"container1":[{"numaAffinity":[0],'
        b'"type":"memory","size":512}]}},"checksum":4215593881}'
    )


@pytest.mark.parametrize("version", [1, 2, 3])
def test_each_layout_round_trips(version: int) -> None:
    """Every layout reads back what it wrote, through the newest reader too."""
    data = UPSTREAM.to_bytes(version)  # type: ignore[arg-type]
    loaded = load_checkpoint(data, source="f")
    assert loaded.machine_state == UPSTREAM.machine_state
    assert loaded.entries == UPSTREAM.entries
    expected_pods = {} if version == 1 else UPSTREAM.pod_entries
    assert loaded.pod_entries == expected_pods


def test_v3_data_is_authoritative() -> None:
    """V3 ignores its inline V1 part (kept for downgrades) when data verifies."""
    document = json.loads(UPSTREAM.to_bytes(3))
    document["policyName"] = "other"
    document["checksum"] = 1
    loaded = load_checkpoint(json.dumps(document).encode(), source="f")
    assert loaded.policy_name == "static"


def test_v3_with_bad_data_checksum_does_not_fall_back() -> None:
    """A file that claims V3 but fails is an error, even with a valid V1 part."""
    document = json.loads(UPSTREAM.to_bytes(3))
    document["dataChecksum"] = 1234
    with pytest.raises(CheckpointRestoreError) as info:
        restore_state(json.dumps(document).encode(), policy_name="static", source="/s/mm")
    assert str(info.value).startswith(
        "could not restore state from checkpoint: could not load v3 checkpoint: "
        "checkpoint is corrupted, please drain this node and delete the memory manager "
        'checkpoint file "/s/mm"'
    )


def test_v2_does_not_accept_zero_checksum_but_v1_does() -> None:
    """A V2 file with checksum 0 falls back to V1 and loses its pod entries."""
    document = json.loads(UPSTREAM.to_bytes(2))
    document["checksum"] = 0
    loaded = load_checkpoint(json.dumps(document).encode(), source="f")
    assert loaded.pod_entries == {}
    assert loaded.entries == UPSTREAM.entries


def test_corrupted_v1_file() -> None:
    """A wrong checksum fails every layout: "checkpoint is corrupted"."""
    document = json.loads(UPSTREAM.to_bytes(1))
    document["checksum"] = 101010
    with pytest.raises(CorruptCheckpointError):
        load_checkpoint(json.dumps(document).encode(), source="f")


def test_truncated_file() -> None:
    """Half a file is "unexpected end of JSON input"."""
    with pytest.raises(CheckpointRestoreError, match="unexpected end of JSON input"):
        restore_state(UPSTREAM.to_bytes(1)[:30], policy_name="static", source="f")


def test_policy_mismatch() -> None:
    """The stored policy must be the configured one."""
    with pytest.raises(CheckpointRestoreError) as info:
        restore_state(UPSTREAM.to_bytes(3), policy_name="None", source="f")
    assert '[memorymanager] configured policy "None" differs from state checkpoint policy' in str(
        info.value
    )


def test_pod_entries_need_the_gate() -> None:
    """Pod-level entries are restored only with PodLevelResourceManagers."""
    data = UPSTREAM.to_bytes(3)
    assert restore_state(data, policy_name="static", source="f").pod_assignments == {}
    gated = restore_state(data, policy_name="static", source="f", pod_level_resource_managers=True)
    assert gated.pod_assignments == UPSTREAM.pod_entries


def test_nil_cells_round_trip() -> None:
    """cells null stays null (Go's nil slice) and hashes as <nil>."""
    checkpoint = MemoryManagerCheckpoint("static", {1: NUMANodeState(2, {}, None)})
    assert b'"cells":null' in checkpoint.to_bytes(1)
    assert "Cells:([]int)<nil>" in checkpoint.hashed_payload(1)
    assert MemoryManagerCheckpoint.from_bytes(checkpoint.to_bytes(1), source="f") == (
        MemoryManagerCheckpoint(
            "static", {1: NUMANodeState(2, {}, None)}, checksum=checkpoint.compute_checksum(1)
        )
    )


sizes = st.integers(0, 2**64 - 1)
tables = st.builds(MemoryTable, sizes, sizes, sizes, sizes, sizes)
nodes = st.builds(
    NUMANodeState,
    st.integers(0, 10),
    st.dictionaries(st.sampled_from(["memory", "hugepages-2Mi"]), tables, max_size=2),
    st.none() | st.lists(st.integers(0, 7), max_size=3).map(tuple),
)
blocks = st.builds(
    Block, st.lists(st.integers(0, 7), max_size=3).map(tuple), st.just("memory"), sizes
)
checkpoints = st.builds(
    MemoryManagerCheckpoint,
    st.sampled_from(["Static", "None"]),
    st.dictionaries(st.integers(0, 12), nodes, max_size=3),
    st.dictionaries(
        st.text(max_size=4),
        st.dictionaries(st.text(max_size=4), st.lists(blocks, max_size=2).map(tuple), max_size=2),
        max_size=2,
    ),
)


@given(checkpoints)
def test_encode_decode_identity(checkpoint: MemoryManagerCheckpoint) -> None:
    """V1 encode then decode gives the content back with its checksum."""
    decoded = MemoryManagerCheckpoint.from_bytes(checkpoint.to_bytes(1), source="f")
    assert decoded == MemoryManagerCheckpoint(
        checkpoint.policy_name,
        checkpoint.machine_state,
        dict(checkpoint.entries),
        checksum=checkpoint.compute_checksum(1),
    )
    assert decoded.to_bytes(1) == checkpoint.to_bytes(1)
