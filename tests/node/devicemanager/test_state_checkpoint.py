"""Tests of the device manager's checkpointed state backend (``kubelet_internal_checkpoint``)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from numaplane.node.checkpoint import CheckpointError
from numaplane.node.devicemanager.checkpoint import (
    DEVICE_MANAGER_CHECKPOINT,
    DeviceManagerCheckpoint,
    load_checkpoint,
)
from numaplane.node.devicemanager.state import DeviceAllocation, InMemoryState, State
from numaplane.node.devicemanager.state_checkpoint import CheckpointState, checkpoint_of
from tests.node.checkpoint_helpers import full_disk_store

GPU = "nvidia.com/gpu"
NIC = "example.com/nic"


def _on_disk(directory: Path) -> DeviceManagerCheckpoint:
    """The file as the codec reads it (checksum verified by the load)."""
    data = (directory / DEVICE_MANAGER_CHECKPOINT).read_bytes()
    checkpoint = load_checkpoint(data, source="test")
    assert checkpoint.checksum == checkpoint.compute_checksum()
    return checkpoint


def _seed(state: State) -> None:
    state.set_registered_devices(GPU, ["gpu1", "gpu0", "gpu2", "gpu3"])
    state.set_registered_devices(NIC, ["nic0"])
    state.set_allocation("pod1", "app", GPU, DeviceAllocation.of({0: ["gpu0", "gpu1"]}, b"\n\x01"))
    state.set_allocation("pod1", "app", NIC, DeviceAllocation.of({-1: ["nic0"]}))
    state.set_allocation("pod2", "c", GPU, DeviceAllocation.of({1: ["gpu2"], 0: ["gpu3"]}, b"x"))


def test_first_start_writes_nothing_and_is_empty(tmp_path: Path) -> None:
    """Upstream's device manager writes its checkpoint on the first change, not at start."""
    state: State = CheckpointState.open(tmp_path)
    assert state.entries() == ()
    assert state.registered_devices() == {}
    assert not (tmp_path / DEVICE_MANAGER_CHECKPOINT).exists()


def test_no_rows_are_written_as_a_nil_slice(tmp_path: Path) -> None:
    """With nothing allocated ``PodDeviceEntries`` is ``null``, as the kubelet writes it."""
    state = CheckpointState.open(tmp_path)
    state.set_registered_devices(GPU, ["gpu0"])
    raw = json.loads((tmp_path / DEVICE_MANAGER_CHECKPOINT).read_bytes())
    assert raw["Data"] == {"PodDeviceEntries": None, "RegisteredDevices": {GPU: ["gpu0"]}}
    assert _on_disk(tmp_path).pod_device_entries is None


def test_rows_carry_numa_ids_and_alloc_response(tmp_path: Path) -> None:
    """Each (pod, container, resource) is one entry: ids per NUMA node, the opaque response."""
    state = CheckpointState.open(tmp_path)
    _seed(state)
    entries = _on_disk(tmp_path).pod_device_entries
    assert entries is not None
    rows = {(e.pod_uid, e.container_name, e.resource_name): e for e in entries}
    assert set(rows) == {("pod1", "app", GPU), ("pod1", "app", NIC), ("pod2", "c", GPU)}
    assert rows["pod1", "app", GPU].device_ids == {0: ("gpu0", "gpu1")}
    assert rows["pod1", "app", GPU].alloc_resp == b"\n\x01"
    assert rows["pod1", "app", NIC].device_ids == {-1: ("nic0",)}
    assert rows["pod2", "c", GPU].device_ids == {0: ("gpu3",), 1: ("gpu2",)}


@dataclass(frozen=True)
class MutationCase:
    name: str
    mutate: Callable[[State], None]
    rows: frozenset[tuple[str, str, str]]
    registered: frozenset[str]


_ALL_ROWS = frozenset({("pod1", "app", GPU), ("pod1", "app", NIC), ("pod2", "c", GPU)})

MUTATIONS = (
    MutationCase("seeded", lambda s: None, _ALL_ROWS, frozenset({GPU, NIC})),
    MutationCase(
        "remove a container",
        lambda s: s.remove_container("pod1", "app"),
        frozenset({("pod2", "c", GPU)}),
        frozenset({GPU, NIC}),
    ),
    MutationCase(
        "remove pods",
        lambda s: s.remove_pods(["pod1", "pod2"]),
        frozenset(),
        frozenset({GPU, NIC}),
    ),
    MutationCase(
        "add an allocation",
        lambda s: s.set_allocation("pod3", "z", NIC, DeviceAllocation.of({0: ["nic0"]})),
        _ALL_ROWS | {("pod3", "z", NIC)},
        frozenset({GPU, NIC}),
    ),
    MutationCase(
        "unregister a resource",
        lambda s: s.remove_registered_devices(NIC),
        _ALL_ROWS,
        frozenset({GPU}),
    ),
)


