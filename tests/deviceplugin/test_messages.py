"""Wire compatibility with upstream's api.proto and the message conversions."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.deviceplugin.messages import (
    ContainerAllocation,
    DeviceSpec,
    MountSpec,
    device_from_proto,
    device_to_proto,
)
from numaplane.deviceplugin.v1beta1 import api_pb2
from numaplane.node.devicemanager.device import Device

# Upstream k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/api.proto: message -> field -> number.
UPSTREAM_FIELDS: dict[str, dict[str, int]] = {
    "DevicePluginOptions": {"pre_start_required": 1, "get_preferred_allocation_available": 2},
    "RegisterRequest": {"version": 1, "endpoint": 2, "resource_name": 3, "options": 4},
    "Empty": {},
    "ListAndWatchResponse": {"devices": 1},
    "TopologyInfo": {"nodes": 1},
    "NUMANode": {"ID": 1},
    "Device": {"ID": 1, "health": 2, "topology": 3},
    "PreStartContainerRequest": {"devices_ids": 1},
    "PreStartContainerResponse": {},
    "PreferredAllocationRequest": {"container_requests": 1},
    "ContainerPreferredAllocationRequest": {
        "available_deviceIDs": 1,
        "must_include_deviceIDs": 2,
        "allocation_size": 3,
    },
    "PreferredAllocationResponse": {"container_responses": 1},
    "ContainerPreferredAllocationResponse": {"deviceIDs": 1},
    "AllocateRequest": {"container_requests": 1},
    "ContainerAllocateRequest": {"devices_ids": 1},
    "CDIDevice": {"name": 1},
    "AllocateResponse": {"container_responses": 1},
    "ContainerAllocateResponse": {
        "envs": 1,
        "mounts": 2,
        "devices": 3,
        "annotations": 4,
        "cdi_devices": 5,
    },
    "Mount": {"container_path": 1, "host_path": 2, "read_only": 3},
    "DeviceSpec": {"container_path": 1, "host_path": 2, "permissions": 3},
}


def test_messages_and_field_numbers_match_upstream() -> None:
    ours = {
        name: {f.name: f.number for f in message.fields}
        for name, message in api_pb2.DESCRIPTOR.message_types_by_name.items()
    }
    assert ours == UPSTREAM_FIELDS
    assert api_pb2.DESCRIPTOR.package == "v1beta1"


def test_services_have_upstream_method_paths() -> None:
    services = {
        s.full_name: {m.name: (m.input_type.name, m.output_type.name) for m in s.methods}
        for s in api_pb2.DESCRIPTOR.services_by_name.values()
    }
    assert services == {
        "v1beta1.Registration": {"Register": ("RegisterRequest", "Empty")},
        "v1beta1.DevicePlugin": {
            "GetDevicePluginOptions": ("Empty", "DevicePluginOptions"),
            "ListAndWatch": ("Empty", "ListAndWatchResponse"),
            "GetPreferredAllocation": (
                "PreferredAllocationRequest",
                "PreferredAllocationResponse",
            ),
            "Allocate": ("AllocateRequest", "AllocateResponse"),
            "PreStartContainer": ("PreStartContainerRequest", "PreStartContainerResponse"),
        },
    }
    watch = api_pb2.DESCRIPTOR.services_by_name["DevicePlugin"].methods_by_name["ListAndWatch"]
    assert watch.server_streaming
    assert not watch.client_streaming


@dataclass(frozen=True)
class WireCase:
    name: str
    message: object
    encoded: bytes


WIRE_CASES = [
    WireCase(
        "register request with options",
        api_pb2.RegisterRequest(
            version="v1beta1",
            endpoint="a.sock",
            resource_name="x.io/y",
            options=api_pb2.DevicePluginOptions(get_preferred_allocation_available=True),
        ),
        # field 1 (LEN) "v1beta1", field 2 (LEN) "a.sock", field 3 (LEN) "x.io/y",
        # field 4 (LEN) { field 2 (VARINT) 1 }
        b"\x0a\x07v1beta1" + b"\x12\x06a.sock" + b"\x1a\x06x.io/y" + b"\x22\x02\x10\x01",
    ),
    WireCase(
        "device with NUMA node 1",
        api_pb2.Device(
            ID="d1",
            health="Healthy",
            topology=api_pb2.TopologyInfo(nodes=[api_pb2.NUMANode(ID=1)]),
        ),
        # ID (1, LEN), health (2, LEN), topology (3, LEN) { nodes (1, LEN) { ID (1, VARINT) } }
        b"\x0a\x02d1" + b"\x12\x07Healthy" + b"\x1a\x04" + b"\x0a\x02\x08\x01",
    ),
    WireCase(
        "preferred allocation request",
        api_pb2.ContainerPreferredAllocationRequest(
            available_deviceIDs=["a", "b"], must_include_deviceIDs=["a"], allocation_size=3
        ),
        b"\x0a\x01a\x0a\x01b" + b"\x12\x01a" + b"\x18\x03",
    ),
    WireCase(
        "container allocate response",
        api_pb2.ContainerAllocateResponse(
            envs={"K": "V"},
            mounts=[api_pb2.Mount(container_path="/c", read_only=True)],
            cdi_devices=[api_pb2.CDIDevice(name="v/g=1")],
        ),
        # envs entry (1, LEN) { key (1) "K", value (2) "V" }; mounts (2, LEN 6) { 1: "/c",
        # 3: true }; cdi_devices (5, LEN) { name (1) "v/g=1" }
        b"\x0a\x06\x0a\x01K\x12\x01V" + b"\x12\x06\x0a\x02/c\x18\x01" + b"\x2a\x07\x0a\x05v/g=1",
    ),
]


@pytest.mark.parametrize("case", WIRE_CASES, ids=lambda c: c.name)
def test_encoding_matches_hand_computed_protobuf(case: WireCase) -> None:
    assert case.message.SerializeToString(deterministic=True) == case.encoded  # type: ignore[attr-defined]
    decoded = type(case.message)()
    decoded.ParseFromString(case.encoded)  # type: ignore[attr-defined]
    assert decoded == case.message


@dataclass(frozen=True)
class DeviceCase:
    name: str
    device: Device
    health: str
    has_topology: bool


DEVICE_CASES = [
    DeviceCase("healthy on two nodes", Device("g0", (0, 1)), "Healthy", True),
    DeviceCase("unhealthy without topology", Device("g1", None, False), "Unhealthy", False),
    DeviceCase("empty topology", Device("g2", ()), "Healthy", True),
]


@pytest.mark.parametrize("case", DEVICE_CASES, ids=lambda c: c.name)
def test_device_conversion(case: DeviceCase) -> None:
    message = device_to_proto(case.device)
    assert message.health == case.health
    assert message.HasField("topology") == case.has_topology
    assert device_from_proto(message) == case.device


def test_only_the_exact_healthy_string_is_healthy() -> None:
    assert not device_from_proto(api_pb2.Device(ID="x", health="healthy")).healthy
    assert not device_from_proto(api_pb2.Device(ID="x", health="")).healthy


_text = st.text(max_size=8)


@given(
    envs=st.dictionaries(_text, _text, max_size=3),
    mounts=st.lists(st.builds(MountSpec, _text, _text, st.booleans()), max_size=2),
    devices=st.lists(st.builds(DeviceSpec, _text, _text, _text), max_size=2),
    annotations=st.dictionaries(_text, _text, max_size=2),
    cdi=st.lists(_text, max_size=2),
)
def test_container_allocation_bytes_round_trip(
    envs: dict[str, str],
    mounts: list[MountSpec],
    devices: list[DeviceSpec],
    annotations: dict[str, str],
    cdi: list[str],
) -> None:
    allocation = ContainerAllocation(envs, tuple(mounts), tuple(devices), annotations, tuple(cdi))
    assert ContainerAllocation.from_bytes(allocation.to_bytes()) == allocation
    assert allocation.to_bytes() == ContainerAllocation.from_bytes(allocation.to_bytes()).to_bytes()
