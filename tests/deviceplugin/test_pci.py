"""The sysfs PCI device plugin: discovery from captures and trees, rescans, registration."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from numaplane.deviceplugin.pci import (
    PCIDevicePlugin,
    PCISelector,
    merge_scan,
    pci_devices,
)
from numaplane.deviceplugin.registration import RegistrationServer
from numaplane.errors import InputError
from numaplane.node.devicemanager.device import Device
from numaplane.topology.discover import unpacked_tarball
from tests.deviceplugin.conftest import Recorder

CAPTURE = "linux/40intel64-2g2n4c+pcilocality.tar.bz2"


@pytest.fixture(scope="module")
def capture_root(topologies_dir: Path) -> Iterator[Path]:
    path = topologies_dir / CAPTURE
    if not path.is_file():
        pytest.skip(f"{path} is not present")
    with unpacked_tarball(path) as root:
        yield root


@dataclass(frozen=True)
class CaptureCase:
    name: str
    vendor: str
    class_prefix: str | None
    expected: tuple[Device, ...]


_BNX2 = ("0000:02:00.0", "0000:02:00.1", "0000:03:00.0", "0000:03:00.1")

CAPTURE_CASES = [
    CaptureCase(
        "infiniband adapter on NUMA node 2",
        "0x1077",
        None,
        (Device("0000:43:00.0", (2,)),),
    ),
    CaptureCase(
        "network controllers by class, no locality",
        "14e4",
        "0200",
        tuple(Device(a, None) for a in _BNX2),
    ),
    CaptureCase("class prefix that matches nothing", "14e4", "0x03", ()),
    CaptureCase("upper-case vendor", "0x102B", None, (Device("0000:09:03.0", None),)),
    CaptureCase(
        "usb controllers by two-digit class prefix",
        "8086",
        "0c",
        tuple(
            Device(a, None)
            for a in (
                "0000:00:1a.0",
                "0000:00:1a.1",
                "0000:00:1a.7",
                "0000:00:1d.0",
                "0000:00:1d.1",
                "0000:00:1d.2",
                "0000:00:1d.7",
            )
        ),
    ),
]


@pytest.mark.parametrize("case", CAPTURE_CASES, ids=lambda c: c.name)
def test_devices_from_a_captured_sysfs(capture_root: Path, case: CaptureCase) -> None:
    selector = PCISelector.of(case.vendor, case.class_prefix)
    assert pci_devices(capture_root, selector) == case.expected


@pytest.mark.parametrize("bad", ["", "0x", "10dg", "vendor"])
def test_selector_rejects_non_hex(bad: str) -> None:
    with pytest.raises(InputError, match="is not a hexadecimal number"):
        PCISelector.of(bad)


def test_merge_scan_keeps_vanished_devices_as_unhealthy() -> None:
    previous = (Device("a", (0,)), Device("b", (1,)))
    found = (Device("a", (0,)), Device("c", None))
    assert merge_scan(previous, found) == (
        Device("a", (0,)),
        Device("c", None),
        Device("b", (1,), healthy=False),
    )


def _write_function(root: Path, address: str, vendor: str, numa: int) -> None:
    d = root / "sys" / "bus" / "pci" / "devices" / address
    d.mkdir(parents=True)
    (d / "vendor").write_text(vendor + "\n")
    (d / "device").write_text("0x1234\n")
    (d / "class").write_text("0x030200\n")
    (d / "numa_node").write_text(f"{numa}\n")


def test_plugin_registers_and_reports_a_vanished_device_unhealthy(
    plugin_dir: Path, tmp_path: Path, kubelet: RegistrationServer, recorder: Recorder
) -> None:
    sysfs = tmp_path / "root"
    _write_function(sysfs, "0000:3b:00.0", "0x10de", 0)
    _write_function(sysfs, "0000:af:00.0", "0x10de", 1)
    _write_function(sysfs, "0000:00:1f.0", "0x8086", 0)
    plugin = PCIDevicePlugin(
        "example.com/gpu",
        PCISelector.of("10de", "0302"),
        sysfs_root=sysfs,
        plugin_dir=plugin_dir,
        poll_interval=0.05,
    )
    stop = threading.Event()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            plugin.run(stop, register_timeout=2.0)
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        both = (Device("0000:3b:00.0", (0,)), Device("0000:af:00.0", (1,)))
        recorder.wait_for_devices(both)
        shutil.rmtree(sysfs / "sys" / "bus" / "pci" / "devices" / "0000:af:00.0")
        recorder.wait_for_devices((both[0], both[1].with_health(False)))
        source = kubelet.source("example.com/gpu")
        assert source is not None
        allocation = source.allocate_container(["0000:3b:00.0"])
        assert dict(allocation.envs) == {"NUMAPLANE_VISIBLE_DEVICES": "0000:3b:00.0"}
    finally:
        stop.set()
        thread.join(5.0)
    assert not thread.is_alive()
    assert errors == []
    recorder.wait_for_devices(tuple(d.with_health(False) for d in both))
    assert not plugin.server.socket_path.exists()