@pytest.mark.parametrize("case", MUTATIONS, ids=lambda c: c.name)
def test_file_reflects_each_mutation(tmp_path: Path, case: MutationCase) -> None:
    """After a write the file on disk holds the new rows and registered resources."""
    state = CheckpointState.open(tmp_path)
    _seed(state)
    case.mutate(state)
    checkpoint = _on_disk(tmp_path)
    rows = {
        (e.pod_uid, e.container_name, e.resource_name) for e in checkpoint.pod_device_entries or ()
    }
    assert rows == case.rows
    assert set(checkpoint.registered_devices) == case.registered
    assert checkpoint == state.checkpoint()
    unsummed = checkpoint_of(state.entries(), state.registered_devices())
    assert checkpoint.checksum == unsummed.compute_checksum()


def test_reopen_gives_the_same_state(tmp_path: Path) -> None:
    """A state written then reopened from the same directory equals the original."""
    state = CheckpointState.open(tmp_path)
    _seed(state)
    reopened = CheckpointState.open(tmp_path)
    assert reopened.entries() == state.entries()
    assert reopened.registered_devices() == state.registered_devices()
    assert reopened.allocated_devices() == {GPU: {"gpu0", "gpu1", "gpu2", "gpu3"}, NIC: {"nic0"}}
    assert reopened.restore_error is None


_IDS = st.lists(st.sampled_from(["d0", "d1", "d2", "d3", "d4"]), min_size=1, max_size=3)
_ALLOCATIONS = st.builds(
    DeviceAllocation.of,
    st.dictionaries(st.integers(-1, 3), _IDS, min_size=1, max_size=2),
    st.binary(max_size=8),
)
_NAMES = st.text("abc12-", min_size=1, max_size=5)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(st.tuples(_NAMES, _NAMES, st.sampled_from([GPU, NIC]), _ALLOCATIONS), max_size=5),
    registered=st.dictionaries(st.sampled_from([GPU, NIC]), st.lists(_NAMES, max_size=3)),
)
def test_reopen_law(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[str, str, str, DeviceAllocation]],
    registered: dict[str, list[str]],
) -> None:
    """For any state, write → reopen is the identity (rows in order, registered devices)."""
    directory = tmp_path_factory.mktemp("law")
    state = CheckpointState.open(directory)
    memory = InMemoryState()
    for pod, container, resource, allocation in rows:
        state.set_allocation(pod, container, resource, allocation)
        memory.set_allocation(pod, container, resource, allocation)
    for resource, ids in registered.items():
        state.set_registered_devices(resource, ids)
        memory.set_registered_devices(resource, ids)
    reopened = CheckpointState.open(directory)
    assert reopened.entries() == memory.entries()
    assert reopened.registered_devices() == memory.registered_devices()


def test_corrupt_file_fails_open_as_the_kubelet(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Upstream logs and continues with no allocations; the error is kept, naming the file.

    The current format fails its checksum, so the V1 reader has the last word, as upstream.
    """
    state = CheckpointState.open(tmp_path)
    _seed(state)
    path = tmp_path / DEVICE_MANAGER_CHECKPOINT
    path.write_bytes(path.read_bytes().replace(b'"Checksum":', b'"Checksum":1'))
    with caplog.at_level(logging.ERROR):
        reopened = CheckpointState.open(tmp_path)
    assert reopened.entries() == ()
    assert isinstance(reopened.restore_error, CheckpointError)
    assert reopened.restore_error.source == str(path)
    assert "Go struct field PodDevicesEntryV1.Data.PodDeviceEntries.DeviceIDs" in caplog.text
    assert str(path) in caplog.text


@dataclass(frozen=True)
class StrictCase:
    name: str
    content: bytes
    message: str


STRICT = (
    StrictCase(
        "checksum mismatch",
        b'{"Data":{"PodDeviceEntries":null,"RegisteredDevices":{}},"Checksum":1}',
        "checkpoint is corrupted",
    ),
    StrictCase("truncated", b'{"Data":{"PodDev', "unexpected end of JSON input"),
)


@pytest.mark.parametrize("case", STRICT, ids=lambda c: c.name)
def test_strict_open_refuses_an_unusable_file(tmp_path: Path, case: StrictCase) -> None:
    """``strict`` raises the codec's error with the file in ``source``."""
    path = tmp_path / DEVICE_MANAGER_CHECKPOINT
    path.write_bytes(case.content)
    with pytest.raises(CheckpointError) as info:
        CheckpointState.open(tmp_path, strict=True)
    assert str(info.value) == case.message
    assert info.value.source == str(path)


def test_failed_write_is_logged_and_the_change_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """As upstream: the in-memory state stays authoritative when the file cannot be written."""
    state = CheckpointState(full_disk_store(tmp_path), InMemoryState())
    with caplog.at_level(logging.ERROR):
        state.set_registered_devices(GPU, ["gpu0"])
    assert state.registered_devices() == {GPU: ("gpu0",)}
    assert "disk full" in caplog.text
    assert not (tmp_path / DEVICE_MANAGER_CHECKPOINT).exists()
