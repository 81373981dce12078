"""Tests of ``kubelet_internal_checkpoint``."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.node.checkpoint import CorruptCheckpointError
from numaplane.node.devicemanager.checkpoint import (
    DeviceManagerCheckpoint,
    PodDevicesEntry,
    load_checkpoint,
    v1_checksum,
)

OBSERVED = (
    b'{"Data":{"PodDeviceEntries":null,"RegisteredDevices":{"nvidia.com/gpu":'
    b'["GPU-0650a168-e770-3ea8-8ac3-8a1d419763e0"]}},"Checksum":3952659280}'
)


def test_observed_file_round_trips() -> None:
    """A kubelet-written file (nil entries) verifies and re-encodes byte for byte."""
    checkpoint = DeviceManagerCheckpoint.from_bytes(OBSERVED, source="f")
    assert checkpoint.pod_device_entries is None
    assert checkpoint.to_bytes() == OBSERVED


def test_boot_id_is_outside_the_checksum() -> None:
    """BootID is written after Checksum and does not change it."""
    plain = DeviceManagerCheckpoint(None, {"r": ("d",)})
    booted = DeviceManagerCheckpoint(None, {"r": ("d",)}, boot_id="abc")
    assert plain.compute_checksum() == booted.compute_checksum()
    assert booted.to_bytes().endswith(b',"BootID":"abc"}')
    assert b"BootID" not in plain.to_bytes()


def test_zero_checksum_is_not_accepted() -> None:
    """Unlike the CPU and memory checkpoints, 0 is just a wrong checksum here."""
    data = OBSERVED.replace(b"3952659280", b"0")
    with pytest.raises(CorruptCheckpointError):
        DeviceManagerCheckpoint.from_bytes(data, source="f")


def test_v1_file_maps_devices_to_numa_zero() -> None:
    """A kubelet ≤ 1.19 file (DeviceIDs a list) loads with every device on node 0."""
    entries = [
        {
            "PodUID": "u",
            "ContainerName": "c",
            "ResourceName": "r",
            "DeviceIDs": ["d1", "d2"],
            "AllocResp": b"\x01",
        }
    ]
    registered = {"r": ["d1", "d2"]}
    document = {
        "Data": {
            "PodDeviceEntries": [{**entries[0], "AllocResp": "AQ=="}],
            "RegisteredDevices": registered,
        },
        "Checksum": v1_checksum(entries, registered),  # type: ignore[arg-type]
    }
    loaded = load_checkpoint(json.dumps(document).encode(), source="f")
    assert loaded.pod_device_entries == (
        PodDevicesEntry("u", "c", "r", {0: ("d1", "d2")}, b"\x01"),
    )


def test_numa_keys_sort_as_text_in_json_and_as_numbers_in_hash() -> None:
    """encoding/json orders "-1","10","2"; spew orders -1, 2, 10."""
    entry = PodDevicesEntry("u", "c", "r", {10: ("a",), 2: ("b",), -1: ("c",)})
    checkpoint = DeviceManagerCheckpoint((entry,), {})
    assert b'"DeviceIDs":{"-1":["c"],"10":["a"],"2":["b"]}' in checkpoint.to_bytes()
    assert "map[-1:[c] 2:[b] 10:[a]]" in checkpoint.hashed_payload()


ids = st.text(alphabet="abcdef-0123456789", min_size=1, max_size=6)
entries = st.builds(
    PodDevicesEntry,
    ids,
    ids,
    ids,
    st.dictionaries(st.integers(-1, 7), st.lists(ids, max_size=3).map(tuple), max_size=3),
    st.binary(max_size=20),
)
checkpoints = st.builds(
    DeviceManagerCheckpoint,
    st.none() | st.lists(entries, max_size=3).map(tuple),
    st.dictionaries(ids, st.lists(ids, max_size=3).map(tuple), max_size=3),
    boot_id=st.text(max_size=5),
)


@given(checkpoints)
def test_encode_decode_identity(checkpoint: DeviceManagerCheckpoint) -> None:
    """Encoding then decoding gives the content back; the bytes are stable."""
    decoded = DeviceManagerCheckpoint.from_bytes(checkpoint.to_bytes(), source="f")
    assert decoded.pod_device_entries == checkpoint.pod_device_entries
    assert decoded.registered_devices == checkpoint.registered_devices
    assert decoded.boot_id == checkpoint.boot_id
    assert decoded.checksum == checkpoint.compute_checksum()
    assert decoded.to_bytes() == checkpoint.to_bytes()
