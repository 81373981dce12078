"""Fixtures for the device plugin tests: short socket directories, a kubelet, plugins.

Everything runs real gRPC over real unix sockets; timeouts are short so a broken path fails
within seconds instead of hanging.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from numaplane.deviceplugin.client import GrpcDeviceSource
from numaplane.deviceplugin.plugin import DevicePluginServer
from numaplane.deviceplugin.registration import RegistrationServer
from numaplane.node.devicemanager.device import Device

RESOURCE = "example.com/dev"
DEVICES = (Device("dev0", (0,)), Device("dev1", (1,)), Device("dev2", (0, 1)))
WAIT = 3.0


class Recorder:
    """A registration callback that keeps every (resource, devices) event it gets."""

    def __init__(self) -> None:
        self.events: list[tuple[str, tuple[Device, ...]]] = []
        self._cond = threading.Condition()

    def __call__(self, source: GrpcDeviceSource, devices: tuple[Device, ...]) -> None:
        with self._cond:
            self.events.append((source.resource_name, devices))
            self._cond.notify_all()

    def wait_for(
        self,
        predicate: Callable[[list[tuple[str, tuple[Device, ...]]]], bool],
        timeout: float = WAIT,
    ) -> list[tuple[str, tuple[Device, ...]]]:
        """The events once ``predicate`` holds for them (fails after ``timeout`` seconds)."""
        with self._cond:
            ok = self._cond.wait_for(lambda: predicate(self.events), timeout)
            assert ok, f"timed out; events: {self.events}"
            return list(self.events)

    def wait_for_devices(self, devices: tuple[Device, ...]) -> None:
        """Wait until the latest event carries exactly ``devices``."""
        self.wait_for(lambda events: bool(events) and events[-1][1] == devices)


def wait_until(predicate: Callable[[], bool], timeout: float = WAIT) -> None:
    """Poll ``predicate`` until it holds (fails after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)


@pytest.fixture
def plugin_dir() -> Iterator[Path]:
    """A short directory for sockets (unix socket paths must stay under ~100 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="np-dp-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def recorder() -> Recorder:
    """A fresh event recorder."""
    return Recorder()


@pytest.fixture
def kubelet(plugin_dir: Path, recorder: Recorder) -> Iterator[RegistrationServer]:
    """A started registration server reporting to ``recorder``."""
    server = RegistrationServer(recorder, plugin_dir, dial_timeout=0.5, rpc_timeout=2.0)
    server.start()
    yield server
    server.stop(grace=0)


@pytest.fixture
def make_plugin(plugin_dir: Path) -> Iterator[Callable[..., DevicePluginServer]]:
    """Start plugins in ``plugin_dir``; all are stopped at the end."""
    started: list[DevicePluginServer] = []

    def make(resource: str = RESOURCE, devices: Any = DEVICES, **kwargs: Any) -> DevicePluginServer:
        plugin = DevicePluginServer(resource, devices, plugin_dir=plugin_dir, **kwargs)
        plugin.start()
        started.append(plugin)
        return plugin

    yield make
    for plugin in started:
        plugin.stop(grace=0)
