"""A device plugin for PCI functions found in sysfs (``bus/pci/devices``).

Devices are the functions of one vendor, optionally narrowed to a class prefix; a device's id
is its PCI address and its topology the NUMA node sysfs reports. A device is healthy while it is
present: one that disappears on a rescan stays in the list as unhealthy, so containers holding
it see it fail instead of vanish.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from numaplane.deviceplugin.plugin import DevicePluginServer, env_allocator
from numaplane.deviceplugin.v1beta1 import DevicePluginPath, KubeletSocket
from numaplane.errors import InputError
from numaplane.node.devicemanager.device import Device
from numaplane.topology.model import PCIDevice
from numaplane.topology.sysfs import read_pci_devices

_log = logging.getLogger(__name__)


def normalize_hex(value: str, what: str) -> str:
    """``value`` as lowercase hex digits without ``0x``; ``InputError`` names ``--what``."""
    text = value.strip().lower().removeprefix("0x")
    if not text or any(c not in "0123456789abcdef" for c in text):
        raise InputError(f"--{what}", f"{value!r} is not a hexadecimal number")
    return text


@dataclass(frozen=True, slots=True)
class PCISelector:
    """Which PCI functions a plugin serves: a vendor id and an optional class prefix (hex)."""

    vendor: str
    class_prefix: str | None = None

    @classmethod
    def of(cls, vendor: str, class_prefix: str | None = None) -> PCISelector:
        """A selector from user input such as ``0x10de`` / ``10DE`` and ``0302``."""
        return cls(
            normalize_hex(vendor, "vendor").rjust(4, "0"),
            normalize_hex(class_prefix, "class") if class_prefix else None,
        )

    def matches(self, device: PCIDevice) -> bool:
        """Whether ``device`` is of this vendor and class."""
        vendor = device.vendor.lower().removeprefix("0x").rjust(4, "0")
        if vendor != self.vendor:
            return False
        if self.class_prefix is None:
            return True
        return (
            device.class_id.lower().removeprefix("0x").rjust(6, "0").startswith(self.class_prefix)
        )


def pci_devices(sysfs_root: Path, selector: PCISelector) -> tuple[Device, ...]:
    """The selected PCI functions under ``sysfs_root`` as healthy devices, by address."""
    return tuple(
        Device(d.address, None if d.numa is None else (d.numa,), True)
        for d in read_pci_devices(sysfs_root)
        if selector.matches(d)
    )


def merge_scan(previous: Iterable[Device], found: Sequence[Device]) -> tuple[Device, ...]:
    """A rescan's device list: what was found, plus earlier devices now missing, unhealthy."""
    present = {d.id for d in found}
    missing = tuple(d.with_health(False) for d in previous if d.id not in present)
    return tuple(found) + missing


class PCIDevicePlugin:
    """A ``DevicePluginServer`` fed from sysfs, rescanned every ``poll_interval`` seconds.

    ``run`` serves until ``stop`` is set, registering with the kubelet and registering again
    whenever the kubelet's socket is recreated (the kubelet restarted).
    """

    def __init__(
        self,
        resource_name: str,
        selector: PCISelector,
        *,
        sysfs_root: Path = Path("/"),
        plugin_dir: str | Path = DevicePluginPath,
        env_var: str | None = None,
        poll_interval: float = 5.0,
    ) -> None:
        self.selector = selector
        self.sysfs_root = sysfs_root
        self.poll_interval = poll_interval
        allocate = env_allocator(env_var) if env_var else env_allocator()
        self.server = DevicePluginServer(
            resource_name, self.scan(()), plugin_dir=plugin_dir, allocate=allocate
        )

    def scan(self, previous: Iterable[Device]) -> tuple[Device, ...]:
        """The devices sysfs shows now, merged with ``previous`` (see ``merge_scan``)."""
        return merge_scan(previous, pci_devices(self.sysfs_root, self.selector))

    def rescan(self) -> None:
        """Read sysfs again and publish any change."""
        self.server.set_devices(self.scan(self.server.devices()))

    def run(self, stop: threading.Event, register_timeout: float | None = None) -> None:
        """Serve until ``stop`` is set; raises ``RegistrationError`` if the kubelet refuses."""
        kubelet = self.server.socket_path.parent / KubeletSocket
        self.server.start()
        try:
            self.server.register(kubelet, timeout=register_timeout, stop=stop)
            registered = _inode(kubelet)
            while not stop.wait(self.poll_interval):
                self.rescan()
                current = _inode(kubelet)
                if current is not None and current != registered:
                    _log.info("%s was recreated: registering again", kubelet)
                    self.server.register(kubelet, timeout=register_timeout, stop=stop)
                    registered = _inode(kubelet)
        finally:
            self.server.stop()


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except OSError:
        return None
