"""``GrpcDeviceSource`` calls against a real plugin: preferred allocation, Allocate, errors."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import pytest

from numaplane.deviceplugin.client import DevicePluginError, GrpcDeviceSource
from numaplane.deviceplugin.messages import ContainerAllocation, DeviceSpec, MountSpec
from numaplane.deviceplugin.plugin import DevicePluginServer, env_allocator
from numaplane.node.devicemanager.errors import DeviceSourceError
from numaplane.node.devicemanager.source import DeviceSource
from tests.deviceplugin.conftest import RESOURCE

PluginFactory = Callable[..., DevicePluginServer]


def _reverse_pick(
    available: Sequence[str], must_include: Sequence[str], size: int
) -> Sequence[str] | None:
    return [*must_include, *(i for i in reversed(available) if i not in must_include)]


@pytest.fixture
def connect() -> Iterator[Callable[[DevicePluginServer], GrpcDeviceSource]]:
    sources: list[GrpcDeviceSource] = []

    def make(plugin: DevicePluginServer) -> GrpcDeviceSource:
        source = GrpcDeviceSource.connect(
            plugin.resource_name, plugin.socket_path, dial_timeout=1.0, rpc_timeout=2.0
        )
        sources.append(source)
        return source

    yield make
    for source in sources:
        source.close()


def test_source_satisfies_the_device_source_protocol(
    make_plugin: PluginFactory, connect: Callable[[DevicePluginServer], GrpcDeviceSource]
) -> None:
    source: DeviceSource = connect(make_plugin())
    assert source.resource_name == RESOURCE
    assert tuple(source.devices()) == ()  # nothing until ListAndWatch runs


def test_preferred_allocation_round_trip(
    make_plugin: PluginFactory, connect: Callable[[DevicePluginServer], GrpcDeviceSource]
) -> None:
    source = connect(make_plugin(preferred=_reverse_pick))
    assert source.options.get_preferred_allocation_available
    assert source.get_preferred_allocation(["dev0", "dev1", "dev2"], ["dev0"], 2) == (
        "dev0",
        "dev2",
    )


def test_preferred_allocation_is_not_called_when_not_offered(
    make_plugin: PluginFactory, connect: Callable[[DevicePluginServer], GrpcDeviceSource]
) -> None:
    source = connect(make_plugin())
    assert source.get_preferred_allocation(["dev0", "dev1"], [], 1) is None


def test_allocate_returns_the_serialised_container_response(
    make_plugin: PluginFactory, connect: Callable[[DevicePluginServer], GrpcDeviceSource]
) -> None:
    allocate = env_allocator(
        "EXAMPLE_DEVICES", lambda i: [DeviceSpec(f"/dev/{i}", f"/dev/{i}", "rw")]
    )
    source = connect(make_plugin(allocate=allocate))
    expected = ContainerAllocation(
        envs={"EXAMPLE_DEVICES": "dev2,dev0"},
        devices=(DeviceSpec("/dev/dev2", "/dev/dev2"), DeviceSpec("/dev/dev0", "/dev/dev0")),
    )
    raw = source.allocate(["dev2", "dev0"])
    assert raw == expected.to_bytes()
    assert ContainerAllocation.from_bytes(raw) == expected
    assert source.allocate_container(["dev2", "dev0"]) == expected


def test_allocate_carries_mounts_annotations_and_cdi_devices(
    make_plugin: PluginFactory, connect: Callable[[DevicePluginServer], GrpcDeviceSource]
) -> None:
    full = ContainerAllocation(
        envs={"A": "1"},
        mounts=(MountSpec("/usr/lib/x", "/opt/x/lib", read_only=True),),
        devices=(DeviceSpec("/dev/x", "/dev/x", "r"),),
        annotations={"example.com/note": "yes"},
        cdi_devices=("example.com/dev=dev0",),
    )
    source = connect(make_plugin(allocate=lambda ids: full))
    assert source.allocate_container(["dev0"]) == full


def test_default_allocation_names_the_devices_in_numaplane_visible_devices(
    make_plugin: PluginFactory, connect: Callable[[DevicePluginServer], GrpcDeviceSource]
) -> None:
    source = connect(make_plugin())
    allocation = source.allocate_container(["dev1"])
    assert dict(allocation.envs) == {"NUMAPLANE_VISIBLE_DEVICES": "dev1"}
    assert allocation.devices == ()


def test_allocate_of_unknown_device_fails_like_an_rpc_error(
    make_plugin: PluginFactory, connect: Callable[[DevicePluginServer], GrpcDeviceSource]
) -> None:
    source = connect(make_plugin())
    with pytest.raises(DeviceSourceError) as info:
        source.allocate(["nope"])
    assert str(info.value) == "rpc error: code = InvalidArgument desc = unknown devices: nope"


def test_closed_source_refuses_calls(
    make_plugin: PluginFactory, connect: Callable[[DevicePluginServer], GrpcDeviceSource]
) -> None:
    source = connect(make_plugin())
    source.close()
    with pytest.raises(DevicePluginError, match="is stopped"):
        source.allocate(["dev0"])


def test_pre_start_container_runs_only_when_required(
    make_plugin: PluginFactory, connect: Callable[[DevicePluginServer], GrpcDeviceSource]
) -> None:
    required = connect(make_plugin(socket_name="pre.sock", pre_start_required=True))
    assert required.options.pre_start_required
    required.pre_start_container(["dev0"])
    plain = connect(make_plugin(socket_name="plain.sock"))
    plain.close()
    plain.pre_start_container(["dev0"])  # not required: no call, so no "stopped" error


def test_connect_to_a_missing_socket_fails_fast(plugin_dir: object) -> None:
    with pytest.raises(DevicePluginError, match=r"^failed to dial device plugin: "):
        GrpcDeviceSource.connect(RESOURCE, "/tmp/np-missing-plugin.sock", dial_timeout=0.2)
