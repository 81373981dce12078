"""``numaplane device-plugin``: device plugins that register with the kubelet (or the agent)."""

from __future__ import annotations

import logging
import os
import signal
import threading
from pathlib import Path
from types import FrameType

import click

from numaplane.cli.options import FiniteFloatRange
from numaplane.deviceplugin.pci import PCIDevicePlugin, PCISelector
from numaplane.deviceplugin.plugin import DEFAULT_ENV_VAR, RegistrationError
from numaplane.deviceplugin.v1beta1 import DevicePluginPath
from numaplane.deviceplugin.validation import resource_name_error
from numaplane.errors import InputError


@click.group("device-plugin")
def device_plugin() -> None:
    """Run device plugins speaking the kubelet's v1beta1 device plugin API."""


@device_plugin.command(
    "pci",
    epilog=(
        "Examples:\n\n"
        "  numaplane device-plugin pci --resource example.com/nic --vendor 0x14e4 "
        "--class 0x0200\n\n"
        "  numaplane device-plugin pci --resource example.com/gpu --vendor 10de "
        "--plugin-dir /tmp/dp --sysfs-root ./capture"
    ),
)
@click.option("--resource", required=True, help="Extended resource name, e.g. example.com/gpu.")
@click.option("--vendor", required=True, help="PCI vendor id in hex (0x10de or 10de).")
@click.option(
    "--class", "class_prefix", default=None, help="PCI class prefix in hex, e.g. 0302 or 0x02."
)
@click.option(
    "--plugin-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=DevicePluginPath,
    show_default=True,
    help="Directory of the kubelet's and plugins' sockets.",
)
@click.option(
    "--sysfs-root",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=Path("/"),
    show_default=True,
    help="Directory holding sys/ (a captured tree for testing).",
)
@click.option(
    "--env",
    "env_var",
    default=DEFAULT_ENV_VAR,
    show_default=True,
    help="Environment variable Allocate sets to the comma-separated PCI addresses.",
)
@click.option(
    "--poll-interval",
    type=FiniteFloatRange(min=0.05, max=24 * 3600),
    default=5.0,
    show_default=True,
    help="Seconds between sysfs rescans (device health).",
)
def pci(
    resource: str,
    vendor: str,
    class_prefix: str | None,
    plugin_dir: Path,
    sysfs_root: Path,
    env_var: str,
    poll_interval: float,
) -> None:
    """Serve PCI functions of one vendor (and class) until SIGTERM or SIGINT.

    Device ids are PCI addresses, topology the NUMA node sysfs reports; a device is healthy
    while it is present. The plugin registers with PLUGIN_DIR/kubelet.sock, waiting for it to
    appear, and registers again when it is recreated.
    """
    # What the kubelet would refuse at registration, refused before serving anything.
    refused = resource_name_error(resource)
    if refused is not None:
        raise InputError("--resource", refused)
    try:
        plugin_dir.mkdir(mode=0o750, parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(str(plugin_dir), f"cannot create the directory: {exc.strerror}") from exc
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    plugin = PCIDevicePlugin(
        resource,
        PCISelector.of(vendor, class_prefix),
        sysfs_root=sysfs_root,
        plugin_dir=plugin_dir,
        env_var=env_var,
        poll_interval=poll_interval,
    )
    socket_limit = 107  # sun_path holds 108 bytes with the terminating NUL on Linux
    if len(os.fsencode(plugin.server.socket_path)) > socket_limit:
        raise InputError(
            str(plugin.server.socket_path),
            f"too long for a unix socket path (at most {socket_limit} bytes)",
        )
    click.echo(
        f"serving {len(plugin.server.devices())} device(s) of {resource} "
        f"on {plugin.server.socket_path}",
        err=True,
    )
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        plugin.run(stop)
    except RegistrationError as exc:
        if not stop.is_set():
            raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise InputError(str(plugin.server.socket_path), exc.strerror or str(exc)) from exc
    except RuntimeError as exc:
        # grpc's way of saying the socket cannot be bound (permissions, a path too long).
        if "Failed to bind" not in str(exc):
            raise
        raise InputError(str(plugin.server.socket_path), "cannot listen on the socket") from exc
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
