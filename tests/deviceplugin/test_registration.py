"""The registration server against real plugins over unix sockets."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from numaplane.deviceplugin.client import unix_target
from numaplane.deviceplugin.plugin import DevicePluginServer, RegistrationError
from numaplane.deviceplugin.registration import DeviceManagerSink, RegistrationServer
from numaplane.deviceplugin.v1beta1 import Version, api_pb2, api_pb2_grpc
from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.manager import DeviceManager
from numaplane.node.topologymanager.store import AffinityStore
from tests.deviceplugin.conftest import DEVICES, RESOURCE, Recorder, wait_until

PluginFactory = Callable[..., DevicePluginServer]


def test_registered_plugin_devices_reach_the_callback_with_their_numa_nodes(
    kubelet: RegistrationServer, recorder: Recorder, make_plugin: PluginFactory
) -> None:
    plugin = make_plugin()
    plugin.register(timeout=2.0)
    recorder.wait_for_devices(DEVICES)
    source = kubelet.source(RESOURCE)
    assert source is not None
    assert source.socket_path == plugin.socket_path
    assert tuple(source.devices()) == DEVICES
    assert source.options.get_preferred_allocation_available is False
    assert recorder.events[0][0] == RESOURCE


def test_devices_without_topology_keep_none_apart_from_empty(
    kubelet: RegistrationServer, recorder: Recorder, make_plugin: PluginFactory
) -> None:
    devices = (Device("a", None), Device("b", ()), Device("c", (3,), healthy=False))
    make_plugin(devices=devices).register(timeout=2.0)
    recorder.wait_for_devices(devices)


def test_health_change_is_streamed(
    kubelet: RegistrationServer, recorder: Recorder, make_plugin: PluginFactory
) -> None:
    plugin = make_plugin()
    plugin.register(timeout=2.0)
    recorder.wait_for_devices(DEVICES)
    plugin.set_health("dev1", False)
    expected = (DEVICES[0], DEVICES[1].with_health(False), DEVICES[2])
    recorder.wait_for_devices(expected)
    assert tuple(kubelet.source(RESOURCE).devices()) == expected  # type: ignore[union-attr]


def test_stopped_plugin_devices_become_unhealthy_and_the_source_is_dropped(
    kubelet: RegistrationServer, recorder: Recorder, make_plugin: PluginFactory
) -> None:
    plugin = make_plugin()
    plugin.register(timeout=2.0)
    recorder.wait_for_devices(DEVICES)
    source = kubelet.source(RESOURCE)
    assert source is not None
    plugin.stop(grace=0)
    recorder.wait_for_devices(tuple(d.with_health(False) for d in DEVICES))
    wait_until(lambda: kubelet.source(RESOURCE) is None)
    assert not source.active


def test_reregistration_replaces_the_endpoint(
    kubelet: RegistrationServer, recorder: Recorder, make_plugin: PluginFactory
) -> None:
    first = make_plugin(socket_name="first.sock")
    first.register(timeout=2.0)
    recorder.wait_for_devices(DEVICES)
    replacement = (Device("new0", (1,)),)
    second = make_plugin(devices=replacement, socket_name="second.sock")
    second.register(timeout=2.0)
    recorder.wait_for_devices(replacement)
    assert kubelet.source(RESOURCE).socket_path == second.socket_path  # type: ignore[union-attr]
    # The replaced connection is closed quietly: stopping its plugin reports nothing.
    first.stop(grace=0)
    second.set_health("new0", False)
    events = recorder.wait_for(lambda e: e[-1][1] == (replacement[0].with_health(False),))
    after = events[events.index((RESOURCE, replacement)) :]
    assert all(devices[0].id == "new0" for _, devices in after)


def test_two_resources_are_tracked_apart(
    kubelet: RegistrationServer, recorder: Recorder, make_plugin: PluginFactory
) -> None:
    make_plugin().register(timeout=2.0)
    make_plugin("example.com/other", (Device("o1", (0,)),)).register(timeout=2.0)
    recorder.wait_for(lambda e: {r for r, _ in e} == {RESOURCE, "example.com/other"})
    assert sorted(kubelet.sources()) == sorted([RESOURCE, "example.com/other"])


@dataclass(frozen=True)
class BadRequest:
    name: str
    version: str = Version
    resource: str = RESOURCE
    endpoint: str = "missing.sock"
    message: str = ""


BAD_REQUESTS = [
    BadRequest(
        "unsupported version",
        version="v1alpha",
        message='requested API version "v1alpha" is not supported by kubelet. '
        'Supported version is ["v1beta1"]',
    ),
    BadRequest(
        "resource without domain", resource="gpu", message='the ResourceName "gpu" is invalid'
    ),
    BadRequest(
        "native resource domain",
        resource="kubernetes.io/gpu",
        message='the ResourceName "kubernetes.io/gpu" is invalid',
    ),
    BadRequest(
        "quota prefix",
        resource="requests.example.com/gpu",
        message='the ResourceName "requests.example.com/gpu" is invalid',
    ),
    BadRequest(
        "endpoint leaves the directory",
        endpoint="../x.sock",
        message='the endpoint "../x.sock" is invalid: '
        "it must be a socket file name in the device plugin directory",
    ),
    BadRequest(
        "empty endpoint",
        endpoint="",
        message='the endpoint "" is invalid: '
        "it must be a socket file name in the device plugin directory",
    ),
    BadRequest("nobody listens on the endpoint", message="failed to dial device plugin: "),
]


@pytest.mark.parametrize("case", BAD_REQUESTS, ids=lambda c: c.name)
def test_bad_registration_is_refused_with_upstream_message(
    kubelet: RegistrationServer, recorder: Recorder, case: BadRequest
) -> None:
    request = api_pb2.RegisterRequest(
        version=case.version, endpoint=case.endpoint, resource_name=case.resource
    )
    with grpc.insecure_channel(unix_target(kubelet.socket_path)) as channel:
        stub = api_pb2_grpc.RegistrationStub(channel)  # type: ignore[no-untyped-call]
        with pytest.raises(grpc.RpcError) as info:
            stub.Register(request, timeout=3.0)
    assert info.value.code() == grpc.StatusCode.UNKNOWN
    assert info.value.details().startswith(case.message)
    assert kubelet.sources() == {}
    assert recorder.events == []


def test_plugin_register_raises_the_kubelet_refusal(
    kubelet: RegistrationServer, make_plugin: PluginFactory
) -> None:
    plugin = make_plugin("gpu")
    with pytest.raises(RegistrationError, match='the ResourceName "gpu" is invalid'):
        plugin.register(timeout=2.0)


def test_plugin_register_gives_up_when_no_kubelet_appears(make_plugin: PluginFactory) -> None:
    plugin = make_plugin()
    with pytest.raises(RegistrationError, match="does not exist"):
        plugin.register(timeout=0.2, retry_interval=0.05)


def test_plugin_register_waits_for_the_kubelet_socket(
    plugin_dir: Path, recorder: Recorder, make_plugin: PluginFactory
) -> None:
    plugin = make_plugin()
    errors: list[BaseException] = []

    def register() -> None:
        try:
            plugin.register(timeout=3.0, retry_interval=0.05)
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=register)
    thread.start()
    server = RegistrationServer(recorder, plugin_dir, dial_timeout=0.5)
    try:
        server.start()
        thread.join(4.0)
        assert not thread.is_alive()
        assert errors == []
        recorder.wait_for_devices(DEVICES)
    finally:
        server.stop(grace=0)


def test_stop_removes_the_socket_and_closes_connections(
    plugin_dir: Path, recorder: Recorder, make_plugin: PluginFactory
) -> None:
    server = RegistrationServer(recorder, plugin_dir, dial_timeout=0.5)
    server.start()
    assert server.socket_path.is_socket()
    make_plugin().register(timeout=2.0)
    recorder.wait_for_devices(DEVICES)
    source = server.source(RESOURCE)
    server.stop(grace=0)
    assert not server.socket_path.exists()
    assert source is not None
    assert not source.active
    assert server.sources() == {}


def test_device_manager_sink_keeps_the_manager_current(
    plugin_dir: Path, make_plugin: PluginFactory
) -> None:
    manager = DeviceManager([0, 1], AffinityStore())
    server = RegistrationServer(DeviceManagerSink(manager), plugin_dir, dial_timeout=0.5)
    server.start()
    try:
        plugin = make_plugin()
        plugin.register(timeout=2.0)
        wait_until(lambda: manager.devices(RESOURCE) == DEVICES)
        assert manager.source(RESOURCE) is server.source(RESOURCE)
        assert manager.allocatable_per_numa(RESOURCE) == {0: 2, 1: 2}
        plugin.set_health("dev0", False)
        wait_until(lambda: manager.allocatable(RESOURCE) == frozenset({"dev1", "dev2"}))
        plugin.stop(grace=0)
        wait_until(lambda: manager.allocatable(RESOURCE) == frozenset())
        assert manager.capacity(RESOURCE) == 3
    finally:
        server.stop(grace=0)
